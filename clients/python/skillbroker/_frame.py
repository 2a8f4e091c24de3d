"""The frame codec: a 4-byte big-endian length, then exactly one msgpack map, checked strictly both ways."""
from __future__ import annotations

import struct
from typing import Any, Dict, List, Mapping, Tuple

import msgpack  # type: ignore[import]

from ._errors import ProtocolError, RequestTooLarge

HEADER = struct.Struct(">I")
HEADER_BYTES = HEADER.size
# What a broker allows unless its config says otherwise (max_frame_bytes):
# the bound of a request until hello has told the real one.
DEFAULT_MAX_FRAME = 1 << 20
# A reply may be longer than a frame (a result carries its output, bounded
# by the output cap): hello's reply_bytes says how long. Until hello has
# said it, the shipped config's (1 MiB frame + 64 KiB output + 2 MiB).
DEFAULT_MAX_REPLY = DEFAULT_MAX_FRAME + (64 << 10) + (2 << 20)
# The most hello's reply_bytes may raise that to.
MAX_REPLY_CAP = 256 << 20


def encode_frame(request: Mapping[str, Any], max_frame: int) -> bytes:
    """One request as a frame; RequestTooLarge (nothing sent) past max_frame."""
    try:
        body: bytes = msgpack.packb(dict(request), use_bin_type=True)
    except (TypeError, ValueError, OverflowError) as e:
        # UnicodeEncodeError (a lone surrogate) is a ValueError too.
        raise ValueError("request cannot be encoded: %s" % e) from None
    if len(body) > max_frame:
        raise RequestTooLarge(len(body), max_frame)
    return HEADER.pack(len(body)) + body


def parse_header(header: bytes, max_frame: int) -> int:
    """The body length a header announces; ProtocolError if 0 or past max_frame (for a reply, reply_bytes)."""
    if len(header) != HEADER_BYTES:
        raise ProtocolError("frame header of %d bytes" % len(header))
    n: int = HEADER.unpack(header)[0]
    if n == 0:
        raise ProtocolError("empty frame")
    if n > max_frame:
        raise ProtocolError(
            "frame of %d bytes is larger than the bound of %d bytes" % (n, max_frame))
    return n


def _no_ext(code: int, data: bytes) -> Any:
    raise ProtocolError("msgpack ext type %d in a frame" % code)


def _pairs(pairs: List[Tuple[Any, Any]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in pairs:
        if not isinstance(k, str):
            raise ProtocolError("map key of type %s" % type(k).__name__)
        if k in out:
            raise ProtocolError("duplicate key %r" % k)
        out[k] = v
    return out


def decode_body(body: bytes) -> Dict[str, Any]:
    """A frame's body as a dict: exactly one map, UTF-8 strs, unique str keys, no ext."""
    try:
        obj = msgpack.unpackb(
            body, raw=False, use_list=True, strict_map_key=False,
            object_pairs_hook=_pairs, ext_hook=_no_ext)
    except ProtocolError:
        raise
    except msgpack.ExtraData:
        raise ProtocolError("trailing bytes after the frame's map") from None
    except UnicodeDecodeError:
        raise ProtocolError("a str in the frame is not UTF-8") from None
    except Exception as e:  # msgpack's own errors: truncated or malformed data
        raise ProtocolError("undecodable frame: %s" % e) from None
    if not isinstance(obj, dict):
        raise ProtocolError("frame body is a %s, not a map" % type(obj).__name__)
    if not isinstance(obj.get("type"), str):
        raise ProtocolError("frame without a str \"type\"")
    return obj
