// errors.js: the typed errors, one class per error type of docs/protocol.md.

/** The base of every error this package throws for the broker's sake. */
export class SkillbrokerError extends Error {
  /**
   * @param {string} type the protocol's error.type (or "protocol")
   * @param {string} message
   * @param {object} [opts] details, requestId, result, cause
   */
  constructor(type, message, opts = {}) {
    super(message, opts.cause !== undefined ? { cause: opts.cause } : undefined);
    this.name = new.target.name;
    this.type = type;
    this.details = opts.details ?? {};
    this.requestId = opts.requestId ?? null;
    // the parsed result of an invoke or authorize reply that carried the error
    this.result = opts.result ?? null;
  }
}

/** A malformed frame, a reply that breaks the protocol, or a closed connection. */
export class ProtocolError extends SkillbrokerError {
  constructor(message, opts = {}) {
    super('protocol', message, opts);
  }
}

// wire name -> class name, in the order of the protocol's "Error types" table
const TYPES = [
  ['bad_request', 'BadRequestError'],
  ['unsupported', 'UnsupportedError'],
  ['not_found', 'NotFoundError'],
  ['unknown_skill', 'UnknownSkillError'],
  ['skill_not_enabled', 'SkillNotEnabledError'],
  ['unknown_command', 'UnknownCommandError'],
  ['phase_violation', 'PhaseViolationError'],
  ['permission_denied', 'PermissionDeniedError'],
  ['approval_denied', 'ApprovalDeniedError'],
  ['approval_timeout', 'ApprovalTimeoutError'],
  ['rate_limited', 'RateLimitedError'],
  ['timeout', 'TimeoutError'],
  ['resource_limit', 'ResourceLimitError'],
  ['sandbox_failed', 'SandboxFailedError'],
  ['audit_unavailable', 'AuditUnavailableError'],
  ['policy_unavailable', 'PolicyUnavailableError'],
  ['cancelled', 'CancelledError'],
  ['overloaded', 'OverloadedError'],
  ['internal', 'InternalError'],
];

/** @type {Map<string, typeof SkillbrokerError>} */
const byType = new Map();

function defineType(type, name) {
  // a named class per type, so `instanceof` and `err.name` both work
  const cls = {
    [name]: class extends SkillbrokerError {
      constructor(message, opts = {}) {
        super(type, message, opts);
      }
    },
  }[name];
  byType.set(type, cls);
  return cls;
}

const classes = Object.fromEntries(TYPES.map(([t, n]) => [n, defineType(t, n)]));

export const {
  BadRequestError,
  UnsupportedError,
  NotFoundError,
  UnknownSkillError,
  SkillNotEnabledError,
  UnknownCommandError,
  PhaseViolationError,
  PermissionDeniedError,
  ApprovalDeniedError,
  ApprovalTimeoutError,
  RateLimitedError,
  TimeoutError,
  ResourceLimitError,
  SandboxFailedError,
  AuditUnavailableError,
  PolicyUnavailableError,
  CancelledError,
  OverloadedError,
  InternalError,
} = classes;

/** Every protocol error type, as the wire names it. */
export const ERROR_TYPES = Object.freeze(TYPES.map(([t]) => t));

/**
 * The error for an error type: its class, or SkillbrokerError for a type
 * this package does not know (a newer server).
 */
export function errorFor(type, message, opts = {}) {
  const cls = byType.get(type);
  return cls ? new cls(message, opts) : new SkillbrokerError(type, message, opts);
}

/** The error an `error` map of a reply ({type, message, details}) stands for. */
export function errorFromReply(err, opts = {}) {
  if (err === null || typeof err !== 'object' || typeof err.type !== 'string') {
    return new ProtocolError('a reply with ok false and no usable error map', {
      ...opts,
      details: { error: err },
    });
  }
  const message = typeof err.message === 'string' ? err.message : err.type;
  const details = err.details && typeof err.details === 'object' ? err.details : {};
  return errorFor(err.type, message, { ...opts, details });
}
