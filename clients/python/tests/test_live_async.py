"""The AsyncClient against the running daemon of tests/clients/run.sh: concurrency, approvals, cancels, files."""
from __future__ import annotations

import asyncio
import hashlib
import os
import time
import unittest
from typing import List

import skillbroker as sb
from ._live import SOCKET, end_quietly_async, live, session
from .test_live_sync import CALL_STATES

EXEC = "execution"


@live
class LiveAsync(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.client = await sb.connect_async(SOCKET)
        self.sessions: List[str] = []

    async def asyncTearDown(self) -> None:
        for s in self.sessions:
            await end_quietly_async(self.client.session_end, s)
        await self.client.close()

    def session(self, tag: str) -> str:
        s = session(tag)
        self.sessions.append(s)
        return s

    async def test_fifty_concurrent_calls(self) -> None:
        names = [self.session("conc%d" % i) for i in range(50)]
        calls = await asyncio.gather(*(self.client.start_invoke("echo-args", args=["call", str(i)], phase=EXEC,
                                                                session=names[i]) for i in range(50)))
        self.assertEqual(len({c.request_id for c in calls}), 50)
        results = await asyncio.wait_for(asyncio.gather(*(c.result() for c in calls)), 120)
        for i, r in enumerate(results):
            self.assertEqual((r.request_id, r.exit_code, r.stdout), (calls[i].request_id, 0, b"call %d\n" % i))

    async def test_fifty_concurrent_tasks_of_mixed_outcomes(self) -> None:
        async def one(i: int) -> object:
            s = self.session("mix%d" % i)
            if i % 5 == 4:
                try:
                    await self.client.invoke("whoami", phase=EXEC, session=s)
                except sb.PermissionDenied as e:
                    return e.type
            if i % 5 == 3:
                return (await self.client.invoke("exit-code", phase=EXEC, session=s)).exit_code
            return (await self.client.invoke("echo-args", args=[str(i)], phase=EXEC, session=s)).stdout
        got = await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(50))), 120)
        want = ["permission_denied" if i % 5 == 4 else 7 if i % 5 == 3 else b"%d\n" % i for i in range(50)]
        self.assertEqual(got, want)

    async def test_more_calls_than_in_flight_wait_for_room(self) -> None:
        assert self.client.server is not None
        limit = self.client.server.limits.in_flight or 128
        names = [self.session("room%d" % i) for i in range(10)]
        n = limit + 22
        got = await asyncio.wait_for(asyncio.gather(*(
            self.client.invoke("echo-args", args=[str(i)], phase=EXEC, session=names[i % 10])
            for i in range(n))), 120)
        self.assertEqual([r.stdout for r in got], [b"%d\n" % i for i in range(n)])

    async def test_result_longer_than_a_frame(self) -> None:
        r = await self.client.invoke("bigout", args=["2500000"], phase=EXEC, session=self.session("abig"))
        self.assertEqual((r.stdout_bytes, len(r.stdout)), (2500000, 2500000))

    async def test_approval_yes_once(self) -> None:
        seen: List[sb.ApprovalRequest] = []

        async def handler(req: sb.ApprovalRequest) -> str:
            seen.append(req)
            return "yes_once"
        async with sb.AsyncClient(SOCKET, approval_handler=handler) as c:
            r = await c.invoke("confirm", args=["async", "yes"], phase=EXEC, session=self.session("ayes"))
        self.assertEqual(r.stdout, b"async yes\n")
        self.assertEqual([q.request_id for q in seen], [r.request_id])

    async def test_approval_no(self) -> None:
        async with sb.AsyncClient(SOCKET, approval_handler=lambda req: "no") as c:
            with self.assertRaises(sb.ApprovalDenied) as cm:
                await c.invoke("confirm", args=["x"], phase=EXEC, session=self.session("ano"))
        self.assertEqual(cm.exception.type, "approval_denied")

    async def test_pending_approval_is_listed(self) -> None:
        gate = asyncio.Event()
        seen: List[sb.ApprovalRequest] = []

        async def handler(req: sb.ApprovalRequest) -> str:
            seen.append(req)
            await gate.wait()
            return "yes_once"
        async with sb.AsyncClient(SOCKET, approval_handler=handler) as c:
            task = asyncio.ensure_future(c.invoke("confirm", args=["wait"], phase=EXEC,
                                                  session=self.session("alist")))
            for _ in range(100):
                if seen:
                    break
                await asyncio.sleep(0.05)
            listed = await self.client.approvals()  # another connection of the uid
            self.assertIn(seen[0].id, [a.id for a in listed])
            gate.set()
            self.assertEqual((await asyncio.wait_for(task, 20)).stdout, b"wait\n")

    async def test_cancel_a_long_nap(self) -> None:
        call = await self.client.start_invoke("nap", args=["30"], phase=EXEC, session=self.session("anap"))
        await asyncio.sleep(0.5)
        t0 = time.monotonic()
        info = await call.cancel()
        self.assertIn(info.state, CALL_STATES)
        with self.assertRaises(sb.Cancelled):
            await asyncio.wait_for(call.result(), 10)
        self.assertLess(time.monotonic() - t0, 3.0)

    async def test_cancelling_the_task_cancels_the_call(self) -> None:
        s = self.session("atask")
        task = asyncio.ensure_future(self.client.invoke("nap", args=["30"], phase=EXEC, session=s))
        await asyncio.sleep(0.5)
        t0 = time.monotonic()
        task.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await task
        # The broker ended it: the session's last result says cancelled.
        last = None
        while time.monotonic() - t0 < 5:
            try:
                last = await self.client.last_result(s)
                break
            except sb.NotFound:
                await asyncio.sleep(0.05)
        assert last is not None, "the nap was not cancelled within 5 s"
        self.assertFalse(last.ok)
        self.assertIsInstance(last.error, sb.Cancelled)

    async def test_put_get_bigger_than_a_chunk(self) -> None:
        s = self.session("afiles")
        data = os.urandom(3 << 20)
        info = await self.client.put(s, "out/big.bin", data)
        self.assertEqual((info.size_bytes, info.sha256), (len(data), hashlib.sha256(data).hexdigest()))
        self.assertEqual(await self.client.get(s, "out/big.bin"), data)

    async def test_errors(self) -> None:
        s = self.session("aerr")
        with self.assertRaises(sb.PermissionDenied) as cm:
            await self.client.invoke("whoami", phase=EXEC, session=s)
        self.assertEqual(cm.exception.type, "permission_denied")
        self.assertIn("clients-deny", cm.exception.message)
        with self.assertRaises(sb.SkillNotEnabled):
            await self.client.invoke("sleeper", phase=EXEC, session=s)
        r = await self.client.invoke("exit-code", phase=EXEC, session=s)
        self.assertEqual(r.exit_code, 7)


if __name__ == "__main__":
    unittest.main()
