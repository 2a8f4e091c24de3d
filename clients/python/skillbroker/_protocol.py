"""The requests' fields and the replies' checks, shared so the sync and async clients cannot drift apart."""
from __future__ import annotations

from typing import Any, Dict, Mapping, NamedTuple, Optional, Sequence, Union

from ._errors import ProtocolError, RequestId, error_from_reply
from ._frame import MAX_REPLY_CAP
from .types import Hello, Result

PROTOCOL = 2
# The requests the broker's in-flight bound counts (limits.in_flight a
# connection): past it, the client holds them back rather than have them
# refused with overloaded.
COUNTED = frozenset({"invoke", "authorize", "skills", "skill_info", "reload"})
IN_FLIGHT_DEFAULT = 128
Fields = Dict[str, Any]
Data = Union[bytes, bytearray, memoryview, str]

# Reply types other than the request's own.
_REPLY_TYPE = {"invoke": "result", "authorize": "result"}


def _text(name: str, v: Any) -> str:
    """A str field. A NUL in a str would make the broker refuse the frame and
    close the connection with every call on it, so it is refused here."""
    if not isinstance(v, str):
        raise TypeError("%s must be a str, not %s" % (name, type(v).__name__))
    if "\0" in v:
        raise ValueError("%s holds a NUL character" % name)
    return v


def _uint(name: str, v: Any) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise TypeError("%s must be an int, not %s" % (name, type(v).__name__))
    if v < 0 or v >= 1 << 64:
        raise ValueError("%s must be an unsigned 64-bit integer" % name)
    return v


def _data(name: str, v: Data) -> bytes:
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    raise TypeError("%s must be bytes or str, not %s" % (name, type(v).__name__))


def request_id(v: Any) -> RequestId:
    """An id as the protocol takes it: a str of 1..128 bytes or an unsigned int."""
    if isinstance(v, str):
        _text("request_id", v)
        if not 1 <= len(v.encode("utf-8")) <= 128:
            raise ValueError("a str request_id holds 1..128 bytes")
        return v
    return _uint("request_id", v)


class Bounds(NamedTuple):
    """What hello's reply sets: the request frame bound, the reply bound, the requests in flight."""
    max_frame: int
    max_reply: int
    in_flight: int


def bounds(h: Hello, max_reply: Optional[int]) -> Bounds:
    """The bounds a hello reply sets (max_reply, when given, is the caller's own reply bound)."""
    if h.protocol != PROTOCOL:
        raise ProtocolError("the broker agreed to protocol %r, not %d" % (h.protocol, PROTOCOL))
    frame = h.limits.max_frame_bytes
    if max_reply is None:
        # A result may be longer than a frame, up to reply_bytes.
        max_reply = min(max(h.limits.reply_bytes or frame, frame), MAX_REPLY_CAP)
    n = h.limits.in_flight
    return Bounds(frame, max_reply, n if n is not None and n > 0 else IN_FLIGHT_DEFAULT)


def hello(approvals: bool) -> Fields:
    f: Fields = {"protocol": PROTOCOL}
    if approvals:
        f["approvals"] = True
    return f


def call(skill: str, command: Optional[str], args: Sequence[str], stdin: Optional[Data],
         env: Optional[Mapping[str, str]], session: Optional[str], phase: Optional[str],
         timeout_ms: Optional[int]) -> Fields:
    """The fields of invoke and authorize; a None is left out (the broker's default)."""
    f: Fields = {"skill": _text("skill", skill)}
    if command is not None:
        f["command"] = _text("command", command)
    if isinstance(args, (str, bytes)):
        raise TypeError("args must be a sequence of str, not a single %s" % type(args).__name__)
    a = [_text("args[%d]" % i, x) for i, x in enumerate(args)]
    if a:
        f["args"] = a
    if stdin is not None:
        f["stdin"] = _data("stdin", stdin)
    if env is not None:
        f["env"] = {_text("env key", k): _text("env[%r]" % k, v) for k, v in env.items()}
    if session is not None:
        f["session"] = _text("session", session)
    if phase is not None:
        f["phase"] = _text("phase", phase)
    if timeout_ms is not None:
        f["timeout_ms"] = _uint("timeout_ms", timeout_ms)
    return f


def skill_info(skill: str, references: bool) -> Fields:
    f: Fields = {"skill": _text("skill", skill)}
    if references:
        f["references"] = True
    return f


def session(session: Optional[str]) -> Fields:
    return {} if session is None else {"session": _text("session", session)}


def file_req(session_: Optional[str], path: Optional[str] = None, *, data: Optional[Data] = None,
             offset: Optional[int] = None, length: Optional[int] = None,
             timeout_ms: Optional[int] = None) -> Fields:
    """The fields of put_file, get_file, list_files and delete_file."""
    f = session(session_)
    if path is not None:
        f["path"] = _text("path", path)
    if data is not None:
        f["data"] = _data("data", data)
    if offset is not None:
        f["offset"] = _uint("offset", offset)
    if length is not None:
        f["length"] = _uint("length", length)
    if timeout_ms is not None:
        f["timeout_ms"] = _uint("timeout_ms", timeout_ms)
    return f


def approve(approval_id: str, option: str) -> Fields:
    return {"approval_id": _text("approval_id", approval_id), "option": _text("option", option)}


def cancel(rid: RequestId) -> Fields:
    return {"request_id": request_id(rid)}


def check(rtype: str, reply: Mapping[str, Any]) -> Dict[str, Any]:
    """The reply when it says ok: true; else raise the error it stands for."""
    if reply.get("ok") is not True:
        err = error_from_reply(reply)
        if reply.get("type") == "result":
            err.result = Result.from_reply(reply)
        raise err
    want = _REPLY_TYPE.get(rtype, rtype)
    if reply.get("type") != want:
        raise ProtocolError("a %s request got a reply of type %r" % (rtype, reply.get("type")))
    return dict(reply)
