"""Where the broker's socket is when the caller names none: as skillctl looks for it."""
from __future__ import annotations

import os
from typing import Optional, Union

ENV = "SKILLBROKER_SOCKET"
DEFAULT = "/run/skillbroker/skillbroker.sock"
DEV = "run/skillbroker.sock"  # the `make run` layout, relative to the current directory


def socket_path(path: Optional[Union[str, "os.PathLike[str]"]] = None) -> str:
    """path, else $SKILLBROKER_SOCKET (set and non-empty), else the default,
    unless that does not exist and ./run/skillbroker.sock does."""
    if path is not None:
        return os.fspath(path)
    env = os.environ.get(ENV)
    if env:
        return env
    try:
        os.stat(DEFAULT)
    except FileNotFoundError:
        if os.path.exists(DEV):
            return DEV
    except OSError:
        pass
    return DEFAULT
