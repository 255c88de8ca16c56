"""What every command-line app shares: the config folder and turning errors into one line."""
from __future__ import annotations

import functools
import sys

from configs import CONFIG_DIR
from lns.core.errors import LNSError

CONFIG_PATH = str(CONFIG_DIR)


def exit_on_error(app: str):
    """Decorate a Hydra task so that a project error prints ``app: error: ...`` and exits with 2."""

    def decorate(task):
        @functools.wraps(task)
        def wrapper(*args, **kwargs):
            try:
                return task(*args, **kwargs)
            except (LNSError, ValueError, TypeError) as error:
                print(f"{app}: error: {error}", file=sys.stderr)
                sys.exit(2)

        return wrapper

    return decorate
