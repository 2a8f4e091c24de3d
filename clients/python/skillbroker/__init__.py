"""skillbroker: a client of the skillbroker daemon's local socket protocol (sync Client and asyncio AsyncClient)."""
import logging

from ._errors import (ERROR_TYPES, ApprovalDenied, ApprovalTimeout, AuditUnavailable, BadRequest, Cancelled,
                      IntegrityError, Internal, NotFound, Overloaded, PermissionDenied, PhaseViolation,
                      PolicyUnavailable, ProtocolError, RateLimited, RequestTooLarge, ResourceLimit,
                      SandboxFailed, SkillbrokerError, SkillNotEnabled, Timeout, UnknownCommand, UnknownSkill,
                      Unsupported)
from ._paths import socket_path
from .aio import AsyncCall, AsyncClient, connect_async
from .client import Call, Client, connect
from .types import (APPROVAL_OPTIONS, ApprovalRequest, CancelInfo, CommandInfo, FileChunk, FileEntry, FileInfo,
                    FileList, FileWritten, Hello, Limits, PendingApproval, Policy, Principal, Reference, Result,
                    SkillInfo, SkillSummary, Stats)

__version__ = "0.2.0"

# The client logs what it cannot raise (a handler that failed, an approve
# the broker refused); the application decides whether to show it.
logging.getLogger("skillbroker").addHandler(logging.NullHandler())

__all__ = [
    "Client", "AsyncClient", "Call", "AsyncCall", "connect", "connect_async", "socket_path",
    "Result", "Policy", "FileWritten", "Hello", "Limits", "Principal", "ApprovalRequest", "PendingApproval",
    "APPROVAL_OPTIONS", "CancelInfo", "SkillSummary", "SkillInfo", "CommandInfo", "Reference",
    "FileInfo", "FileChunk", "FileList", "FileEntry", "Stats",
    "SkillbrokerError", "ERROR_TYPES", "BadRequest", "Unsupported", "NotFound", "UnknownSkill",
    "SkillNotEnabled", "UnknownCommand", "PhaseViolation", "PermissionDenied", "ApprovalDenied",
    "ApprovalTimeout", "RateLimited", "Timeout", "ResourceLimit", "SandboxFailed", "AuditUnavailable",
    "PolicyUnavailable", "Cancelled", "Overloaded", "Internal",
    "ProtocolError", "RequestTooLarge", "IntegrityError",
]
