"""Write a problem as an MPS file without building a SCIP model first.

Writing through SCIP builds its model one constraint at a time (minutes on millions of rows,
``benchmarks/test_problem_io.py``); here the lines come from the problem's arrays directly. The
layout is SCIP's fixed one (names in 8 columns, values right-aligned in 12), each field widened
where its text is longer: a widened field reaches the blank columns that tell SCIP's reader to read
the rest of the file as free MPS, and every token is separated by blanks, so that SCIP, OR-Tools
and :mod:`lns.core.problem.mps` read the same problem, the variables in the problem's order.

Every bound is written, also the ones readers default differently (an integer column is binary
to SCIP, unbounded above to others). Values are written in Python's shortest round-trip form, so
that reading gives the same floats. A problem this layout cannot carry exactly returns
``False`` from :func:`write_mps` and is written by SCIP: a name that is empty, holds a blank or
starts with ``$`` (a comment to SCIP's reader), a row free on both sides, a binary whose bounds
are not ``[0, 1]``, ``[0, u]`` or fixed, a range whose sides do not come back exactly.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from lns.core.problem.names import Names
from lns.core.problem.validation import BINARY, CONTINUOUS

#: Names of the objective row, tried in turn until one is not a row's name.
_OBJECTIVE_NAMES = ("Obj", "OBJ", "obj_row")
#: SCIP's longest name, in bytes.
_LONGEST_NAME = 255


def write_mps(problem, path: Path) -> bool:
    """Write ``problem`` (a :class:`~lns.core.problem.mip.Problem`) to ``path``, gzip-compressed
    (level 6, no time stamp) where it ends with ``.gz``; ``False``, writing nothing, where the
    layout cannot carry it (see the module)."""
    lines = _lines(problem)
    if lines is None:
        return False
    if path.suffix == ".gz":
        with (
            open(path, "wb") as target,
            gzip.GzipFile(filename="", mode="wb", fileobj=target, mtime=0, compresslevel=6) as raw,
            io.TextIOWrapper(raw, encoding="utf-8", newline="\n") as text,
        ):
            text.writelines(lines)
    else:
        with open(path, "w", encoding="utf-8", newline="\n") as text:
            text.writelines(lines)
    return True


def _lines(problem) -> Iterator[str] | None:
    """The file's lines, or ``None`` where the layout cannot carry the problem."""
    if not (_plain(problem.var_names) and _plain(problem.row_names)):
        return None
    lower, upper = problem.row_lower, problem.row_upper
    if np.any(np.isinf(lower) & np.isinf(upper)):
        return None
    ranged = np.isfinite(lower) & np.isfinite(upper) & (lower != upper)
    if np.any(lower[ranged] + (upper[ranged] - lower[ranged]) != upper[ranged]):
        return None
    binary = problem.var_types == BINARY
    lb, ub = problem.lower[binary], problem.upper[binary]
    if not np.all(((lb == 0) & (ub <= 1)) | (lb == ub)):
        return None
    objective = next((name for name in _OBJECTIVE_NAMES if name not in problem.row_names), None)
    if objective is None:
        return None
    return _text(problem, objective, ranged)


def _plain(names: Names) -> bool:
    """Whether the layout carries every one of ``names``: not empty, at most
    :data:`_LONGEST_NAME` bytes, no byte a blank (or control character), not a ``$`` first."""
    lengths = np.diff(names.offsets)
    if len(lengths) and not 1 <= lengths.min() <= lengths.max() <= _LONGEST_NAME:
        return False
    return not (np.any(names.buffer <= 32) or np.any(names.buffer[names.offsets[:-1]] == ord("$")))


def _text(problem, objective: str, ranged: np.ndarray) -> Iterator[str]:
    yield f"NAME          {problem.name}\n"
    if problem.sense == "maximize":
        yield "OBJSENSE\n    MAX\n"
    yield from _rows(problem, objective)
    yield from _columns(problem, objective)
    yield from _sides(problem, objective, ranged)
    yield from _bounds(problem)
    yield "ENDATA\n"


def _rows(problem, objective: str) -> Iterator[str]:
    yield "ROWS\n"
    yield f" N  {objective}\n"
    kinds = np.where(
        problem.row_lower == problem.row_upper,
        "E",
        np.where(np.isfinite(problem.row_lower), "G", "L"),
    )
    for kind, name in zip(kinds.tolist(), problem.row_names, strict=True):
        yield f" {kind}  {name}\n"


def _columns(problem, objective: str) -> Iterator[str]:
    yield "COLUMNS\n"
    matrix = problem.by_column
    indptr, rows, values = matrix.indptr.tolist(), matrix.indices.tolist(), matrix.data.tolist()
    row_names, costs = list(problem.row_names), problem.objective.tolist()
    integer = (problem.var_types != CONTINUOUS).tolist()
    inside = False
    for j, name in enumerate(problem.var_names):
        if integer[j] != inside:
            inside = integer[j]
            yield f"    MARKER    'MARKER'                 '{'INTORG' if inside else 'INTEND'}'\n"
        begin, end = indptr[j], indptr[j + 1]
        entries = [(objective, costs[j])] if costs[j] or begin == end else []  # one line at least
        column = zip(rows[begin:end], values[begin:end], strict=True)
        entries += [(row_names[i], a) for i, a in column]
        for k in range(0, len(entries), 2):
            yield _entry_line(name, entries[k : k + 2])
    if inside:
        yield "    MARKER    'MARKER'                 'INTEND'\n"


def _sides(problem, objective: str, ranged: np.ndarray) -> Iterator[str]:
    lower, upper = problem.row_lower, problem.row_upper
    rhs = np.where(np.isfinite(lower), lower, upper)
    entries = [(objective, -problem.objective_offset)] if problem.objective_offset else []
    entries += [(problem.row_names[i], rhs[i]) for i in np.flatnonzero(rhs != 0).tolist()]
    yield "RHS\n"
    for k in range(0, len(entries), 2):
        yield _entry_line("RHS", entries[k : k + 2])
    if ranged.any():
        yield "RANGES\n"
        widths = [
            (problem.row_names[i], upper[i] - lower[i]) for i in np.flatnonzero(ranged).tolist()
        ]
        for k in range(0, len(widths), 2):
            yield _entry_line("RNG", widths[k : k + 2])


def _bounds(problem) -> Iterator[str]:
    """Every column's bounds, spelled so that each reader lands on them: a binary ``BV`` (or its
    ``UP``, ``FX``), a general integer ``LI``/``MI`` then ``UI``/``PL`` (a first lower bound makes
    SCIP's binary default a general integer), a continuous column what differs from ``[0, inf)``."""
    yield "BOUNDS\n"
    types = problem.var_types.tolist()
    lowers, uppers = problem.lower.tolist(), problem.upper.tolist()
    for name, kind, lb, ub in zip(problem.var_names, types, lowers, uppers, strict=True):
        if kind == BINARY:
            if lb == ub:
                yield _bound("FX", name, lb)
            else:
                yield _bound("BV", name) if ub == 1 else _bound("UP", name, ub)
        elif kind == CONTINUOUS:
            if lb == ub:
                yield _bound("FX", name, lb)
                continue
            if lb != 0:
                yield _bound("MI", name) if lb == -np.inf else _bound("LO", name, lb)
            if ub != np.inf:
                yield _bound("UP", name, ub)
        else:
            yield _bound("MI", name) if lb == -np.inf else _bound("LI", name, lb)
            yield _bound("PL", name) if ub == np.inf else _bound("UI", name, ub)


def _entry_line(name: str, entries: list) -> str:
    """A COLUMNS, RHS or RANGES line: ``name`` and one or two ``(row, value)`` entries."""
    line = f"    {name:<8}  {entries[0][0]:<8}  {_number(entries[0][1]):>12}"
    if len(entries) > 1:
        line += f"   {entries[1][0]:<8}  {_number(entries[1][1]):>12}"
    return line + "\n"


def _bound(kind: str, name: str, value: float | None = None) -> str:
    line = f" {kind} Bound     {name:<8}"
    return line + (f"  {_number(value):>12}\n" if value is not None else "\n")


def _number(value: float) -> str:
    """The shortest text that reads back as ``value`` (``1`` for ``1.0``)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text
