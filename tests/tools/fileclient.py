#!/usr/bin/python3
"""fileclient.py: a test tool for the session file requests, byte-exact.

usage: fileclient.py SOCKET [TIMEOUT_S] < SCRIPT

SCRIPT holds one JSON request a line, sent one after the other, each on
a connection of its own (a frame the broker refuses closes its
connection), each waiting for its reply. A JSON str is sent as a
msgpack str as it is (NUL included). Keys that begin with "_" are this
tool's, never sent:

  _data_file: PATH     the request's "data" (bin) is PATH's bytes
  _data_text: STR      "data" is STR's UTF-8 bytes
  _data_zeros: N       "data" is N zero bytes
  _chunk: N            put_file: send the data as puts of at most N bytes,
                       the first at the request's offset (default 0), each
                       next one where the last ended; ids ID-0, ID-1, ...;
                       stops at the first error
  _until_eof: true     get_file: ask again from where the data ended
                       until eof or an error; ids ID-0, ID-1, ...
  _save: PATH          get_file: append each reply's data to PATH

Prints one JSON line per reply: {"t_ms": ms the request took, "reply":
{...}}, where a bin "data" shows as {"len": N, "sha256": HEX} and other
bin values as text (invalid UTF-8 replaced); a reply with a str that
is not UTF-8 (which no reply may have) shows as {"t_ms", "undecodable":
its body in hex}. A connection that closes without a reply gives
{"t_ms", "closed": true, "id"}. Exits 0 when every request had a reply
that decodes, 1 otherwise (closed, undecodable, or TIMEOUT_S, default
60, passed in all).
"""
import hashlib
import json
import socket
import struct
import sys
import time

import msgpack


def text(o):
    if isinstance(o, bytes):
        return o.decode("utf-8", "replace")
    if isinstance(o, dict):
        out = {}
        for k, v in o.items():
            if k == "data" and isinstance(v, bytes):
                out[k] = {"len": len(v), "sha256": hashlib.sha256(v).hexdigest()}
            else:
                out[text(k)] = text(v)
        return out
    if isinstance(o, list):
        return [text(v) for v in o]
    return o


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def exchange(path, req, deadline):
    """Send req on a new connection: (reply, its body, ms), or Nones."""
    t0 = time.monotonic()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(max(0.1, deadline - t0))
    try:
        sock.connect(path)
        body = msgpack.packb(req, use_bin_type=True)
        sock.sendall(struct.pack(">I", len(body)) + body)
        while True:
            head = recv_exact(sock, 4)
            if head is None:
                return None, None, int((time.monotonic() - t0) * 1000)
            (n,) = struct.unpack(">I", head)
            raw = recv_exact(sock, n)
            if raw is None:
                return None, None, int((time.monotonic() - t0) * 1000)
            try:
                reply = msgpack.unpackb(raw, raw=False, strict_map_key=False)
            except UnicodeDecodeError:
                reply = {}  # a str that is not UTF-8: shown as hex
            # the reply to this request (approval requests are not)
            if reply.get("type") != "approval_request":
                return reply, raw, int((time.monotonic() - t0) * 1000)
    except (OSError, socket.timeout):
        return None, None, int((time.monotonic() - t0) * 1000)
    finally:
        sock.close()


def main():
    path = sys.argv[1]
    limit = float(sys.argv[2]) if len(sys.argv) > 2 else 60.0
    deadline = time.monotonic() + limit
    ok = True

    def say(obj):
        print(json.dumps(obj, sort_keys=True), flush=True)

    def one(req):
        """Send req; its reply (decoded) or None."""
        nonlocal ok
        reply, raw, ms = exchange(path, req, deadline)
        if reply is None:
            say({"t_ms": ms, "closed": True, "id": req.get("id")})
            ok = False
            return None
        if not reply:
            say({"t_ms": ms, "undecodable": raw.hex()})
            ok = False
            return None
        say({"t_ms": ms, "reply": text(reply)})
        return reply

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        opts = {k: req.pop(k) for k in list(req) if k.startswith("_")}
        data = None
        if "_data_file" in opts:
            with open(opts["_data_file"], "rb") as f:
                data = f.read()
        elif "_data_text" in opts:
            data = opts["_data_text"].encode()
        elif "_data_zeros" in opts:
            data = bytes(opts["_data_zeros"])
        if data is not None and "_chunk" not in opts:
            req["data"] = data
        if "_chunk" in opts:
            n = opts["_chunk"]
            off = req.get("offset", 0)
            base = req.get("id")
            pieces = [data[i:i + n] for i in range(0, len(data), n)] or [b""]
            for k, piece in enumerate(pieces):
                r = dict(req, id="%s-%d" % (base, k), data=piece, offset=off)
                d = one(r)
                if d is None or d.get("ok") is not True:
                    break
                off += len(piece)
            continue
        if opts.get("_until_eof"):
            base = req.get("id")
            off = req.get("offset", 0)
            for k in range(100000):
                r = dict(req, id="%s-%d" % (base, k), offset=off)
                d = one(r)
                if d is None or d.get("ok") is not True:
                    break
                if "_save" in opts:
                    with open(opts["_save"], "ab") as f:
                        f.write(d["data"])
                off += len(d["data"])
                if d.get("eof") is True or len(d["data"]) == 0:
                    break
            continue
        d = one(req)
        if d is not None and "_save" in opts and isinstance(d.get("data"), bytes):
            with open(opts["_save"], "ab") as f:
                f.write(d["data"])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
