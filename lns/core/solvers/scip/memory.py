"""Give the memory SCIP no longer uses back to the system between the solves of one model.

SCIP allocates most of its data from block memory: per element size, a list of chunks, each
holding many elements. ``freeTransform`` returns the transformed problem's elements to their
chunks, but SCIP hands unused chunks back only where one element size holds many of them. The
LNS loop solves one model again and again with different fixings, so the presolved sub-problems
differ in size (and so, likely, do the sizes of their arrays): on air05 with node limit 50 per
solve and half the variables fixed, SCIP's allocated block memory grew without bound while the
block memory in use stayed at 8 MB, and the process grew with it. SCIP's garbage collection
(``SCIPcollectMemoryGarbage``) frees those chunks.

Then the C library's allocator: after an occasional solve that needs a lot of memory (one root
node of an air05 sub-problem took 226 MB), glibc keeps the freed pages in the process unless
asked to return them (``malloc_trim``), so the resident size climbs to the largest peak so far.

:class:`MemoryRelease` does both every few solves; each costs a few milliseconds. Measure with
``python -m pytest benchmarks/test_sub_solve_overhead.py -k memory --full`` (the bare
model's loop shows each step alone).

pyscipopt does not wrap SCIP's collection, so both are called through ``ctypes``: SCIP's in the
library that pyscipopt's extension module links to, ``malloc_trim`` in the C library (glibc
only; elsewhere it is skipped).
"""

from __future__ import annotations

import ctypes
import functools
import logging
from collections.abc import Callable

from lns.core.errors import InvalidArgumentError

log = logging.getLogger("lns")


@functools.lru_cache(maxsize=1)
def _collector():
    """A function collecting the garbage of a ``pyscipopt.Model``'s SCIP, or ``None``.

    It calls ``SCIPcollectMemoryGarbage(scip)``, or where libscip lacks it (older SCIP) the same
    collection of the problem's block memory,
    ``BMSgarbagecollectBlockMemory_call(SCIPblkmem(scip))``.
    """
    try:
        import pyscipopt.scip

        if not hasattr(pyscipopt.scip.Model, "to_ptr"):
            raise ImportError("pyscipopt.Model has no to_ptr")
        library = ctypes.CDLL(pyscipopt.scip.__file__)  # looks symbols up in libscip too
    except (ImportError, OSError) as error:
        log.debug("SCIP's memory garbage collection is unavailable: %s", error)
        return None
    collect: Callable[[int | None], object]
    if hasattr(library, "SCIPcollectMemoryGarbage"):
        collect = library.SCIPcollectMemoryGarbage
        collect.argtypes, collect.restype = [ctypes.c_void_p], None
    elif hasattr(library, "SCIPblkmem") and hasattr(library, "BMSgarbagecollectBlockMemory_call"):
        blkmem, collect_blocks = library.SCIPblkmem, library.BMSgarbagecollectBlockMemory_call
        blkmem.argtypes, blkmem.restype = [ctypes.c_void_p], ctypes.c_void_p
        collect_blocks.argtypes, collect_blocks.restype = [ctypes.c_void_p], None

        def collect_blocks_of(scip):
            collect_blocks(blkmem(scip))

        collect = collect_blocks_of
    else:
        log.debug("SCIP's memory garbage collection is unavailable: libscip does not export it")
        return None
    pointer = ctypes.pythonapi.PyCapsule_GetPointer
    pointer.argtypes, pointer.restype = [ctypes.py_object, ctypes.c_char_p], ctypes.c_void_p
    return lambda model: collect(pointer(model.to_ptr(False), b"scip"))


def collect_memory_garbage(model) -> bool:
    """Free the block memory chunks SCIP keeps unused; return whether the collection ran.

    Call it only while no solve of ``model`` is running (e.g. right after ``freeTransform``):
    SCIP's block memory is not thread-safe.
    """
    collect = _collector()
    if collect is None:
        return False
    collect(model)
    return True


@functools.lru_cache(maxsize=1)
def _malloc_trim():
    """glibc's ``malloc_trim`` as a ``ctypes`` function, or ``None`` on other C libraries."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def trim_heap() -> bool:
    """Return the C heap's free pages to the system (glibc); return whether it could."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


class MemoryRelease:
    """Collects SCIP's unused block memory and trims the C heap after every ``every`` solves.

    Parameters
    ----------
    every : int
        Solves between two releases (1: after each).
    """

    def __init__(self, every: int = 10):
        if every < 1:
            raise InvalidArgumentError(f"every must be at least 1, got {every}")
        self.every = every
        self.solves = 0

    def after_free_transform(self, model) -> None:
        """Count a solve of ``model`` (now freed of its transformed problem); release if due."""
        self.solves += 1
        if self.solves % self.every == 0:
            collect_memory_garbage(model)
            trim_heap()
