// index.d.ts: hand-written types of the package's public surface (index.js).
/// <reference types="node" />
import { EventEmitter } from 'node:events';

/** A request id: a string of 1..128 bytes or an unsigned integer. */
export type RequestId = string | number;

/** A promise of one call, with the id its request carries. */
export type CallPromise<T> = Promise<T> & { readonly requestId: RequestId };

export type ApprovalOption = 'yes_once' | 'yes_in_session' | 'no';

/** An approval_request frame: a call of this connection waits for a human's yes. */
export interface ApprovalRequest {
  /** "appr-N": what approve() names. */
  id: string;
  /** The id of the invoke that waits (the `requestId` of its promise). */
  requestId: RequestId;
  skill: string;
  command: string;
  session: string;
  /** The first 8 arguments, each cut to at most 200 bytes. */
  args: string[];
  argsTotal: number | null;
  effective: Record<string, any>;
  /** The ask rules that apply, as "file:line name". */
  rules: string[];
  options: ApprovalOption[];
  timeoutMs: number | null;
  raw: Record<string, any>;
}

/**
 * Answers an approval request: an option, or null to leave it unanswered
 * (for an admin's `skillctl approve`, or to time out). A handler that
 * throws, or returns anything else, answers "no".
 */
export type ApprovalHandler = (
  request: ApprovalRequest,
) => ApprovalOption | null | undefined | Promise<ApprovalOption | null | undefined>;

export interface ConnectOptions {
  /** The socket; else $SKILLBROKER_SOCKET, else /run/skillbroker/skillbroker.sock, else ./run/skillbroker.sock when only it exists. */
  path?: string;
  /** Given: hello says approvals: true, and approval requests are answered through it. */
  approvalHandler?: ApprovalHandler;
  /** The largest reply frame accepted (default: hello's limits.reply_bytes, at most 256 MiB). */
  maxReplyBytes?: number;
}

export interface CallOptions {
  args?: string[];
  /** Written to the skill's stdin, then closed (a string as UTF-8). */
  stdin?: Buffer | Uint8Array | string;
  /** Reaches the skill only for names it declares in permissions.env. */
  env?: Record<string, string>;
  /** Default "default". */
  session?: string;
  /** Default "planning", which is always denied: pass "execution" to run. */
  phase?: string;
  /** The broker's timeout_ms for the call (0 or absent: the default). */
  timeoutMs?: number;
  /** Aborting it sends `cancel` for the call, which then rejects with CancelledError. */
  signal?: AbortSignal;
  /** The request id (default: the next of the connection's counter). */
  id?: RequestId;
}

export interface Policy {
  allowed: boolean;
  decisionReason: string;
  matchedRules: string[];
}

export interface FileWritten {
  path: string;
  sizeBytes: number | null;
  sha256: string;
}

/** The result of an invoke or authorize. */
export class InvokeResult {
  constructor(raw: Record<string, any>);
  /** True when the call was carried out; a non-zero exitCode leaves it true. */
  ok: boolean;
  requestId: RequestId | null;
  skill: string | null;
  /** The command the decision resolved. */
  command: string | null;
  timestampUtc: string | null;
  queuedMs: number | null;
  policy: Policy;
  /** authorize: what the call would get ({} when denied); invoke: null. */
  effective: Record<string, any> | null;
  /** True once the worker was started (output and effects present). */
  started: boolean;
  stdout: Buffer;
  stderr: Buffer;
  /** True when stdout or stderr lost bytes to the output cap. */
  truncated: boolean;
  /** The full sizes, before the cap. */
  stdoutBytes: number;
  stderrBytes: number;
  /** The exit status, or null when a signal ended the skill (or it never ran). */
  exitCode: number | null;
  signal: number | null;
  durationMs: number | null;
  cpuMs: number | null;
  maxRssKb: number | null;
  filesWritten: FileWritten[];
  /** When ok is false: the error the reply carried. */
  error: SkillbrokerError | null;
  /** The reply as the broker sent it. */
  raw: Record<string, any>;
  /** stdout as UTF-8. */
  readonly text: string;
}

export interface FileReply {
  session: string;
  path: string;
  sizeBytes: number | null;
  sha256: string | null;
  queuedMs: number | null;
  raw: Record<string, any>;
}

export interface GetFileReply extends FileReply {
  offset: number | null;
  data: Buffer;
  eof: boolean;
}

export interface DeleteFileReply extends FileReply {
  kind: 'file' | 'dir' | 'symlink' | 'other';
}

export interface FileEntry {
  path: string;
  kind: 'file' | 'dir' | 'symlink' | 'other';
  sizeBytes: number | null;
  sha256: string | null;
}

export interface FileList {
  session: string;
  files: FileEntry[];
  truncated: boolean;
  queuedMs: number | null;
  raw: Record<string, any>;
}

export interface FileCallOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface SkillEntry {
  name: string;
  description: string;
  valid: boolean;
  commands: string[];
  error?: string;
  warnings?: string[];
}

export interface SkillReference {
  path: string;
  sizeBytes: number | null;
  sha256: string;
  text: string | null;
  textOmitted: 'too_large' | 'not_text' | 'unreadable' | 'reply_full' | null;
}

export interface SkillInfo {
  name: string;
  description: string;
  frontmatter: Record<string, any>;
  body: string;
  /** allowed: this caller may run it now; ask: once a human says yes (never both). */
  commands: { name: string; description: string; allowed: boolean; ask: boolean }[];
  permissions: Record<string, any>;
  references: SkillReference[];
  referencesTruncated: boolean;
  raw: Record<string, any>;
}

export interface PendingApproval {
  id: string;
  requestId: RequestId;
  uid: number | null;
  skill: string;
  command: string;
  session: string;
  waitedMs: number | null;
  timeoutMs: number | null;
}

/** hello's capabilities.limits. */
export interface Limits {
  max_frame_bytes?: number;
  in_flight?: number;
  args?: number;
  arg_bytes?: number;
  env?: number;
  max_timeout_ms?: number;
  file_path_bytes?: number;
  put_file_bytes?: number;
  [key: string]: unknown;
}

/** The stats reply as the broker sends it (protocol.md, "stats"). */
export interface Stats {
  type: 'stats';
  id: RequestId;
  ok: true;
  uptime_s: number;
  clients: number;
  requests_total: number;
  invokes_total: number;
  in_flight: number;
  queued: number;
  approvals_pending: number;
  audit_queue: number;
  calls: Record<string, number>;
  latency: Record<string, any>;
  [key: string]: unknown;
}

export const PROTOCOL: 2;
export const APPROVAL_OPTIONS: readonly ApprovalOption[];

/**
 * One connection to the broker; many calls may be in flight on it.
 * Events: "close" (err: SkillbrokerError | null), "approvalError" (err, request).
 */
export class Client extends EventEmitter {
  static connect(opts?: ConnectOptions): Promise<Client>;
  private constructor();
  readonly path: string;
  /** The hello reply as the broker sent it. */
  readonly hello: Record<string, any>;
  readonly limits: Limits;
  readonly principal: { uid: number; gid: number; pid: number };
  readonly protocol: number;
  readonly closed: boolean;

  /** Runs a skill; rejects with the typed error unless the call was carried out. */
  invoke(skill: string, command?: string | null, opts?: CallOptions): CallPromise<InvokeResult>;
  invoke(skill: string, opts: CallOptions): CallPromise<InvokeResult>;
  /** The decision alone; a denial rejects with its typed error. */
  authorize(skill: string, command?: string | null, opts?: CallOptions): CallPromise<InvokeResult>;
  authorize(skill: string, opts: CallOptions): CallPromise<InvokeResult>;
  skills(): CallPromise<SkillEntry[]>;
  skillInfo(skill: string, opts?: { references?: boolean; signal?: AbortSignal }): CallPromise<SkillInfo>;
  cancel(requestId: RequestId): CallPromise<{ requestId: RequestId; state: string }>;
  approvals(): CallPromise<PendingApproval[]>;
  approve(approvalId: string, option: ApprovalOption): CallPromise<{ approvalId: string }>;
  stats(): CallPromise<Stats>;
  reload(): CallPromise<{ message: string }>;
  lastResult(session?: string): CallPromise<InvokeResult>;
  sessionEnd(session?: string): CallPromise<{ session: string }>;
  putFile(
    session: string | undefined,
    path: string,
    data: Buffer | Uint8Array | string,
    opts?: FileCallOptions & { offset?: number },
  ): CallPromise<FileReply>;
  getFile(
    session: string | undefined,
    path: string,
    opts?: FileCallOptions & { offset?: number; length?: number },
  ): CallPromise<GetFileReply>;
  listFiles(session?: string, opts?: FileCallOptions): CallPromise<FileList>;
  deleteFile(session: string | undefined, path: string, opts?: FileCallOptions): CallPromise<DeleteFileReply>;
  /** A whole file, put in chunks of limits.put_file_bytes; size and sha256 checked. */
  put(session: string | undefined, path: string, data: Buffer | Uint8Array | string, opts?: FileCallOptions): Promise<FileReply>;
  /** A whole file, got chunk by chunk; size and sha256 checked. */
  get(session: string | undefined, path: string, opts?: FileCallOptions): Promise<Buffer>;
  /** Closes the connection; calls in flight reject with ProtocolError. */
  close(): Promise<void>;

  on(event: 'close', listener: (err: SkillbrokerError | null) => void): this;
  on(event: 'approvalError', listener: (err: Error, request: ApprovalRequest) => void): this;
  on(event: string | symbol, listener: (...args: any[]) => void): this;
}

export class SkillbrokerError extends Error {
  constructor(type: string, message: string, opts?: SkillbrokerErrorOptions);
  /** The protocol's error.type, or "protocol" for a ProtocolError. */
  type: string;
  details: Record<string, any>;
  requestId: RequestId | null;
  /** For an invoke or authorize: the parsed reply (output and effects of a timeout, say). */
  result: InvokeResult | null;
}

export interface SkillbrokerErrorOptions {
  details?: Record<string, any>;
  requestId?: RequestId | null;
  result?: InvokeResult | null;
  cause?: unknown;
}


/** A malformed frame, a reply that breaks the protocol or a check, or a closed connection. */
export class ProtocolError extends SkillbrokerError {
  constructor(message: string, opts?: SkillbrokerErrorOptions);
  type: 'protocol';
}
export class BadRequestError extends SkillbrokerError { constructor(message: string, opts?: SkillbrokerErrorOptions); type: 'bad_request'; }
export class UnsupportedError extends SkillbrokerError { constructor(message: string, opts?: SkillbrokerErrorOptions); type: 'unsupported'; }
export class NotFoundError extends SkillbrokerError { constructor(message: string, opts?: SkillbrokerErrorOptions); type: 'not_found'; }
export class UnknownSkillError extends SkillbrokerError { constructor(message: string, opts?: SkillbrokerErrorOptions); type: 'unknown_skill'; }
export class SkillNotEnabledError extends SkillbrokerError { constructor(message: string, opts?: SkillbrokerErrorOptions); type: 'skill_not_enabled'; }
export class UnknownCommandError extends SkillbrokerError { constructor(message: string, opts?: SkillbrokerErrorOptions); type: 'unknown_command'; }
export class PhaseViolationError extends SkillbrokerError { constructor(message: string, opts?: SkillbrokerErrorOptions); type: 'phase_violation'; }
export class PermissionDeniedError extends SkillbrokerError { constructor(message: string, opts?: SkillbrokerErrorOptions); type: 'permission_denied'; }
export class ApprovalDeniedError extends SkillbrokerError { constructor(message: string, opts?: SkillbrokerErrorOptions); type: 'approval_denied'; }
export class ApprovalTimeoutError extends SkillbrokerError { constructor(message: string, opts?: SkillbrokerErrorOptions); type: 'approval_timeout'; }
export class RateLimitedError extends SkillbrokerError { constructor(message: string, opts?: SkillbrokerErrorOptions); type: 'rate_limited'; }
export class TimeoutError extends SkillbrokerError { constructor(message: string, opts?: SkillbrokerErrorOptions); type: 'timeout'; }
export class ResourceLimitError extends SkillbrokerError { constructor(message: string, opts?: SkillbrokerErrorOptions); type: 'resource_limit'; }
export class SandboxFailedError extends SkillbrokerError { constructor(message: string, opts?: SkillbrokerErrorOptions); type: 'sandbox_failed'; }
export class AuditUnavailableError extends SkillbrokerError { constructor(message: string, opts?: SkillbrokerErrorOptions); type: 'audit_unavailable'; }
export class PolicyUnavailableError extends SkillbrokerError { constructor(message: string, opts?: SkillbrokerErrorOptions); type: 'policy_unavailable'; }
export class CancelledError extends SkillbrokerError { constructor(message: string, opts?: SkillbrokerErrorOptions); type: 'cancelled'; }
export class OverloadedError extends SkillbrokerError { constructor(message: string, opts?: SkillbrokerErrorOptions); type: 'overloaded'; }
export class InternalError extends SkillbrokerError { constructor(message: string, opts?: SkillbrokerErrorOptions); type: 'internal'; }

/** Every protocol error type, as the wire names it. */
export const ERROR_TYPES: readonly string[];
/** The typed error for an error type (SkillbrokerError for an unknown one). */
export function errorFor(type: string, message: string, opts?: SkillbrokerErrorOptions): SkillbrokerError;

export const SYSTEM_SOCKET: '/run/skillbroker/skillbroker.sock';
export function resolveSocketPath(
  path?: string,
  env?: Record<string, string | undefined>,
): string;

export const DEFAULT_MAX_FRAME: number;
export const DEFAULT_MAX_REPLY: number;
/** Splits a byte stream into frame bodies, refusing a length of 0 or above max. */
export class FrameReader {
  constructor(max?: number);
  readonly max: number;
  push(chunk: Buffer): Buffer[];
  readonly midFrame: boolean;
}
/** One body: exactly one map, no trailing bytes; bin as Buffer. */
export function decodeBody(body: Buffer): Record<string, any>;
/** A request's frame, after the checks whose breach would close the connection. */
export function encodeFrame(request: Record<string, unknown>, maxFrame?: number): Buffer;
