// helpers.js: what the tests share: the live-daemon switch, session names, a fake broker.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decode, encode } from '@msgpack/msgpack';

/** The daemon's socket for the live tests, from the suite (tests/clients/run.sh). */
export const SOCKET = process.env.SKILLBROKER_SOCKET || '';

/** node:test's skip option for live tests: false, or why they are skipped. */
export const liveSkip = SOCKET ? false : 'SKILLBROKER_SOCKET is unset: no daemon to test against';

let sessions = 0;
/** A session name no other test (or test process) uses. */
export function session(prefix) {
  sessions += 1;
  return `${prefix}-${process.pid}-${sessions}`;
}

/** Rejects when promise has not settled within ms, so no test can hang. */
export function within(ms, promise, what = 'the promise') {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** One frame: length and body. */
export function frame(body) {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length, 0);
  return Buffer.concat([head, Buffer.from(body)]);
}

/** The frame of a map, as a broker would send it. */
export function reply(obj) {
  return frame(encode(obj));
}

/** The hello reply of a fake broker. */
export function helloReply(id, limits = {}) {
  return {
    type: 'hello',
    id,
    ok: true,
    server: 'skillbroker',
    version: 'fake',
    protocol: 2,
    principal: { uid: 0, gid: 0, pid: 1 },
    capabilities: {
      protocol_min: 1,
      protocol_max: 2,
      requests: ['hello'],
      limits: { max_frame_bytes: 1048576, in_flight: 128, put_file_bytes: 1047040, ...limits },
    },
  };
}

/**
 * A fake broker on a temp unix socket. onRequest(req, conn) sees each
 * request after hello (which it answers with helloReply unless
 * opts.hello is false: then onRequest sees it too). conn.write(buf),
 * conn.send(obj), conn.end(), conn.destroy().
 */
export async function fakeBroker(onRequest, opts = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'sb-node-fake-'));
  const path = join(dir, 'fake.sock');
  const requests = [];
  const sockets = new Set();
  const server = createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => {});
    const conn = {
      write: (buf) => sock.write(buf),
      send: (obj) => sock.write(reply(obj)),
      end: () => sock.end(),
      destroy: () => sock.destroy(),
    };
    let buf = Buffer.alloc(0);
    sock.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
        const n = buf.readUInt32BE(0);
        const req = decode(buf.subarray(4, 4 + n));
        buf = buf.subarray(4 + n);
        requests.push(req);
        if (req.type === 'hello' && opts.hello !== false) conn.send(helloReply(req.id, opts.limits));
        else onRequest(req, conn);
      }
    });
  });
  await new Promise((resolve) => server.listen(path, resolve));
  return {
    path,
    requests,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A fake broker, closed when test t ends, whatever happens. */
export async function fakeFor(t, onRequest, opts = {}) {
  const fake = await fakeBroker(onRequest, opts);
  t.after(() => fake.close());
  return fake;
}

/** A client connected with opts, closed when test t ends. */
export async function clientFor(t, Client, opts) {
  const client = await Client.connect(opts);
  t.after(() => client.close());
  return client;
}
