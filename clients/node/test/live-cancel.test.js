// live-cancel.test.js: a long nap call ended by an AbortSignal and by cancel().
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CancelledError, Client } from '../index.js';
import { SOCKET, liveSkip, session } from './helpers.js';

const nap = (s) => ({ phase: 'execution', args: ['30'], timeoutMs: 60000, session: s });
const PROMPT_MS = 3000; // a cancelled call must end within this of the cancel

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

describe('live: cancel', { skip: liveSkip, timeout: 120000 }, () => {
  let client;
  before(async () => {
    client = await Client.connect({ path: SOCKET });
  });
  after(() => client?.close());

  test('an AbortSignal ends a running call with CancelledError, promptly', async () => {
    const s = session('cancel-signal');
    const ac = new AbortController();
    const p = client.invoke('nap', { ...nap(s), signal: ac.signal }).catch((e) => e);
    await sleep(700);
    const t0 = Date.now();
    ac.abort();
    const err = await p;
    assert.ok(err instanceof CancelledError, String(err));
    assert.equal(err.type, 'cancelled');
    assert.ok(Date.now() - t0 < PROMPT_MS, `took ${Date.now() - t0} ms`);
    // the session is free again
    const r = await client.invoke('echo-args', { phase: 'execution', args: ['after'], session: s });
    assert.equal(r.stdout.toString(), 'after\n');
  });

  test('cancel(requestId) ends a running call with CancelledError, promptly', async () => {
    const p = client.invoke('nap', nap(session('cancel-call')));
    const settled = p.catch((e) => e);
    await sleep(700);
    const t0 = Date.now();
    const c = await client.cancel(p.requestId);
    assert.equal(c.requestId, p.requestId);
    assert.equal(typeof c.state, 'string');
    const err = await settled;
    assert.ok(err instanceof CancelledError, String(err));
    assert.equal(err.requestId, p.requestId);
    assert.ok(Date.now() - t0 < PROMPT_MS, `took ${Date.now() - t0} ms`);
  });
});
