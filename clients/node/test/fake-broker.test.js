// fake-broker.test.js: the Client against a fake broker that misbehaves, with no daemon.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encode } from '@msgpack/msgpack';
import {
  BadRequestError,
  CancelledError,
  Client,
  OverloadedError,
  PermissionDeniedError,
  ProtocolError,
} from '../index.js';
import { clientFor, fakeFor, frame, helloReply, reply, within } from './helpers.js';

const LIMIT = 5000; // ms any of these may take: nothing hangs

// A fake broker that answers stats with bytes, then the pending call's fate.
async function afterStats(t, bytes, { close = false } = {}) {
  const fake = await fakeFor(t, (req, conn) => {
    if (req.type !== 'stats') return;
    conn.write(bytes);
    if (close) conn.end();
  });
  const client = await clientFor(t, Client, { path: fake.path });
  const err = await within(LIMIT, client.stats().then(() => null, (e) => e), 'stats');
  return { err, client };
}

test('an oversized length rejects the call with ProtocolError at once', async (t) => {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(0xffffffff, 0);
  const { err, client } = await afterStats(t, head); // the broker sends no body, keeps the connection
  assert.ok(err instanceof ProtocolError, String(err));
  assert.match(err.message, /4294967295 bytes/);
  assert.equal(client.closed, true);
});

test('a body that is not a map rejects with ProtocolError', async (t) => {
  const { err } = await afterStats(t, frame(encode([1, 2, 3])));
  assert.ok(err instanceof ProtocolError, String(err));
  assert.match(err.message, /not a map/);
});

test('trailing bytes in a body reject with ProtocolError', async (t) => {
  const body = Buffer.concat([Buffer.from(encode({ type: 'stats', id: 2, ok: true })), Buffer.from([0x01])]);
  const { err } = await afterStats(t, frame(body));
  assert.ok(err instanceof ProtocolError, String(err));
});

test('a truncated frame and then a close reject with ProtocolError', async (t) => {
  const full = reply({ type: 'stats', id: 2, ok: true, uptime_s: 1 });
  const { err } = await afterStats(t, full.subarray(0, full.length - 3), { close: true });
  assert.ok(err instanceof ProtocolError, String(err));
  assert.match(err.message, /middle of a frame/);
});

test('a close with calls in flight rejects every one of them', async (t) => {
  const fake = await fakeFor(t, (req, conn) => {
    if (req.id === 4) conn.end(); // after three calls are in
  });
  const client = await clientFor(t, Client, { path: fake.path });
  const calls = [client.stats(), client.skills(), client.approvals(), client.stats()];
  const out = await within(LIMIT, Promise.allSettled(calls), 'the calls');
  for (const r of out) {
    assert.equal(r.status, 'rejected');
    assert.ok(r.reason instanceof ProtocolError);
  }
  assert.deepEqual(out.map((r) => r.reason.requestId), [2, 3, 4, 5]);
  await assert.rejects(client.stats(), ProtocolError); // and every later call
});

test('an error without id before the close is what the calls reject with', async (t) => {
  // the broker's refusal of a connection: one error, id nil, then the close
  const fake = await fakeFor(t, (req, conn) => {
    conn.send({ type: 'error', id: null, ok: false, error: { type: 'overloaded', message: 'per_uid.clients', details: {} } });
    conn.end();
  }, { hello: false });
  await assert.rejects(within(LIMIT, Client.connect({ path: fake.path })), (err) => {
    assert.ok(err instanceof OverloadedError, String(err));
    assert.equal(err.message, 'per_uid.clients');
    return true;
  });
});

test('replies out of order reach their own calls', async (t) => {
  const held = [];
  const fake = await fakeFor(t, (req, conn) => {
    held.push(req);
    if (held.length < 3) return;
    for (const r of held.reverse()) {
      conn.send({ type: 'cancel', id: r.id, ok: true, request_id: r.request_id, state: `s${r.request_id}` });
    }
  });
  const client = await clientFor(t, Client, { path: fake.path });
  const out = await within(LIMIT, Promise.all([client.cancel(10), client.cancel('x'), client.cancel(12)]));
  assert.deepEqual(out, [
    { requestId: 10, state: 's10' },
    { requestId: 'x', state: 'sx' },
    { requestId: 12, state: 's12' },
  ]);
});

test('an error reply rejects with its typed error, and the connection goes on', async (t) => {
  const fake = await fakeFor(t, (req, conn) => {
    if (req.type === 'reload') {
      conn.send({ type: 'error', id: req.id, ok: false, error: { type: 'permission_denied', message: 'not an admin', details: { a: 1 } } });
    } else conn.send({ type: 'stats', id: req.id, ok: true, uptime_s: 3 });
  });
  const client = await clientFor(t, Client, { path: fake.path });
  const p = client.reload();
  await assert.rejects(p, (err) => {
    assert.ok(err instanceof PermissionDeniedError);
    assert.equal(err.type, 'permission_denied');
    assert.equal(err.message, 'not an admin');
    assert.deepEqual(err.details, { a: 1 });
    assert.equal(err.requestId, p.requestId);
    return true;
  });
  assert.equal((await client.stats()).uptime_s, 3);
});

test('a reply of the wrong type rejects its call with ProtocolError', async (t) => {
  const fake = await fakeFor(t, (req, conn) => conn.send({ type: 'skills', id: req.id, ok: true, skills: [] }));
  const client = await clientFor(t, Client, { path: fake.path });
  await assert.rejects(within(LIMIT, client.stats()), (err) => err instanceof ProtocolError && /"skills" reply/.test(err.message));
  assert.equal(client.closed, false);
});

test('hello says protocol 2, and approvals only with a handler', async (t) => {
  const fake = await fakeFor(t, () => {});
  const a = await clientFor(t, Client, { path: fake.path });
  const b = await clientFor(t, Client, { path: fake.path, approvalHandler: () => null });
  assert.deepEqual(fake.requests[0], { type: 'hello', id: 1, protocol: 2 });
  assert.deepEqual(fake.requests[1], { type: 'hello', id: 1, protocol: 2, approvals: true });
  assert.equal(a.limits.put_file_bytes, 1047040);
});

test('an approval_request is answered by approve with its id, as the handler says', async (t) => {
  const seen = [];
  const fake = await fakeFor(t, (req, conn) => {
    if (req.type === 'invoke') {
      conn.send({
        type: 'approval_request', id: `appr-${req.id}`, request_id: req.id, skill: req.skill, command: 'run',
        session: 'default', args: req.args, args_total: req.args.length, effective: {}, rules: ['f.yaml:1 r'],
        options: ['yes_once', 'yes_in_session', 'no'], timeout_ms: 4000,
      });
    } else if (req.type === 'approve') {
      seen.push(req);
      conn.send({ type: 'approve', id: req.id, ok: true, approval_id: req.approval_id });
      const rid = Number(req.approval_id.slice(5));
      conn.send({ type: 'result', id: rid, ok: true, skill: 'confirm', command: 'run', output: { stdout: Buffer.from(req.option) }, effects: { process: { exit_code: 0 } } });
    }
  });
  const answers = { a: 'yes_once', b: 'no', c: 'boom' };
  const client = await clientFor(t, Client, {
    path: fake.path,
    approvalHandler: async (r) => {
      assert.equal(r.skill, 'confirm');
      if (answers[r.args[0]] === 'boom') throw new Error('handler failed');
      return answers[r.args[0]];
    },
  });
  const errors = [];
  client.on('approvalError', (err) => errors.push(err.message));
  const out = await within(LIMIT, Promise.all(['a', 'b', 'c'].map((x) => client.invoke('confirm', { args: [x] }))));
  assert.deepEqual(out.map((r) => r.stdout.toString()), ['yes_once', 'no', 'no']);
  assert.deepEqual(seen.map((r) => [r.approval_id, r.option]), [['appr-2', 'yes_once'], ['appr-3', 'no'], ['appr-4', 'no']]);
  assert.ok(seen.every((r) => typeof r.id === 'number' && r.id > 4), 'approve has an id of its own');
  assert.deepEqual(errors, ['handler failed']);
});

test('an aborted signal sends cancel for the call; its cancelled reply rejects it', async (t) => {
  const fake = await fakeFor(t, (req, conn) => {
    if (req.type === 'cancel') {
      conn.send({ type: 'cancel', id: req.id, ok: true, request_id: req.request_id, state: 'running' });
      conn.send({ type: 'result', id: req.request_id, ok: false, skill: 'nap', command: 'run', error: { type: 'cancelled', message: 'cancelled by the client', details: {} } });
    }
  });
  const client = await clientFor(t, Client, { path: fake.path });
  const ac = new AbortController();
  const p = client.invoke('nap', 'run', { args: ['30'], phase: 'execution', signal: ac.signal });
  setTimeout(() => ac.abort(), 20);
  await assert.rejects(within(LIMIT, p), (err) => err instanceof CancelledError && err.requestId === p.requestId);
  const cancel = fake.requests.find((r) => r.type === 'cancel');
  assert.equal(cancel.request_id, p.requestId);
  // a signal aborted before the call: nothing is sent
  const before = fake.requests.length;
  await assert.rejects(within(LIMIT, client.invoke('nap', { signal: AbortSignal.abort() })), CancelledError);
  assert.equal(fake.requests.length, before);
});

test('a request the broker would close the connection for fails alone', async (t) => {
  const fake = await fakeFor(t, (req, conn) => conn.send({ type: 'stats', id: req.id, ok: true }));
  const client = await clientFor(t, Client, { path: fake.path });
  await assert.rejects(client.invoke('echo-args', { args: ['a\0b'] }), BadRequestError);
  await assert.rejects(client.invoke('echo-args', { timeoutMs: 0.5 }), BadRequestError);
  await assert.rejects(client.invoke('echo-args', { timeout: 5 }), TypeError);
  assert.ok(await client.stats());
  assert.deepEqual(fake.requests.map((r) => r.type), ['hello', 'stats']);
});

test('calls beyond the in-flight bound wait unsent until one ends', async (t) => {
  const held = [];
  const fake = await fakeFor(t, (req, conn) => {
    held.push(req);
    if (held.length === 2) {
      setTimeout(() => conn.send({ type: 'skills', id: held[0].id, ok: true, skills: [] }), 50);
    }
    if (held.length === 3) for (const r of held.slice(1)) conn.send({ type: 'skills', id: r.id, ok: true, skills: [] });
  }, { limits: { in_flight: 2 } });
  const client = await clientFor(t, Client, { path: fake.path });
  const calls = [client.skills(), client.skills(), client.skills()];
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(held.length, 2, 'the third waits');
  await within(LIMIT, Promise.all(calls));
  assert.equal(held.length, 3);
});

test('connecting to nothing is a ProtocolError', async (t) => {
  await assert.rejects(Client.connect({ path: '/nonexistent/skillbroker.sock' }), (err) => {
    assert.ok(err instanceof ProtocolError);
    assert.match(err.message, /cannot connect/);
    return true;
  });
});

test('the hello reply is matched and kept', async (t) => {
  const fake = await fakeFor(t, () => {});
  const client = await clientFor(t, Client, { path: fake.path });
  assert.deepEqual(client.hello, helloReply(1));
  assert.equal(client.protocol, 2);
});
