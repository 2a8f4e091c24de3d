"""What the live tests share: the daemon's socket from SKILLBROKER_SOCKET, the skip when it is unset, and session clean-up."""
from __future__ import annotations

import asyncio
import os
import sys
import time
import unittest
import uuid
from typing import Awaitable, Callable, TypeVar

import skillbroker as sb

SOCKET = os.environ.get("SKILLBROKER_SOCKET", "")
REASON = ("SKILLBROKER_SOCKET is not set: the live tests need a running daemon with the shared "
          "client policy (bash tests/clients/run.sh c03_python starts one)")
if not SOCKET:
    print("skipping the live tests: " + REASON, file=sys.stderr)

C = TypeVar("C", bound=type)


def live(cls: C) -> C:
    """Skip a TestCase (printing why, once) unless a daemon's socket is given."""
    return unittest.skipUnless(SOCKET, REASON)(cls)


def session(tag: str) -> str:
    """A session name no other test run uses (sessions are per uid and outlive connections)."""
    return "py-%s-%s" % (tag, uuid.uuid4().hex[:8])


def end_quietly(end: Callable[[str], object], name: str) -> None:
    """End a session, whatever is left of it (the daemon bounds sessions per uid);
    a call still winding down (a cancelled one) makes it bad_request a moment."""
    for _ in range(40):
        try:
            end(name)
        except sb.BadRequest:
            time.sleep(0.05)
            continue
        except Exception:
            pass
        return


async def end_quietly_async(end: Callable[[str], Awaitable[object]], name: str) -> None:
    """end_quietly for the AsyncClient."""
    for _ in range(40):
        try:
            await end(name)
        except sb.BadRequest:
            await asyncio.sleep(0.05)
            continue
        except Exception:
            pass
        return
