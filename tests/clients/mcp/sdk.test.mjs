// skillbroker-mcp driven by the MCP TypeScript SDK's Client over stdio,
// against the daemon of tests/clients/run.sh (its policy: echo-args,
// exit-code, nap and files allowed, confirm asked, whoami denied).
// The tests run one after another: the last one changes the policy for
// a while.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { unlinkSync, writeFileSync } from 'node:fs';
import { after, before, test } from 'node:test';

import {
  LATEST_PROTOCOL_VERSION,
  McpError,
  ResourceListChangedNotificationSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

import { connect, daemon, noDaemon, text, until } from './lib.mjs';

let c; // a client without elicitation, shared by the plain tests

before(async () => {
  if (!noDaemon) c = await connect();
});
after(async () => {
  if (c) await c.client.close();
});

test('initialize: the latest revision, tools and resources', { skip: noDaemon }, (t) => {
  const v = c.client.getServerVersion();
  assert.equal(v.name, 'skillbroker-mcp');
  assert.match(v.version, /^\d+\.\d+\.\d+$/);
  const caps = c.client.getServerCapabilities();
  assert.equal(caps.tools.listChanged, true);
  assert.ok(caps.resources);
  assert.ok(SUPPORTED_PROTOCOL_VERSIONS.includes(c.seen.protocolVersion));
  assert.equal(c.seen.protocolVersion, LATEST_PROTOCOL_VERSION);
  t.diagnostic(`negotiated protocol ${c.seen.protocolVersion} (SDK latest ${LATEST_PROTOCOL_VERSION})`);
});

test('tools/list: the commands this user may run, with valid names', { skip: noDaemon }, async () => {
  const { tools } = await c.client.listTools();
  const names = tools.map((x) => x.name);
  for (const n of ['echo-args.run', 'echo-args.other', 'exit-code.run', 'nap.run', 'confirm.run']) {
    assert.ok(names.includes(n), `${n} in ${names}`);
  }
  assert.ok(!names.includes('whoami.run'), 'whoami is denied: not listed');
  for (const x of tools) {
    assert.match(x.name, /^[A-Za-z0-9._-]{1,128}$/);
    assert.equal(x.inputSchema.type, 'object');
    assert.equal(x.inputSchema.additionalProperties, false);
  }
  const echo = tools.find((x) => x.name === 'echo-args.run');
  assert.match(echo.description, /Prints its arguments/);
  assert.match(tools.find((x) => x.name === 'confirm.run').description, /asks a human/);
});

test('tools/call: an allowed skill answers its output', { skip: noDaemon }, async () => {
  const progress = [];
  const r = await c.client.callTool(
    { name: 'echo-args.run', arguments: { args: ['hello', 'world'] } },
    undefined,
    { onprogress: (p) => progress.push(p) },
  );
  assert.equal(r.isError, false);
  assert.equal(r.content[0].type, 'text');
  assert.equal(r.content[0].text, 'hello world\n');
  assert.equal(r.structuredContent.exit_code, 0);
  assert.equal(r.structuredContent.stdout, 'hello world\n');
  assert.ok(progress.length >= 1, 'progress notifications');
  assert.ok(progress.some((p) => /sent to the broker/.test(p.message)));
});

test('tools/call: stdin, env and a non-zero exit', { skip: noDaemon }, async () => {
  const r = await c.client.callTool({ name: 'exit-code.run', arguments: { stdin: 'ignored', env: { A: 'b' } } });
  assert.equal(r.isError, true);
  assert.equal(r.structuredContent.exit_code, 7);
  assert.match(text(r), /exiting 7/);
  assert.match(text(r), /exit code: 7/);
});

test('tools/call: a result longer than a broker frame comes whole', { skip: noDaemon }, async () => {
  const n = 3 * 1000 * 1000; // bigout: 3 MB of "x", under the suite's 4 MiB output cap
  const r = await c.client.callTool({ name: 'bigout.run', arguments: { args: [String(n)] } });
  assert.equal(r.isError, false, text(r).slice(0, 300));
  assert.equal(r.content[0].text.length, n);
  assert.equal(r.structuredContent.truncated, false);
  await c.client.ping();
});

test('tools/call: a denied skill is isError with permission_denied', { skip: noDaemon }, async () => {
  const r = await c.client.callTool({ name: 'whoami.run', arguments: {} });
  assert.equal(r.isError, true);
  assert.match(text(r), /permission_denied/);
  assert.equal(r.structuredContent.error.type, 'permission_denied');
});

test('tools/call: unknown tool and bad arguments are -32602', { skip: noDaemon }, async () => {
  for (const [params, re] of [
    [{ name: 'no-such-skill.run', arguments: {} }, /Unknown tool/],
    [{ name: 'echo-args.run', arguments: { args: 'hello' } }, /args must be an array/],
    [{ name: 'echo-args.run', arguments: { argv: [] } }, /unknown property "argv"/],
    [{ name: 'echo-args.run', arguments: { timeout_ms: 1.5 } }, /timeout_ms/],
    [{ name: 'echo-args.run', arguments: { files: [{ path: '../x', content: 'a' }] } }, /files\[0\]\.path/],
  ]) {
    await assert.rejects(c.client.callTool(params), (e) => {
      assert.ok(e instanceof McpError, String(e));
      assert.equal(e.code, -32602);
      assert.match(e.message, re);
      return true;
    });
  }
});

test('tools/call: files are put into the session first', { skip: noDaemon }, async () => {
  const big = 'b'.repeat(2500 * 1024); // more than one put_file
  const session = `mcp-files-${process.pid}`;
  const r = await c.client.callTool({
    name: 'files.list',
    arguments: {
      session,
      files: [
        { path: 'in/a.txt', content: 'hello file\n' },
        { path: 'big.txt', content: big },
      ],
    },
  });
  assert.equal(r.isError, false, text(r));
  const listing = r.structuredContent.stdout;
  assert.ok(listing.includes('in/a.txt'), listing);
  assert.ok(listing.includes(createHash('sha256').update(big).digest('hex')), 'big.txt whole');
  const g = await c.client.callTool({
    name: 'files.get',
    arguments: { session, args: ['in/a.txt', '0'], stdin: '100' },
  });
  assert.ok(g.structuredContent.stdout.includes('hello file\n'));
});

test('cancel: an aborted call ends, its skill is killed, the adapter goes on', { skip: noDaemon }, async () => {
  const session = `mcp-cancel-${process.pid}`;
  const ac = new AbortController();
  const t0 = Date.now();
  // 30 s of sleep, within a timeout of 40 s: only a cancel ends it soon
  const call = c.client.callTool({ name: 'nap.run', arguments: { args: ['30'], session, timeout_ms: 40000 } }, undefined, {
    signal: ac.signal,
    timeout: 60000,
    onprogress: (p) => {
      if (/sent to the broker/.test(p.message)) setTimeout(() => ac.abort('the test cancels'), 500);
    },
  });
  await assert.rejects(call);
  assert.ok(Date.now() - t0 < 5000, 'the call ended within seconds');
  // The same session runs one call at a time: this one runs at once
  // only if the nap was killed.
  const t1 = Date.now();
  const r = await c.client.callTool({ name: 'echo-args.run', arguments: { args: ['after'], session } });
  assert.equal(r.content[0].text, 'after\n');
  assert.ok(Date.now() - t1 < 5000, `the session was free (${Date.now() - t1} ms)`);
  await c.client.ping();
  // no answer came for the cancelled request
  assert.deepEqual(
    c.seen.errors.map((e) => String(e)),
    [],
  );
});

test('resources: a skill instructions, and an unknown one', { skip: noDaemon }, async () => {
  const { resources } = await c.client.listResources();
  const uris = resources.map((r) => r.uri);
  assert.ok(uris.includes('skill://nap/SKILL.md'), uris.join(' '));
  assert.ok(!uris.includes('skill://whoami/SKILL.md'));
  const nap = resources.find((r) => r.uri === 'skill://nap/SKILL.md');
  assert.equal(nap.mimeType, 'text/markdown');
  const { contents } = await c.client.readResource({ uri: 'skill://nap/SKILL.md' });
  assert.equal(contents[0].uri, 'skill://nap/SKILL.md');
  assert.match(contents[0].text, /nap SECONDS/);
  for (const uri of ['skill://whoami/SKILL.md', 'skill://no-such/SKILL.md', 'file:///etc/passwd']) {
    await assert.rejects(c.client.readResource({ uri }), (e) => {
      assert.equal(e.code, -32002);
      return true;
    });
  }
});

test('approval: elicitation accepted with yes_once runs the skill', { skip: noDaemon }, async () => {
  const asked = [];
  const e = await connect({
    elicit: async (req) => {
      asked.push(req.params);
      return { action: 'accept', content: { answer: 'yes_once' } };
    },
  });
  try {
    const progress = [];
    const r = await e.client.callTool(
      { name: 'confirm.run', arguments: { args: ['hi'], session: `mcp-yes-${process.pid}` } },
      undefined,
      { onprogress: (p) => progress.push(p.message) },
    );
    assert.equal(r.isError, false, text(r));
    assert.equal(r.content[0].text, 'hi\n');
    assert.equal(asked.length, 1);
    assert.match(asked[0].message, /Skill: confirm/);
    assert.match(asked[0].message, /Command: run/);
    assert.match(asked[0].message, /"hi"/);
    assert.match(asked[0].message, /Permissions:/);
    assert.deepEqual(asked[0].requestedSchema.properties.answer.enum, ['yes_once', 'yes_in_session', 'no']);
    assert.ok(progress.some((m) => /waiting for a human's approval/.test(m)), progress.join(' | '));
  } finally {
    await e.client.close();
  }
});

test('approval: yes_in_session approves the skill\'s later calls in the session', { skip: noDaemon }, async () => {
  let asked = 0;
  const e = await connect({
    elicit: async () => {
      asked++;
      return { action: 'accept', content: { answer: 'yes_in_session' } };
    },
  });
  try {
    const session = `mcp-session-${process.pid}`;
    for (const word of ['one', 'two']) {
      const r = await e.client.callTool({ name: 'confirm.run', arguments: { args: [word], session } });
      assert.equal(r.isError, false, text(r));
      assert.equal(r.content[0].text, `${word}\n`);
    }
    assert.equal(asked, 1, 'asked once for the session');
  } finally {
    await e.client.close();
  }
});

test('approval: declined, or answered no, is approval_denied', { skip: noDaemon }, async () => {
  for (const answer of [{ action: 'decline' }, { action: 'cancel' }, { action: 'accept', content: { answer: 'no' } }]) {
    const e = await connect({ elicit: async () => answer });
    try {
      const r = await e.client.callTool({
        name: 'confirm.run',
        arguments: { args: ['hi'], session: `mcp-no-${process.pid}` },
      });
      assert.equal(r.isError, true, JSON.stringify(answer));
      assert.match(text(r), /approval_denied/);
      assert.equal(r.structuredContent.error.type, 'approval_denied');
    } finally {
      await e.client.close();
    }
  }
});

test('approval: a call cancelled while it waits for its approval withdraws the question', { skip: noDaemon }, async () => {
  let withdrawn = false;
  let asked;
  const wasAsked = new Promise((r) => (asked = r));
  const e = await connect({
    elicit: (req, extra) =>
      new Promise((resolve) => {
        asked();
        extra.signal.addEventListener('abort', () => {
          withdrawn = true;
          resolve({ action: 'decline' });
        });
      }),
  });
  try {
    const session = `mcp-wait-${process.pid}`;
    const ac = new AbortController();
    const call = e.client.callTool({ name: 'confirm.run', arguments: { args: ['hi'], session } }, undefined, {
      signal: ac.signal,
    });
    await wasAsked;
    ac.abort('the test cancels');
    await assert.rejects(call);
    await until(() => withdrawn, 5000, 'notifications/cancelled for the elicitation');
    // the broker ended the call: its session takes the next one at once
    const r = await e.client.callTool({ name: 'echo-args.run', arguments: { args: ['next'], session } });
    assert.equal(r.content[0].text, 'next\n');
  } finally {
    await e.client.close();
  }
});

test('approval: a host without elicitation is told so', { skip: noDaemon }, async () => {
  const r = await c.client.callTool({ name: 'confirm.run', arguments: { args: ['hi'] } });
  assert.equal(r.isError, true);
  assert.match(text(r), /approval_denied/);
  assert.match(text(r), /does not support elicitation/);
});

test('list_changed: a policy reload is noticed by the poll', { skip: noDaemon }, async (t) => {
  const d = daemon();
  if (!d) {
    t.skip(`no skillbrokerd -f ${SOCK_DIR()}/sb.yaml found to reload`);
    return;
  }
  const file = `${d.policyDir}/90-mcp-list-changed.yaml`;
  const l = await connect({ args: ['--poll-s', '1'] });
  let tools = 0;
  let resources = 0;
  l.client.setNotificationHandler(ToolListChangedNotificationSchema, () => tools++);
  l.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => resources++);
  try {
    assert.ok((await l.client.listTools()).tools.some((x) => x.name === 'exit-code.run'));
    await new Promise((r) => setTimeout(r, 1500)); // a poll with no change
    assert.equal(tools, 0, 'no change, no notification');
    writeFileSync(
      file,
      'rules:\n  - name: mcp-list-changed\n    principals: ["*"]\n    skills: [exit-code]\n    action: deny\n',
    );
    process.kill(d.pid, 'SIGHUP');
    await until(() => tools >= 1 && resources >= 1, 15000, 'notifications/tools/list_changed');
    const names = (await l.client.listTools()).tools.map((x) => x.name);
    assert.ok(!names.includes('exit-code.run'), 'exit-code denied: gone');
    assert.ok(names.includes('echo-args.run'));
    unlinkSync(file);
    process.kill(d.pid, 'SIGHUP');
    await until(() => tools >= 2, 15000, 'the second notifications/tools/list_changed');
    assert.ok((await l.client.listTools()).tools.some((x) => x.name === 'exit-code.run'));
  } finally {
    try {
      unlinkSync(file);
      process.kill(d.pid, 'SIGHUP');
    } catch {
      /* already gone */
    }
    await l.client.close();
  }
});

function SOCK_DIR() {
  return (process.env.SKILLBROKER_SOCKET || '').replace(/\/[^/]*$/, '');
}
