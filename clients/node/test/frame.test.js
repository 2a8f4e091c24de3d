// frame.test.js: the frame reader, body decoder and request encoder, with no daemon.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encode } from '@msgpack/msgpack';
import { BadRequestError, ProtocolError } from '../index.js';
import { FrameReader, decodeBody, encodeFrame } from '../lib/frame.js';
import { frame } from './helpers.js';

test('frames split across reads and several in one read come out whole', () => {
  const a = frame(encode({ type: 'x', id: 1 }));
  const b = frame(encode({ type: 'y', id: 2 }));
  const all = Buffer.concat([a, b]);
  const r = new FrameReader(1024);
  const out = [];
  for (let i = 0; i < all.length; i += 3) out.push(...r.push(all.subarray(i, i + 3)));
  assert.deepEqual(out.map((body) => decodeBody(body).id), [1, 2]);
  assert.equal(r.midFrame, false);
  assert.deepEqual(new FrameReader(1024).push(all).map((body) => decodeBody(body).type), ['x', 'y']);
});

test('a length above the max is refused as soon as the header is in', () => {
  const r = new FrameReader(100);
  const head = Buffer.alloc(4);
  head.writeUInt32BE(101, 0);
  assert.throws(() => r.push(head), (err) => err instanceof ProtocolError && /101 bytes/.test(err.message));
  assert.throws(() => new FrameReader(100).push(Buffer.from([0xff, 0xff, 0xff, 0xff])), ProtocolError);
});

test('a length of 0 is refused', () => {
  assert.throws(() => new FrameReader().push(Buffer.alloc(4)), /length 0/);
});

test('a partial frame is kept, and said to be partial', () => {
  const r = new FrameReader();
  const f = frame(encode({ a: 1 }));
  assert.deepEqual(r.push(f.subarray(0, 5)), []);
  assert.equal(r.midFrame, true);
});

test('a body that is not one map is refused', () => {
  for (const v of [[1, 2], 7, 'str', null, true]) {
    assert.throws(() => decodeBody(Buffer.from(encode(v))), /not a map/, JSON.stringify(v));
  }
});

test('trailing bytes after the map are refused', () => {
  const body = Buffer.concat([Buffer.from(encode({ a: 1 })), Buffer.from([0xc0])]);
  assert.throws(() => decodeBody(body), (err) => err instanceof ProtocolError && /Extra/.test(err.message));
});

test('a truncated body, an ext, a float and a non-string key are refused', () => {
  const ok = Buffer.from(encode({ a: 'hello' }));
  assert.throws(() => decodeBody(ok.subarray(0, ok.length - 2)), ProtocolError);
  assert.throws(() => decodeBody(Buffer.from([0x81, 0xa1, 0x61, 0xd4, 0x01, 0x00])), ProtocolError);
  assert.throws(() => decodeBody(Buffer.from(encode({ a: 1.5 }))), /float/);
  assert.throws(() => decodeBody(Buffer.from([0x81, 0x01, 0x02])), ProtocolError);
});

test('bin values come out as Buffers', () => {
  const v = decodeBody(Buffer.from(encode({ data: new Uint8Array([1, 2, 3]) })));
  assert.ok(Buffer.isBuffer(v.data));
  assert.deepEqual([...v.data], [1, 2, 3]);
});

test('the encoder writes the length and leaves undefined fields out', () => {
  const f = encodeFrame({ type: 'stats', id: 2, session: undefined });
  // protocol.md's worked example: {"type": "stats", "id": 2}, 16 bytes of body
  assert.equal(f.toString('hex'), '00000010' + '82a474797065a57374617473a2696402');
});

test('the encoder refuses what would make the broker close the connection', () => {
  const bad = [
    { type: 'invoke', id: 1, args: ['a\0b'] },
    { type: 'invoke', id: 1, timeout_ms: 1.5 },
    { type: 'invoke', id: 1, env: { ['K'.repeat(65)]: 'v' } },
    { type: 'invoke', id: 1, env: { '': 'v' } },
    { type: 'invoke', id: 1, a: { b: { c: { d: { e: { f: [1] } } } } } },
    { type: 'invoke', id: 1, args: new Array(4097).fill('x') },
    { type: 'invoke', id: 1, when: new Date() },
  ];
  for (const req of bad) {
    assert.throws(() => encodeFrame(req), BadRequestError, JSON.stringify(Object.keys(req)));
  }
  // six levels, the request map the first, is the most the broker takes
  assert.ok(encodeFrame({ type: 'invoke', id: 1, a: { b: { c: { d: { e: { f: 1 } } } } } }));
  assert.throws(() => encodeFrame({ type: 'put_file', id: 1, data: Buffer.alloc(2000) }, 1000), /over max_frame_bytes/);
});
