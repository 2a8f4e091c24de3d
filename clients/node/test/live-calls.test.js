// live-calls.test.js: calls against the suite's daemon and its shared policy (tests/clients/run.sh).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Client,
  InvokeResult,
  NotFoundError,
  PermissionDeniedError,
  PhaseViolationError,
  SkillNotEnabledError,
  UnknownSkillError,
} from '../index.js';
import { SOCKET, liveSkip, session } from './helpers.js';

const run = { phase: 'execution' };

describe('live: calls', { skip: liveSkip, timeout: 120000 }, () => {
  let client;
  before(async () => {
    client = await Client.connect({ path: SOCKET });
  });
  after(() => client?.close());

  test('hello is kept: protocol 2, the principal, the limits', () => {
    assert.equal(client.protocol, 2);
    assert.equal(client.hello.server, 'skillbroker');
    assert.equal(typeof client.principal.uid, 'number');
    assert.ok(client.limits.max_frame_bytes > 0);
    assert.ok(client.limits.put_file_bytes > 0);
  });

  test('50 concurrent calls on one connection all succeed with their own output', async () => {
    const calls = [];
    const names = [];
    for (let i = 0; i < 50; i++) {
      names.push(session('conc'));
      calls.push(client.invoke('echo-args', 'run', { ...run, args: ['call', String(i)], session: names[i] }));
    }
    assert.equal(new Set(calls.map((p) => p.requestId)).size, 50);
    const out = await Promise.all(calls);
    out.forEach((r, i) => {
      assert.ok(r instanceof InvokeResult);
      assert.equal(r.ok, true);
      assert.equal(r.exitCode, 0);
      assert.equal(r.stdout.toString(), `call ${i}\n`);
      assert.equal(r.requestId, calls[i].requestId);
    });
    // 50 sessions are most of the uid's bound: give them back
    await Promise.all(names.map((s) => client.sessionEnd(s)));
  });

  test('a non-zero exit is a result, not an error: exit code 7', async () => {
    const r = await client.invoke('exit-code', run);
    assert.equal(r.ok, true);
    assert.equal(r.exitCode, 7);
    assert.equal(r.signal, null);
    assert.equal(r.stdout.toString(), 'exiting 7\n');
    assert.equal(r.command, 'run');
    assert.equal(typeof r.durationMs, 'number');
    assert.equal(r.truncated, false);
    assert.equal(r.stdoutBytes, 10);
    assert.match(r.timestampUtc, /^\d{4}-\d\d-\d\dT.*Z$/);
  });

  test('a denied call rejects with PermissionDeniedError', async () => {
    const p = client.invoke('whoami', run);
    await assert.rejects(p, (err) => {
      assert.ok(err instanceof PermissionDeniedError, String(err));
      assert.equal(err.type, 'permission_denied');
      assert.match(err.message, /clients-deny/);
      assert.equal(err.requestId, p.requestId);
      assert.equal(err.result.policy.allowed, false);
      return true;
    });
  });

  test('a skill that is not enabled rejects with SkillNotEnabledError', async () => {
    await assert.rejects(client.invoke('sleeper', run), (err) => {
      assert.ok(err instanceof SkillNotEnabledError, String(err));
      assert.equal(err.type, 'skill_not_enabled');
      assert.ok(err.message.length > 0);
      return true;
    });
  });

  test('the default phase is planning, which is denied', async () => {
    await assert.rejects(client.invoke('echo-args', { args: ['x'] }), PhaseViolationError);
  });

  test('an unknown skill rejects with UnknownSkillError', async () => {
    await assert.rejects(client.invoke('no-such-skill', run), UnknownSkillError);
  });

  test('authorize decides without running', async () => {
    const r = await client.authorize('echo-args', 'run', run);
    assert.equal(r.policy.allowed, true);
    assert.equal(r.started, false);
    assert.ok(Array.isArray(r.effective.programs));
    await assert.rejects(client.authorize('whoami', run), PermissionDeniedError);
  });

  test('skills and skill_info', async () => {
    const names = (await client.skills()).map((s) => s.name);
    for (const n of ['echo-args', 'exit-code', 'nap', 'confirm', 'files']) assert.ok(names.includes(n), n);
    const info = await client.skillInfo('nap', { references: true });
    assert.equal(info.name, 'nap');
    assert.match(info.body, /nap SECONDS/);
    assert.deepEqual(info.commands.map((c) => c.name), ['run']);
    // a skill an ask rule covers is seen, its command marked ask
    const confirm = await client.skillInfo('confirm');
    assert.deepEqual(confirm.commands.map((c) => [c.name, c.allowed, c.ask]), [['run', false, true]]);
    await assert.rejects(client.skillInfo('whoami'), UnknownSkillError);
  });

  test('last_result keeps the session\'s last result; session_end ends it', async () => {
    const s = session('last');
    const r = await client.invoke('echo-args', { ...run, args: ['kept'], session: s });
    const last = await client.lastResult(s);
    assert.equal(last.requestId, r.requestId);
    assert.equal(last.stdout.toString(), 'kept\n');
    assert.deepEqual(await client.sessionEnd(s), { session: s });
    await assert.rejects(client.lastResult(s), NotFoundError);
  });

  test('stats, and a cancel of nothing in flight', async () => {
    const st = await client.stats();
    assert.equal(typeof st.calls.ok, 'number');
    assert.equal(Object.keys(st.calls).length, 20);
    await assert.rejects(client.cancel('nothing-here'), NotFoundError);
  });
});
