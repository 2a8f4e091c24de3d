"""The client against a fake broker: malformed frames, closes, out-of-order replies, approvals and cancels, never a hang."""
from __future__ import annotations

import asyncio
import signal
import struct
import threading
import time
import unittest
from typing import Any, Callable, Dict, List, Tuple

import msgpack


import skillbroker as sb
from skillbroker._frame import DEFAULT_MAX_REPLY
from ._fake import HELLO, FakeBroker, frame

WAIT = 5.0  # no step of these tests may take longer: a hang is a failure, not a stuck run

# Frames a broker never sends; each must end the connection with ProtocolError.
MALFORMED = {
    "oversized length": struct.pack(">I", 0x7FFFFFFF),          # and nothing after it
    # before hello the bound is the shipped config's reply_bytes
    "length past the reply bound": struct.pack(">I", DEFAULT_MAX_REPLY + 1) + bytes(64),
    "empty frame": struct.pack(">I", 0),
    "non-map body": frame([1, 2, 3]),
    "str body": frame("hello"),
    "trailing bytes": struct.pack(">I", 3) + b"\x80\xc0\xc0",
    "non-UTF-8 str": struct.pack(">I", 9) + b"\x81\xa4type\xa2\xff\xfe",
    "no type": frame({"id": 1, "ok": True}),
    "truncated then closed": struct.pack(">I", 100) + bytes(10),
    # the 20 bytes that came are a whole map: still not the frame announced
    "truncated map then closed": struct.pack(">I", 100) + msgpack.packb({"type": "stats", "id": 1, "ok": True}),
}

# What the client must say of each.
WHY = {
    "oversized length": "larger than the bound",
    "length past the reply bound": "larger than the bound of %d bytes" % DEFAULT_MAX_REPLY,
    "empty frame": "empty frame",
    "non-map body": "not a map",
    "str body": "not a map",
    "trailing bytes": "trailing bytes",
    "non-UTF-8 str": "not UTF-8",
    "no type": "without a str",
    "truncated then closed": "middle of a frame",
    "truncated map then closed": "middle of a frame",
}


def swallow(f: Any, *args: Any) -> None:
    """Call f, for a thread whose outcome the test does not look at."""
    try:
        f(*args)
    except Exception:
        pass


class SyncFake(unittest.TestCase):
    def setUp(self) -> None:
        self.fake = FakeBroker()
        self.client = sb.Client(sock=self.fake.client_sock)

    def tearDown(self) -> None:
        self.client.close()
        self.fake.close()

    def connect(self) -> None:
        t = threading.Thread(daemon=True, target=self.fake.hello)
        t.start()
        self.client.connect()
        t.join(WAIT)

    def test_hello_sets_the_frame_bound_and_approvals_flag(self) -> None:
        got: List[Any] = []
        client = sb.Client(sock=self.fake.client_sock, approval_handler=lambda r: "no")
        t = threading.Thread(daemon=True, target=lambda: got.append(self.fake.hello(max_frame=2048)))
        t.start()
        h = client.connect().server
        t.join(WAIT)
        assert h is not None
        self.assertEqual(h.limits.max_frame_bytes, 2048)
        self.assertEqual(client.max_frame_bytes, 2048)
        self.assertEqual(got[0][0]["protocol"], 2)
        self.assertIs(got[0][0]["approvals"], True)
        client.close()

    def test_hello_without_handler_does_not_offer_approvals(self) -> None:
        got: List[Any] = []
        t = threading.Thread(daemon=True, target=lambda: got.append(self.fake.hello()))
        t.start()
        self.client.connect()
        t.join(WAIT)
        self.assertNotIn("approvals", got[0][0])

    def test_malformed_frames_fail_every_pending_call(self) -> None:
        for name, data in MALFORMED.items():
            with self.subTest(name):
                fake = FakeBroker()
                self.addCleanup(fake.close)
                client = sb.Client(sock=fake.client_sock).connect(hello=False)
                self.addCleanup(client.close)
                calls = [client.start("stats", {}, lambda r: r) for _ in range(3)]
                for _ in calls:
                    fake.recv()
                t0 = time.monotonic()
                fake.send_raw(data)
                if name.startswith("truncated"):
                    fake.sock.close()
                for c in calls:
                    with self.assertRaisesRegex(sb.ProtocolError, WHY[name]):
                        c.wait(WAIT)
                self.assertLess(time.monotonic() - t0, WAIT)
                self.assertTrue(client.closed)
                with self.assertRaises(sb.ProtocolError):
                    client.stats()
                client.close()
                fake.close()

    def test_incoming_bound_is_hellos_reply_bytes(self) -> None:
        self.connect()  # max_frame_bytes 1024, reply_bytes 2048
        self.assertEqual((self.client.max_frame_bytes, self.client.max_reply_bytes), (1024, 2048))
        call = self.client.start("stats", {}, lambda r: r)
        req = self.fake.recv()
        self.fake.send({"type": "stats", "id": req["id"], "ok": True, "pad": "x" * 1500})  # > a frame
        self.assertEqual(len(call.wait(WAIT)["pad"]), 1500)
        call = self.client.start("stats", {}, lambda r: r)
        req = self.fake.recv()
        self.fake.send({"type": "stats", "id": req["id"], "ok": True, "pad": "x" * 2048})
        with self.assertRaisesRegex(sb.ProtocolError, r"frame of 20\d\d bytes is larger than the bound of 2048"):
            call.wait(WAIT)

    def test_without_reply_bytes_the_reply_bound_is_the_frame(self) -> None:
        t = threading.Thread(daemon=True, target=self.fake.hello, kwargs={"reply_bytes": None})
        t.start()
        self.client.connect()
        t.join(WAIT)
        self.assertEqual(self.client.max_reply_bytes, 1024)
        call = self.client.start("stats", {}, lambda r: r)
        req = self.fake.recv()
        self.fake.send({"type": "stats", "id": req["id"], "ok": True, "pad": "x" * 1024})
        with self.assertRaisesRegex(sb.ProtocolError, "larger than the bound of 1024"):
            call.wait(WAIT)

    def test_other_protocol_major_is_refused(self) -> None:
        def old() -> None:
            req = self.fake.recv()
            self.fake.send(dict(HELLO, id=req["id"], protocol=1))
        threading.Thread(daemon=True, target=old).start()
        with self.assertRaisesRegex(sb.ProtocolError, "protocol 1, not 2"):
            self.client.connect()

    def test_calls_past_in_flight_wait_for_room(self) -> None:
        t = threading.Thread(daemon=True, target=self.fake.hello, kwargs={"in_flight": 2})
        t.start()
        self.client.connect()
        t.join(WAIT)
        calls: List[Any] = []
        starter = threading.Thread(daemon=True, target=lambda: calls.extend(
            self.client.start_invoke("echo-args", args=[str(i)]) for i in range(4)))
        starter.start()
        first = [self.fake.recv(), self.fake.recv()]
        self.assertTrue(self.fake.nothing_more(0.3))  # the third waits for room
        s = self.client.start("stats", {}, lambda r: r)  # not counted: goes at once
        self.fake.reply(self.fake.recv())
        s.wait(WAIT)
        self.fake.result(first[0], stdout=b"0")
        third = self.fake.recv()
        self.assertEqual(third["args"], ["2"])
        self.assertTrue(self.fake.nothing_more(0.3))
        for r in (first[1], third):
            self.fake.result(r, stdout=r["args"][0].encode())
        self.fake.result(self.fake.recv(), stdout=b"3")
        starter.join(WAIT)
        self.assertEqual([c.wait(WAIT).stdout for c in calls], [b"0", b"1", b"2", b"3"])

    def test_truncated_frame_that_stalls_times_out(self) -> None:
        client = sb.Client(sock=self.fake.client_sock, frame_timeout=0.3).connect(hello=False)
        call = client.start("stats", {}, lambda r: r)
        self.fake.recv()
        self.fake.send_raw(struct.pack(">I", 100) + bytes(10))  # and the rest never comes
        with self.assertRaisesRegex(sb.ProtocolError, "not complete"):
            call.wait(WAIT)
        client.close()

    def test_close_by_the_broker_fails_pending_calls(self) -> None:
        self.connect()
        calls = [self.client.start("stats", {}, lambda r: r) for _ in range(3)]
        for _ in calls:
            self.fake.recv()
        self.fake.sock.close()
        for c in calls:
            with self.assertRaisesRegex(sb.ProtocolError, "closed by the broker"):
                c.wait(WAIT)

    def test_close_by_the_client_fails_pending_calls(self) -> None:
        self.connect()
        call = self.client.start("stats", {}, lambda r: r)
        self.client.close()
        with self.assertRaisesRegex(sb.ProtocolError, "closed by the client"):
            call.wait(WAIT)

    def test_broker_refusal_before_closing_is_raised_as_its_type(self) -> None:
        def refuse() -> None:
            self.fake.recv()
            self.fake.send({"type": "error", "id": None, "ok": False,
                            "error": {"type": "overloaded", "message": "per_uid.clients", "details": {}}})
            self.fake.sock.close()
        t = threading.Thread(daemon=True, target=refuse)
        t.start()
        with self.assertRaises(sb.Overloaded) as cm:
            self.client.connect()
        t.join(WAIT)
        self.assertEqual(cm.exception.message, "per_uid.clients")

    def test_replies_out_of_order_reach_their_calls(self) -> None:
        self.connect()
        calls = [self.client.start_invoke("echo-args", args=[str(i)]) for i in range(5)]
        reqs = [self.fake.recv() for _ in calls]
        self.assertEqual(len({r["id"] for r in reqs}), 5)
        for r in reversed(reqs):
            self.fake.result(r, stdout=r["args"][0].encode())
        for i, c in enumerate(calls):
            self.assertEqual(c.wait(WAIT).stdout, str(i).encode())

    def test_requests_carry_their_fields(self) -> None:
        self.connect()
        sent: List[Tuple[Callable[[], object], Dict[str, Any]]] = [
            (lambda: self.client.start_invoke("sk", "cmd", ["a", "b"], stdin="in", env={"K": "v"},
                                              session="s1", phase="execution", timeout_ms=9),
             {"type": "invoke", "skill": "sk", "command": "cmd", "args": ["a", "b"], "stdin": b"in",
              "env": {"K": "v"}, "session": "s1", "phase": "execution", "timeout_ms": 9}),
            (lambda: self.client.start_invoke("sk"), {"type": "invoke", "skill": "sk"}),
            (lambda: self.client.start("skill_info", sb._protocol.skill_info("sk", True), lambda r: r),
             {"type": "skill_info", "skill": "sk", "references": True}),
            (lambda: self.client.start("get_file", sb._protocol.file_req("s", "p", offset=3, length=4),
                                       lambda r: r),
             {"type": "get_file", "session": "s", "path": "p", "offset": 3, "length": 4}),
        ]
        for start, want in sent:
            start()
            got = self.fake.recv()
            self.assertIsInstance(got.pop("id"), int)
            self.assertEqual(got, want)
        # The typed methods send the same.
        typed: List[Tuple[Callable[..., object], Tuple[Any, ...], Dict[str, Any]]] = [
            (self.client.skill_info, ("sk", True), {"type": "skill_info", "skill": "sk", "references": True}),
            (self.client.get_file, ("s", "p"), {"type": "get_file", "session": "s", "path": "p"}),
            (self.client.approvals, (), {"type": "approvals"}),
            (self.client.last_result, ("s",), {"type": "last_result", "session": "s"}),
        ]
        for method, args, fields in typed:
            threading.Thread(daemon=True, target=swallow, args=(method,) + args).start()
            got = self.fake.recv()
            got.pop("id")
            self.assertEqual(got, fields)
        self.fake.sock.close()

    def test_approvals_are_listed(self) -> None:
        self.connect()
        out: List[Any] = []
        t = threading.Thread(daemon=True, target=lambda: out.append(self.client.approvals()))
        t.start()
        req = self.fake.recv()
        self.fake.reply(req, approvals=[{"id": "appr-4", "request_id": 9, "uid": 5, "skill": "confirm",
                                         "command": "run", "session": "s", "waited_ms": 12,
                                         "timeout_ms": 60000}])
        t.join(WAIT)
        self.assertEqual([(a.id, a.request_id, a.uid, a.waited_ms) for a in out[0]], [("appr-4", 9, 5, 12)])

    def test_request_past_the_frame_bound_is_not_sent(self) -> None:
        self.connect()  # max_frame_bytes 1024
        with self.assertRaises(sb.RequestTooLarge):
            self.client.start_invoke("x", stdin=bytes(2000))
        self.assertTrue(self.fake.nothing_more())
        call = self.client.start("stats", {}, lambda r: r)  # the connection goes on
        self.fake.reply(self.fake.recv())
        self.assertIs(call.wait(WAIT)["ok"], True)

    def test_put_chunks_by_put_file_bytes(self) -> None:
        self.connect()  # put_file_bytes 256
        import hashlib
        data = bytes(range(256)) * 3 + b"tail"
        done: List[Any] = []
        t = threading.Thread(daemon=True, target=lambda: done.append(self.client.put("s", "a/b", data)))
        t.start()
        size = 0
        offsets = []
        while size < len(data):
            req = self.fake.recv()
            self.assertEqual(req["type"], "put_file")
            offsets.append(req.get("offset", 0))
            size += len(req["data"])
            self.fake.reply(req, session="s", path="a/b", size_bytes=size,
                            sha256=hashlib.sha256(data[:size]).hexdigest(), queued_ms=0)
        t.join(WAIT)
        self.assertEqual(offsets, [0, 256, 512, 768])
        self.assertEqual(done[0].size_bytes, len(data))

    def test_get_checks_the_sha256(self) -> None:
        self.connect()
        errors: List[BaseException] = []

        def get() -> None:
            try:
                self.client.get("s", "f")
            except BaseException as e:
                errors.append(e)
        t = threading.Thread(daemon=True, target=get)
        t.start()
        req = self.fake.recv()
        self.fake.reply(req, session="s", path="f", size_bytes=3, sha256="0" * 64, offset=0,
                        data=b"abc", eof=True, queued_ms=0)
        t.join(WAIT)
        self.assertIsInstance(errors[0], sb.IntegrityError)

    def test_approval_request_is_answered_with_the_clients_own_id(self) -> None:
        seen: List[sb.ApprovalRequest] = []

        def handler(req: sb.ApprovalRequest) -> str:
            seen.append(req)
            return "yes_once"
        client = sb.Client(sock=self.fake.client_sock, approval_handler=handler)
        t = threading.Thread(daemon=True, target=self.fake.hello)
        t.start()
        client.connect()
        t.join(WAIT)
        call = client.start_invoke("confirm", args=["hi"], phase="execution")
        inv = self.fake.recv()
        self.fake.send({"type": "approval_request", "id": "appr-9", "request_id": inv["id"],
                        "skill": "confirm", "command": "run", "session": "default", "args": ["hi"],
                        "args_total": 1, "effective": {}, "rules": ["r"],
                        "options": ["yes_once", "yes_in_session", "no"], "timeout_ms": 4000})
        appr = self.fake.recv()
        self.assertEqual(appr["type"], "approve")
        self.assertEqual((appr["approval_id"], appr["option"]), ("appr-9", "yes_once"))
        self.assertNotEqual(appr["id"], inv["id"])
        self.fake.reply(appr, approval_id="appr-9")
        self.fake.result(inv, stdout=b"hi\n")
        self.assertEqual(call.wait(WAIT).stdout, b"hi\n")
        self.assertEqual(seen[0].request_id, inv["id"])
        self.assertEqual(seen[0].id, "appr-9")
        client.close()

    def test_failing_handler_answers_no(self) -> None:
        def handler(req: sb.ApprovalRequest) -> str:
            raise RuntimeError("boom")
        client = sb.Client(sock=self.fake.client_sock, approval_handler=handler).connect(hello=False)
        with self.assertLogs("skillbroker", "ERROR"):
            self.fake.send({"type": "approval_request", "id": "appr-1", "request_id": 1})
            appr = self.fake.recv()
        self.assertEqual(appr["option"], "no")
        client.close()

    def test_handler_returning_none_leaves_the_request_unanswered(self) -> None:
        answered = threading.Event()

        def handler(req: sb.ApprovalRequest) -> None:
            answered.set()
            return None
        client = sb.Client(sock=self.fake.client_sock, approval_handler=handler).connect(hello=False)
        self.fake.send({"type": "approval_request", "id": "appr-2", "request_id": 1})
        self.assertTrue(answered.wait(WAIT))
        self.assertTrue(self.fake.nothing_more(0.3))
        client.close()

    @unittest.skipUnless(threading.current_thread() is threading.main_thread()
                         and signal.getsignal(signal.SIGINT) is signal.default_int_handler,
                         "needs the main thread with Python's own SIGINT handler")
    def test_keyboard_interrupt_while_waiting_cancels_the_call(self) -> None:
        self.connect()
        call = self.client.start_invoke("nap", args=["30"])
        inv = self.fake.recv()
        timer = threading.Timer(0.2, signal.pthread_kill, (threading.main_thread().ident, signal.SIGINT))
        timer.start()
        with self.assertRaises(KeyboardInterrupt):
            call.wait(WAIT)
        c = self.fake.recv()
        self.assertEqual((c["type"], c["request_id"]), ("cancel", inv["id"]))

    def test_call_cancel_sends_cancel_for_its_id(self) -> None:
        self.connect()
        call = self.client.start_invoke("nap", args=["30"])
        inv = self.fake.recv()
        t = threading.Thread(daemon=True, target=call.cancel)
        t.start()
        c = self.fake.recv()
        self.assertEqual((c["type"], c["request_id"]), ("cancel", inv["id"]))
        self.fake.reply(c, request_id=inv["id"], state="running")
        t.join(WAIT)
        self.fake.send({"type": "result", "id": inv["id"], "ok": False,
                        "error": {"type": "cancelled", "message": "the call was cancelled", "details": {}}})
        with self.assertRaises(sb.Cancelled):
            call.wait(WAIT)


class AsyncFake(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.fake = FakeBroker()

    async def asyncTearDown(self) -> None:
        self.fake.close()

    async def connected(self, **kw: Any) -> sb.AsyncClient:
        client = sb.AsyncClient(sock=self.fake.client_sock, **kw)
        served = asyncio.ensure_future(asyncio.to_thread(self.fake.hello))
        await asyncio.wait_for(client.connect(), WAIT)
        await asyncio.wait_for(served, WAIT)
        return client

    async def test_malformed_frames_fail_every_pending_call(self) -> None:
        for name, data in MALFORMED.items():
            with self.subTest(name):
                fake = FakeBroker()
                self.addCleanup(fake.close)
                client = await sb.AsyncClient(sock=fake.client_sock).connect(hello=False)
                self.addAsyncCleanup(client.close)
                calls = [await client.start("stats", {}, lambda r: r) for _ in range(3)]
                for _ in calls:
                    await asyncio.to_thread(fake.recv)
                fake.send_raw(data)
                if name.startswith("truncated"):
                    fake.sock.close()
                for c in calls:
                    with self.assertRaisesRegex(sb.ProtocolError, WHY[name]):
                        await asyncio.wait_for(c.result(), WAIT)
                self.assertTrue(client.closed)
                with self.assertRaises(sb.ProtocolError):
                    await client.stats()
                await client.close()
                fake.close()

    async def test_incoming_bound_is_hellos_reply_bytes(self) -> None:
        client = await self.connected()  # max_frame_bytes 1024, reply_bytes 2048
        call = await client.start("stats", {}, lambda r: r)
        req = await asyncio.to_thread(self.fake.recv)
        self.fake.send({"type": "stats", "id": req["id"], "ok": True, "pad": "x" * 1500})
        self.assertEqual(len((await asyncio.wait_for(call.result(), WAIT))["pad"]), 1500)
        call = await client.start("stats", {}, lambda r: r)
        req = await asyncio.to_thread(self.fake.recv)
        self.fake.send({"type": "stats", "id": req["id"], "ok": True, "pad": "x" * 2048})
        with self.assertRaisesRegex(sb.ProtocolError, r"frame of 20\d\d bytes is larger than the bound of 2048"):
            await asyncio.wait_for(call.result(), WAIT)
        await client.close()

    async def test_calls_past_in_flight_wait_for_room(self) -> None:
        client = sb.AsyncClient(sock=self.fake.client_sock)
        served = asyncio.ensure_future(asyncio.to_thread(self.fake.hello, in_flight=2))
        await asyncio.wait_for(client.connect(), WAIT)
        await served
        tasks = [asyncio.ensure_future(client.invoke("echo-args", args=[str(i)])) for i in range(5)]
        first = [await asyncio.to_thread(self.fake.recv) for _ in range(2)]
        self.assertEqual([r["args"] for r in first], [["0"], ["1"]])
        self.assertTrue(await asyncio.to_thread(self.fake.nothing_more, 0.3))
        tasks[2].cancel()  # one waiting for room goes without ever being sent
        self.fake.result(first[1], stdout=b"1")
        nxt = await asyncio.to_thread(self.fake.recv)
        self.assertEqual(nxt["args"], ["3"])  # first come, first served; 2 was cancelled
        self.assertTrue(await asyncio.to_thread(self.fake.nothing_more, 0.3))
        for r in (first[0], nxt):
            self.fake.result(r, stdout=r["args"][0].encode())
        self.fake.result(await asyncio.to_thread(self.fake.recv), stdout=b"4")
        got = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), WAIT)
        self.assertIsInstance(got[2], asyncio.CancelledError)
        self.assertEqual([r.stdout for i, r in enumerate(got) if i != 2], [b"0", b"1", b"3", b"4"])
        await client.close()

    async def test_truncated_frame_that_stalls_times_out(self) -> None:
        client = await sb.AsyncClient(sock=self.fake.client_sock, frame_timeout=0.3).connect(hello=False)
        call = await client.start("stats", {}, lambda r: r)
        await asyncio.to_thread(self.fake.recv)
        self.fake.send_raw(struct.pack(">I", 100) + bytes(10))
        with self.assertRaisesRegex(sb.ProtocolError, "not complete"):
            await asyncio.wait_for(call.result(), WAIT)
        await client.close()

    async def test_replies_out_of_order_reach_their_calls(self) -> None:
        client = await self.connected()
        tasks = [asyncio.ensure_future(client.invoke("echo-args", args=[str(i)])) for i in range(5)]
        reqs = [await asyncio.to_thread(self.fake.recv) for _ in tasks]
        for r in reversed(reqs):
            self.fake.result(r, stdout=r["args"][0].encode())
        results = await asyncio.wait_for(asyncio.gather(*tasks), WAIT)
        self.assertEqual([r.stdout for r in results], [str(i).encode() for i in range(5)])
        await client.close()

    async def test_cancelling_the_task_sends_cancel(self) -> None:
        client = await self.connected()
        task = asyncio.ensure_future(client.invoke("nap", args=["30"]))
        inv = await asyncio.to_thread(self.fake.recv)
        task.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await task
        c = await asyncio.to_thread(self.fake.recv)
        self.assertEqual((c["type"], c["request_id"]), ("cancel", inv["id"]))
        self.fake.reply(c, request_id=inv["id"], state="running")
        # The call's own reply comes later and goes nowhere, quietly.
        self.fake.send({"type": "result", "id": inv["id"], "ok": False,
                        "error": {"type": "cancelled", "message": "x", "details": {}}})
        self.assertIs((await asyncio.wait_for(self.stats_ok(client), WAIT)), True)
        await client.close()

    async def stats_ok(self, client: sb.AsyncClient) -> bool:
        call = await client.start("stats", {}, lambda r: r)
        req = await asyncio.to_thread(self.fake.recv)
        self.fake.reply(req)
        return (await call)["ok"]  # type: ignore[no-any-return]

    async def test_async_approval_handler(self) -> None:
        async def handler(req: sb.ApprovalRequest) -> str:
            await asyncio.sleep(0.01)
            return "no"
        client = await self.connected(approval_handler=handler)
        task = asyncio.ensure_future(client.invoke("confirm", phase="execution"))
        inv = await asyncio.to_thread(self.fake.recv)
        self.fake.send({"type": "approval_request", "id": "appr-3", "request_id": inv["id"],
                        "skill": "confirm", "options": ["yes_once", "yes_in_session", "no"]})
        appr = await asyncio.to_thread(self.fake.recv)
        self.assertEqual((appr["type"], appr["approval_id"], appr["option"]), ("approve", "appr-3", "no"))
        self.fake.reply(appr, approval_id="appr-3")
        self.fake.send({"type": "result", "id": inv["id"], "ok": False, "skill": "confirm",
                        "error": {"type": "approval_denied", "message": "answered no", "details": {}}})
        with self.assertRaises(sb.ApprovalDenied):
            await asyncio.wait_for(task, WAIT)
        await client.close()

    async def test_close_fails_pending_calls(self) -> None:
        client = await self.connected()
        call = await client.start("stats", {}, lambda r: r)
        await client.close()
        with self.assertRaisesRegex(sb.ProtocolError, "closed by the client"):
            await asyncio.wait_for(call.result(), WAIT)

    async def test_broker_close_fails_pending_calls(self) -> None:
        client = await self.connected()
        calls = [await client.start("stats", {}, lambda r: r) for _ in range(3)]
        for _ in calls:
            await asyncio.to_thread(self.fake.recv)
        self.fake.sock.close()
        for c in calls:
            with self.assertRaisesRegex(sb.ProtocolError, "closed by the broker"):
                await asyncio.wait_for(c.result(), WAIT)
        await client.close()

    async def test_request_past_the_frame_bound_is_not_sent(self) -> None:
        client = await self.connected()
        with self.assertRaises(sb.RequestTooLarge):
            await asyncio.wait_for(client.invoke("x", stdin=bytes(2000)), WAIT)
        self.assertTrue(await asyncio.to_thread(self.fake.nothing_more))
        self.assertIs(await asyncio.wait_for(self.stats_ok(client), WAIT), True)
        await client.close()


if __name__ == "__main__":
    unittest.main()
