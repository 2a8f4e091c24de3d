// live-files.test.js: session files through put/get (chunked, checked) and the four requests.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Client, NotFoundError } from '../index.js';
import { SOCKET, liveSkip, session } from './helpers.js';

describe('live: session files', { skip: liveSkip, timeout: 120000 }, () => {
  let client;
  before(async () => {
    client = await Client.connect({ path: SOCKET });
  });
  after(() => client?.close());

  test('put and get of 3 MiB, more than one chunk, come back the same', async () => {
    const s = session('files-big');
    const data = randomBytes(3 * 1024 * 1024);
    const sha = createHash('sha256').update(data).digest('hex');
    assert.ok(client.limits.put_file_bytes < data.length, 'one chunk would not do');
    let puts = 0;
    const putFile = client.putFile.bind(client);
    client.putFile = (...a) => (puts++, putFile(...a));
    let put;
    try {
      put = await client.put(s, 'in/big.bin', data);
    } finally {
      delete client.putFile;
    }
    assert.equal(puts, Math.ceil(data.length / client.limits.put_file_bytes));
    assert.equal(put.sizeBytes, data.length);
    assert.equal(put.sha256, sha);
    const back = await client.get(s, 'in/big.bin');
    assert.equal(back.length, data.length);
    assert.ok(back.equals(data), 'same bytes');
    const list = await client.listFiles(s);
    const entry = list.files.find((f) => f.path === 'in/big.bin');
    assert.deepEqual(entry, { path: 'in/big.bin', kind: 'file', sizeBytes: data.length, sha256: sha });
    assert.ok(list.files.some((f) => f.path === 'in' && f.kind === 'dir'));
    await client.sessionEnd(s);
  });

  test('getFile, deleteFile, an empty file and a missing one', async () => {
    const s = session('files-small');
    await client.put(s, 'a.txt', 'hello world\n');
    const part = await client.getFile(s, 'a.txt', { offset: 6, length: 5 });
    assert.equal(part.data.toString(), 'world');
    assert.equal(part.eof, false);
    assert.equal(part.sizeBytes, 12);
    await client.put(s, 'empty', Buffer.alloc(0));
    assert.equal((await client.get(s, 'empty')).length, 0);
    const gone = await client.deleteFile(s, 'a.txt');
    assert.equal(gone.kind, 'file');
    assert.equal(gone.sizeBytes, 12);
    await assert.rejects(client.get(s, 'a.txt'), NotFoundError);
    await assert.rejects(client.get(session('files-none'), 'x'), NotFoundError);
    await client.sessionEnd(s);
  });
});
