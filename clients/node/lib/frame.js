// frame.js: the wire format: 4-byte big-endian length frames of one msgpack map each.
import { Decoder, encode } from '@msgpack/msgpack';
import { ProtocolError, BadRequestError } from './errors.js';

export const HEADER_BYTES = 4;
/** The broker's default max_frame_bytes (docs/config.md). */
export const DEFAULT_MAX_FRAME = 1024 * 1024;
/** The largest reply accepted by default: skillctl's bound (1 MiB + 64 KiB). */
export const DEFAULT_MAX_REPLY = DEFAULT_MAX_FRAME + 64 * 1024;

// the request rules that close the whole connection when broken (protocol.md, "Strictness")
const MAX_DEPTH = 6;
const MAX_ENTRIES = 4096;
const MAX_STR = 1024 * 1024;
const MAX_KEY = 64;
// replies are walked to this depth; the broker's replies nest far less
const MAX_REPLY_DEPTH = 32;

/**
 * Splits a byte stream into frame bodies. It refuses a length of 0 or
 * above max as soon as the header is in, so it never holds more than one
 * frame of at most max bytes (plus what one read brought).
 */
export class FrameReader {
  /** @param {number} max the largest body accepted */
  constructor(max = DEFAULT_MAX_REPLY) {
    this.max = max;
    this.chunks = [];
    this.buffered = 0;
    this.want = -1; // body length of the frame being read, -1: header not in yet
  }

  /**
   * Adds bytes; returns the bodies of the frames they complete. Throws a
   * ProtocolError for a bad length; the stream is then unusable.
   * @param {Buffer} chunk
   * @returns {Buffer[]}
   */
  push(chunk) {
    const out = [];
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    for (;;) {
      if (this.want < 0) {
        if (this.buffered < HEADER_BYTES) break;
        const n = this.take(HEADER_BYTES).readUInt32BE(0);
        if (n === 0) throw new ProtocolError('a frame of length 0 (empty frame)');
        if (n > this.max) {
          throw new ProtocolError(
            `a frame of ${n} bytes, over the ${this.max} bytes a reply may have`,
            { details: { length: n, max: this.max } },
          );
        }
        this.want = n;
      }
      if (this.buffered < this.want) break;
      out.push(this.take(this.want));
      this.want = -1;
    }
    return out;
  }

  /** True when part of a frame is buffered (a close now cuts it short). */
  get midFrame() {
    return this.want >= 0 || this.buffered > 0;
  }

  // the first n buffered bytes, removed
  take(n) {
    const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    const head = all.subarray(0, n);
    const rest = all.subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
    return head;
  }
}

/**
 * Decodes one body: exactly one msgpack map with string keys and no
 * trailing bytes, of nil, booleans, integers, str, bin, arrays and maps.
 * bin values become Buffers. Throws a ProtocolError otherwise.
 * @param {Buffer} body
 * @returns {Record<string, unknown>}
 */
export function decodeBody(body) {
  let value;
  try {
    const decoder = new Decoder({
      maxStrLength: body.length,
      maxBinLength: body.length,
      maxArrayLength: body.length,
      maxMapLength: body.length,
      mapKeyConverter: (key) => {
        if (typeof key !== 'string') throw new TypeError(`a map key of type ${typeof key}`);
        return key;
      },
    });
    value = decoder.decode(body); // throws on trailing bytes
  } catch (err) {
    throw new ProtocolError(`a frame that does not decode: ${err.message}`, { cause: err });
  }
  if (!isPlainMap(value)) {
    throw new ProtocolError(`a frame whose body is not a map (${kind(value)})`);
  }
  return toReply(value, 1);
}

// the decoded value with bin as Buffer, after checking every type
function toReply(v, depth) {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) throw new ProtocolError('a float in a reply');
    return v;
  }
  if (depth > MAX_REPLY_DEPTH) throw new ProtocolError('a reply nested too deep');
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  if (Array.isArray(v)) return v.map((x) => toReply(x, depth + 1));
  if (isPlainMap(v)) {
    const out = {};
    for (const [k, x] of Object.entries(v)) out[k] = toReply(x, depth + 1);
    return out;
  }
  throw new ProtocolError(`a value of a type the protocol does not allow (${kind(v)})`);
}

function isPlainMap(v) {
  return v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype;
}

function kind(v) {
  if (v === null) return 'nil';
  if (Array.isArray(v)) return 'array';
  if (v instanceof Uint8Array) return 'bin';
  if (typeof v === 'object') return v.constructor?.name ?? 'object';
  return typeof v;
}

/**
 * The frame of a request: header and body. Checks first the rules whose
 * breach would make the broker close the connection (and so fail every
 * other call on it): a BadRequestError for this request alone instead.
 * Undefined fields are left out.
 * @param {Record<string, unknown>} req
 * @param {number} maxFrame the broker's max_frame_bytes
 * @returns {Buffer}
 */
export function encodeFrame(req, maxFrame = DEFAULT_MAX_FRAME) {
  checkValue(req, 1, 'request');
  const body = encode(req, { ignoreUndefined: true });
  if (body.length > maxFrame) {
    throw new BadRequestError(
      `the request is ${body.length} bytes, over max_frame_bytes (${maxFrame})`,
      { details: { local: true, length: body.length, max: maxFrame }, requestId: req.id ?? null },
    );
  }
  const frame = Buffer.allocUnsafe(HEADER_BYTES + body.length);
  frame.writeUInt32BE(body.length, 0);
  frame.set(body, HEADER_BYTES);
  return frame;
}

// The connection-closing rules of protocol.md's "Strictness", for what we send.
function checkValue(v, depth, where) {
  const bad = (why) => {
    throw new BadRequestError(`${where}: ${why}`, { details: { local: true } });
  };
  if (v === null || v === undefined || typeof v === 'boolean') return;
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) bad(`${v} is not an integer (floats are refused)`);
    return;
  }
  if (typeof v === 'bigint') return;
  if (typeof v === 'string') {
    if (v.includes('\0')) bad('a string holds a NUL');
    if (Buffer.byteLength(v) > MAX_STR) bad('a string over 1 MiB');
    return;
  }
  if (v instanceof Uint8Array) {
    if (v.length > MAX_STR) bad('binary data over 1 MiB');
    return;
  }
  if (depth > MAX_DEPTH) bad(`nested over ${MAX_DEPTH} levels`);
  if (Array.isArray(v)) {
    if (v.length > MAX_ENTRIES) bad(`an array of over ${MAX_ENTRIES} items`);
    for (const x of v) checkValue(x, depth + 1, where);
    return;
  }
  if (isPlainMap(v)) {
    const entries = Object.entries(v).filter(([, x]) => x !== undefined);
    if (entries.length > MAX_ENTRIES) bad(`a map of over ${MAX_ENTRIES} entries`);
    for (const [k, x] of entries) {
      if (k.length === 0 || Buffer.byteLength(k) > MAX_KEY) {
        bad(`a map key of ${Buffer.byteLength(k)} bytes (1..${MAX_KEY})`);
      }
      if (k.includes('\0')) bad('a map key holds a NUL');
      checkValue(x, depth + 1, `${where}.${k}`);
    }
    return;
  }
  bad(`a value of a type the protocol does not carry (${kind(v)})`);
}
