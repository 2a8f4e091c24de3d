// connection.js: the socket, its frames, and the calls in flight on it, matched by id.
import { EventEmitter } from 'node:events';
import { createConnection } from 'node:net';
import { BadRequestError, CancelledError, ProtocolError, SkillbrokerError, errorFor, errorFromReply } from './errors.js';
import { DEFAULT_MAX_FRAME, DEFAULT_MAX_REPLY, FrameReader, decodeBody, encodeFrame } from './frame.js';
import { InvokeResult, approvalRequest } from './results.js';

/** The answers an approvalHandler may give (null: leave it unanswered). */
export const APPROVAL_OPTIONS = Object.freeze(['yes_once', 'yes_in_session', 'no']);

// requests that count against the broker's in-flight bound of a connection
// (broker/broker_client.c): every one but these
const UNCOUNTED = new Set(['hello', 'last_result', 'session_end', 'stats', 'cancel', 'approve', 'approvals']);

// the reply type each request expects besides "error"
const REPLY_TYPE = { invoke: 'result', authorize: 'result' };

const keyOf = (id) => (typeof id === 'string' ? `s:${id}` : `n:${id}`);

// the same error, for one call: its own requestId
function errorForCall(err, requestId) {
  const opts = { details: err.details, requestId, cause: err.cause, result: err.result };
  if (err instanceof ProtocolError) return new ProtocolError(err.message, opts);
  if (err instanceof SkillbrokerError) return errorFor(err.type, err.message, opts);
  return err;
}

/** Opens the unix socket; a ProtocolError when it cannot. */
export function openSocket(path) {
  return new Promise((resolve, reject) => {
    const sock = createConnection({ path });
    const onError = (err) => {
      sock.destroy();
      reject(new ProtocolError(`cannot connect to ${path}: ${err.message}`, {
        cause: err,
        details: { path, code: err.code },
      }));
    };
    sock.once('error', onError);
    sock.once('connect', () => {
      sock.off('error', onError);
      resolve(sock);
    });
  });
}

/**
 * The transport under Client: writes requests, reads replies, settles
 * each call by its id, answers approval requests through the handler.
 * Events: "close" (err, null after close()), "approvalError" (err, request).
 */
export class Connection extends EventEmitter {
  /**
   * @param {import('node:net').Socket} sock a connected socket
   * @param {string} path
   * @param {object} [opts] approvalHandler, maxReplyBytes
   */
  constructor(sock, path, opts = {}) {
    super();
    this.path = path;
    this.closed = false;
    this._sock = sock;
    this._reader = new FrameReader(opts.maxReplyBytes ?? DEFAULT_MAX_REPLY);
    this._maxReplyAuto = opts.maxReplyBytes == null; // hello's reply_bytes may raise it
    this._approvalHandler = opts.approvalHandler ?? null;
    this._maxFrame = DEFAULT_MAX_FRAME; // hello's max_frame_bytes, once known
    this._nextId = 1;
    this._pending = new Map(); // key of id -> call
    this._queue = []; // counted calls waiting for room under the in-flight bound
    this._inFlight = 0;
    this._inFlightMax = 128; // hello's in_flight, once known
    this._closeError = null;
    this._serverError = null; // an error reply without id: the broker closes next
    this._closedPromise = new Promise((resolve) => sock.once('close', resolve));
    sock.on('data', (chunk) => this._onData(chunk));
    sock.on('error', (err) => this._fail(new ProtocolError(`socket error: ${err.message}`, { cause: err })));
    sock.on('close', () => this._onClose());
  }

  /**
   * Closes the connection. Calls still in flight reject with a
   * ProtocolError (the broker cancels them).
   */
  async close() {
    this._fail(new ProtocolError('the client closed the connection'), true);
    await this._closedPromise;
  }

  /**
   * Sends one request; the promise (with `requestId`) settles with its
   * reply, parsed by opts.parse, or the typed error. Requests beyond the
   * in-flight bound wait here, unsent, until one ends. opts: id, signal,
   * parse.
   */
  _call(type, fields, opts = {}) {
    const id = opts.id ?? this._nextId++;
    let resolve, reject;
    const promise = new Promise((res, rej) => {
      resolve = res;
      reject = rej;
    });
    promise.requestId = id;
    const call = {
      id,
      key: keyOf(id),
      type,
      frame: null,
      counted: !UNCOUNTED.has(type),
      sent: false,
      cancelSent: false,
      parse: opts.parse,
      signal: opts.signal,
      onAbort: null,
      resolve,
      reject,
    };
    if (this.closed) {
      reject(errorForCall(this._closeError ?? new ProtocolError('the connection is closed'), id));
      return promise;
    }
    if (!(typeof id === 'string' || Number.isSafeInteger(id)) || id === '' || id < 0) {
      reject(new TypeError('a request id is a non-empty string or an unsigned integer'));
      return promise;
    }
    if (this._pending.has(call.key)) {
      reject(new BadRequestError(`request id ${id} is in flight already`, {
        requestId: id,
        details: { local: true },
      }));
      return promise;
    }
    try {
      call.frame = encodeFrame({ type, id, ...fields }, this._maxFrame);
    } catch (err) {
      reject(errorForCall(err, id));
      return promise;
    }
    if (call.signal) {
      if (call.signal.aborted) {
        reject(new CancelledError('cancelled before it was sent', { requestId: id, details: { local: true } }));
        return promise;
      }
      call.onAbort = () => this._abort(call);
      call.signal.addEventListener('abort', call.onAbort, { once: true });
    }
    this._pending.set(call.key, call);
    if (call.counted && this._inFlight >= this._inFlightMax) this._queue.push(call);
    else this._send(call);
    return promise;
  }

  _send(call) {
    call.sent = true;
    if (call.counted) this._inFlight++;
    const frame = call.frame;
    call.frame = null;
    this._sock.write(frame);
  }

  // an AbortSignal fired: unsent, the call just ends; sent, the broker is asked to cancel it
  _abort(call) {
    if (this._pending.get(call.key) !== call) return;
    if (!call.sent) {
      this._queue.splice(this._queue.indexOf(call), 1);
      this._settle(call, new CancelledError('cancelled before it was sent', {
        requestId: call.id,
        details: { local: true },
      }));
      return;
    }
    if (call.cancelSent) return;
    call.cancelSent = true;
    // the call's own reply (cancelled, or its result if it ended first) settles it
    this._call('cancel', { request_id: call.id }).catch(() => {});
  }

  _settle(call, err, value) {
    this._pending.delete(call.key);
    if (call.onAbort) call.signal.removeEventListener('abort', call.onAbort);
    if (call.sent && call.counted) {
      this._inFlight--;
      while (this._queue.length > 0 && this._inFlight < this._inFlightMax && !this.closed) {
        this._send(this._queue.shift());
      }
    }
    if (err) call.reject(err);
    else call.resolve(value);
  }

  _onData(chunk) {
    if (this.closed) return;
    let bodies;
    try {
      bodies = this._reader.push(chunk);
    } catch (err) {
      this._fail(err);
      return;
    }
    for (const body of bodies) {
      let reply;
      try {
        reply = decodeBody(body);
      } catch (err) {
        this._fail(err);
        return;
      }
      this._dispatch(reply);
      if (this.closed) return;
    }
  }

  _dispatch(reply) {
    if (reply.type === 'approval_request') {
      this._onApproval(reply);
      return;
    }
    const id = reply.id;
    if (id === null || id === undefined) {
      // a frame the broker refused, or a connection it refuses: it closes next
      if (reply.type === 'error') this._serverError = errorFromReply(reply.error);
      return;
    }
    if (typeof id !== 'string' && typeof id !== 'number') return;
    const call = this._pending.get(keyOf(id));
    if (!call || !call.sent) return; // nothing of ours waits for it
    const want = REPLY_TYPE[call.type] ?? call.type;
    if (reply.type !== want && reply.type !== 'error') {
      this._settle(call, new ProtocolError(`a ${call.type} request answered by a "${reply.type}" reply`, {
        requestId: id,
        details: { reply },
      }));
      return;
    }
    if (reply.ok !== true) {
      const result = reply.type === 'result' ? new InvokeResult(reply) : null;
      this._settle(call, errorFromReply(reply.error, { requestId: id, result }));
      return;
    }
    let value = reply;
    try {
      if (call.parse) value = call.parse(reply);
    } catch (err) {
      this._settle(call, new ProtocolError(`a ${reply.type} reply that does not parse: ${err.message}`, {
        requestId: id,
        cause: err,
      }));
      return;
    }
    this._settle(call, null, value);
  }

  async _onApproval(raw) {
    const request = approvalRequest(raw);
    if (!this._approvalHandler) return; // asked only of a connection that offered to answer
    let option;
    try {
      option = await this._approvalHandler(request);
    } catch (err) {
      this.emit('approvalError', err, request);
      option = 'no'; // a handler that fails says no
    }
    if (option === null || option === undefined || this.closed) return;
    if (!APPROVAL_OPTIONS.includes(option)) {
      this.emit('approvalError', new TypeError(`approvalHandler returned ${String(option)}`), request);
      option = 'no';
    }
    try {
      await this._call('approve', { approval_id: request.id, option });
    } catch (err) {
      this.emit('approvalError', err, request);
    }
  }

  _onClose() {
    let err = this._serverError;
    if (!err) {
      err = this._reader.midFrame
        ? new ProtocolError('the broker closed the connection in the middle of a frame')
        : new ProtocolError('the broker closed the connection');
    }
    this._fail(err);
  }

  // the connection is over: every call still waiting rejects with err
  _fail(err, quiet = false) {
    if (this.closed) return;
    this.closed = true;
    this._closeError = err;
    const calls = [...this._pending.values()];
    this._pending.clear();
    this._queue = [];
    for (const call of calls) {
      if (call.onAbort) call.signal.removeEventListener('abort', call.onAbort);
      call.reject(errorForCall(err, call.id));
    }
    this._sock.destroy();
    this.emit('close', quiet ? null : err);
  }
}
