// index.js: the package's public surface (see README.md and index.d.ts).
export { Client, PROTOCOL, APPROVAL_OPTIONS } from './lib/client.js';
export { InvokeResult } from './lib/results.js';
export { resolveSocketPath, SYSTEM_SOCKET } from './lib/socket-path.js';
export { FrameReader, decodeBody, encodeFrame, DEFAULT_MAX_FRAME, DEFAULT_MAX_REPLY } from './lib/frame.js';
export {
  SkillbrokerError,
  ProtocolError,
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
  ERROR_TYPES,
  errorFor,
} from './lib/errors.js';
