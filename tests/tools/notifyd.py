#!/usr/bin/python3
"""notifyd.py: a test tool that plays systemd's side of sd_notify(3).

usage: notifyd.py ADDRESS LOG [CMD ARG...]

Binds a datagram socket at ADDRESS (a path, or "@name" for an abstract
socket, as $NOTIFY_SOCKET writes them) and appends each datagram it
receives to LOG as one line, its "KEY=value" lines joined by " | ".
On the first datagram that holds READY=1 it runs CMD at once (at most
5 s) and appends "cmd rc=N" to LOG: what a unit ordered after the
service would do first. Runs until killed; LOG is flushed per line.
"""
import socket
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    addr, log = sys.argv[1], sys.argv[2]
    cmd = sys.argv[3:]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + addr[1:] if addr.startswith("@") else addr)
    ran = False
    with open(log, "a", buffering=1) as out:
        out.write("listening\n")
        while True:
            data = sock.recv(4096).decode("utf-8", "replace")
            lines = data.split("\n")
            out.write(" | ".join(lines) + "\n")
            if cmd and not ran and "READY=1" in lines:
                ran = True
                try:
                    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL,
                                        timeout=5).returncode
                except subprocess.TimeoutExpired:
                    rc = "timeout"
                out.write("cmd rc=%s\n" % rc)


if __name__ == "__main__":
    sys.exit(main())
