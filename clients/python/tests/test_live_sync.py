"""The blocking Client against the running daemon of tests/clients/run.sh (its shared policy)."""
from __future__ import annotations

import hashlib
import os
import threading
import time
import unittest
from concurrent.futures import ThreadPoolExecutor
from typing import List

import skillbroker as sb
from ._live import SOCKET, end_quietly, live, session

EXEC = "execution"
# Where a cancel may find a call (broker/broker_call.c state_names; the
# protocol doc does not list them).
CALL_STATES = ("new", "queued", "workers", "authz", "approval", "decision", "run_wait", "running",
               "draining")


@live
class LiveSync(unittest.TestCase):
    def setUp(self) -> None:
        self.client = sb.Client(SOCKET).connect()
        self.sessions: List[str] = []

    def tearDown(self) -> None:
        for s in self.sessions:
            end_quietly(self.client.session_end, s)
        self.client.close()

    def session(self, tag: str) -> str:
        s = session(tag)
        self.sessions.append(s)
        return s

    def test_hello(self) -> None:
        h = self.client.server
        assert h is not None
        self.assertEqual((h.server, h.protocol), ("skillbroker", 2))
        self.assertEqual(h.principal.uid, os.getuid())
        self.assertIn("put_file", h.requests)
        self.assertGreater(h.limits.put_file_bytes or 0, 0)
        self.assertEqual(self.client.max_frame_bytes, h.limits.max_frame_bytes)

    def test_invoke_echo(self) -> None:
        r = self.client.invoke("echo-args", args=["hello", "world"], phase=EXEC, session=self.session("echo"))
        self.assertEqual((r.ok, r.exit_code, r.stdout, r.stderr), (True, 0, b"hello world\n", b""))
        self.assertEqual((r.skill, r.command), ("echo-args", "run"))
        self.assertTrue(r.policy is not None and r.policy.allowed)
        self.assertEqual(r.raw["type"], "result")

    def test_non_zero_exit_is_a_result(self) -> None:
        r = self.client.invoke("exit-code", phase=EXEC, session=self.session("exit"))
        self.assertEqual(r.exit_code, 7)
        self.assertEqual(r.stdout, b"exiting 7\n")
        self.assertTrue(r.ok)

    def test_denied_call_raises_permission_denied(self) -> None:
        with self.assertRaises(sb.PermissionDenied) as cm:
            self.client.invoke("whoami", phase=EXEC, session=self.session("deny"))
        e = cm.exception
        self.assertEqual(e.type, "permission_denied")
        self.assertIn('denied by rule "clients-deny"', e.message)
        self.assertIsInstance(e.request_id, int)
        assert e.result is not None and e.result.policy is not None
        self.assertFalse(e.result.policy.allowed)
        self.assertFalse(e.result.ran)

    def test_skill_not_enabled(self) -> None:
        with self.assertRaises(sb.SkillNotEnabled) as cm:
            self.client.invoke("sleeper", phase=EXEC, session=self.session("sleeper"))
        self.assertEqual(cm.exception.type, "skill_not_enabled")
        self.assertIn("sleeper", cm.exception.message)

    def test_default_phase_is_the_protocols_planning(self) -> None:
        with self.assertRaises(sb.PhaseViolation):
            self.client.invoke("echo-args", session=self.session("phase"))

    def test_unknown_skill_and_command(self) -> None:
        with self.assertRaises(sb.UnknownSkill):
            self.client.invoke("no-such-skill", phase=EXEC, session=self.session("unknown"))
        with self.assertRaises(sb.UnknownCommand):
            self.client.invoke("echo-args", "nope", phase=EXEC, session=self.session("unknown"))

    def test_threads_share_one_connection(self) -> None:
        names = [self.session("thr%d" % i) for i in range(12)]

        def one(i: int) -> bytes:
            return self.client.invoke("echo-args", args=["t", str(i)], phase=EXEC, session=names[i]).stdout
        with ThreadPoolExecutor(max_workers=12) as pool:
            outs = list(pool.map(one, range(12)))
        self.assertEqual(outs, [b"t %d\n" % i for i in range(12)])

    def test_sequential_calls(self) -> None:
        s = self.session("seq")
        for i in range(5):
            self.assertEqual(self.client.invoke("echo-args", args=[str(i)], phase=EXEC, session=s).stdout,
                             b"%d\n" % i)
        last = self.client.last_result(s)
        self.assertEqual((last.ok, last.stdout), (True, b"4\n"))

    def test_approval_yes_once_runs_the_call(self) -> None:
        seen: List[sb.ApprovalRequest] = []

        def handler(req: sb.ApprovalRequest) -> str:
            seen.append(req)
            return "yes_once"
        with sb.Client(SOCKET, approval_handler=handler) as c:
            s = self.session("appr-yes")
            r = c.invoke("confirm", args=["hi", "there"], phase=EXEC, session=s)
        self.assertEqual((r.exit_code, r.stdout), (0, b"hi there\n"))
        self.assertEqual(len(seen), 1)
        req = seen[0]
        self.assertEqual((req.skill, req.command, req.session, req.args), ("confirm", "run", s, ["hi", "there"]))
        self.assertEqual(req.request_id, r.request_id)
        self.assertIn("yes_once", req.options)
        self.assertTrue(req.id.startswith("appr-"))
        assert r.policy is not None
        self.assertIn("approval", r.policy.decision_reason)

    def test_approval_no_raises_approval_denied(self) -> None:
        with sb.Client(SOCKET, approval_handler=lambda req: "no") as c:
            with self.assertRaises(sb.ApprovalDenied) as cm:
                c.invoke("confirm", args=["hi"], phase=EXEC, session=self.session("appr-no"))
        self.assertIn("answered no", cm.exception.message)

    def test_without_handler_the_ask_rule_denies_at_once(self) -> None:
        with self.assertRaises(sb.ApprovalDenied) as cm:
            self.client.invoke("confirm", phase=EXEC, session=self.session("appr-none"))
        self.assertIn("does not answer approval requests", cm.exception.message)

    def test_cancel_a_long_nap(self) -> None:
        call = self.client.start_invoke("nap", args=["30"], phase=EXEC, session=self.session("nap"))
        time.sleep(0.5)
        t0 = time.monotonic()
        info = call.cancel()
        self.assertEqual(info.request_id, call.request_id)
        self.assertIn(info.state, CALL_STATES)
        with self.assertRaises(sb.Cancelled):
            call.wait(10)
        self.assertLess(time.monotonic() - t0, 3.0)

    def test_cancel_from_another_thread(self) -> None:
        s = self.session("nap-thread")
        started = threading.Event()
        out: List[BaseException] = []

        def run() -> None:
            call = self.client.start_invoke("nap", args=["30"], phase=EXEC, session=s)
            self.rid = call.request_id
            started.set()
            try:
                call.wait(15)
            except BaseException as e:
                out.append(e)
        t = threading.Thread(target=run, daemon=True)
        t.start()
        started.wait(5)
        time.sleep(0.3)
        self.client.cancel(self.rid)
        t.join(10)
        self.assertIsInstance(out[0], sb.Cancelled)

    def test_cancel_of_nothing_is_not_found(self) -> None:
        with self.assertRaises(sb.NotFound):
            self.client.cancel("no-such-call")

    def test_put_get_bigger_than_a_chunk(self) -> None:
        s = self.session("files")
        data = os.urandom(3 << 20)
        assert self.client.server is not None
        self.assertLess(self.client.server.limits.put_file_bytes or 0, len(data))
        info = self.client.put(s, "in/big.bin", data)
        self.assertEqual(info.size_bytes, len(data))
        self.assertEqual(info.sha256, hashlib.sha256(data).hexdigest())
        self.assertEqual(self.client.get(s, "in/big.bin"), data)
        listing = self.client.list_files(s)
        entry = {f.path: f for f in listing.files}["in/big.bin"]
        self.assertEqual((entry.kind, entry.size_bytes, entry.sha256), ("file", len(data), info.sha256))
        gone = self.client.delete_file(s, "in/big.bin")
        self.assertEqual((gone.kind, gone.size_bytes), ("file", len(data)))
        with self.assertRaises(sb.NotFound):
            self.client.get(s, "in/big.bin")

    def test_small_file_requests(self) -> None:
        s = self.session("small")
        p = self.client.put_file(s, "a.txt", "hi\n")
        self.assertEqual((p.size_bytes, p.sha256), (3, hashlib.sha256(b"hi\n").hexdigest()))
        self.client.put_file(s, "a.txt", b"more", offset=3)
        c = self.client.get_file(s, "a.txt", offset=1, length=3)
        self.assertEqual((c.data, c.offset, c.eof, c.size_bytes), (b"i\nm", 1, False, 7))
        self.assertEqual(self.client.get(s, "a.txt", max_bytes=7), b"hi\nmore")
        with self.assertRaises(sb.IntegrityError):
            self.client.get(s, "a.txt", max_bytes=6)
        with self.assertRaises(sb.BadRequest):
            self.client.put_file(s, "../x", b"")

    def test_session_end(self) -> None:
        s = self.session("end")
        self.client.put_file(s, "x", b"1")
        self.client.session_end(s)
        with self.assertRaises(sb.NotFound):
            self.client.session_end(s)
        with self.assertRaises(sb.NotFound):
            self.client.last_result(s)

    def test_skills_info_authorize_stats(self) -> None:
        names = {s.name for s in self.client.skills()}
        self.assertTrue({"echo-args", "nap", "confirm", "files"} <= names)
        info = self.client.skill_info("echo-args", references=True)
        self.assertEqual(info.name, "echo-args")
        self.assertEqual([c.name for c in info.commands], ["run", "other"])
        self.assertTrue(all(c.allowed for c in info.commands))
        a = self.client.authorize("echo-args", phase=EXEC)
        self.assertTrue(a.allowed)
        self.assertIn("programs", a.effective or {})
        with self.assertRaises(sb.PermissionDenied):
            self.client.authorize("whoami", phase=EXEC)
        st = self.client.stats()
        self.assertGreaterEqual(st.clients, 1)
        self.assertIn("ok", st.calls)
        self.assertEqual(self.client.approvals(), [])

    def test_result_longer_than_a_frame(self) -> None:
        h = self.client.server
        assert h is not None and h.limits.reply_bytes is not None
        n = 3_000_000  # bigout's rule caps output at 4 MiB; a frame is 1 MiB
        self.assertGreater(n, h.limits.max_frame_bytes)
        self.assertEqual(self.client.max_reply_bytes, h.limits.reply_bytes)
        r = self.client.invoke("bigout", args=[str(n)], phase=EXEC, session=self.session("big"))
        self.assertEqual((r.exit_code, r.stdout_bytes, r.truncated), (0, n, False))
        self.assertEqual(r.stdout, b"x" * n)

    def test_skill_info_says_which_commands_ask(self) -> None:
        info = self.client.skill_info("confirm")
        self.assertEqual([(c.name, c.allowed, c.ask) for c in info.commands], [("run", False, True)])

    def test_oversized_request_is_refused_and_the_connection_goes_on(self) -> None:
        with self.assertRaises(sb.RequestTooLarge):
            self.client.invoke("echo-args", stdin=bytes(self.client.max_frame_bytes), phase=EXEC)
        self.assertFalse(self.client.closed)
        self.assertEqual(self.client.invoke("echo-args", args=["ok"], phase=EXEC,
                                            session=self.session("after")).stdout, b"ok\n")


if __name__ == "__main__":
    unittest.main()
