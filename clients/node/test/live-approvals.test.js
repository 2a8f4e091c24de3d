// live-approvals.test.js: the confirm skill's ask rule, answered through approvalHandler.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApprovalDeniedError, Client } from '../index.js';
import { SOCKET, liveSkip, session, within } from './helpers.js';

const run = { phase: 'execution' };

describe('live: approvals', { skip: liveSkip, timeout: 120000 }, () => {
  const clients = [];
  const connect = async (opts = {}) => {
    const c = await Client.connect({ path: SOCKET, ...opts });
    clients.push(c);
    return c;
  };
  after(() => Promise.all(clients.map((c) => c.close())));

  test('answered yes_once: the call runs', async () => {
    const seen = [];
    const client = await connect({ approvalHandler: (req) => (seen.push(req), 'yes_once') });
    const p = client.invoke('confirm', { ...run, args: ['hi'], session: session('appr-yes') });
    const r = await p;
    assert.equal(r.stdout.toString(), 'hi\n');
    assert.match(r.policy.decisionReason, /approval/);
    assert.equal(seen.length, 1);
    assert.equal(seen[0].requestId, p.requestId);
    assert.equal(seen[0].skill, 'confirm');
    assert.equal(seen[0].command, 'run');
    assert.deepEqual(seen[0].args, ['hi']);
    assert.deepEqual(seen[0].options, ['yes_once', 'yes_in_session', 'no']);
    assert.match(seen[0].id, /^appr-\d+$/);
  });

  test('answered no: ApprovalDeniedError', async () => {
    const client = await connect({ approvalHandler: async () => 'no' });
    await assert.rejects(client.invoke('confirm', { ...run, args: ['no'], session: session('appr-no') }), (err) => {
      assert.ok(err instanceof ApprovalDeniedError, String(err));
      assert.equal(err.type, 'approval_denied');
      return true;
    });
  });

  test('a connection without a handler is denied at once', async () => {
    const client = await connect();
    await assert.rejects(within(5000, client.invoke('confirm', { ...run, session: session('appr-none') })), (err) => {
      assert.ok(err instanceof ApprovalDeniedError, String(err));
      assert.match(err.message, /does not answer approval requests/);
      return true;
    });
  });

  test('a pending approval is listed, then answered by hand with approve()', async () => {
    let asked;
    const waiting = new Promise((resolve) => (asked = resolve));
    const client = await connect({ approvalHandler: (req) => (asked(req), null) }); // null: not answered
    const other = await connect();
    const s = session('appr-hand');
    const p = client.invoke('confirm', { ...run, args: ['by hand'], session: s });
    const req = await waiting;
    const listed = await other.approvals();
    const mine = listed.find((a) => a.id === req.id);
    assert.ok(mine, 'listed');
    assert.equal(mine.session, s);
    assert.equal(mine.requestId, p.requestId);
    assert.deepEqual(await client.approve(req.id, 'yes_once'), { approvalId: req.id });
    assert.equal((await p).stdout.toString(), 'by hand\n');
  });
});
