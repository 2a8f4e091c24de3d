// skillbroker-mcp when its broker connection dies or cannot be made: the
// adapter talks to the daemon through a proxy socket of this test, which
// cuts the connection in the middle of a call and stops listening for a
// while. Calls in flight answer isError, the adapter stays up, and the
// next request connects again.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { McpError } from '@modelcontextprotocol/sdk/types.js';

import { SOCK, connect, noDaemon, text, until } from './lib.mjs';

let dir;
let proxy;
let path;
const links = [];

// Listen on path, passing each connection on to the daemon's socket.
function listen() {
  return new Promise((resolve) => {
    proxy = createServer((down) => {
      const up = createConnection(SOCK);
      down.pipe(up);
      up.pipe(down);
      const cut = () => {
        down.destroy();
        up.destroy();
      };
      down.on('error', cut);
      up.on('error', cut);
      down.on('close', cut);
      up.on('close', cut);
      links.push(cut);
    });
    proxy.listen(path, resolve);
  });
}

before(async () => {
  if (noDaemon) return;
  dir = mkdtempSync(join(tmpdir(), 'sb-mcp-proxy-'));
  path = join(dir, 'proxy.sock');
  await listen();
});
after(() => {
  if (proxy) proxy.close();
  for (const cut of links) cut();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a connection cut mid-call: isError, then the next call reconnects', { skip: noDaemon }, async () => {
  const c = await connect({ args: ['-s', path] }); // the last -s wins
  try {
    const r0 = await c.client.callTool({ name: 'echo-args.run', arguments: { args: ['before'] } });
    assert.equal(r0.content[0].text, 'before\n');
    const t0 = Date.now();
    const nap = c.client.callTool(
      { name: 'nap.run', arguments: { args: ['30'], session: `mcp-cut-${process.pid}` } },
      undefined,
      {
        timeout: 60000,
        onprogress: (p) => {
          if (/sent to the broker/.test(p.message)) setTimeout(() => links.forEach((cut) => cut()), 300);
        },
      },
    );
    const r = await nap;
    assert.ok(Date.now() - t0 < 5000, 'answered within seconds');
    assert.equal(r.isError, true);
    assert.match(text(r), /connection to the skillbroker daemon was lost/);
    await until(() => /connection to the broker was lost/.test(c.stderr()), 5000, 'the log line');
    const r1 = await c.client.callTool({ name: 'echo-args.run', arguments: { args: ['after'] } });
    assert.equal(r1.content[0].text, 'after\n');
  } finally {
    await c.client.close();
  }
});

test('a broker that cannot be reached: -32603 and isError, until it can', { skip: noDaemon }, async () => {
  const c = await connect({ args: ['-s', path] });
  try {
    const closed = new Promise((resolve) => proxy.close(resolve)); // unlinks the socket
    for (const cut of links) cut(); // close waits for them
    await closed;
    await assert.rejects(c.client.listTools(), (e) => {
      assert.ok(e instanceof McpError);
      assert.equal(e.code, -32603);
      assert.match(e.message, /cannot reach the skillbroker daemon/);
      return true;
    });
    const r = await c.client.callTool({ name: 'echo-args.run', arguments: { args: ['x'] } });
    assert.equal(r.isError, true);
    assert.match(text(r), /cannot reach the skillbroker daemon/);
    await listen();
    // after a failed connect the adapter waits (1 s, doubling) before it
    // tries again; meanwhile calls fail at once, saying so
    const t0 = Date.now();
    let ok;
    for (;;) {
      ok = await c.client.callTool({ name: 'echo-args.run', arguments: { args: ['back'] } });
      if (!ok.isError || Date.now() - t0 > 8000) break;
      assert.match(text(ok), /cannot reach the skillbroker daemon/);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.equal(ok.content[0].text, 'back\n');
  } finally {
    await c.client.close();
  }
});
