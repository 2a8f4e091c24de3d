#!/usr/bin/python3
"""malformed.py HTTP OTHER TAG [literals]: malformed and ambiguous
requests to the proxy at 127.0.0.1:3128, each on a connection of its
own. HTTP is the test server's plain port (allowed.test:HTTP and
127.0.0.1:HTTP are granted), OTHER a port no request may reach. With
"literals", IP literals instead: 127.0.0.2, and 127.0.0.1 at OTHER in
the spellings inet_aton also takes, and the listed 127.0.0.1:HTTP last
(case lit_listed, which must work). Each case is one line

    CASE NAME STATUS CODE MS

STATUS is the answer's HTTP status, "closed" (the proxy closed, or reset,
without an answer) or "none" (nothing within 6 s); CODE its
X-Skillbroker-Error ("-" when none); MS how long the answer took. A
CONNECT that is answered 200 sends "GET /hello?t=TAG-NAME" into the
tunnel, so that wherever it leads, the test server logs the tag. The
last case, "after", is a well-formed request that must work (BODY line).
"""
import socket
import sys
import time

HTTP, OTHER, TAG = sys.argv[1], sys.argv[2], sys.argv[3]
A = "allowed.test:" + HTTP
O = "other.test:" + OTHER


def t(name):
    return "/hello?t=%s-%s" % (TAG, name)


def get(url, name, extra="", eol="\r\n"):
    return ("GET %s%s HTTP/1.1%sHost: %s%s%s%s" % (
        url, t(name), eol, url.split("/")[2], eol, extra, eol)).encode("utf-8")


def connect(target, eol="\r\n"):
    return ("CONNECT %s HTTP/1.1%sHost: %s%s%s" % (target, eol, target, eol,
                                                    eol)).encode("utf-8", "surrogateescape")


CASES = [
    ("garbage", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 garbage\r\n\r\n"),
    ("connect_no_target", b"CONNECT HTTP/1.1\r\n\r\n"),
    ("connect_empty_target", b"CONNECT  HTTP/1.1\r\n\r\n"),
    ("connect_no_port", connect("allowed.test")),
    ("connect_empty_port", connect("allowed.test:")),
    ("port_0", connect("allowed.test:0")),
    ("port_99999", connect("allowed.test:99999")),
    ("port_neg", connect("allowed.test:-1")),
    ("port_wrap", connect("127.0.0.1:%d" % (int(HTTP) + 65536))),
    ("nul_in_line", b"CONNECT allowed.test:" + HTTP.encode() +
     b"\x00.other.test:" + OTHER.encode() + b" HTTP/1.1\r\n\r\n"),
    ("big_head", get("http://" + A, "big_head",
                     "X-Fill: " + "a" * 20480 + "\r\n")),
    ("long_line", ("GET http://%s%s&pad=%s HTTP/1.1\r\n\r\n" % (
        A, t("long_line"), "a" * 20480)).encode()),
    ("many_headers", get("http://" + A, "many_headers",
                         "".join("X-H%d: v\r\n" % i for i in range(1500)))),
    ("connect_v6", connect("[::1]:" + HTTP)),
    ("connect_v6_mapped", connect("[::ffff:127.0.0.1]:" + OTHER)),
    ("host_nonascii_raw", b"CONNECT allowed\xff.test:" + HTTP.encode() +
     b" HTTP/1.1\r\n\r\n"),
    ("host_nonascii_utf8", connect("allow\u00e9d.test:" + HTTP)),
    ("host_badchars", connect("allowed_te$t:" + HTTP)),
    ("host_too_long", connect(("a" * 63 + ".") * 8 + "test:" + HTTP)),
    ("userinfo", get("http://allowed.test:%s@%s" % (HTTP, O), "userinfo")),
    ("userinfo_connect", connect("user@" + A)),
    ("fragment", ("GET http://%s#@%s%s HTTP/1.1\r\n\r\n" % (
        O, A, t("fragment"))).encode()),
    ("backslash", ("GET http://%s\\@%s%s HTTP/1.1\r\n\r\n" % (
        O, A, t("backslash"))).encode()),
    ("lf_only_other", get("http://" + O, "lf_only_other", eol="\n")),
    ("lf_only_allowed", get("http://" + A, "lf_only_allowed", eol="\n")),
    ("origin_form", ("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (
        t("origin_form"), O)).encode()),
    ("host_mismatch", ("GET http://%s%s HTTP/1.1\r\nHost: %s\r\n\r\n" % (
        A, t("host_mismatch"), O)).encode()),
    ("pipelined", get("http://" + A, "pipelined1") + get("http://" + O, "pipelined2")),
    ("connect_absolute", connect("http://%s/" % A)),
    ("http09", ("GET http://%s%s\r\n\r\n" % (A, t("http09"))).encode()),
    ("after", get("http://" + A, "after")),
]

LITERALS = [
    ("lit_127_0_0_2", connect("127.0.0.2:" + HTTP)),
    ("lit_127_0_0_1_other", connect("127.0.0.1:" + OTHER)),
    ("lit_127_1", connect("127.1:" + OTHER)),
    ("lit_decimal", connect("2130706433:" + OTHER)),
    ("lit_hex", connect("0x7f000001:" + OTHER)),
    ("lit_octal", connect("0177.0.0.1:" + OTHER)),
    ("lit_v6_mapped", connect("[::ffff:127.0.0.1]:" + OTHER)),
    ("lit_v6_loopback", connect("[::1]:" + OTHER)),
    ("lit_trailing_dot", connect("127.0.0.1.:" + OTHER)),
    ("lit_zero", connect("0.0.0.0:" + OTHER)),
    ("lit_zero_short", connect("0:" + OTHER)),
    ("get_127_1", get("http://127.1:" + OTHER, "get_127_1")),
    ("get_decimal", get("http://2130706433:" + OTHER, "get_decimal")),
    ("lit_listed", connect("127.0.0.1:" + HTTP)),
]
if len(sys.argv) > 4 and sys.argv[4] == "literals":
    CASES = LITERALS


def head_of(buf):
    """(status, X-Skillbroker-Error, body) of an answer's bytes."""
    text = buf.decode("latin-1")
    lines = text.replace("\r\n", "\n").split("\n")
    parts = lines[0].split(" ")
    status = parts[1] if len(parts) > 1 and parts[0].startswith("HTTP/") else "bad"
    code = "-"
    body = ""
    for i, l in enumerate(lines[1:], 1):
        if l == "":
            body = "\n".join(lines[i + 1:])
            break
        k, _, v = l.partition(":")
        if k.strip().lower() == "x-skillbroker-error":
            code = v.strip()
    return status, code, body


def run(name, data):
    t0 = time.monotonic()
    s = socket.create_connection(("127.0.0.1", 3128), timeout=6)
    buf = b""
    try:
        try:
            s.sendall(data)
        except OSError:
            pass
        while b"\r\n\r\n" not in buf and b"\n\n" not in buf:
            c = s.recv(65536)
            if not c:
                break
            buf += c
    except socket.timeout:
        pass
    except OSError:
        pass
    ms = int((time.monotonic() - t0) * 1000)
    if not buf:
        st = "closed" if time.monotonic() - t0 < 5.9 else "none"
        print("CASE %s %s - %d" % (name, st, ms))
        s.close()
        return
    status, code, body = head_of(buf)
    if status == "200" and data.startswith(b"CONNECT"):
        try:
            s.sendall(("GET %s HTTP/1.0\r\nHost: x\r\n\r\n" % t(name)).encode())
            s.recv(4096)
        except OSError:
            pass
    elif status == "200":
        try:
            while True:
                c = s.recv(65536)
                if not c:
                    break
                buf += c
        except OSError:
            pass
        status, code, body = head_of(buf)
    print("CASE %s %s %s %d" % (name, status, code, ms))
    if name == "after":
        print("BODY", body.strip())
    sys.stdout.flush()
    s.close()


for name, data in CASES:
    try:
        run(name, data)
    except OSError as e:
        print("CASE %s connect-failed %s 0" % (name, type(e).__name__))
    sys.stdout.flush()
print("DONE")
