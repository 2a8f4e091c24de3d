"""Unit tests of the frame codec, the error table and the request checks: no daemon needed."""
from __future__ import annotations

import os
import re
import struct
import tempfile
import unittest
from typing import List

import msgpack

import skillbroker as sb
from skillbroker import _protocol as P
from skillbroker._frame import decode_body, encode_frame, parse_header
from skillbroker._paths import socket_path
from skillbroker.types import Result

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "protocol.md")


class FrameCodec(unittest.TestCase):
    def test_stats_request_is_the_documented_bytes(self) -> None:
        # docs/protocol.md "Worked example: stats"
        self.assertEqual(encode_frame({"type": "stats", "id": 2}, 1 << 20),
                         bytes.fromhex("00000010 82a474797065a57374617473a2696402"))

    def test_round_trip_keeps_bin_and_str_apart(self) -> None:
        req = {"type": "invoke", "id": 7, "skill": "s", "stdin": b"\x00\xff", "args": ["é"]}
        frame = encode_frame(req, 1 << 20)
        n = parse_header(frame[:4], 1 << 20)
        self.assertEqual(n, len(frame) - 4)
        self.assertEqual(decode_body(frame[4:]), req)

    def test_documented_error_reply_decodes(self) -> None:
        body = bytes.fromhex(
            "84a474797065a56572726f72a2696403a26f6bc2a56572726f7283a474797065a96e6f745f666f756e64"
            "a76d657373616765bb6e6f20737563682073657373696f6e206f6620746869732075696"
            "4a764657461696c7380")
        reply = decode_body(body)
        err = sb.SkillbrokerError  # the base
        with self.assertRaises(err) as cm:
            P.check("session_end", reply)
        self.assertIsInstance(cm.exception, sb.NotFound)
        self.assertEqual(cm.exception.type, "not_found")
        self.assertEqual(cm.exception.message, "no such session of this uid")
        self.assertEqual(cm.exception.request_id, 3)
        self.assertEqual(cm.exception.details, {})

    def test_outgoing_frame_past_the_bound_is_refused(self) -> None:
        with self.assertRaises(sb.RequestTooLarge) as cm:
            encode_frame({"type": "invoke", "id": 1, "stdin": bytes(2000)}, 1024)
        self.assertEqual(cm.exception.max_frame, 1024)
        self.assertGreater(cm.exception.size, 2000)
        encode_frame({"type": "invoke", "id": 1, "stdin": bytes(900)}, 1024)

    def test_header_bounds(self) -> None:
        self.assertEqual(parse_header(struct.pack(">I", 1024), 1024), 1024)
        with self.assertRaisesRegex(sb.ProtocolError, "larger than the bound of 1024 bytes"):
            parse_header(struct.pack(">I", 1025), 1024)
        with self.assertRaisesRegex(sb.ProtocolError, "empty frame"):
            parse_header(b"\0\0\0\0", 1024)
        with self.assertRaises(sb.ProtocolError):
            parse_header(b"\0\0\1", 1024)

    def test_bodies_that_are_not_one_map(self) -> None:
        bad = {
            "array": msgpack.packb([1, 2]),
            "int": msgpack.packb(5),
            "trailing": msgpack.packb({"type": "x"}) + b"\xc0",
            "truncated": msgpack.packb({"type": "stats", "id": 1})[:-1],
            "not utf-8": b"\x81\xa4type\xa2\xff\xfe",
            "duplicate key": b"\x82\xa4type\xa1x\xa4type\xa1y",
            "int key": b"\x82\xa4type\xa1x\x01\x02",
            "ext": b"\x82\xa4type\xa1x\xa1e\xd4\x01\x00",
            "no type": msgpack.packb({"id": 1}),
            "type not str": msgpack.packb({"type": 1}),
            "garbage": b"\xc1",
        }
        for name, body in bad.items():
            with self.subTest(name):
                with self.assertRaises(sb.ProtocolError):
                    decode_body(body)


class Errors(unittest.TestCase):
    def doc_error_types(self) -> List[str]:
        with open(DOC, encoding="utf-8") as f:
            text = f.read()
        section = text.split("## Error types", 1)[1].split("\n## ", 1)[0]
        return re.findall(r"^\| `([a-z_]+)` \|", section, re.M)

    def test_one_class_per_documented_type(self) -> None:
        if not os.path.exists(DOC):
            self.skipTest("docs/protocol.md is not beside this checkout")
        types = self.doc_error_types()
        self.assertEqual(len(types), 19)
        self.assertEqual(list(sb.ERROR_TYPES), types)
        for t, cls in sb.ERROR_TYPES.items():
            self.assertTrue(issubclass(cls, sb.SkillbrokerError))
            self.assertEqual(cls.type, t)
            self.assertIs(getattr(sb, cls.__name__), cls)

    def test_reply_maps_to_its_class_and_unknown_to_the_base(self) -> None:
        for t, cls in sb.ERROR_TYPES.items():
            e = sb._errors.error_from_reply(
                {"type": "error", "id": "a", "ok": False,
                 "error": {"type": t, "message": "m", "details": {"k": 1}}})
            self.assertIs(type(e), cls)
            self.assertEqual((e.type, e.message, e.details, e.request_id), (t, "m", {"k": 1}, "a"))
        e = sb._errors.error_from_reply({"type": "error", "id": 1, "ok": False,
                                         "error": {"type": "brand_new", "message": "m"}})
        self.assertIs(type(e), sb.SkillbrokerError)
        self.assertEqual(e.type, "brand_new")

    def test_failed_result_carries_its_output(self) -> None:
        reply = {"type": "result", "id": 4, "ok": False, "skill": "s", "command": "run",
                 "policy": {"allowed": True, "decision_reason": "r", "matched_rules": []},
                 "output": {"stdout": b"part", "stderr": b"", "truncated": False,
                            "stdout_bytes": 4, "stderr_bytes": 0},
                 "effects": {"process": {"exit_code": None, "signal": 9, "duration_ms": 10},
                             "files_written": []},
                 "error": {"type": "timeout", "message": "killed at 10 s", "details": {}}}
        with self.assertRaises(sb.Timeout) as cm:
            P.check("invoke", reply)
        r = cm.exception.result
        assert r is not None
        self.assertEqual((r.stdout, r.signal, r.exit_code, r.ok), (b"part", 9, None, False))

    def test_ok_result_with_non_zero_exit_is_a_result(self) -> None:
        reply = {"type": "result", "id": 1, "ok": True, "skill": "s", "command": "run",
                 "output": {"stdout": b"x", "stderr": b"y", "truncated": True, "stdout_bytes": 9,
                            "stderr_bytes": 1},
                 "effects": {"process": {"exit_code": 7, "signal": None, "duration_ms": 3},
                             "files_written": [{"path": "/work/a", "size_bytes": 2, "sha256": "ab"}]}}
        r = Result.from_reply(P.check("invoke", reply))
        self.assertEqual((r.exit_code, r.stdout, r.stderr, r.truncated, r.stdout_bytes), (7, b"x", b"y", True, 9))
        self.assertEqual(r.files_written, [sb.FileWritten("/work/a", 2, "ab")])
        self.assertIs(r.raw["ok"], True)

    def test_reply_of_another_type_is_a_protocol_error(self) -> None:
        with self.assertRaises(sb.ProtocolError):
            P.check("stats", {"type": "skills", "id": 1, "ok": True})


class Requests(unittest.TestCase):
    def test_invoke_fields_leave_defaults_to_the_broker(self) -> None:
        self.assertEqual(P.call("s", None, (), None, None, None, None, None), {"skill": "s"})
        f = P.call("s", "run", ["a"], "in", {"K": "v"}, "s1", "execution", 5)
        self.assertEqual(f, {"skill": "s", "command": "run", "args": ["a"], "stdin": b"in",
                             "env": {"K": "v"}, "session": "s1", "phase": "execution", "timeout_ms": 5})

    def test_what_would_close_the_connection_is_refused_before_sending(self) -> None:
        # A NUL in a str or a float is a frame the broker refuses by closing.
        with self.assertRaises(ValueError):
            P.call("s", None, ["a\0b"], None, None, None, None, None)
        with self.assertRaises(TypeError):
            P.call("s", None, (), None, None, None, None, 1.5)  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            P.call("s", None, "abc", None, None, None, None, None)
        with self.assertRaises(ValueError):
            P.request_id("")
        with self.assertRaises(ValueError):
            P.request_id(-1)


class SocketPath(unittest.TestCase):
    def test_order_of_choice(self) -> None:
        old = os.environ.get("SKILLBROKER_SOCKET")
        try:
            self.assertEqual(socket_path("/x.sock"), "/x.sock")
            os.environ["SKILLBROKER_SOCKET"] = "/env.sock"
            self.assertEqual(socket_path(), "/env.sock")
            os.environ["SKILLBROKER_SOCKET"] = ""
            # a socket planted in the current directory is never taken
            cwd = os.getcwd()
            with tempfile.TemporaryDirectory() as d:
                os.mkdir(os.path.join(d, "run"))
                open(os.path.join(d, "run", "skillbroker.sock"), "w").close()
                os.chdir(d)
                try:
                    self.assertEqual(socket_path(), "/run/skillbroker/skillbroker.sock")
                finally:
                    os.chdir(cwd)
        finally:
            if old is None:
                os.environ.pop("SKILLBROKER_SOCKET", None)
            else:
                os.environ["SKILLBROKER_SOCKET"] = old


if __name__ == "__main__":
    unittest.main()
