"""Checks that keep bad numbers away from SCIP: problem data and run arguments.

SCIP trusts its input. On this machine (SCIP 10.0, PySCIPOpt 6.3) a NaN objective
coefficient makes ``optimize`` loop (a 3 s time limit ignored: still running at 8 s), a
NaN right-hand side silently drops the row, a NaN upper bound ends in an "error in
input data" traceback, a NaN lower bound spends the whole time limit without a
solution, and a NaN matrix coefficient ends the solve at once without a solution.
So every problem is checked once, when it is built (:class:`lns.core.problem.mip.Problem`
calls :func:`problem_data_error`), and every argument of a run before anything is read.
"""

from __future__ import annotations

import inspect
import math
import numbers

import numpy as np

from lns.core.errors import InvalidArgumentError

#: SCIP's default infinity: it takes any larger magnitude as infinite.
SCIP_INFINITY = 1e20

#: The variable types of a problem (:attr:`lns.core.problem.mip.Problem.var_types`).
BINARY, INTEGER, CONTINUOUS = "B", "I", "C"


_FINITE = ("must be finite", lambda v: np.abs(v) < SCIP_INFINITY)
_BELOW_PLUS_INFINITY = ("must be finite or -inf", lambda v: v < SCIP_INFINITY)
_ABOVE_MINUS_INFINITY = ("must be finite or +inf", lambda v: v > -SCIP_INFINITY)
_VECTOR_RULES = (
    ("objective", "var_names", _FINITE),
    ("lower", "var_names", _BELOW_PLUS_INFINITY),
    ("upper", "var_names", _ABOVE_MINUS_INFINITY),
    ("row_lower", "row_names", _BELOW_PLUS_INFINITY),
    ("row_upper", "row_names", _ABOVE_MINUS_INFINITY),
)


def problem_data_error(problem) -> str | None:
    """The first non-finite or out-of-range entry of a problem's data, as one line, or ``None``.

    Refused: NaN anywhere; objective coefficients, the objective offset and matrix entries
    that are infinite (``|value| >= 1e20``, SCIP's infinity); a lower bound or row lower side
    of ``+inf``, an upper bound or row upper side of ``-inf``; bounds of a binary variable
    outside ``[0, 1]``.

    Parameters
    ----------
    problem : lns.core.problem.mip.Problem
        Its arrays are read, never changed.
    """
    if not abs(problem.objective_offset) < SCIP_INFINITY:
        return f"objective_offset is {problem.objective_offset}; it must be finite"
    for field, labels, (allowed, is_ok) in _VECTOR_RULES:
        values = np.asarray(getattr(problem, field), dtype=float)
        bad = np.flatnonzero(~is_ok(values))  # NaN compares false, so it is always bad
        if len(bad):
            j = bad[0]
            return f"{field}[{j}] ({getattr(problem, labels)[j]}) is {values[j]}; it {allowed}"
    return _matrix_error(problem) or _binary_error(problem)


def _matrix_error(problem) -> str | None:
    matrix = problem.matrix.tocsr()
    bad = np.flatnonzero(~(np.abs(matrix.data) < SCIP_INFINITY))
    if not len(bad):
        return None
    row = int(np.searchsorted(matrix.indptr, bad[0], side="right") - 1)
    column = int(matrix.indices[bad[0]])
    names = f"row {problem.row_names[row]}, column {problem.var_names[column]}"
    value = matrix.data[bad[0]]
    return f"matrix[{row}, {column}] ({names}) is {value}; coefficients must be finite"


def _binary_error(problem) -> str | None:
    binary = np.asarray(problem.var_types) == "B"
    lower, upper = np.asarray(problem.lower, dtype=float), np.asarray(problem.upper, dtype=float)
    bad = np.flatnonzero(binary & ~((0 <= lower) & (lower <= 1) & (0 <= upper) & (upper <= 1)))
    if not len(bad):
        return None
    j = bad[0]
    return (
        f"binary variable {j} ({problem.var_names[j]}) has bounds [{lower[j]}, {upper[j]}]; "
        f"binary bounds must lie in [0, 1]"
    )


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _is_integer(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_real(
    name: str,
    value,
    allowed: str,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    low_open: bool = False,
    none_ok: bool = False,
    infinite_ok: bool = False,
) -> None:
    """Raise :class:`InvalidArgumentError` unless ``value`` is a real number in the given range.

    Parameters
    ----------
    name, allowed : str
        The parameter, and the values allowed in words, for the message.
    low, high : float
        The range; ``high`` is inclusive, ``low`` too unless ``low_open``.
    none_ok, infinite_ok : bool
        Whether ``None`` and ``+-inf`` are accepted (NaN never is).
    """
    if value is None and none_ok:
        return
    valid = (
        _is_real(value)
        and not math.isnan(value)
        and (infinite_ok or math.isfinite(value))
        and (low < value if low_open else low <= value)
        and value <= high
    )
    if not valid:
        raise InvalidArgumentError(f"{name}={value!r} is invalid: {allowed}")


def check_integer(
    name: str,
    value,
    allowed: str,
    *,
    low: int,
    high: float = math.inf,
    also: tuple = (),
    none_ok: bool = False,
) -> None:
    """Raise :class:`InvalidArgumentError` unless ``value`` is an integer from ``low`` to
    ``high`` or in ``also``.

    Booleans are refused although Python counts them as integers.
    """
    if value is None and none_ok:
        return
    if not (_is_integer(value) and (low <= value <= high or value in also)):
        raise InvalidArgumentError(f"{name}={value!r} is invalid: {allowed}")


def check_run_arguments(*, seconds, seed, optimum=None) -> None:
    """Check the arguments of a run (:func:`lns.api.solve`) before anything is read.

    ``seconds``, a budget given as a number (``solve(..., stop=60)``), must be positive;
    ``None`` (the default budget) and ``inf`` (no limit) pass. Zero is refused rather than read
    as "return at once": a run that may not spend any time cannot even read the problem, so it
    could only return no solution, which hides the mistake. ``seed`` is a non-negative integer
    (``None`` is refused: one seed must drive every random choice), ``optimum`` ``None`` or a
    finite number.

    Raises
    ------
    InvalidArgumentError
        One line naming the parameter, the value given and what is allowed.
    """
    check_real(
        "stop",
        seconds,
        "expected seconds > 0 (inf: no limit), a stop rule, or None (the default budget)",
        low=0,
        low_open=True,
        none_ok=True,
        infinite_ok=True,
    )
    check_integer("seed", seed, "expected an integer >= 0", low=0)
    check_real("optimum", optimum, "expected a finite number, or None", none_ok=True)


def check_arguments(what: str, function, *args, **kwargs) -> None:
    """Refuse arguments that do not fit the signature of ``function`` (a class: its constructor),
    before it is called, so that a ``TypeError`` raised by its own code is not taken for them.

    Raises
    ------
    InvalidArgumentError
        An unknown or missing argument; the message starts with ``what``.
    """
    try:
        inspect.signature(function).bind(*args, **kwargs)
    except TypeError as error:
        raise InvalidArgumentError(f"{what}: {error}") from None
