"""The blocking client: one connection, safe to share between threads, a reader thread matching replies to calls by id."""
from __future__ import annotations

import itertools
import logging
import os
import select
import socket
import threading
import time
from typing import Any, Callable, Dict, Generator, Generic, List, Mapping, Optional, Sequence, TypeVar, Union

from . import _protocol as P
from ._errors import ProtocolError, RequestId, SkillbrokerError, error_from_reply
from ._frame import DEFAULT_MAX_FRAME, DEFAULT_MAX_REPLY, HEADER_BYTES, decode_body, encode_frame, parse_header
from ._paths import socket_path
from ._transfer import Step, chunk_size, get_steps, put_steps
from .types import (APPROVAL_OPTIONS, ApprovalRequest, CancelInfo, FileChunk, FileInfo, FileList,
                    Hello, PendingApproval, Result, SkillInfo, SkillSummary, Stats)

log = logging.getLogger("skillbroker")

T = TypeVar("T")
ApprovalHandler = Callable[[ApprovalRequest], Optional[str]]
PathLike = Union[str, "os.PathLike[str]"]
# How long the rest of a frame may take once its first byte came (the
# broker's own clients.frame_s is 10 s by default).
FRAME_TIMEOUT_S = 30.0


class Call(Generic[T]):
    """A request in flight: wait() for its outcome, or cancel() it (from any thread)."""

    def __init__(self, client: "Client", rtype: str, rid: RequestId,
                 parse: Callable[[Dict[str, Any]], T]) -> None:
        self.request_id = rid
        self.type = rtype
        self._client = client
        self._parse = parse
        self._event = threading.Event()
        self._reply: Optional[Dict[str, Any]] = None
        self._error: Optional[BaseException] = None
        self._counted = rtype in P.COUNTED

    def _settle(self, reply: Optional[Dict[str, Any]], error: Optional[BaseException]) -> None:
        self._reply, self._error = reply, error
        self._event.set()

    def done(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: Optional[float] = None) -> T:
        """The outcome: the parsed reply, or the error it stands for.

        With a timeout that passes first, TimeoutError (the call goes on).
        A KeyboardInterrupt while waiting cancels the call at the broker.
        """
        try:
            if not self._event.wait(timeout):
                raise TimeoutError("no reply to %s %r within %s s" % (self.type, self.request_id, timeout))
        except KeyboardInterrupt:
            self._client._cancel_quietly(self.request_id)
            raise
        if self._error is not None:
            raise self._error
        assert self._reply is not None
        return self._parse(P.check(self.type, self._reply))

    def cancel(self) -> CancelInfo:
        """Ask the broker to end the call; wait() then raises Cancelled (unless it had ended by itself)."""
        return self._client.cancel(self.request_id)


class Client:
    """A blocking client of the broker.

    ``Client(path).connect()`` (or ``with Client(path) as c``) opens the
    socket and says hello. Any number of threads may make calls on it at
    once; replies come back on a reader thread and are matched by id.
    ``approval_handler`` answers the broker's approval requests; it runs
    on a thread of its own for each request, so it may block (ask a human).
    ``connect_timeout`` bounds the connect and the hello; ``frame_timeout``
    the rest of a reply frame once its first byte came; ``max_reply_bytes``
    the longest reply taken (default: what hello's reply_bytes says).
    Past hello's ``in_flight`` calls the broker would count, a new one
    waits for room before it is sent.
    """

    def __init__(self, path: Optional[PathLike] = None, *,
                 approval_handler: Optional[ApprovalHandler] = None,
                 sock: Optional[socket.socket] = None,
                 connect_timeout: Optional[float] = 10.0,
                 frame_timeout: float = FRAME_TIMEOUT_S,
                 max_reply_bytes: Optional[int] = None) -> None:
        self.path = socket_path(path) if sock is None else None
        self.approval_handler = approval_handler
        self.server: Optional[Hello] = None
        self._sock = sock
        self._connect_timeout = connect_timeout
        self._frame_timeout = frame_timeout
        self._max_frame = DEFAULT_MAX_FRAME
        self._max_reply_fixed = max_reply_bytes
        self._max_reply = max_reply_bytes or DEFAULT_MAX_REPLY
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._room = threading.Condition(self._lock)  # for the calls past in_flight
        self._in_flight = 0
        self._in_flight_max = P.IN_FLIGHT_DEFAULT
        self._send_lock = threading.Lock()
        self._pending: Dict[RequestId, Call[Any]] = {}
        self._dead: Optional[ProtocolError] = None
        self._server_error: Optional[SkillbrokerError] = None
        self._reader: Optional[threading.Thread] = None
        self._closing = False

    # ------------------------------------------------------------ connection

    def connect(self, *, hello: bool = True) -> "Client":
        """Open the connection (unless a socket was given) and say hello; returns self."""
        if self._reader is not None:
            raise ProtocolError("already connected")
        if self._sock is None:
            assert self.path is not None
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.settimeout(self._connect_timeout)
                s.connect(self.path)
                s.settimeout(None)
            except OSError:
                s.close()
                raise
            self._sock = s
        self._sock.setblocking(True)
        self._reader = threading.Thread(target=self._read_loop, name="skillbroker-reader", daemon=True)
        self._reader.start()
        if hello:
            try:
                self.hello()
            except ProtocolError as e:
                self.close()
                if e.server_error is not None:
                    raise e.server_error from e
                raise
            except BaseException:
                self.close()
                raise
        return self

    def hello(self) -> Hello:
        """Say hello: protocol 2, approvals when there is a handler. Sets `server` and the frame bound.
        TimeoutError if no reply comes within connect_timeout."""
        h = self.start("hello", P.hello(self.approval_handler is not None),
                       lambda r: Hello.from_reply(r, DEFAULT_MAX_FRAME)).wait(self._connect_timeout)
        b = P.bounds(h, self._max_reply_fixed)
        with self._lock:
            self.server = h
            self._max_frame, self._max_reply, self._in_flight_max = b
            self._room.notify_all()
        return h

    @property
    def max_frame_bytes(self) -> int:
        """The longest request (hello's max_frame_bytes)."""
        return self._max_frame

    @property
    def max_reply_bytes(self) -> int:
        """The longest reply taken (hello's reply_bytes, unless given)."""
        return self._max_reply

    @property
    def closed(self) -> bool:
        return self._dead is not None

    def close(self) -> None:
        """Close the connection (the broker cancels its calls); pending calls raise ProtocolError."""
        self._closing = True
        self._shutdown()
        r = self._reader
        if r is not None and r is not threading.current_thread():
            r.join()
        self._fail(ProtocolError("connection closed by the client"))
        if r is None and self._sock is not None:
            self._sock.close()  # never connected; else the reader closes it

    def __enter__(self) -> "Client":
        if self._reader is None:
            self.connect()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------ plumbing

    def start(self, rtype: str, fields: Mapping[str, Any],
              parse: Callable[[Dict[str, Any]], T]) -> Call[T]:
        """Send one request without waiting for its reply (but for room under in_flight);
        the Call gives its outcome."""
        if self._reader is None:
            raise ProtocolError("not connected")
        rid = next(self._ids)
        frame = encode_frame({"type": rtype, "id": rid, **fields}, self._max_frame)
        call: Call[T] = Call(self, rtype, rid, parse)
        with self._lock:
            while call._counted and self._in_flight >= self._in_flight_max and self._dead is None:
                self._room.wait()
            if self._dead is not None:
                raise self._dead.again()
            if call._counted:
                self._in_flight += 1
            self._pending[rid] = call
        try:
            with self._send_lock:
                assert self._sock is not None
                self._sock.sendall(frame)
        except OSError as e:
            self._fail(ProtocolError("send failed: %s" % e))
        return call

    def _call(self, rtype: str, fields: Mapping[str, Any], parse: Callable[[Dict[str, Any]], T]) -> T:
        return self.start(rtype, fields, parse).wait()

    def request(self, rtype: str, **fields: Any) -> Dict[str, Any]:
        """Any request, as a raw reply dict (raises on ok: false): for what the typed methods do not cover."""
        return self._call(rtype, fields, lambda r: r)

    def _drive(self, steps: Generator[Step, Dict[str, Any], T]) -> T:
        step = next(steps)
        while True:
            rtype, fields = step
            reply = self._call(rtype, fields, lambda r: r)
            try:
                step = steps.send(reply)
            except StopIteration as e:
                return e.value  # type: ignore[no-any-return]

    def _recv(self, n: int, deadline: Optional[float]) -> bytes:
        buf = bytearray()
        sock = self._sock
        assert sock is not None
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        while len(buf) < n:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not poller.poll(left * 1000):
                    raise ProtocolError("a frame was not complete within %s s" % self._frame_timeout)
            chunk = sock.recv(min(n - len(buf), 1 << 20))
            if not chunk:
                if buf or deadline is not None:
                    raise ProtocolError("connection closed in the middle of a frame")
                raise ProtocolError("connection closed by the broker")
            buf += chunk
        return bytes(buf)

    def _read_frame(self) -> Dict[str, Any]:
        first = self._recv(1, None)
        deadline = time.monotonic() + self._frame_timeout
        n = parse_header(first + self._recv(HEADER_BYTES - 1, deadline), self._max_reply)
        return decode_body(self._recv(n, deadline))

    def _read_loop(self) -> None:
        try:
            while True:
                self._dispatch(self._read_frame())
        except ProtocolError as e:
            err = e
        except OSError as e:
            err = ProtocolError("connection failed: %s" % e)
        except Exception as e:  # a bug here must not leave the calls waiting
            log.exception("the reader failed")
            err = ProtocolError("the reader failed: %r" % e)
        if self._closing:
            err = ProtocolError("connection closed by the client")
        self._fail(err)
        # Only this thread closes the socket: closed under a blocked recv,
        # its descriptor could be reused while that recv still waits on it.
        assert self._sock is not None
        self._sock.close()

    def _dispatch(self, frame: Dict[str, Any]) -> None:
        if frame["type"] == "approval_request":
            self._on_approval(ApprovalRequest.from_frame(frame))
            return
        rid = frame.get("id")
        if rid is None:
            # Its last word before it closes: a refused frame or connection.
            self._server_error = error_from_reply(frame)
            log.warning("the broker said %s", self._server_error)
            return
        if not isinstance(rid, (int, str)):
            raise ProtocolError("reply id of type %s" % type(rid).__name__)
        with self._lock:
            call = self._pending.pop(rid, None)
            if call is not None and call._counted:
                self._in_flight -= 1
                self._room.notify()
        if call is None:
            log.debug("reply to no pending call: %r", rid)
            return
        call._settle(frame, None)

    def _fail(self, err: ProtocolError) -> None:
        with self._lock:
            if self._dead is None:
                if err.server_error is None:
                    err.server_error = self._server_error
                self._dead = err
            err = self._dead
            pending = list(self._pending.values())
            self._pending.clear()
            self._in_flight = 0
            self._room.notify_all()
        for call in pending:
            call._settle(None, err.again())
        self._shutdown()

    def _shutdown(self) -> None:
        """Wake the reader (its recv returns); it closes the socket as it ends."""
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _cancel_quietly(self, rid: RequestId) -> None:
        try:
            self.start("cancel", P.cancel(rid), lambda r: r)
        except (ProtocolError, ValueError):
            pass

    def _on_approval(self, req: ApprovalRequest) -> None:
        handler = self.approval_handler
        if handler is None:
            log.warning("approval request %s with no handler: left unanswered", req.id)
            return
        threading.Thread(target=self._answer, args=(handler, req),
                         name="skillbroker-approval", daemon=True).start()

    def _answer(self, handler: ApprovalHandler, req: ApprovalRequest) -> None:
        try:
            option = handler(req)
        except Exception:
            log.exception("approval handler failed on %s: answering no", req.id)
            option = "no"
        if option is None:
            return
        if option not in APPROVAL_OPTIONS:
            log.error("approval handler answered %r to %s: answering no", option, req.id)
            option = "no"
        try:
            self.approve(req.id, option)
        except (SkillbrokerError, ProtocolError) as e:
            log.warning("approve %s %s: %s", req.id, option, e)

    # ------------------------------------------------------------ calls

    def start_invoke(self, skill: str, command: Optional[str] = None, args: Sequence[str] = (), *,
                     stdin: Optional[P.Data] = None, env: Optional[Mapping[str, str]] = None,
                     session: Optional[str] = None, phase: Optional[str] = None,
                     timeout_ms: Optional[int] = None) -> Call[Result]:
        """Send an invoke without waiting: the Call has its request_id (to cancel) and wait()."""
        return self.start("invoke", P.call(skill, command, args, stdin, env, session, phase, timeout_ms),
                          Result.from_reply)

    def invoke(self, skill: str, command: Optional[str] = None, args: Sequence[str] = (), *,
               stdin: Optional[P.Data] = None, env: Optional[Mapping[str, str]] = None,
               session: Optional[str] = None, phase: Optional[str] = None,
               timeout_ms: Optional[int] = None) -> Result:
        """Run a skill. phase defaults to the protocol's ("planning", always denied): pass "execution".
        A non-zero exit is a Result (exit_code), not an exception."""
        return self.start_invoke(skill, command, args, stdin=stdin, env=env, session=session,
                                 phase=phase, timeout_ms=timeout_ms).wait()

    def authorize(self, skill: str, command: Optional[str] = None, args: Sequence[str] = (), *,
                  stdin: Optional[P.Data] = None, env: Optional[Mapping[str, str]] = None,
                  session: Optional[str] = None, phase: Optional[str] = None,
                  timeout_ms: Optional[int] = None) -> Result:
        """The decision alone (nothing runs): a Result with policy and effective; a denial raises."""
        return self._call("authorize", P.call(skill, command, args, stdin, env, session, phase, timeout_ms),
                          Result.from_reply)

    def skills(self) -> List[SkillSummary]:
        return self._call("skills", {}, lambda r: [SkillSummary.from_map(s) for s in r.get("skills") or []
                                                   if isinstance(s, Mapping)])

    def skill_info(self, skill: str, references: bool = False) -> SkillInfo:
        return self._call("skill_info", P.skill_info(skill, references), SkillInfo.from_reply)

    def cancel(self, request_id: RequestId) -> CancelInfo:
        """End a call in flight (of this connection, else of this uid); NotFound if there is none."""
        return self._call("cancel", P.cancel(request_id), CancelInfo.from_reply)

    def approvals(self) -> List[PendingApproval]:
        return self._call("approvals", {}, lambda r: [PendingApproval.from_map(a) for a in
                                                      r.get("approvals") or [] if isinstance(a, Mapping)])

    def approve(self, approval_id: str, option: str) -> None:
        self._call("approve", P.approve(approval_id, option), lambda r: None)

    def stats(self) -> Stats:
        return self._call("stats", {}, Stats.from_reply)

    def reload(self) -> str:
        return self._call("reload", {}, lambda r: str(r.get("message", "")))

    def last_result(self, session: Optional[str] = None) -> Result:
        """The reply of the session's last ended invoke, as a Result (ok False and error set if it failed)."""
        return self._call("last_result", P.session(session),
                          lambda r: Result.from_reply(r.get("result") or {}))

    def session_end(self, session: Optional[str] = None) -> None:
        self._call("session_end", P.session(session), lambda r: None)

    def put_file(self, session: Optional[str], path: str, data: P.Data, *, offset: int = 0,
                 timeout_ms: Optional[int] = None) -> FileInfo:
        return self._call("put_file", P.file_req(session, path, data=data, offset=offset or None,
                                                 timeout_ms=timeout_ms), FileInfo.from_reply)

    def get_file(self, session: Optional[str], path: str, *, offset: int = 0, length: int = 0,
                 timeout_ms: Optional[int] = None) -> FileChunk:
        return self._call("get_file", P.file_req(session, path, offset=offset or None,
                                                 length=length or None, timeout_ms=timeout_ms),
                          FileChunk.from_reply)

    def list_files(self, session: Optional[str] = None, *, timeout_ms: Optional[int] = None) -> FileList:
        return self._call("list_files", P.file_req(session, timeout_ms=timeout_ms), FileList.from_reply)

    def delete_file(self, session: Optional[str], path: str, *,
                    timeout_ms: Optional[int] = None) -> FileInfo:
        return self._call("delete_file", P.file_req(session, path, timeout_ms=timeout_ms),
                          FileInfo.from_reply)

    def put(self, session: Optional[str], path: str, data: P.Data, *,
            timeout_ms: Optional[int] = None) -> FileInfo:
        """Write a file of any size in put_file chunks (hello's put_file_bytes); checks size and sha256."""
        return self._drive(put_steps(session, path, P._data("data", data),
                                     chunk_size(self.server, self._max_frame), timeout_ms))

    def get(self, session: Optional[str], path: str, *, max_bytes: Optional[int] = None,
            timeout_ms: Optional[int] = None) -> bytes:
        """Read a whole file in get_file chunks; checks size and sha256 (IntegrityError if it changed)."""
        return self._drive(get_steps(session, path, max_bytes, timeout_ms))


def connect(path: Optional[PathLike] = None, *, approval_handler: Optional[ApprovalHandler] = None,
            **kw: Any) -> Client:
    """A connected Client (hello said)."""
    return Client(path, approval_handler=approval_handler, **kw).connect()
