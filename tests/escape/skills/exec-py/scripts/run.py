#!/usr/bin/env python3
# The interpreter (through env) is all this skill may execute: its C
# extensions load, but no other program starts, nor a memfd.
import os
import subprocess
import sys

import hashlib
import json
import ssl

print("IMPORTED ssl %s json %s sha256 %s" % (
    ssl.OPENSSL_VERSION.split()[0], json.dumps([1]),
    hashlib.sha256(b"").hexdigest()[:8]))
sys.stdout.flush()


def attempt(what, argv, marker="sb-ran"):
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=10)
        out = (r.stdout + r.stderr).strip().replace("\n", " ")[:160]
        if marker in r.stdout:
            print("ESCAPED %s: %s" % (what, out))
        else:
            print("BLOCKED %s: exit %d %s" % (what, r.returncode, out))
    except OSError as e:
        print("BLOCKED %s: %s" % (what, e))
    sys.stdout.flush()


attempt("subprocess /bin/sh", ["/bin/sh", "-c", "echo sb-ran"])
attempt("subprocess env sh", ["/usr/bin/env", "sh", "-c", "echo sb-ran"])
attempt("subprocess id", ["id"], "uid=")
rc = os.system("echo sb-ran")
print("BLOCKED os.system: %d" % rc if rc != 0 else "ESCAPED os.system ran")
sys.stdout.flush()

# An executable memfd holding a program (the copy of one it may read).
try:
    fd = os.memfd_create("sb", 0)
    with open("/usr/bin/id", "rb") as f:
        os.write(fd, f.read())
    pid = os.fork()
    if pid == 0:
        try:
            os.execv("/proc/self/fd/%d" % fd, ["id"])
        except OSError as e:
            print("BLOCKED memfd exec: %s" % e)
            sys.stdout.flush()
        os._exit(0)
    os.waitpid(pid, 0)
except OSError as e:
    print("BLOCKED memfd: %s" % e)
try:
    os.close(os.memfd_create("sbx", 0x0010))  # MFD_EXEC
    print("ESCAPED memfd_create MFD_EXEC")
except OSError as e:
    print("BLOCKED memfd_create MFD_EXEC: %s" % e)
print("DONE")
