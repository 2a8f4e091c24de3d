#!/usr/bin/python3
"""pipeclient.py: a test tool that pipelines requests on ONE connection.

usage: pipeclient.py SOCKET [TIMEOUT_S] < SCRIPT

SCRIPT holds one JSON object per line: a request (it has "type"; a str
"stdin" is sent as bin) or {"pause_ms": N}. Requests go out in order
without waiting for replies, which are read meanwhile. Prints one JSON
line per event, with t_ms since the start: {"t_ms", "sent": ID} and
{"t_ms", "reply": {...}} (bin as UTF-8 text; a frame that is no reply,
such as an approval_request, shows the same way). Ends when every
request has a reply (then exit 0), the connection closes, or TIMEOUT_S
(default 60) passes (exit 1). Requests of type "cancel" get a reply too.

A line {"on": "approval_request", "reply": {...}} answers every
approval_request that comes after it is read: the reply map is sent
with "approval_id" set to the request's id and, unless it has one, "id"
set to "approve-<approval id>" (and it waits for its reply too). With
"request_id": X it answers only the approval requests of request X;
"reply": null leaves them unanswered. The last matching line wins.
"""
import json
import socket
import struct
import sys
import threading
import time

import msgpack


def text(o):
    if isinstance(o, bytes):
        return o.decode("utf-8", "replace")
    if isinstance(o, dict):
        return {text(k): text(v) for k, v in o.items()}
    if isinstance(o, list):
        return [text(v) for v in o]
    return o


def main():
    path = sys.argv[1]
    limit = float(sys.argv[2]) if len(sys.argv) > 2 else 60.0
    t0 = time.monotonic()
    out_lock = threading.Lock()
    pending = set()
    rules = []  # (request_id or None, reply map or None), in script order
    done = threading.Event()
    sent_all = threading.Event()

    def say(obj):
        obj["t_ms"] = int((time.monotonic() - t0) * 1000)
        with out_lock:
            print(json.dumps(obj, sort_keys=True), flush=True)

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    send_lock = threading.Lock()

    def send(req):
        body = msgpack.packb(req, use_bin_type=True)
        with send_lock:
            sock.sendall(struct.pack(">I", len(body)) + body)

    def answer(frame):
        """The approve a rule says for an approval_request, or None."""
        with out_lock:
            found = None
            for rid, reply in rules:
                if rid is None or rid == frame.get("request_id"):
                    found = (reply,)
        if found is None or found[0] is None:
            return None
        req = dict(found[0])
        req["approval_id"] = frame.get("id")
        req.setdefault("id", "approve-%s" % frame.get("id"))
        return req

    def reader():
        buf = b""
        while True:
            try:
                chunk = sock.recv(1 << 16)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
            while len(buf) >= 4:
                (n,) = struct.unpack(">I", buf[:4])
                if len(buf) < 4 + n:
                    break
                body, buf = buf[4:4 + n], buf[4 + n:]
                reply = msgpack.unpackb(body, raw=True, strict_map_key=False)
                reply = text(reply)
                say({"reply": reply})
                if reply.get("type") == "approval_request":
                    req = answer(reply)
                    if req is not None:
                        with out_lock:
                            pending.add(json.dumps(req["id"]))
                        send(req)
                        say({"sent": req["id"]})
                    continue
                with out_lock:
                    pending.discard(json.dumps(reply.get("id")))
                    if sent_all.is_set() and not pending:
                        done.set()
        say({"closed": True})
        done.set()

    threading.Thread(target=reader, daemon=True).start()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        if "pause_ms" in req:
            time.sleep(req["pause_ms"] / 1000.0)
            continue
        if "on" in req:
            with out_lock:
                rules.append((req.get("request_id"), req.get("reply")))
            continue
        if isinstance(req.get("stdin"), str):
            req["stdin"] = req["stdin"].encode()
        with out_lock:
            pending.add(json.dumps(req.get("id")))
        send(req)
        say({"sent": req.get("id")})
    with out_lock:
        sent_all.set()
        if not pending:
            done.set()
    ok = done.wait(max(0.0, limit - (time.monotonic() - t0)))
    with out_lock:
        left = sorted(pending)
    if left:
        say({"unanswered": left})
    sys.exit(0 if ok and not left else 1)


if __name__ == "__main__":
    main()
