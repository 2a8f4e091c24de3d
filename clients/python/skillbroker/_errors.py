"""The exceptions: one class per error type of the protocol, and the client's own failures."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Type, Union

if TYPE_CHECKING:
    from .types import Result

RequestId = Union[int, str]


class SkillbrokerError(Exception):
    """The broker answered ok: false. `type` is the protocol's error type.

    `reply` is the whole reply as received; `result` is the parsed Result
    when the reply was an invoke or authorize result (a timeout still
    carries the skill's output and effects there).
    """

    type: str = ""

    def __init__(self, message: str = "", *, type: Optional[str] = None,
                 details: Optional[Mapping[str, Any]] = None,
                 request_id: Optional[RequestId] = None,
                 reply: Optional[Mapping[str, Any]] = None) -> None:
        super().__init__(message)
        if type is not None:
            self.type = type
        self.message = message
        self.details: Dict[str, Any] = dict(details or {})
        self.request_id = request_id
        self.reply: Dict[str, Any] = dict(reply or {})
        self.result: Optional["Result"] = None

    def __str__(self) -> str:
        return "%s: %s" % (self.type or "error", self.message)

    def __repr__(self) -> str:
        return "%s(type=%r, message=%r, request_id=%r)" % (
            self.__class__.__name__, self.type, self.message, self.request_id)


class BadRequest(SkillbrokerError):
    type = "bad_request"


class Unsupported(SkillbrokerError):
    type = "unsupported"


class NotFound(SkillbrokerError):
    type = "not_found"


class UnknownSkill(SkillbrokerError):
    type = "unknown_skill"


class SkillNotEnabled(SkillbrokerError):
    type = "skill_not_enabled"


class UnknownCommand(SkillbrokerError):
    type = "unknown_command"


class PhaseViolation(SkillbrokerError):
    type = "phase_violation"


class PermissionDenied(SkillbrokerError):
    type = "permission_denied"


class ApprovalDenied(SkillbrokerError):
    type = "approval_denied"


class ApprovalTimeout(SkillbrokerError):
    type = "approval_timeout"


class RateLimited(SkillbrokerError):
    type = "rate_limited"


class Timeout(SkillbrokerError):
    type = "timeout"


class ResourceLimit(SkillbrokerError):
    type = "resource_limit"


class SandboxFailed(SkillbrokerError):
    type = "sandbox_failed"


class AuditUnavailable(SkillbrokerError):
    type = "audit_unavailable"


class PolicyUnavailable(SkillbrokerError):
    type = "policy_unavailable"


class Cancelled(SkillbrokerError):
    type = "cancelled"


class Overloaded(SkillbrokerError):
    type = "overloaded"


class Internal(SkillbrokerError):
    type = "internal"


# The table of docs/protocol.md "Error types" (lib/error.c), in its order.
ERROR_TYPES: Dict[str, Type[SkillbrokerError]] = {
    c.type: c for c in (
        BadRequest, Unsupported, NotFound, UnknownSkill, SkillNotEnabled,
        UnknownCommand, PhaseViolation, PermissionDenied, ApprovalDenied,
        ApprovalTimeout, RateLimited, Timeout, ResourceLimit, SandboxFailed,
        AuditUnavailable, PolicyUnavailable, Cancelled, Overloaded, Internal)
}


def error_from_reply(reply: Mapping[str, Any]) -> SkillbrokerError:
    """The exception an ok: false reply stands for (the base class for an unknown type)."""
    err = reply.get("error")
    if not isinstance(err, Mapping):
        err = {}
    etype = err.get("type")
    message = err.get("message")
    details = err.get("details")
    if not isinstance(etype, str):
        etype = ""
    if not isinstance(message, str):
        message = "the broker answered ok: false without a message"
    rid = reply.get("id")
    cls = ERROR_TYPES.get(etype, SkillbrokerError)
    return cls(message, type=etype or None,
               details=details if isinstance(details, Mapping) else None,
               request_id=rid if isinstance(rid, (int, str)) else None,
               reply=reply)


class ProtocolError(ConnectionError):
    """The connection is unusable: a malformed frame, or it closed (every pending call gets one).

    `server_error` is the broker's last word when it sent one before
    closing (an error reply with a nil id: a frame it refused, or a
    connection beyond its bounds).
    """

    def __init__(self, message: str, server_error: Optional[SkillbrokerError] = None) -> None:
        super().__init__(message)
        self.server_error = server_error

    def again(self) -> "ProtocolError":
        """The same failure as a new exception, for one more caller (each raise gets its own traceback)."""
        return ProtocolError(str(self.args[0]) if self.args else "", self.server_error)

    def __str__(self) -> str:
        s = super().__str__()
        if self.server_error is not None:
            s += " (the broker said %s)" % self.server_error
        return s


class RequestTooLarge(ValueError):
    """A request would not fit in one frame (max_frame_bytes): nothing was sent."""

    def __init__(self, size: int, max_frame: int) -> None:
        super().__init__("request of %d bytes is larger than max_frame_bytes (%d)"
                         % (size, max_frame))
        self.size = size
        self.max_frame = max_frame


class IntegrityError(Exception):
    """put() or get() assembled bytes whose size or sha256 differ from what the broker reported."""
