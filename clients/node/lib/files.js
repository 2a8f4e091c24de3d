// files.js: whole-file put and get over put_file/get_file chunks, checked by size and sha256.
import { createHash } from 'node:crypto';
import { ProtocolError, UnsupportedError } from './errors.js';

const SHA_HEX = /^[0-9a-f]{64}$/;

function mismatch(message, details) {
  return new ProtocolError(message, { details });
}

function asBytes(data) {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (data instanceof Uint8Array) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  throw new TypeError('data must be a Buffer, a Uint8Array or a string');
}

/**
 * Puts data as session/path: chunks of at most hello's put_file_bytes,
 * each appended where the last reply said the file ends; every reply
 * must name the path and the size sent so far, and the last one's
 * sha256 must be that of data. Returns the last reply.
 * @param {import('./client.js').Client} client
 */
export async function putWhole(client, session, path, data, opts = {}) {
  const bytes = asBytes(data);
  const chunk = client.limits.put_file_bytes;
  if (typeof chunk !== 'number' || chunk <= 0) {
    throw new UnsupportedError('the broker serves no put_file (its hello has no limits.put_file_bytes)');
  }
  const hash = createHash('sha256').update(bytes).digest('hex');
  let sent = 0;
  let last;
  do {
    const piece = bytes.subarray(sent, sent + chunk);
    last = await client.putFile(session, path, piece, { ...opts, offset: sent });
    sent += piece.length;
    if (last.path !== path) {
      throw mismatch(`put_file answered for path ${last.path}, not ${path}`, { path: last.path });
    }
    if (last.sizeBytes !== sent) {
      throw mismatch(
        `${path} is ${last.sizeBytes} bytes after ${sent} were put: another writer, or lost bytes`,
        { check: 'size', expected: sent, actual: last.sizeBytes },
      );
    }
    if (!SHA_HEX.test(last.sha256 ?? '')) {
      throw mismatch(`put_file answered a bad sha256 ${last.sha256}`, { check: 'sha256' });
    }
  } while (sent < bytes.length);
  if (last.sha256 !== hash) {
    throw mismatch(`${path}: the broker has sha256 ${last.sha256}, but what was sent has ${hash}`, {
      check: 'sha256',
      expected: hash,
      actual: last.sha256,
    });
  }
  return last;
}

/**
 * Gets session/path whole: get_file from offset 0 until eof, each chunk
 * at the offset asked, of the same size and sha256 as the first, eof
 * exactly at the end; then the bytes must hash to that sha256.
 * @param {import('./client.js').Client} client
 * @returns {Promise<Buffer>}
 */
export async function getWhole(client, session, path, opts = {}) {
  const parts = [];
  let off = 0;
  let first = null;
  for (;;) {
    const r = await client.getFile(session, path, { ...opts, offset: off, length: 0 });
    if (r.path !== path) {
      throw mismatch(`get_file answered for path ${r.path}, not ${path}`, { path: r.path });
    }
    if (!SHA_HEX.test(r.sha256 ?? '') || typeof r.sizeBytes !== 'number') {
      throw mismatch(`get_file answered a bad size or sha256`, { check: 'reply' });
    }
    first ??= r;
    if (r.sizeBytes !== first.sizeBytes || r.sha256 !== first.sha256) {
      throw mismatch(`${path} changed while it was read (its size or sha256 differ between chunks)`, {
        check: 'changed',
      });
    }
    const n = r.data.length;
    const eof = off + n === r.sizeBytes;
    if (r.offset !== off || n > r.sizeBytes - off || r.eof !== eof || (!r.eof && n === 0)) {
      throw mismatch(
        `the chunk at ${r.offset} (${n} bytes of ${r.sizeBytes}, eof ${r.eof}) does not follow ${off}`,
        { check: 'chunk' },
      );
    }
    parts.push(r.data);
    off += n;
    if (r.eof) break;
  }
  const data = Buffer.concat(parts, off);
  const hash = createHash('sha256').update(data).digest('hex');
  if (hash !== first.sha256) {
    throw mismatch(`${path}: the broker says sha256 ${first.sha256}, but what came has ${hash}`, {
      check: 'sha256',
      expected: first.sha256,
      actual: hash,
    });
  }
  return data;
}
