"""One copy of a problem for all the workers of a portfolio: its arrays in shared memory.

A portfolio's workers are spawned processes, and each used to unpickle its own copy of the
problem and build its own copy of the matrix by columns (:attr:`Problem.by_column`). On a
problem of millions of nonzeros and many cores that is the matrix, its names and its bounds
once per core. :class:`SharedProblem` puts every array of the problem, the matrix by rows and
by columns and the names (:class:`lns.core.problem.names.Names`) included, into one block of
shared memory; pickled into a worker, it arrives as a :class:`Problem` whose arrays are views
of that block, so the workers hold no copy of their own. The main process keeps the block until
:meth:`SharedProblem.close`, which the portfolio calls when its workers are gone. Where the
shared-memory file system has no room for the block (:func:`shared_or_none`), the workers
unpickle a copy each, as before.
"""

from __future__ import annotations

import logging
import mmap
import os
from dataclasses import dataclass
from multiprocessing import shared_memory

import numpy as np
import scipy.sparse as sp

from lns.core.problem.mip import Problem
from lns.core.problem.names import Names

#: Each array starts at a multiple of this many bytes of the block.
ALIGNMENT = 64
#: Where Linux keeps shared memory (a ``tmpfs``), asked for its free space.
SHARED_MEMORY_DIR = "/dev/shm"

log = logging.getLogger("lns")


@dataclass(frozen=True)
class _Layout:
    """Where each array of a problem lies in the block, and the problem's other fields."""

    arrays: tuple  # (key, dtype string, shape, offset in bytes)
    fields: dict  # name, objective_offset, sense, source, shape


def _arrays(problem: Problem) -> dict:
    """The arrays of ``problem`` that the block holds, by key."""
    by_rows, by_columns = problem.matrix, problem.by_column
    var_names, row_names = Names.of(problem.var_names), Names.of(problem.row_names)
    return {
        "var_types": problem.var_types,
        "lower": problem.lower,
        "upper": problem.upper,
        "objective": problem.objective,
        "row_lower": problem.row_lower,
        "row_upper": problem.row_upper,
        "rows.data": by_rows.data,
        "rows.indices": by_rows.indices,
        "rows.indptr": by_rows.indptr,
        "columns.data": by_columns.data,
        "columns.indices": by_columns.indices,
        "columns.indptr": by_columns.indptr,
        "var_names.buffer": var_names.buffer,
        "var_names.offsets": var_names.offsets,
        "row_names.buffer": row_names.buffer,
        "row_names.offsets": row_names.offsets,
    }


class SharedProblem:
    """A problem's arrays copied into one block of shared memory.

    Parameters
    ----------
    problem : Problem

    Attributes
    ----------
    nbytes : int
        The block's size.
    """

    def __init__(self, problem: Problem):
        arrays = _arrays(problem)
        layout, self.nbytes = _placed(arrays)
        self._block = shared_memory.SharedMemory(create=True, size=self.nbytes)
        assert self._block.buf is not None, "a block just created is open"
        for key, dtype, shape, at in layout:
            _view(self._block.buf, dtype, shape, at)[...] = arrays[key]
        fields = dict(
            name=problem.name,
            objective_offset=problem.objective_offset,
            sense=problem.sense,
            source=problem.source,
            shape=problem.matrix.shape,
        )
        self._layout = _Layout(tuple(layout), fields)

    def __reduce__(self):
        return _attach, (self._block.name, self._layout)

    def close(self) -> None:
        """Release the block (the workers that mapped it must be gone)."""
        self._block.close()
        self._block.unlink()


def _placed(arrays: dict) -> tuple[list, int]:
    """Where each of ``arrays`` starts in a block, ``(key, dtype, shape, offset)``, and the
    block's size."""
    layout, offset = [], 0
    for key, array in arrays.items():
        layout.append((key, array.dtype.str, array.shape, offset))
        offset += -(-array.nbytes // ALIGNMENT) * ALIGNMENT
    return layout, max(offset, 1)


def shared_or_none(problem: Problem) -> SharedProblem | None:
    """A :class:`SharedProblem` of ``problem``, or ``None`` where the shared-memory file system
    (``/dev/shm``) lacks room for it or cannot be asked: a container's is often 64 MB, and
    writing past it kills the process. The workers then unpickle a copy each."""
    needed = _placed(_arrays(problem))[1]
    try:
        stats = os.statvfs(SHARED_MEMORY_DIR)
    except OSError:
        return None
    if stats.f_bavail * stats.f_frsize < needed:
        log.info(
            "%s: %s has %d MB free, the problem needs %d MB: each worker gets its own copy",
            problem.name,
            SHARED_MEMORY_DIR,
            stats.f_bavail * stats.f_frsize // 2**20,
            needed // 2**20,
        )
        return None
    return SharedProblem(problem)


def _view(buffer, dtype: str, shape: tuple, offset: int) -> np.ndarray:
    """The array of ``dtype`` and ``shape`` at ``offset`` bytes into ``buffer``."""
    count = int(np.prod(shape))
    if count == 0:
        return np.empty(shape, dtype=dtype)
    return np.frombuffer(buffer, dtype=dtype, count=count, offset=offset).reshape(shape)


def _attach(name: str, layout: _Layout) -> Problem:
    """In a worker: the problem whose arrays are views of the block ``name``."""
    # A plain mapping, not a SharedMemory: that one closes its mapping when collected, at the
    # process's exit too, and fails there ("cannot close exported pointers exist") while the
    # arrays still view it. The arrays keep the mapping; the main process's resource tracker
    # unlinks the block if the main process dies without closing it.
    descriptor = os.open(os.path.join(SHARED_MEMORY_DIR, name.lstrip("/")), os.O_RDWR)
    try:
        mapping = mmap.mmap(descriptor, os.fstat(descriptor).st_size)
    finally:
        os.close(descriptor)
    arrays = {key: _view(mapping, dtype, shape, at) for key, dtype, shape, at in layout.arrays}
    fields = dict(layout.fields)
    shape = fields.pop("shape")
    problem = Problem(
        var_names=Names(arrays["var_names.buffer"], arrays["var_names.offsets"]),
        var_types=arrays["var_types"],
        lower=arrays["lower"],
        upper=arrays["upper"],
        objective=arrays["objective"],
        matrix=_matrix(sp.csr_matrix, arrays, "rows", shape),
        row_lower=arrays["row_lower"],
        row_upper=arrays["row_upper"],
        row_names=Names(arrays["row_names.buffer"], arrays["row_names.offsets"]),
        **fields,
    )
    # The cached property's value, set before its first use: the shared copy, not a new one.
    problem.__dict__["by_column"] = _matrix(sp.csc_matrix, arrays, "columns", shape)
    return problem


def _matrix(kind, arrays: dict, prefix: str, shape: tuple):
    """The sparse matrix of ``kind`` on the arrays ``prefix.data``, ``.indices``, ``.indptr``."""
    parts = (arrays[f"{prefix}.{part}"] for part in ("data", "indices", "indptr"))
    return kind(tuple(parts), shape=shape, copy=False)
