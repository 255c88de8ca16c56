"""Start spawned worker processes without running the calling script again.

A process started with the ``spawn`` method first imports the parent's main module (the
script, or the module run with ``python -m``) under the name ``__mp_main__``, so that objects
defined there can be unpickled. A script that calls :func:`lns.solve` at its top level, with
no ``if __name__ == "__main__":`` guard, then calls it again in every worker. The portfolio's
workers need the main module only when what they are sent refers to it (a selector class or
a stop function defined in the script, :func:`refers_to_main`): otherwise
:func:`main_module_skipped` tells
``multiprocessing`` that the main module is ``__main__`` itself, which a spawned process does
not import (``multiprocessing.spawn``), and no guard is needed.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import io
import pickle
import sys
import types
from collections.abc import Iterator


class _MainReferenceFinder(pickle.Pickler):
    """A pickler that writes nothing and notes whether a class or function of ``__main__`` is
    among the pickled objects (pickle refers to those by module and name)."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), protocol=pickle.HIGHEST_PROTOCOL)
        self.found = False

    def reducer_override(self, obj):
        if isinstance(obj, type | types.FunctionType) and obj.__module__ == "__main__":
            self.found = True
        return NotImplemented


def refers_to_main(payload: object) -> bool:
    """Whether pickling ``payload`` needs the main module (also when it cannot be pickled
    here: then the safe answer is yes)."""
    finder = _MainReferenceFinder()
    try:
        finder.dump(payload)
    except Exception:
        return True
    return finder.found


@contextlib.contextmanager
def main_module_skipped(needed: bool) -> Iterator[None]:
    """While in the block, processes spawned do not import the main module, unless it is
    ``needed`` (``refers_to_main`` of what they will be sent)."""
    main = sys.modules.get("__main__")
    if main is None or needed:
        yield
        return
    original = getattr(main, "__spec__", None)
    main.__spec__ = importlib.machinery.ModuleSpec("__main__", None)
    try:
        yield
    finally:
        main.__spec__ = original
