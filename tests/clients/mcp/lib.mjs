// The tests' plumbing: the adapter under test started by the MCP SDK's
// own Client (StdioClientTransport), or by hand for raw lines.
//
//   SKILLBROKER_MCP     the adapter binary (bin/skillbroker-mcp)
//   SKILLBROKER_SOCKET  the broker's socket of a running daemon whose
//                       policy is tests/clients/run.sh's
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export const MCP = process.env.SKILLBROKER_MCP || '';
export const SOCK = process.env.SKILLBROKER_SOCKET || '';

// Why the tests that need the adapter, or the adapter and a daemon,
// are skipped; false when they can run.
export const noAdapter = MCP ? false : 'SKILLBROKER_MCP is not set (the skillbroker-mcp binary to test)';
export const noDaemon =
  noAdapter || (SOCK ? false : 'SKILLBROKER_SOCKET is not set (the socket of a running skillbroker daemon)');

// An SDK client connected to a new adapter. elicit: the handler of
// elicitation/create (the client then declares the capability), or null.
export async function connect({ elicit = null, args = [] } = {}) {
  const capabilities = elicit ? { elicitation: {} } : {};
  const client = new Client({ name: 'skillbroker-mcp-tests', version: '0.0.0' }, { capabilities });
  if (elicit) client.setRequestHandler(ElicitRequestSchema, elicit);
  const transport = new StdioClientTransport({
    command: MCP,
    args: ['-s', SOCK, ...args],
    stderr: 'pipe',
  });
  const log = [];
  transport.stderr.on('data', (d) => log.push(String(d)));
  // What initialize's result said, seen as it comes by.
  const seen = { protocolVersion: null, errors: [] };
  const start = transport.start.bind(transport);
  transport.start = async () => {
    const handler = transport.onmessage;
    transport.onmessage = (msg, extra) => {
      if (msg && msg.result && typeof msg.result.protocolVersion === 'string') {
        seen.protocolVersion = msg.result.protocolVersion;
      }
      handler(msg, extra);
    };
    return start();
  };
  client.onerror = (e) => seen.errors.push(e);
  await client.connect(transport);
  return { client, transport, seen, stderr: () => log.join('') };
}

// The text of a tool result's content items, joined.
export function text(result) {
  return result.content.map((c) => c.text).join('\n');
}

// The adapter started by hand: write lines, read replies line by line.
export function raw(args = []) {
  const sockArgs = SOCK ? ['-s', SOCK] : ['-s', '/nonexistent/skillbroker.sock'];
  const child = spawn(MCP, [...sockArgs, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let buf = '';
  const lines = [];
  const waiters = [];
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) !== -1) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (waiters.length) waiters.shift()(line);
      else lines.push(line);
    }
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return {
    child,
    exited,
    stderr: () => stderr,
    write(s) {
      return new Promise((resolve) => {
        if (child.stdin.write(s)) resolve();
        else child.stdin.once('drain', resolve);
      });
    },
    send(msg) {
      return this.write(JSON.stringify(msg) + '\n');
    },
    // The next line as JSON, within ms.
    next(ms = 10000) {
      if (lines.length) return Promise.resolve(JSON.parse(lines.shift()));
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no reply within ${ms} ms; stderr: ${stderr}`)), ms);
        waiters.push((line) => {
          clearTimeout(t);
          resolve(JSON.parse(line));
        });
      });
    },
    // End stdin and wait for the exit; one not gone within ms is
    // killed (a test that failed must still end, not wait for ever).
    async close(ms = 10000) {
      child.stdin.end();
      let t;
      const late = new Promise((resolve) => (t = setTimeout(resolve, ms)));
      const r = await Promise.race([exited, late.then(() => null)]);
      clearTimeout(t);
      if (r) return r;
      child.kill('SIGKILL');
      return exited;
    },
  };
}

// The test daemon's master (tests/lib/daemon.sh starts it as
// `skillbrokerd -d -f DIR/sb.yaml`, DIR also holding the socket and
// policy.d), or null.
export function daemon() {
  const dir = dirname(SOCK);
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let argv;
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const f = argv.indexOf('-f');
    if (argv[0].endsWith('skillbrokerd') && f !== -1 && argv[f + 1] === `${dir}/sb.yaml`) {
      return { pid: Number(pid), policyDir: `${dir}/policy.d` };
    }
  }
  return null;
}

// Resolve when cond() holds, polling every 50 ms; reject after ms.
export async function until(cond, ms, what) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
