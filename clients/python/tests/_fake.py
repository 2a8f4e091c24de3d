"""A scripted stand-in for the broker on one end of a socketpair, to feed the client frames a real broker never sends."""
from __future__ import annotations

import socket
import struct
from typing import Any, Dict, Optional, Tuple

import msgpack

HELLO: Dict[str, Any] = {"type": "hello", "ok": True, "server": "skillbroker", "version": "0.2.0", "protocol": 2,
         "principal": {"uid": 0, "gid": 0, "pid": 1},
         "capabilities": {"protocol_min": 1, "protocol_max": 2, "requests": ["hello"],
                          "limits": {"max_frame_bytes": 1024, "in_flight": 128,
                                     "put_file_bytes": 256}}}


def frame(obj: Any) -> bytes:
    body: bytes = msgpack.packb(obj, use_bin_type=True)
    return struct.pack(">I", len(body)) + body


class FakeBroker:
    """The server end: blocking reads with a timeout, so a test never hangs on it."""

    def __init__(self, timeout: float = 2.0) -> None:
        self.client_sock, self.sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.timeout = timeout
        self.sock.settimeout(timeout)

    def _exact(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise EOFError("the client closed the connection")
            buf += chunk
        return buf

    def recv(self) -> Dict[str, Any]:
        (n,) = struct.unpack(">I", self._exact(4))
        return msgpack.unpackb(self._exact(n), raw=False)  # type: ignore[no-any-return]

    def nothing_more(self, wait: float = 0.2) -> bool:
        """True when the client sends nothing within `wait` seconds."""
        self.sock.settimeout(wait)
        try:
            return self.sock.recv(1, socket.MSG_PEEK) == b""  # b"": closed, nothing sent either
        except socket.timeout:
            return True
        finally:
            self.sock.settimeout(self.timeout)

    def send(self, obj: Any) -> None:
        self.sock.sendall(frame(obj))

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def reply(self, req: Dict[str, Any], **fields: Any) -> None:
        self.send({"type": req["type"], "id": req["id"], "ok": True, **fields})

    def hello(self, max_frame: int = 1024, reply_bytes: Optional[int] = 2048,
              in_flight: int = 128) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """Answer the client's hello; returns (its request, the reply sent)."""
        req = self.recv()
        assert req["type"] == "hello", req
        limits: Dict[str, Any] = {"max_frame_bytes": max_frame, "in_flight": in_flight, "put_file_bytes": 256}
        if reply_bytes is not None:
            limits["reply_bytes"] = reply_bytes
        reply: Dict[str, Any] = dict(HELLO, id=req["id"])
        reply["capabilities"] = dict(HELLO["capabilities"], limits=limits)
        self.send(reply)
        return req, reply

    def result(self, req: Dict[str, Any], stdout: bytes = b"", exit_code: Optional[int] = 0) -> None:
        self.send({"type": "result", "id": req["id"], "ok": True, "skill": req.get("skill", ""),
                   "command": "run", "timestamp_utc": "", "queued_ms": 0,
                   "policy": {"allowed": True, "decision_reason": "", "matched_rules": []},
                   "output": {"stdout": stdout, "stderr": b"", "truncated": False,
                              "stdout_bytes": len(stdout), "stderr_bytes": 0},
                   "effects": {"process": {"exit_code": exit_code, "signal": None, "duration_ms": 1,
                                           "cpu_ms": 0, "max_rss_kb": 0}, "files_written": []}})

    def close(self) -> None:
        for s in (self.sock, self.client_sock):
            try:
                s.close()
            except OSError:
                pass
