// results.js: reply maps turned into the typed objects the Client's calls return.
import { errorFromReply } from './errors.js';

const EMPTY = Buffer.alloc(0);

function num(v) {
  return typeof v === 'number' || typeof v === 'bigint' ? v : null;
}

function buf(v) {
  if (Buffer.isBuffer(v)) return v;
  if (typeof v === 'string') return Buffer.from(v, 'utf8');
  return EMPTY;
}

function map(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !Buffer.isBuffer(v) ? v : {};
}

/**
 * The result of an invoke or authorize (protocol.md, "result"). A
 * non-zero exitCode is not an error: ok stays true.
 */
export class InvokeResult {
  /** @param {Record<string, any>} raw the reply as the broker sent it */
  constructor(raw) {
    const policy = map(raw.policy);
    const output = raw.output === undefined ? null : map(raw.output);
    const effects = raw.effects === undefined ? null : map(raw.effects);
    const proc = map(effects?.process);
    this.ok = raw.ok === true;
    this.requestId = raw.id ?? null;
    this.skill = typeof raw.skill === 'string' ? raw.skill : null;
    this.command = typeof raw.command === 'string' ? raw.command : null;
    this.timestampUtc = typeof raw.timestamp_utc === 'string' ? raw.timestamp_utc : null;
    this.queuedMs = num(raw.queued_ms);
    this.policy = {
      allowed: policy.allowed === true,
      decisionReason: typeof policy.decision_reason === 'string' ? policy.decision_reason : '',
      matchedRules: Array.isArray(policy.matched_rules) ? policy.matched_rules : [],
    };
    this.effective = raw.effective === undefined ? null : map(raw.effective);
    // true once the worker was started: output and effects are then present
    this.started = output !== null;
    this.stdout = buf(output?.stdout);
    this.stderr = buf(output?.stderr);
    this.truncated = output?.truncated === true;
    this.stdoutBytes = num(output?.stdout_bytes) ?? this.stdout.length;
    this.stderrBytes = num(output?.stderr_bytes) ?? this.stderr.length;
    this.exitCode = num(proc.exit_code);
    this.signal = num(proc.signal);
    this.durationMs = num(proc.duration_ms);
    this.cpuMs = num(proc.cpu_ms);
    this.maxRssKb = num(proc.max_rss_kb);
    this.filesWritten = (Array.isArray(effects?.files_written) ? effects.files_written : []).map(
      (f) => ({ path: f.path, sizeBytes: num(f.size_bytes), sha256: f.sha256 ?? '' }),
    );
    this.error = this.ok ? null : errorFromReply(raw.error, { requestId: this.requestId });
    this.raw = raw;
  }

  /** stdout as UTF-8 text. */
  get text() {
    return this.stdout.toString('utf8');
  }
}

/** A session file reply's common fields (put_file, get_file, delete_file). */
export function fileReply(raw) {
  const out = {
    session: raw.session,
    path: raw.path,
    sizeBytes: num(raw.size_bytes),
    sha256: typeof raw.sha256 === 'string' ? raw.sha256 : null,
    queuedMs: num(raw.queued_ms),
    raw,
  };
  if (raw.type === 'get_file') {
    out.offset = num(raw.offset);
    out.data = buf(raw.data);
    out.eof = raw.eof === true;
  }
  if (raw.type === 'delete_file') out.kind = raw.kind;
  return out;
}

/** A list_files reply. */
export function fileList(raw) {
  return {
    session: raw.session,
    files: (Array.isArray(raw.files) ? raw.files : []).map((f) => ({
      path: f.path,
      kind: f.kind,
      sizeBytes: num(f.size_bytes),
      sha256: typeof f.sha256 === 'string' ? f.sha256 : null,
    })),
    truncated: raw.truncated === true,
    queuedMs: num(raw.queued_ms),
    raw,
  };
}

/** An approval_request frame, as the approvalHandler sees it. */
export function approvalRequest(raw) {
  return {
    id: raw.id,
    requestId: raw.request_id,
    skill: raw.skill,
    command: raw.command,
    session: raw.session,
    args: Array.isArray(raw.args) ? raw.args : [],
    argsTotal: num(raw.args_total),
    effective: map(raw.effective),
    rules: Array.isArray(raw.rules) ? raw.rules : [],
    options: Array.isArray(raw.options) ? raw.options : [],
    timeoutMs: num(raw.timeout_ms),
    raw,
  };
}

/** One entry of an approvals reply. */
export function approvalEntry(a) {
  return {
    id: a.id,
    requestId: a.request_id,
    uid: num(a.uid),
    skill: a.skill,
    command: a.command,
    session: a.session,
    waitedMs: num(a.waited_ms),
    timeoutMs: num(a.timeout_ms),
  };
}

/** A skill_info reply's skill. */
export function skillInfo(raw) {
  const s = map(raw.skill);
  return {
    name: s.name,
    description: s.description,
    frontmatter: map(s.frontmatter),
    body: typeof s.body === 'string' ? s.body : '',
    commands: Array.isArray(s.commands) ? s.commands : [],
    permissions: map(s.permissions),
    references: (Array.isArray(s.references) ? s.references : []).map((r) => ({
      path: r.path,
      sizeBytes: num(r.size_bytes),
      sha256: r.sha256 ?? '',
      text: typeof r.text === 'string' ? r.text : null,
      textOmitted: typeof r.text_omitted === 'string' ? r.text_omitted : null,
    })),
    referencesTruncated: s.references_truncated === true,
    raw,
  };
}
