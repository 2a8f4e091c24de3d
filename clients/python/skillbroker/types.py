"""Typed views of the broker's replies (dataclasses); each keeps the raw reply in `raw`."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Union

from ._errors import SkillbrokerError, error_from_reply

RequestId = Union[int, str]
# The answers an approval handler may give (None: leave it to someone else).
APPROVAL_OPTIONS = ("yes_once", "yes_in_session", "no")


def _map(v: Any) -> Dict[str, Any]:
    return dict(v) if isinstance(v, Mapping) else {}


def _int(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _int0(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _strs(v: Any) -> List[str]:
    return [x for x in v if isinstance(x, str)] if isinstance(v, list) else []


def _bytes(v: Any) -> bytes:
    if isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return v.encode("utf-8")
    return b""


def _rid(v: Any) -> Optional[RequestId]:
    return v if isinstance(v, (int, str)) and not isinstance(v, bool) else None


@dataclass(frozen=True)
class Principal:
    """Who the kernel says this connection is (SO_PEERCRED)."""
    uid: int
    gid: int
    pid: int


@dataclass(frozen=True)
class Limits:
    """The server's bounds, from hello's capabilities.limits."""
    max_frame_bytes: int
    in_flight: Optional[int] = None
    args: Optional[int] = None
    arg_bytes: Optional[int] = None
    env: Optional[int] = None
    max_timeout_ms: Optional[int] = None
    file_path_bytes: Optional[int] = None
    put_file_bytes: Optional[int] = None
    reply_bytes: Optional[int] = None


@dataclass(frozen=True)
class Hello:
    """The hello reply: the agreed protocol major, the principal, what the server serves."""
    server: str
    version: str
    protocol: int
    principal: Principal
    protocol_min: Optional[int]
    protocol_max: Optional[int]
    requests: List[str]
    limits: Limits
    raw: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_reply(cls, r: Mapping[str, Any], default_max_frame: int) -> "Hello":
        p = _map(r.get("principal"))
        caps = _map(r.get("capabilities"))
        lim = _map(caps.get("limits"))
        mf = _int(lim.get("max_frame_bytes"))
        return cls(
            server=_str(r.get("server")), version=_str(r.get("version")),
            protocol=_int0(r.get("protocol")),
            principal=Principal(_int0(p.get("uid")), _int0(p.get("gid")), _int0(p.get("pid"))),
            protocol_min=_int(caps.get("protocol_min")),
            protocol_max=_int(caps.get("protocol_max")),
            requests=_strs(caps.get("requests")),
            limits=Limits(
                max_frame_bytes=mf if mf and mf > 0 else default_max_frame,
                in_flight=_int(lim.get("in_flight")), args=_int(lim.get("args")),
                arg_bytes=_int(lim.get("arg_bytes")), env=_int(lim.get("env")),
                max_timeout_ms=_int(lim.get("max_timeout_ms")),
                file_path_bytes=_int(lim.get("file_path_bytes")),
                put_file_bytes=_int(lim.get("put_file_bytes")),
                reply_bytes=_int(lim.get("reply_bytes"))),
            raw=dict(r))


@dataclass(frozen=True)
class Policy:
    """The decision: allowed, why, and the rules (`file:line name`, or `builtin:…`) that made it."""
    allowed: bool
    decision_reason: str
    matched_rules: List[str]

    @classmethod
    def from_map(cls, m: Mapping[str, Any]) -> "Policy":
        return cls(m.get("allowed") is True, _str(m.get("decision_reason")),
                   _strs(m.get("matched_rules")))


@dataclass(frozen=True)
class FileWritten:
    """A file under /work or /data that the call created or changed (sha256 "" past 64 MiB)."""
    path: str
    size_bytes: int
    sha256: str


@dataclass(frozen=True)
class Result:
    """An invoke's or authorize's result.

    A non-zero exit is not an error: `exit_code` says it (None when a
    signal ended the skill, then `signal` says which). `ok` is False only
    for a Result read back by last_result (or attached to an exception),
    and then `error` is the exception it stands for.
    """
    request_id: Optional[RequestId]
    ok: bool
    skill: str
    command: str
    timestamp_utc: str
    policy: Optional[Policy]
    queued_ms: Optional[int] = None
    stdout: bytes = b""
    stderr: bytes = b""
    truncated: bool = False
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    exit_code: Optional[int] = None
    signal: Optional[int] = None
    duration_ms: Optional[int] = None
    cpu_ms: Optional[int] = None
    max_rss_kb: Optional[int] = None
    files_written: List[FileWritten] = field(default_factory=list)
    ran: bool = False
    effective: Optional[Dict[str, Any]] = None
    error: Optional[SkillbrokerError] = field(default=None, repr=False)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def allowed(self) -> bool:
        """For authorize: the decision (also policy.allowed)."""
        return self.policy.allowed if self.policy is not None else self.ok

    @classmethod
    def from_reply(cls, r: Mapping[str, Any]) -> "Result":
        out = r.get("output")
        eff = r.get("effects")
        o = _map(out)
        e = _map(eff)
        proc = _map(e.get("process"))
        files = [FileWritten(_str(f.get("path")), _int0(f.get("size_bytes")), _str(f.get("sha256")))
                 for f in (e.get("files_written") or []) if isinstance(f, Mapping)]
        pol = r.get("policy")
        ok = r.get("ok") is True
        return cls(
            request_id=_rid(r.get("id")), ok=ok,
            skill=_str(r.get("skill")), command=_str(r.get("command")),
            timestamp_utc=_str(r.get("timestamp_utc")),
            policy=Policy.from_map(pol) if isinstance(pol, Mapping) else None,
            queued_ms=_int(r.get("queued_ms")),
            stdout=_bytes(o.get("stdout")), stderr=_bytes(o.get("stderr")),
            truncated=o.get("truncated") is True,
            stdout_bytes=_int0(o.get("stdout_bytes")), stderr_bytes=_int0(o.get("stderr_bytes")),
            exit_code=_int(proc.get("exit_code")), signal=_int(proc.get("signal")),
            duration_ms=_int(proc.get("duration_ms")), cpu_ms=_int(proc.get("cpu_ms")),
            max_rss_kb=_int(proc.get("max_rss_kb")),
            files_written=files,
            ran=isinstance(out, Mapping) or isinstance(eff, Mapping),
            effective=dict(r["effective"]) if isinstance(r.get("effective"), Mapping) else None,
            error=None if ok else error_from_reply(r),
            raw=dict(r))


@dataclass(frozen=True)
class ApprovalRequest:
    """The broker asks this connection whether a held invoke may run (see approval_handler)."""
    id: str
    request_id: Optional[RequestId]
    skill: str
    command: str
    session: str
    args: List[str]
    args_total: int
    effective: Dict[str, Any]
    rules: List[str]
    options: List[str]
    timeout_ms: Optional[int]
    raw: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_frame(cls, r: Mapping[str, Any]) -> "ApprovalRequest":
        return cls(
            id=_str(r.get("id")), request_id=_rid(r.get("request_id")),
            skill=_str(r.get("skill")), command=_str(r.get("command")),
            session=_str(r.get("session")), args=_strs(r.get("args")),
            args_total=_int0(r.get("args_total")), effective=_map(r.get("effective")),
            rules=_strs(r.get("rules")), options=_strs(r.get("options")),
            timeout_ms=_int(r.get("timeout_ms")), raw=dict(r))


@dataclass(frozen=True)
class PendingApproval:
    """One entry of the approvals reply: an approval waiting for an answer now."""
    id: str
    request_id: Optional[RequestId]
    uid: int
    skill: str
    command: str
    session: str
    waited_ms: int
    timeout_ms: int
    raw: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_map(cls, m: Mapping[str, Any]) -> "PendingApproval":
        return cls(_str(m.get("id")), _rid(m.get("request_id")), _int0(m.get("uid")),
                   _str(m.get("skill")), _str(m.get("command")), _str(m.get("session")),
                   _int0(m.get("waited_ms")), _int0(m.get("timeout_ms")), dict(m))


@dataclass(frozen=True)
class CancelInfo:
    """A cancel's reply: the call was ended; `state` says where it was."""
    request_id: Optional[RequestId]
    state: str
    raw: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_reply(cls, r: Mapping[str, Any]) -> "CancelInfo":
        return cls(_rid(r.get("request_id")), _str(r.get("state")), dict(r))


@dataclass(frozen=True)
class SkillSummary:
    """One entry of the skills reply; `error` is set only for an invalid skill."""
    name: str
    description: str
    valid: bool
    commands: List[str]
    error: Optional[str]
    warnings: List[str]
    raw: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_map(cls, m: Mapping[str, Any]) -> "SkillSummary":
        err = m.get("error")
        return cls(_str(m.get("name")), _str(m.get("description")), m.get("valid") is True,
                   _strs(m.get("commands")), err if isinstance(err, str) else None,
                   _strs(m.get("warnings")), dict(m))


@dataclass(frozen=True)
class CommandInfo:
    """A command of a skill: whether this caller may run it (phase execution), or may once a human said yes."""
    name: str
    description: str
    allowed: bool
    ask: bool = False


@dataclass(frozen=True)
class Reference:
    """A file of the skill's references/ (text only when asked for, and when it fits)."""
    path: str
    size_bytes: int
    sha256: str
    text: Optional[str]
    text_omitted: Optional[str]


@dataclass(frozen=True)
class SkillInfo:
    """skill_info: what a model needs before calling a skill."""
    name: str
    description: str
    frontmatter: Dict[str, Any]
    body: str
    commands: List[CommandInfo]
    permissions: Dict[str, Any]
    references: List[Reference]
    references_truncated: bool
    raw: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_reply(cls, r: Mapping[str, Any]) -> "SkillInfo":
        s = _map(r.get("skill"))
        cmds = [CommandInfo(_str(c.get("name")), _str(c.get("description")), c.get("allowed") is True,
                            c.get("ask") is True)
                for c in (s.get("commands") or []) if isinstance(c, Mapping)]
        refs = []
        for f in s.get("references") or []:
            if isinstance(f, Mapping):
                t, om = f.get("text"), f.get("text_omitted")
                refs.append(Reference(_str(f.get("path")), _int0(f.get("size_bytes")),
                                      _str(f.get("sha256")), t if isinstance(t, str) else None,
                                      om if isinstance(om, str) else None))
        return cls(_str(s.get("name")), _str(s.get("description")), _map(s.get("frontmatter")),
                   _str(s.get("body")), cmds, _map(s.get("permissions")), refs,
                   s.get("references_truncated") is True, dict(r))


@dataclass(frozen=True)
class FileInfo:
    """put_file's and delete_file's reply: the file after the write, or what was removed."""
    session: str
    path: str
    size_bytes: int
    sha256: str
    kind: Optional[str]
    queued_ms: Optional[int]
    raw: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_reply(cls, r: Mapping[str, Any]) -> "FileInfo":
        k = r.get("kind")
        return cls(_str(r.get("session")), _str(r.get("path")), _int0(r.get("size_bytes")),
                   _str(r.get("sha256")), k if isinstance(k, str) else None,
                   _int(r.get("queued_ms")), dict(r))


@dataclass(frozen=True)
class FileChunk:
    """get_file's reply: `data` from `offset`; size_bytes and sha256 are the whole file's."""
    session: str
    path: str
    size_bytes: int
    sha256: str
    offset: int
    data: bytes
    eof: bool
    queued_ms: Optional[int]
    raw: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_reply(cls, r: Mapping[str, Any]) -> "FileChunk":
        return cls(_str(r.get("session")), _str(r.get("path")), _int0(r.get("size_bytes")),
                   _str(r.get("sha256")), _int0(r.get("offset")), _bytes(r.get("data")),
                   r.get("eof") is True, _int(r.get("queued_ms")), dict(r))


@dataclass(frozen=True)
class FileEntry:
    """One entry of list_files: kind file, dir, symlink or other; sha256 for files only."""
    path: str
    kind: str
    size_bytes: int
    sha256: Optional[str]


@dataclass(frozen=True)
class FileList:
    """list_files' reply: every entry beneath the work dir, sorted by path."""
    session: str
    files: List[FileEntry]
    truncated: bool
    queued_ms: Optional[int]
    raw: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_reply(cls, r: Mapping[str, Any]) -> "FileList":
        files = []
        for f in r.get("files") or []:
            if isinstance(f, Mapping):
                h = f.get("sha256")
                files.append(FileEntry(_str(f.get("path")), _str(f.get("kind")),
                                       _int0(f.get("size_bytes")), h if isinstance(h, str) else None))
        return cls(_str(r.get("session")), files, r.get("truncated") is True,
                   _int(r.get("queued_ms")), dict(r))


@dataclass(frozen=True)
class Stats:
    """The broker's counters since its start; calls and latency as the reply has them."""
    uptime_s: int
    clients: int
    requests_total: int
    invokes_total: int
    in_flight: int
    queued: int
    approvals_pending: int
    audit_queue: int
    calls: Dict[str, int]
    latency: Dict[str, Any]
    raw: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_reply(cls, r: Mapping[str, Any]) -> "Stats":
        return cls(
            uptime_s=_int0(r.get("uptime_s")), clients=_int0(r.get("clients")),
            requests_total=_int0(r.get("requests_total")), invokes_total=_int0(r.get("invokes_total")),
            in_flight=_int0(r.get("in_flight")), queued=_int0(r.get("queued")),
            approvals_pending=_int0(r.get("approvals_pending")), audit_queue=_int0(r.get("audit_queue")),
            calls={k: _int0(v) for k, v in _map(r.get("calls")).items()},
            latency=_map(r.get("latency")), raw=dict(r))
