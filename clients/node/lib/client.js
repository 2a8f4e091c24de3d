// client.js: the Client: connect and hello, and one method per request of docs/protocol.md.
import { ProtocolError } from './errors.js';
import { Connection, openSocket } from './connection.js';
import { getWhole, putWhole } from './files.js';
import { InvokeResult, approvalEntry, fileList, fileReply, skillInfo } from './results.js';
import { resolveSocketPath } from './socket-path.js';

export { APPROVAL_OPTIONS } from './connection.js';

/** The protocol major this client speaks. */
export const PROTOCOL = 2;

/** The most hello's reply_bytes may raise the reply bound to. */
const MAX_REPLY_CAP = 256 * 1024 * 1024;
const CALL_OPTIONS = new Set(['args', 'stdin', 'env', 'session', 'phase', 'timeoutMs', 'signal', 'id']);

function plainMap(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !Buffer.isBuffer(v) ? v : {};
}

// fn's promise, or a rejected one when it throws first (a bad option)
function guard(fn) {
  try {
    return fn();
  } catch (err) {
    return Promise.reject(err);
  }
}

function checkOptions(opts, allowed, what) {
  if (opts === null || typeof opts !== 'object') throw new TypeError(`${what}: options must be an object`);
  for (const k of Object.keys(opts)) {
    if (!allowed.has(k)) throw new TypeError(`${what}: unknown option "${k}"`);
  }
}

function toBin(data, what) {
  if (data === undefined || data === null) return undefined;
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (data instanceof Uint8Array) return data;
  throw new TypeError(`${what} must be a Buffer, a Uint8Array or a string`);
}

/**
 * A connection to the broker with many calls in flight on it. Make one
 * with `await Client.connect()`. Every method returns a promise (with
 * `requestId` for one request); a reply with ok false rejects it with
 * the typed error (errors.js).
 * Events: "close" (err, null after close()), "approvalError" (err, request).
 */
export class Client extends Connection {
  /**
   * Connects and sends hello (protocol 2; approvals: true when an
   * approvalHandler is given).
   * @param {object} [opts] path, approvalHandler, maxReplyBytes
   * @returns {Promise<Client>}
   */
  static async connect(opts = {}) {
    checkOptions(opts, new Set(['path', 'approvalHandler', 'maxReplyBytes']), 'Client.connect');
    if (opts.approvalHandler != null && typeof opts.approvalHandler !== 'function') {
      throw new TypeError('Client.connect: approvalHandler must be a function');
    }
    const path = resolveSocketPath(opts.path);
    const sock = await openSocket(path);
    const client = new Client(sock, path, opts);
    try {
      await client._hello();
    } catch (err) {
      client._fail(new ProtocolError('hello failed'), true);
      throw err;
    }
    return client;
  }

  /** @private use Client.connect */
  constructor(sock, path, opts = {}) {
    super(sock, path, opts);
    /** The hello reply as the broker sent it. */
    this.hello = null;
    /** hello's capabilities.limits (max_frame_bytes, in_flight, put_file_bytes, ...). */
    this.limits = {};
    this.principal = null;
    this.protocol = null;
  }

  // ---------------------------------------------------------------- calls

  /**
   * Runs a skill. Resolves with an InvokeResult when the call was carried
   * out (a non-zero exitCode included); rejects with the typed error
   * otherwise. The promise has `requestId`.
   */
  invoke(skill, command, opts) {
    return guard(() => this._skillCall('invoke', skill, command, opts));
  }

  /** The decision alone (nothing runs): an InvokeResult with policy and effective. */
  authorize(skill, command, opts) {
    return guard(() => this._skillCall('authorize', skill, command, opts));
  }

  /** Every registered skill. */
  skills() {
    return this._call('skills', {}, { parse: (r) => (Array.isArray(r.skills) ? r.skills : []) });
  }

  /** A skill's instructions, commands and permissions for this caller. */
  skillInfo(skill, opts = {}) {
    return guard(() => {
      checkOptions(opts, new Set(['references', 'signal']), 'skillInfo');
      return this._call('skill_info', { skill, references: opts.references }, {
        signal: opts.signal,
        parse: skillInfo,
      });
    });
  }

  /** Cancels a call of this connection (or of this uid) by its request id. */
  cancel(requestId) {
    return this._call('cancel', { request_id: requestId }, {
      parse: (r) => ({ requestId: r.request_id, state: r.state }),
    });
  }

  /** The approvals waiting for an answer that this caller may see. */
  approvals() {
    return this._call('approvals', {}, {
      parse: (r) => (Array.isArray(r.approvals) ? r.approvals : []).map(approvalEntry),
    });
  }

  /** Answers an approval: "yes_once", "yes_in_session" or "no". */
  approve(approvalId, option) {
    return this._call('approve', { approval_id: approvalId, option }, {
      parse: (r) => ({ approvalId: r.approval_id }),
    });
  }

  /** The broker's counters and latency histograms, as it sent them. */
  stats() {
    return this._call('stats', {});
  }

  /** Asks policyd to reload the policy and the skills (admins only). */
  reload() {
    return this._call('reload', {}, { parse: (r) => ({ message: r.message }) });
  }

  /** The result of the session's last ended invoke (ok or not: see `.ok`, `.error`). */
  lastResult(session) {
    return this._call('last_result', { session: session ?? undefined }, {
      parse: (r) => new InvokeResult(plainMap(r.result)),
    });
  }

  /** Ends an idle session: its files and last result go. */
  sessionEnd(session) {
    return this._call('session_end', { session: session ?? undefined }, {
      parse: (r) => ({ session: r.session }),
    });
  }

  /** One put_file: data at offset (0 writes the file anew). */
  putFile(session, path, data, opts = {}) {
    return guard(() => {
      checkOptions(opts, new Set(['offset', 'timeoutMs', 'signal']), 'putFile');
      const fields = { session: session ?? undefined, path, data: toBin(data, 'data') ?? Buffer.alloc(0) };
      return this._fileCall('put_file', fields, opts, fileReply);
    });
  }

  /** One get_file: at most length bytes (0: as many as one reply carries) from offset. */
  getFile(session, path, opts = {}) {
    return guard(() => {
      checkOptions(opts, new Set(['offset', 'length', 'timeoutMs', 'signal']), 'getFile');
      const fields = { session: session ?? undefined, path, length: opts.length };
      return this._fileCall('get_file', fields, opts, fileReply);
    });
  }

  /** Every entry of the session's work dir. */
  listFiles(session, opts = {}) {
    return guard(() => {
      checkOptions(opts, new Set(['timeoutMs', 'signal']), 'listFiles');
      return this._fileCall('list_files', { session: session ?? undefined }, opts, fileList);
    });
  }

  /** Removes a file, a link or an empty directory. */
  deleteFile(session, path, opts = {}) {
    return guard(() => {
      checkOptions(opts, new Set(['timeoutMs', 'signal']), 'deleteFile');
      return this._fileCall('delete_file', { session: session ?? undefined, path }, opts, fileReply);
    });
  }

  /** Puts a whole file in chunks of hello's put_file_bytes; checks size and sha256. */
  put(session, path, data, opts = {}) {
    return guard(() => {
      checkOptions(opts, new Set(['timeoutMs', 'signal']), 'put');
      return putWhole(this, session, path, data, opts);
    });
  }

  /** Gets a whole file as a Buffer, chunk by chunk; checks size and sha256. */
  get(session, path, opts = {}) {
    return guard(() => {
      checkOptions(opts, new Set(['timeoutMs', 'signal']), 'get');
      return getWhole(this, session, path, opts);
    });
  }

  // ------------------------------------------------------------- internals

  _skillCall(type, skill, command, opts) {
    if (command !== null && typeof command === 'object' && opts === undefined) {
      opts = command;
      command = undefined;
    }
    opts ??= {};
    checkOptions(opts, CALL_OPTIONS, type);
    const fields = {
      skill,
      command: command ?? undefined,
      args: opts.args,
      stdin: toBin(opts.stdin, 'stdin'),
      env: opts.env,
      session: opts.session,
      phase: opts.phase,
      timeout_ms: opts.timeoutMs,
    };
    return this._call(type, fields, {
      id: opts.id,
      signal: opts.signal,
      parse: (r) => new InvokeResult(r),
    });
  }

  _fileCall(type, fields, opts, parse) {
    if (opts.offset !== undefined) fields.offset = opts.offset;
    fields.timeout_ms = opts.timeoutMs;
    return this._call(type, fields, { signal: opts.signal, parse });
  }

  async _hello() {
    const fields = { protocol: PROTOCOL };
    if (this._approvalHandler) fields.approvals = true;
    const reply = await this._call('hello', fields);
    const caps = plainMap(reply.capabilities);
    this.hello = reply;
    this.limits = plainMap(caps.limits);
    this.principal = reply.principal ?? null;
    this.protocol = reply.protocol ?? null;
    if (this.protocol !== PROTOCOL) {
      throw new ProtocolError(`the broker agreed to protocol ${this.protocol}, not ${PROTOCOL}`);
    }
    if (Number.isSafeInteger(this.limits.max_frame_bytes) && this.limits.max_frame_bytes > 0) {
      this._maxFrame = this.limits.max_frame_bytes;
    }
    if (Number.isSafeInteger(this.limits.in_flight) && this.limits.in_flight > 0) {
      this._inFlightMax = this.limits.in_flight;
    }
    // A result carries its output beside its fields: it may be longer
    // than a frame, up to hello's reply_bytes (never past 256 MiB).
    const rb = this.limits.reply_bytes;
    if (this._maxReplyAuto && Number.isSafeInteger(rb) && rb > this._reader.max) {
      this._reader.max = Math.min(rb, MAX_REPLY_CAP);
    }
  }
}
