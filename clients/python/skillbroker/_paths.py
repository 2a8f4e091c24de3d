"""Where the broker's socket is when the caller names none: the environment's, or the installed one."""
from __future__ import annotations

import os
from typing import Optional, Union

ENV = "SKILLBROKER_SOCKET"
DEFAULT = "/run/skillbroker/skillbroker.sock"


def socket_path(path: Optional[Union[str, "os.PathLike[str]"]] = None) -> str:
    """path, else $SKILLBROKER_SOCKET (set and non-empty), else the default.

    Never a path relative to the current directory: whoever could plant a
    socket there would get the calls' stdin, environment and files.
    """
    if path is not None:
        return os.fspath(path)
    env = os.environ.get(ENV)
    if env:
        return env
    return DEFAULT
