#!/usr/bin/python3
"""netserver.py: the host side of the egress proxy tests (tests/escape/network.sh).

    netserver.py DIR CERT KEY

Three HTTP listeners on 127.0.0.1, each on a free port, and on [::1] at
the same port where IPv6 works: "http" (plain), "https" (TLS with CERT
and KEY) and "other" (plain; no call may reach it). Once all listen,
DIR/ports holds "http N", "https N" and "other N". Every event is a line
of DIR/server.log (opened for appending, so the suite may truncate it):

    open NAME cur=N           a connection arrived (N: how many of NAME's
                              connections the peers hold open now)
    close NAME cur=N          its handler ended
    req NAME METHOD TARGET host=HOST    a request head was read
    sent NAME TARGET BYTES whole|cut    what a response body got out

Paths (a query's t=TAG marks the request for the log; an absolute-form
target is routed by its path):
    /hello?t=TAG     200, "sb-net hello NAME TAG\n"
    /bytes/N?t=TAG   200, N bytes of a fixed pattern, written 64 KiB at a time
    /hold/S?t=TAG    200, headers, then S seconds of nothing, then "held\n"
    anything else    404
Standard library only; run with /usr/bin/python3.
"""
import os
import socket
import socketserver
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler

LOCK = threading.Lock()
LIVE = {}   # listener name -> {dup of each connection's socket}
LOG = None
CHUNK = (b"sb-net bytes 0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN\n" * 1024)


def log(line):
    with LOCK:
        LOG.write(line + "\n")
        LOG.flush()


def peer_open(s):
    """The peer has not closed: no EOF waits on the socket (loopback
    delivers a FIN before the peer's close() returns)."""
    try:
        return s.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def opened(name, sock):
    """Count a new connection. cur counts the connections whose peer has
    not closed: a handler thread that has not yet seen its EOF does not
    make the count higher than what the peer holds open."""
    d = sock.dup()
    with LOCK:
        live = LIVE.setdefault(name, set())
        for x in [x for x in live if not peer_open(x)]:
            live.discard(x)
        live.add(d)
        LOG.write("open %s cur=%d\n" % (name, len(live)))
        LOG.flush()
    return d


def closed(name, d):
    with LOCK:
        live = LIVE.setdefault(name, set())
        live.discard(d)
        LOG.write("close %s cur=%d\n" % (name, len(live)))
        LOG.flush()
    d.close()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 20

    def log_message(self, fmt, *args):
        pass

    def route(self):
        target = self.path
        u = urllib.parse.urlsplit(target)
        tag = urllib.parse.parse_qs(u.query).get("t", ["-"])[0]
        return u.path, tag

    def head(self, length=None):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.send_header("Connection", "close")
        self.end_headers()

    def do_GET(self):
        name = self.server.name
        log("req %s %s %s host=%s" % (name, self.command, self.path,
                                      self.headers.get("Host", "-")))
        self.close_connection = True
        path, tag = self.route()
        if path == "/hello":
            body = ("sb-net hello %s %s\n" % (name, tag)).encode()
            self.head(len(body))
            self.wfile.write(body)
            log("sent %s %s %d whole" % (name, self.path, len(body)))
        elif path.startswith("/bytes/"):
            n = int(path[len("/bytes/"):])
            self.head(n)
            sent = 0
            try:
                while sent < n:
                    k = min(len(CHUNK), n - sent)
                    self.wfile.write(CHUNK[:k])
                    sent += k
            except OSError:
                log("sent %s %s %d cut" % (name, self.path, sent))
                return
            log("sent %s %s %d whole" % (name, self.path, sent))
        elif path.startswith("/hold/"):
            self.head()
            self.wfile.flush()
            time.sleep(float(path[len("/hold/"):]))
            try:
                self.wfile.write(b"held\n")
            except OSError:
                pass
        else:
            self.send_error(404)

    do_HEAD = do_GET
    do_POST = do_GET


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256

    def __init__(self, name, family, addr, tls):
        self.name = name
        self.address_family = family
        self.tls = tls
        socketserver.TCPServer.__init__(self, addr, Handler)

    # The TLS handshake runs in the connection's thread, never in the
    # accept loop; every connection is counted before it.
    def process_request_thread(self, request, client_address):
        d = opened(self.name, request)
        try:
            request.settimeout(20)
            if self.tls is not None:
                request = self.tls.wrap_socket(request, server_side=True)
            self.finish_request(request, client_address)
        except Exception:
            pass
        finally:
            self.shutdown_request(request)
            closed(self.name, d)

    def handle_error(self, request, client_address):
        pass


def serve(srv):
    threading.Thread(target=srv.serve_forever, daemon=True).start()


def main():
    global LOG
    if len(sys.argv) != 4:
        sys.stderr.write("usage: netserver.py DIR CERT KEY\n")
        return 2
    d, cert, key = sys.argv[1:]
    LOG = open(os.path.join(d, "server.log"), "a")
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    ports = []
    for name, ctx in (("http", None), ("https", tls), ("other", None)):
        s4 = Server(name, socket.AF_INET, ("127.0.0.1", 0), ctx)
        port = s4.server_address[1]
        serve(s4)
        try:
            serve(Server(name, socket.AF_INET6, ("::1", port), ctx))
        except OSError:
            pass
        ports.append("%s %d\n" % (name, port))
    tmp = os.path.join(d, "ports.tmp")
    with open(tmp, "w") as f:
        f.write("".join(ports))
    os.rename(tmp, os.path.join(d, "ports"))
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main())
