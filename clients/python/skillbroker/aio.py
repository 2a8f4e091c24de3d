"""The asyncio client: many calls in flight on one connection, replies matched by id; cancelling a task cancels its call."""
from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
import os
import socket
from collections import deque
from typing import (Any, Awaitable, Callable, Deque, Dict, Generator, Generic, List, Mapping, NamedTuple, Optional,
                    Sequence, Set, Tuple, TypeVar, Union)

from . import _protocol as P
from ._errors import ProtocolError, RequestId, SkillbrokerError, error_from_reply
from ._frame import DEFAULT_MAX_FRAME, DEFAULT_MAX_REPLY, HEADER_BYTES, decode_body, encode_frame, parse_header
from ._paths import socket_path
from ._transfer import Step, chunk_size, get_steps, put_steps
from .client import FRAME_TIMEOUT_S
from .types import (APPROVAL_OPTIONS, ApprovalRequest, CancelInfo, FileChunk, FileInfo, FileList,
                    Hello, PendingApproval, Result, SkillInfo, SkillSummary, Stats)

log = logging.getLogger("skillbroker")

T = TypeVar("T")
# May be a plain function (called on the event loop: it must not block) or
# a coroutine function (awaited in a task of its own: it may take its time).
AsyncApprovalHandler = Callable[[ApprovalRequest], Union[Optional[str], Awaitable[Optional[str]]]]
PathLike = Union[str, "os.PathLike[str]"]
# A future's outcome: the reply, or the connection's failure.
_Outcome = Tuple[Optional[Dict[str, Any]], Optional[BaseException]]


class _Pending(NamedTuple):
    fut: "asyncio.Future[_Outcome]"
    counted: bool  # holds one of the in_flight slots until its reply


class AsyncCall(Generic[T]):
    """A request in flight: ``await call`` (or ``await call.result()``) for its outcome.

    If the task awaiting it is cancelled before the reply came, a
    ``cancel`` for the call goes to the broker (which ends it wherever it is).
    """

    def __init__(self, client: "AsyncClient", rtype: str, rid: RequestId,
                 fut: "asyncio.Future[_Outcome]", parse: Callable[[Dict[str, Any]], T]) -> None:
        self.request_id = rid
        self.type = rtype
        self._client = client
        self._fut = fut
        self._parse = parse

    def done(self) -> bool:
        return self._fut.done()

    async def result(self) -> T:
        try:
            reply, err = await asyncio.shield(self._fut)
        except asyncio.CancelledError:
            if not self._fut.done():
                self._client._cancel_in_background(self.request_id)
            raise
        if err is not None:
            raise err
        assert reply is not None
        return self._parse(P.check(self.type, reply))

    def __await__(self) -> Generator[Any, None, T]:
        return self.result().__await__()

    async def cancel(self) -> CancelInfo:
        """Ask the broker to end the call; awaiting it then raises Cancelled (unless it had ended)."""
        return await self._client.cancel(self.request_id)


class AsyncClient:
    """An asyncio client of the broker.

    ``await AsyncClient(path).connect()`` or ``async with AsyncClient(path)
    as c`` opens the socket and says hello. Calls may be made from many
    tasks at once; a reader task matches the replies to them by id.
    ``connect_timeout`` bounds the connect and the hello; ``frame_timeout``
    the rest of a reply frame once its first byte came; ``max_reply_bytes``
    the longest reply taken (default: what hello's reply_bytes says).
    Past hello's ``in_flight`` calls the broker would count, a new one
    waits for room before it is sent.
    """

    def __init__(self, path: Optional[PathLike] = None, *,
                 approval_handler: Optional[AsyncApprovalHandler] = None,
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
        self._pending: Dict[RequestId, _Pending] = {}
        self._in_flight = 0
        self._in_flight_max = P.IN_FLIGHT_DEFAULT
        self._room: Deque["asyncio.Future[None]"] = deque()  # calls waiting for a slot
        self._dead: Optional[ProtocolError] = None
        self._server_error: Optional[SkillbrokerError] = None
        self._reader: Optional[asyncio.StreamReader] = None
        self._writer: Optional[asyncio.StreamWriter] = None
        self._read_task: Optional["asyncio.Task[None]"] = None
        self._tasks: Set["asyncio.Task[Any]"] = set()
        self._write_lock: Optional[asyncio.Lock] = None
        self._closing = False

    # ------------------------------------------------------------ connection

    async def connect(self, *, hello: bool = True) -> "AsyncClient":
        """Open the connection (unless a socket was given) and say hello; returns self."""
        if self._read_task is not None:
            raise ProtocolError("already connected")
        if self._sock is not None:
            opening = asyncio.open_unix_connection(sock=self._sock)
        else:
            opening = asyncio.open_unix_connection(self.path)
        self._reader, self._writer = await asyncio.wait_for(opening, self._connect_timeout)
        self._write_lock = asyncio.Lock()
        self._read_task = asyncio.ensure_future(self._read_loop())
        if hello:
            try:
                await self.hello()
            except ProtocolError as e:
                await self.close()
                if e.server_error is not None:
                    raise e.server_error from e
                raise
            except BaseException:
                await self.close()
                raise
        return self

    async def hello(self) -> Hello:
        """Say hello: protocol 2, approvals when there is a handler. Sets `server` and the frame bound.
        TimeoutError if no reply comes within connect_timeout."""
        call = await self.start("hello", P.hello(self.approval_handler is not None),
                                lambda r: Hello.from_reply(r, DEFAULT_MAX_FRAME))
        try:
            h = await asyncio.wait_for(call.result(), self._connect_timeout)
        except asyncio.TimeoutError:
            raise TimeoutError("no hello reply within %s s" % self._connect_timeout) from None
        self.server = h
        self._max_frame, self._max_reply, self._in_flight_max = P.bounds(h, self._max_reply_fixed)
        self._wake_one()
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

    async def close(self) -> None:
        """Close the connection (the broker cancels its calls); pending calls raise ProtocolError."""
        self._closing = True
        for t in list(self._tasks):
            t.cancel()
        if self._writer is not None:
            self._writer.close()
            try:
                await self._writer.wait_closed()
            except (OSError, asyncio.CancelledError):
                pass
        if self._read_task is not None and self._read_task is not asyncio.current_task():
            self._read_task.cancel()
            try:
                await self._read_task
            except asyncio.CancelledError:
                pass
        self._fail(ProtocolError("connection closed by the client"))

    async def __aenter__(self) -> "AsyncClient":
        if self._read_task is None:
            await self.connect()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    # ------------------------------------------------------------ plumbing

    async def start(self, rtype: str, fields: Mapping[str, Any],
                    parse: Callable[[Dict[str, Any]], T]) -> AsyncCall[T]:
        """Send one request (once there is room under in_flight); the AsyncCall gives its outcome when awaited."""
        if self._writer is None or self._write_lock is None:
            raise ProtocolError("not connected")
        if self._dead is not None:
            raise self._dead.again()
        rid = next(self._ids)
        frame = encode_frame({"type": rtype, "id": rid, **fields}, self._max_frame)
        fut: "asyncio.Future[_Outcome]" = asyncio.get_running_loop().create_future()
        call = AsyncCall(self, rtype, rid, fut, parse)
        counted = rtype in P.COUNTED
        if counted:
            await self._take_slot()
        registered = False
        try:
            async with self._write_lock:
                if self._dead is not None:
                    raise self._dead.again()
                self._pending[rid] = _Pending(fut, counted)
                registered = True
                try:
                    self._writer.write(frame)
                except (OSError, RuntimeError) as e:
                    self._fail(ProtocolError("send failed: %s" % e))
                    return call
                try:
                    await self._writer.drain()
                except asyncio.CancelledError:
                    # The frame is on its way: the broker would run the call.
                    if rtype != "cancel":
                        self._cancel_in_background(rid)
                    raise
                except (OSError, RuntimeError) as e:
                    self._fail(ProtocolError("send failed: %s" % e))
        finally:
            if counted and not registered:
                self._give_slot()
        return call

    async def _take_slot(self) -> None:
        """Wait for room under in_flight, first come first served."""
        loop = asyncio.get_running_loop()
        while self._in_flight >= self._in_flight_max or (self._room and not self._room[0].done()):
            if self._dead is not None:
                raise self._dead.again()
            w: "asyncio.Future[None]" = loop.create_future()
            self._room.append(w)
            try:
                await w
            except asyncio.CancelledError:
                if w.done() and not w.cancelled():
                    self._wake_one()  # a slot was handed to us: pass it on
                else:
                    try:
                        self._room.remove(w)
                    except ValueError:
                        pass
                raise
            if self._in_flight < self._in_flight_max:
                break
        if self._dead is not None:
            raise self._dead.again()
        self._in_flight += 1
        if self._in_flight < self._in_flight_max:
            self._wake_one()  # room for the next in line too

    def _give_slot(self) -> None:
        self._in_flight = max(0, self._in_flight - 1)
        self._wake_one()

    def _wake_one(self) -> None:
        while self._room:
            w = self._room.popleft()
            if not w.done():
                w.set_result(None)
                return

    async def _call(self, rtype: str, fields: Mapping[str, Any], parse: Callable[[Dict[str, Any]], T]) -> T:
        return await (await self.start(rtype, fields, parse))

    async def request(self, rtype: str, **fields: Any) -> Dict[str, Any]:
        """Any request, as a raw reply dict (raises on ok: false): for what the typed methods do not cover."""
        return await self._call(rtype, fields, lambda r: r)

    async def _drive(self, steps: Generator[Step, Dict[str, Any], T]) -> T:
        step = next(steps)
        while True:
            rtype, fields = step
            reply = await self._call(rtype, fields, lambda r: r)
            try:
                step = steps.send(reply)
            except StopIteration as e:
                return e.value  # type: ignore[no-any-return]

    async def _read_frame(self) -> Dict[str, Any]:
        assert self._reader is not None
        try:
            first = await self._reader.readexactly(1)
        except asyncio.IncompleteReadError:
            raise ProtocolError("connection closed by the broker") from None
        try:
            rest = await asyncio.wait_for(self._read_rest(first), self._frame_timeout)
        except asyncio.TimeoutError:
            raise ProtocolError("a frame was not complete within %s s" % self._frame_timeout) from None
        except asyncio.IncompleteReadError:
            raise ProtocolError("connection closed in the middle of a frame") from None
        return decode_body(rest)

    async def _read_rest(self, first: bytes) -> bytes:
        assert self._reader is not None
        n = parse_header(first + await self._reader.readexactly(HEADER_BYTES - 1), self._max_reply)
        return await self._reader.readexactly(n)

    async def _read_loop(self) -> None:
        try:
            while True:
                self._dispatch(await self._read_frame())
        except ProtocolError as e:
            err = e
        except OSError as e:
            err = ProtocolError("connection failed: %s" % e)
        except asyncio.CancelledError:
            err = ProtocolError("connection closed by the client")
        except Exception as e:  # a bug here must not leave the calls waiting
            log.exception("the reader failed")
            err = ProtocolError("the reader failed: %r" % e)
        if self._closing:
            err = ProtocolError("connection closed by the client")
        self._fail(err)
        if self._writer is not None:
            self._writer.close()

    def _dispatch(self, frame: Dict[str, Any]) -> None:
        if frame["type"] == "approval_request":
            self._on_approval(ApprovalRequest.from_frame(frame))
            return
        rid = frame.get("id")
        if rid is None:
            self._server_error = error_from_reply(frame)
            log.warning("the broker said %s", self._server_error)
            return
        if not isinstance(rid, (int, str)):
            raise ProtocolError("reply id of type %s" % type(rid).__name__)
        p = self._pending.pop(rid, None)
        if p is None:
            log.debug("reply to no pending call: %r", rid)
            return
        if p.counted:
            self._give_slot()
        if not p.fut.done():
            p.fut.set_result((frame, None))

    def _fail(self, err: ProtocolError) -> None:
        if self._dead is None:
            if err.server_error is None:
                err.server_error = self._server_error
            self._dead = err
        pending = list(self._pending.values())
        self._pending.clear()
        for p in pending:
            if not p.fut.done():
                p.fut.set_result((None, self._dead.again()))
        self._in_flight = 0
        while self._room:  # they see the connection is gone
            w = self._room.popleft()
            if not w.done():
                w.set_result(None)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        t = asyncio.ensure_future(coro)
        self._tasks.add(t)
        t.add_done_callback(self._tasks.discard)

    def _cancel_in_background(self, rid: RequestId) -> None:
        if self._dead is None and not self._closing:
            self._spawn(self._cancel_quietly(rid))

    async def _cancel_quietly(self, rid: RequestId) -> None:
        try:
            await self.cancel(rid)
        except (SkillbrokerError, ProtocolError) as e:
            log.debug("cancel %r: %s", rid, e)

    def _on_approval(self, req: ApprovalRequest) -> None:
        if self.approval_handler is None:
            log.warning("approval request %s with no handler: left unanswered", req.id)
            return
        self._spawn(self._answer(self.approval_handler, req))

    async def _answer(self, handler: AsyncApprovalHandler, req: ApprovalRequest) -> None:
        try:
            option = handler(req)
            if inspect.isawaitable(option):
                option = await option
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("approval handler failed on %s: answering no", req.id)
            option = "no"
        if option is None:
            return
        if option not in APPROVAL_OPTIONS:
            log.error("approval handler answered %r to %s: answering no", option, req.id)
            option = "no"
        try:
            await self.approve(req.id, str(option))
        except (SkillbrokerError, ProtocolError) as e:
            log.warning("approve %s %s: %s", req.id, option, e)

    # ------------------------------------------------------------ calls

    async def start_invoke(self, skill: str, command: Optional[str] = None, args: Sequence[str] = (), *,
                           stdin: Optional[P.Data] = None, env: Optional[Mapping[str, str]] = None,
                           session: Optional[str] = None, phase: Optional[str] = None,
                           timeout_ms: Optional[int] = None) -> AsyncCall[Result]:
        """Send an invoke: the AsyncCall has its request_id (to cancel); await it for the Result."""
        return await self.start("invoke", P.call(skill, command, args, stdin, env, session, phase,
                                                 timeout_ms), Result.from_reply)

    async def invoke(self, skill: str, command: Optional[str] = None, args: Sequence[str] = (), *,
                     stdin: Optional[P.Data] = None, env: Optional[Mapping[str, str]] = None,
                     session: Optional[str] = None, phase: Optional[str] = None,
                     timeout_ms: Optional[int] = None) -> Result:
        """Run a skill. phase defaults to the protocol's ("planning", always denied): pass "execution".
        A non-zero exit is a Result (exit_code), not an exception."""
        call = await self.start_invoke(skill, command, args, stdin=stdin, env=env, session=session,
                                       phase=phase, timeout_ms=timeout_ms)
        return await call

    async def authorize(self, skill: str, command: Optional[str] = None, args: Sequence[str] = (), *,
                        stdin: Optional[P.Data] = None, env: Optional[Mapping[str, str]] = None,
                        session: Optional[str] = None, phase: Optional[str] = None,
                        timeout_ms: Optional[int] = None) -> Result:
        """The decision alone (nothing runs): a Result with policy and effective; a denial raises."""
        return await self._call("authorize", P.call(skill, command, args, stdin, env, session, phase,
                                                    timeout_ms), Result.from_reply)

    async def skills(self) -> List[SkillSummary]:
        return await self._call("skills", {}, lambda r: [SkillSummary.from_map(s) for s in
                                                         r.get("skills") or [] if isinstance(s, Mapping)])

    async def skill_info(self, skill: str, references: bool = False) -> SkillInfo:
        return await self._call("skill_info", P.skill_info(skill, references), SkillInfo.from_reply)

    async def cancel(self, request_id: RequestId) -> CancelInfo:
        """End a call in flight (of this connection, else of this uid); NotFound if there is none."""
        return await self._call("cancel", P.cancel(request_id), CancelInfo.from_reply)

    async def approvals(self) -> List[PendingApproval]:
        return await self._call("approvals", {}, lambda r: [PendingApproval.from_map(a) for a in
                                                            r.get("approvals") or [] if isinstance(a, Mapping)])

    async def approve(self, approval_id: str, option: str) -> None:
        await self._call("approve", P.approve(approval_id, option), lambda r: None)

    async def stats(self) -> Stats:
        return await self._call("stats", {}, Stats.from_reply)

    async def reload(self) -> str:
        return await self._call("reload", {}, lambda r: str(r.get("message", "")))

    async def last_result(self, session: Optional[str] = None) -> Result:
        """The reply of the session's last ended invoke, as a Result (ok False and error set if it failed)."""
        return await self._call("last_result", P.session(session),
                                lambda r: Result.from_reply(r.get("result") or {}))

    async def session_end(self, session: Optional[str] = None) -> None:
        await self._call("session_end", P.session(session), lambda r: None)

    async def put_file(self, session: Optional[str], path: str, data: P.Data, *, offset: int = 0,
                       timeout_ms: Optional[int] = None) -> FileInfo:
        return await self._call("put_file", P.file_req(session, path, data=data, offset=offset or None,
                                                       timeout_ms=timeout_ms), FileInfo.from_reply)

    async def get_file(self, session: Optional[str], path: str, *, offset: int = 0, length: int = 0,
                       timeout_ms: Optional[int] = None) -> FileChunk:
        return await self._call("get_file", P.file_req(session, path, offset=offset or None,
                                                       length=length or None, timeout_ms=timeout_ms),
                                FileChunk.from_reply)

    async def list_files(self, session: Optional[str] = None, *,
                         timeout_ms: Optional[int] = None) -> FileList:
        return await self._call("list_files", P.file_req(session, timeout_ms=timeout_ms), FileList.from_reply)

    async def delete_file(self, session: Optional[str], path: str, *,
                          timeout_ms: Optional[int] = None) -> FileInfo:
        return await self._call("delete_file", P.file_req(session, path, timeout_ms=timeout_ms),
                                FileInfo.from_reply)

    async def put(self, session: Optional[str], path: str, data: P.Data, *,
                  timeout_ms: Optional[int] = None) -> FileInfo:
        """Write a file of any size in put_file chunks (hello's put_file_bytes); checks size and sha256."""
        return await self._drive(put_steps(session, path, P._data("data", data),
                                           chunk_size(self.server, self._max_frame), timeout_ms))

    async def get(self, session: Optional[str], path: str, *, max_bytes: Optional[int] = None,
                  timeout_ms: Optional[int] = None) -> bytes:
        """Read a whole file in get_file chunks; checks size and sha256 (IntegrityError if it changed)."""
        return await self._drive(get_steps(session, path, max_bytes, timeout_ms))


async def connect_async(path: Optional[PathLike] = None, *,
                        approval_handler: Optional[AsyncApprovalHandler] = None, **kw: Any) -> AsyncClient:
    """A connected AsyncClient (hello said)."""
    return await AsyncClient(path, approval_handler=approval_handler, **kw).connect()
