// socket-path.test.js: the socket is the option, the environment's, or the installed one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SYSTEM_SOCKET, resolveSocketPath } from '../index.js';

test('the path option wins', () => {
  assert.equal(resolveSocketPath('/x.sock', { SKILLBROKER_SOCKET: '/y.sock' }), '/x.sock');
});

test('then SKILLBROKER_SOCKET, when set and non-empty', () => {
  assert.equal(resolveSocketPath(undefined, { SKILLBROKER_SOCKET: '/y.sock' }), '/y.sock');
  assert.equal(resolveSocketPath(undefined, { SKILLBROKER_SOCKET: '' }), SYSTEM_SOCKET);
});

test('then the system socket, never one planted in the current directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-sock-'));
  const cwd = process.cwd();
  try {
    mkdirSync(join(dir, 'run'));
    writeFileSync(join(dir, 'run', 'skillbroker.sock'), '');
    process.chdir(dir);
    assert.equal(SYSTEM_SOCKET, '/run/skillbroker/skillbroker.sock');
    assert.equal(resolveSocketPath(undefined, {}), SYSTEM_SOCKET);
  } finally {
    process.chdir(cwd);
    rmSync(dir, { recursive: true });
  }
});
