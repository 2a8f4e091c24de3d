#!/usr/bin/python3
# Run by python3, its declared interpreter, this entry must not be able
# to execute itself (it stays on the noexec skill mount, and Landlock
# gives it no execute right), though it is executable and its "#!" line
# names the very interpreter the call may run; nor sh, which nothing
# grants.
import os
import subprocess
import sys

if os.environ.get("SB_NESTED") == "1":
    print("sb-ran")
    sys.exit(0)


def try_run(what, argv, allowed=False):
    env = dict(os.environ, SB_NESTED="1")
    try:
        out = subprocess.run(argv, capture_output=True, timeout=10, env=env)
        text = (out.stdout + out.stderr).decode(errors="replace")
        ran = "sb-ran" in text
    except OSError as e:
        text, ran = str(e), False
    if ran:
        print("%s %s" % ("RAN" if allowed else "ESCAPED", what))
    else:
        print("%s %s: %.120s" % ("UNEXPECTED" if allowed else "BLOCKED",
                                 what, text))


print("INFO argv0 %s cwd %s" % (sys.argv[0], os.getcwd()))
try_run("exec the entry", ["/skill/scripts/probe.py"])
try_run("exec sh", ["/bin/sh", "-c", "echo sb-ran"])
try_run("python3 the entry", [sys.executable, "/skill/scripts/probe.py"],
        allowed=True)
print("RAN python3 entry")
print("DONE")
