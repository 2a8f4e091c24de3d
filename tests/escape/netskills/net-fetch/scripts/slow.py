#!/usr/bin/python3
"""slow.py MODE ARGS: clients of the proxy at 127.0.0.1:3128 that are slow.

    drip HTTP TAG       a CONNECT to allowed.test:HTTP sent one byte a
                        second: SLOW drip STATUS CODE MS SENT
    idle                connects and sends nothing: SLOW idle STATUS CODE MS
    noread HTTP SIZE TAG  a tunnel to allowed.test:HTTP that asks for
                        /bytes/SIZE and then never reads: NOREAD STATUS,
                        then sleeps until the call's timeout ends it

STATUS is the answer's HTTP status, or "closed" / "none" (nothing for 12 s),
CODE its X-Skillbroker-Error, MS the time from the connect to the answer.
"""
import select
import socket
import sys
import time


def answer(buf):
    lines = buf.decode("latin-1").replace("\r\n", "\n").split("\n")
    parts = lines[0].split(" ")
    status = parts[1] if len(parts) > 1 else "bad"
    code = "-"
    for l in lines[1:]:
        if l == "":
            break
        k, _, v = l.partition(":")
        if k.strip().lower() == "x-skillbroker-error":
            code = v.strip()
    return status, code


def read_answer(s, t0, limit):
    buf = b""
    while time.monotonic() - t0 < limit and b"\r\n\r\n" not in buf:
        r, _, _ = select.select([s], [], [], 0.2)
        if not r:
            continue
        try:
            c = s.recv(4096)
        except OSError:
            c = b""
        if not c:
            break
        buf += c
    return buf


def drip(port, tag):
    req = ("CONNECT allowed.test:%s HTTP/1.1\r\nHost: allowed.test:%s\r\n"
           "X-Tag: %s\r\n\r\n" % (port, port, tag)).encode()
    s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
    t0 = time.monotonic()
    sent, buf, closed = 0, b"", False
    while sent < len(req) and time.monotonic() - t0 < 12:
        try:
            s.send(req[sent:sent + 1])
            sent += 1
        except OSError:
            # closed: its answer may still wait to be read
            buf = read_answer(s, time.monotonic(), 1.0)
            closed = True
            break
        r, _, _ = select.select([s], [], [], 1.0)
        if r:
            buf = read_answer(s, time.monotonic(), 1.0)
            if not buf:
                closed = True
            break
    ms = int((time.monotonic() - t0) * 1000)
    if buf:
        status, code = answer(buf)
    else:
        status, code = ("closed" if closed else "none"), "-"
    print("SLOW drip %s %s %d %d" % (status, code, ms, sent))


def idle():
    s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
    t0 = time.monotonic()
    buf = read_answer(s, t0, 12)
    ms = int((time.monotonic() - t0) * 1000)
    if buf:
        status, code = answer(buf)
    else:
        status, code = ("closed" if ms < 11900 else "none"), "-"
    print("SLOW idle %s %s %d" % (status, code, ms))


def noread(port, size, tag):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(5)
    s.connect(("127.0.0.1", 3128))
    s.sendall(("CONNECT allowed.test:%s HTTP/1.1\r\nHost: allowed.test:%s\r\n"
               "\r\n" % (port, port)).encode())
    buf = read_answer(s, time.monotonic(), 5)
    status, code = answer(buf) if buf else ("closed", "-")
    print("NOREAD %s %s" % (status, code))
    sys.stdout.flush()
    if status != "200":
        return
    s.sendall(("GET /bytes/%s?t=%s HTTP/1.1\r\nHost: allowed.test:%s\r\n\r\n"
               % (size, tag, port)).encode())
    print("NOREAD asked")
    sys.stdout.flush()
    time.sleep(3600)


mode = sys.argv[1]
if mode == "drip":
    drip(sys.argv[2], sys.argv[3])
elif mode == "idle":
    idle()
elif mode == "noread":
    noread(sys.argv[2], sys.argv[3], sys.argv[4])
print("DONE")
