// socket-path.test.js: the socket is found as skillctl finds it (docs/skillctl.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEV_SOCKET, SYSTEM_SOCKET, resolveSocketPath } from '../index.js';

const none = () => false;
const only = (p) => (q) => q === p;

test('the path option wins', () => {
  assert.equal(resolveSocketPath('/x.sock', { SKILLBROKER_SOCKET: '/y.sock' }, none), '/x.sock');
});

test('then SKILLBROKER_SOCKET, when set and non-empty', () => {
  assert.equal(resolveSocketPath(undefined, { SKILLBROKER_SOCKET: '/y.sock' }, none), '/y.sock');
  assert.equal(resolveSocketPath(undefined, { SKILLBROKER_SOCKET: '' }, none), SYSTEM_SOCKET);
});

test('then the system socket, unless only ./run/skillbroker.sock exists', () => {
  assert.equal(SYSTEM_SOCKET, '/run/skillbroker/skillbroker.sock');
  assert.equal(resolveSocketPath(undefined, {}, none), SYSTEM_SOCKET);
  assert.equal(resolveSocketPath(undefined, {}, only(DEV_SOCKET)), 'run/skillbroker.sock');
  assert.equal(resolveSocketPath(undefined, {}, () => true), SYSTEM_SOCKET);
  assert.equal(resolveSocketPath(undefined, {}, only(SYSTEM_SOCKET)), SYSTEM_SOCKET);
});
