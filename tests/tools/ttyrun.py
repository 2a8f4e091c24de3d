#!/usr/bin/python3
"""ttyrun.py: run a command on a pseudo-terminal and answer its prompts.

usage: ttyrun.py [-t TIMEOUT_S] [PROMPT ANSWER]... -- COMMAND [ARG...]

COMMAND runs with a new pty as its controlling terminal and as its
stdin, stdout and stderr. Each time its output shows the next PROMPT (a
literal string), ANSWER and a newline are typed, in order. Everything it
wrote goes to stdout; the exit status is the command's (128+N for a
signal N), or 124 when TIMEOUT_S (default 30) passes first.
"""
import os
import pty
import select
import sys
import time


def main():
    args = sys.argv[1:]
    limit = 30.0
    if args[:1] == ["-t"]:
        limit = float(args[1])
        args = args[2:]
    sep = args.index("--")
    pairs = list(zip(args[:sep:2], args[1:sep:2]))
    cmd = args[sep + 1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    seen = b""
    out = b""
    t0 = time.monotonic()
    while True:
        left = limit - (time.monotonic() - t0)
        if left <= 0:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            sys.stdout.write(out.decode("utf-8", "replace"))
            sys.exit(124)
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the command closed the terminal
            chunk = b""
        if not chunk:
            break
        out += chunk
        seen += chunk
        if pairs and pairs[0][0].encode() in seen:
            os.write(fd, pairs[0][1].encode() + b"\n")
            seen = b""
            pairs.pop(0)
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(out.decode("utf-8", "replace"))
    if os.WIFSIGNALED(status):
        sys.exit(128 + os.WTERMSIG(status))
    sys.exit(os.WEXITSTATUS(status))


if __name__ == "__main__":
    main()
