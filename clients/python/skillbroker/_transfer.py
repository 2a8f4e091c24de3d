"""put() and get() as chunk loops that yield requests and take replies, so both clients drive the same code."""
from __future__ import annotations

import hashlib
from typing import Any, Dict, Generator, Optional, Tuple

from . import _protocol as P
from ._errors import IntegrityError
from .types import FileChunk, FileInfo, Hello

Step = Tuple[str, Dict[str, Any]]          # (request type, fields)
Steps = Generator[Step, Dict[str, Any], Any]  # sends back the ok reply


def chunk_size(hello: Optional[Hello], max_frame: int) -> int:
    """The data one put_file carries: hello's put_file_bytes, else as the broker computes it
    (max_frame_bytes less 1536, at least a quarter of it, at most 1 MiB)."""
    if hello is not None and hello.limits.put_file_bytes:
        return hello.limits.put_file_bytes
    return max(1, min(max(max_frame - 1536, max_frame // 4), 1 << 20))


def put_steps(session: Optional[str], path: str, data: bytes, chunk: int,
              timeout_ms: Optional[int]) -> Generator[Step, Dict[str, Any], FileInfo]:
    """Write `data` as the file: a put_file at offset 0, then appends at the size each reply said."""
    if chunk <= 0:
        raise ValueError("chunk size must be positive")
    view = memoryview(data)
    sent = 0
    info: Optional[FileInfo] = None
    while info is None or sent < len(data):
        piece = bytes(view[sent:sent + chunk])
        reply = yield ("put_file", P.file_req(session, path, data=piece,
                                              offset=info.size_bytes if info else 0,
                                              timeout_ms=timeout_ms))
        info = FileInfo.from_reply(reply)
        sent += len(piece)
        if info.size_bytes != sent:
            raise IntegrityError("put %s: the file is %d bytes after %d were written"
                                 % (path, info.size_bytes, sent))
    digest = hashlib.sha256(data).hexdigest()
    if info.size_bytes != len(data) or info.sha256 != digest:
        raise IntegrityError("put %s: the broker reports %d bytes, sha256 %s; sent %d bytes, sha256 %s"
                             % (path, info.size_bytes, info.sha256, len(data), digest))
    return info


def get_steps(session: Optional[str], path: str, max_bytes: Optional[int],
              timeout_ms: Optional[int]) -> Generator[Step, Dict[str, Any], bytes]:
    """Read the whole file chunk by chunk, checking that it did not change and that the bytes match."""
    buf = bytearray()
    first: Optional[FileChunk] = None
    while True:
        reply = yield ("get_file", P.file_req(session, path, offset=len(buf), timeout_ms=timeout_ms))
        c = FileChunk.from_reply(reply)
        if first is None:
            first = c
            if max_bytes is not None and c.size_bytes > max_bytes:
                raise IntegrityError("get %s: the file is %d bytes, more than max_bytes (%d)"
                                     % (path, c.size_bytes, max_bytes))
        elif (c.size_bytes, c.sha256) != (first.size_bytes, first.sha256):
            raise IntegrityError("get %s: the file changed between two chunks" % path)
        if c.offset != len(buf):
            raise IntegrityError("get %s: asked for offset %d, got %d" % (path, len(buf), c.offset))
        buf += c.data
        if len(buf) > first.size_bytes:
            raise IntegrityError("get %s: more data than the file's %d bytes" % (path, first.size_bytes))
        if c.eof:
            break
        if not c.data:
            raise IntegrityError("get %s: no data and no eof at offset %d" % (path, len(buf)))
    digest = hashlib.sha256(buf).hexdigest()
    if len(buf) != first.size_bytes or digest != first.sha256:
        raise IntegrityError("get %s: got %d bytes, sha256 %s; the broker reports %d bytes, sha256 %s"
                             % (path, len(buf), digest, first.size_bytes, first.sha256))
    return bytes(buf)
