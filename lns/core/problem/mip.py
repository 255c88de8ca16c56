"""One representation of a mixed-integer linear program, used everywhere.

A :class:`Problem` holds arrays: variables (names, types, bounds), the objective
with its sense and offset, and the linear constraints as a CSR matrix with row
bounds ``row_lower <= A x <= row_upper``. It is read from anything SCIP reads
(``.mps``, ``.mps.gz``, ``.lp``, ...) and can build a fresh SCIP model of itself.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import itertools
import os
import shutil
import sys
import tempfile
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from lns.core.errors import (
    BuildStoppedError,
    InvalidProblemDataError,
    ProblemReadError,
    UnsupportedProblemError,
)
from lns.core.problem.file_numbers import check_file_numbers
from lns.core.problem.mps import read_mps
from lns.core.problem.mps_writer import write_mps
from lns.core.problem.names import Names
from lns.core.problem.validation import (
    BINARY,
    CONTINUOUS,
    INTEGER,
    SCIP_INFINITY,
    problem_data_error,
)

_SCIP_TYPES = {
    "BINARY": BINARY,
    "INTEGER": INTEGER,
    "CONTINUOUS": CONTINUOUS,
    "IMPLINT": CONTINUOUS,
}
_LINEAR_HANDLERS = {"linear", "setppc", "logicor", "knapsack", "varbound"}


@dataclass(frozen=True)
class Feasibility:
    """How far a point is from satisfying a problem.

    Attributes
    ----------
    max_row_violation : float
        Largest violation of a row bound, relative to ``max(1, |bound|)``.
    max_bound_violation : float
        Largest violation of a variable bound (absolute).
    max_integrality_violation : float
        Largest distance of an integer variable to the nearest integer.
    feasible : bool
        All three within the tolerances used for the check.
    """

    max_row_violation: float
    max_bound_violation: float
    max_integrality_violation: float
    feasible: bool


@dataclass(frozen=True, eq=False)
class Scope:
    """The variables that a :class:`Change` may move and the rows that hold them, with the
    problem's data on both.

    Taken once per neighborhood (:meth:`Problem.scope`) and shared by the changes found in it:
    gathering them again from a large problem at each check costs a cache miss per entry.

    Attributes
    ----------
    columns : numpy.ndarray of int
        The variables, ascending.
    lower, upper : numpy.ndarray
        Their bounds.
    integer : numpy.ndarray of bool
        Which of them are integer.
    rows : numpy.ndarray of int
        The rows that hold any of them, ascending.
    row_lower, row_upper : numpy.ndarray
        The sides of ``rows``.
    """

    columns: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    integer: np.ndarray
    rows: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray


@dataclass(frozen=True, eq=False)
class Change:
    """How a point differs from the feasible point it came from: a solution of a sub-MIP that
    kept every other variable at that point (:mod:`lns.core.problem.reduced`).

    Attributes
    ----------
    base : numpy.ndarray, shape (n,)
        The feasible point; the point equals it outside ``scope.columns``.
    scope : Scope
        The variables that may differ from ``base`` and the rows that hold them; every other
        row has its activity at ``base``.
    values : numpy.ndarray, shape (len(scope.columns),)
        The point's values of ``scope.columns``.
    row_activity : numpy.ndarray, shape (len(scope.rows),)
        The point's activities on ``scope.rows``.
    objective : float
        The point's objective, in the problem's own sense.
    """

    base: np.ndarray
    scope: Scope
    values: np.ndarray
    row_activity: np.ndarray
    objective: float

    @property
    def columns(self) -> np.ndarray:
        return self.scope.columns

    @property
    def rows(self) -> np.ndarray:
        return self.scope.rows


@dataclass(frozen=True, eq=False)
class Problem:
    """A MILP ``min/max c x + offset`` s.t. ``row_lower <= A x <= row_upper``.

    Attributes
    ----------
    name : str
        Instance name (file name without the extensions).
    var_names : sequence of str
        Variable names, length ``n``, held as :class:`lns.core.problem.names.Names`.
    var_types : numpy.ndarray of str, shape (n,)
        ``"B"`` binary, ``"I"`` general integer, ``"C"`` continuous.
    lower, upper : numpy.ndarray, shape (n,)
        Variable bounds, ``±inf`` where unbounded.
    objective : numpy.ndarray, shape (n,)
        Objective coefficients in the problem's own sense.
    objective_offset : float
        Constant added to the objective.
    sense : str
        ``"minimize"`` or ``"maximize"``.
    matrix : scipy.sparse.csr_matrix, shape (m, n)
        Constraint coefficients.
    row_lower, row_upper : numpy.ndarray, shape (m,)
        Row bounds, ``±inf`` where a side is absent.
    row_names : sequence of str
        Constraint names, length ``m``, held as :class:`lns.core.problem.names.Names`.
    source : pathlib.Path or None
        The file the problem was read from, if any.

    Raises
    ------
    InvalidProblemDataError
        (a ``ValueError``) NaN anywhere, an infinite coefficient, a ``+inf`` lower or ``-inf``
        upper side or bound, a binary bound outside [0, 1]: see
        :func:`lns.core.problem.validation.problem_data_error`.
    """

    name: str
    var_names: Sequence[str]
    var_types: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    objective: np.ndarray
    objective_offset: float
    sense: str
    matrix: sp.csr_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    row_names: Sequence[str]
    source: Path | None = None

    def __post_init__(self):
        object.__setattr__(self, "var_names", Names.of(self.var_names))  # frozen: set once
        object.__setattr__(self, "row_names", Names.of(self.row_names))
        n, m = len(self.var_names), len(self.row_names)
        if self.sense not in ("minimize", "maximize"):
            raise InvalidProblemDataError(
                f"sense must be 'minimize' or 'maximize', got {self.sense!r}"
            )
        if self.matrix.shape != (m, n):
            raise InvalidProblemDataError(
                f"matrix has shape {self.matrix.shape}, expected ({m}, {n})"
            )
        for field, length in (
            ("var_types", n),
            ("lower", n),
            ("upper", n),
            ("objective", n),
            ("row_lower", m),
            ("row_upper", m),
        ):
            if len(getattr(self, field)) != length:
                raise InvalidProblemDataError(
                    f"{field} has length {len(getattr(self, field))}, expected {length}"
                )
        error = problem_data_error(self)
        if error is not None:
            raise InvalidProblemDataError(f"{self.source or self.name}: {error}")

    @property
    def n_vars(self) -> int:
        return len(self.var_names)

    @property
    def n_rows(self) -> int:
        return len(self.row_names)

    @functools.cached_property
    def integer_mask(self) -> np.ndarray:
        """Boolean mask of the binary and general-integer variables."""
        return self.var_types != CONTINUOUS

    @functools.cached_property
    def integer_indices(self) -> np.ndarray:
        """Indices of the binary and general-integer variables, ascending."""
        return np.flatnonzero(self.integer_mask)

    @functools.cached_property
    def by_column(self) -> sp.csc_matrix:
        """The constraint matrix by columns, built on first use: what a sub-problem of some
        free variables reads (:mod:`lns.core.problem.reduced`)."""
        return sp.csc_matrix(self.matrix)

    @functools.cached_property
    def min_objective(self) -> np.ndarray:
        """Objective coefficients turned into a minimisation (``-c`` for a maximisation)."""
        return self.objective if self.sense == "minimize" else -self.objective

    def objective_value(self, x: np.ndarray) -> float:
        """Objective of ``x`` in the problem's own sense, offset included."""
        return float(self.objective @ x + self.objective_offset)

    def is_better(self, new: float, old: float | None, tol: float = 1e-6) -> bool:
        """Whether objective ``new`` improves on ``old`` by more than ``tol * max(1, |old|)``."""
        if old is None:
            return True
        sign = 1.0 if self.sense == "minimize" else -1.0
        return sign * (old - new) > tol * max(1.0, abs(old))

    def check(
        self,
        x: np.ndarray,
        feastol: float = 1e-6,
        inttol: float = 1e-5,
        activity: np.ndarray | None = None,
        change: Change | None = None,
    ) -> Feasibility:
        """Check ``x`` against the bounds, rows and integrality of this (original) problem.

        Row violations are measured relative to ``max(1, |side|)`` like SCIP's feasibility
        tolerance; a point is feasible when every violation is within its tolerance.
        ``activity`` is ``A x`` where the caller has it already. With ``change`` (``x`` is its
        base, a feasible point, with the change's values on its columns), only the rows and
        variables that changed are checked, from the change's data: what the rest holds, it
        held at the base. A change checked before is not checked again.
        """
        if change is not None:
            known = self._change_checks.get(change)
            if known is not None and known[0] == (feastol, inttol):
                return known[1]
        x = np.asarray(x, dtype=float)
        if x.shape != (self.n_vars,):
            return Feasibility(np.inf, np.inf, np.inf, False)
        values = x if change is None else change.values
        if not np.all(np.isfinite(values)):
            return Feasibility(np.inf, np.inf, np.inf, False)
        if change is None:
            activity = self.matrix @ x if activity is None else activity
            row = _row_violation(activity, self.row_lower, self.row_upper)
            lower, upper, integer = self.lower, self.upper, self.integer_mask
        else:
            scope = change.scope
            row = _row_violation(change.row_activity, scope.row_lower, scope.row_upper)
            lower, upper, integer = scope.lower, scope.upper, scope.integer
        bound = float(
            max(0.0, (lower - values).max(initial=0.0), (values - upper).max(initial=0.0))
        )
        xi = values[integer]
        integrality = float(np.abs(xi - np.round(xi)).max(initial=0.0))
        feasible = row <= feastol and bound <= feastol and integrality <= inttol
        result = Feasibility(row, bound, integrality, feasible)
        if change is not None:
            self._change_checks[change] = ((feastol, inttol), result)
        return result

    @functools.cached_property
    def _change_checks(self) -> weakref.WeakKeyDictionary:
        """The checks of points given by a :class:`Change`, while the change lives: the
        incumbent and a sub-solver's reducer both ask about each solution found."""
        return weakref.WeakKeyDictionary()

    def scope(self, columns: np.ndarray, rows: np.ndarray) -> Scope:
        """The :class:`Scope` of the variables ``columns`` and the rows ``rows`` that hold them."""
        return Scope(
            columns,
            self.lower[columns],
            self.upper[columns],
            self.integer_mask[columns],
            rows,
            self.row_lower[rows],
            self.row_upper[rows],
        )

    def round_integers(self, x: np.ndarray) -> np.ndarray:
        """A copy of ``x`` with the integer variables rounded to the nearest integer."""
        x = np.array(x, dtype=float)
        x[self.integer_mask] = np.round(x[self.integer_mask])
        return x

    def to_scip(self):
        """Build a new, quiet ``pyscipopt.Model`` of this problem.

        Its ``getVars()`` lists the binaries first, then the integers, then the continuous
        variables (SCIP keeps them so); :meth:`add_to_scip` returns them in this problem's order.
        """
        from pyscipopt import Model

        model = Model(self.name)
        model.hideOutput()
        self.add_to_scip(model)
        return model

    def add_to_scip(self, model, stop: Callable[[], bool] | None = None) -> list:
        """Add this problem's variables, rows and objective to ``model``, a ``pyscipopt.Model``
        without any; returns its variables, in this problem's order.

        Raises
        ------
        BuildStoppedError
            ``stop()``, asked every :data:`BUILD_CHECK_EVERY` variables and rows, said to stop
            (a deadline came): the model holds a part of the problem.
        """
        from pyscipopt import Expr
        from pyscipopt.scip import ExprCons

        vtypes = {BINARY: "B", INTEGER: "I", CONTINUOUS: "C"}
        # Plain Python lists: per-element numpy calls (a scalar clip, indexing row by row) made
        # these loops several times slower.
        columns = zip(
            self.var_names,
            self.var_types.tolist(),
            np.clip(self.lower, -SCIP_INFINITY, SCIP_INFINITY).tolist(),
            np.clip(self.upper, -SCIP_INFINITY, SCIP_INFINITY).tolist(),
            self.objective.tolist(),
            strict=True,
        )
        xs = []
        for j, (name, t, lb, ub, c) in enumerate(columns):
            _check_stop(stop, j, self.name)
            xs.append(model.addVar(name=name, vtype=vtypes[t], lb=lb, ub=ub, obj=c))
        indptr, indices, data = (
            self.matrix.indptr.tolist(),
            self.matrix.indices.tolist(),
            self.matrix.data.tolist(),
        )
        lhss = [None if value == -np.inf else value for value in self.row_lower.tolist()]
        rhss = [None if value == np.inf else value for value in self.row_upper.tolist()]
        # An empty row filled coefficient by coefficient: an expression per row (a sum of
        # terms, then its comparison) took longer on LNS sub-problems
        # (benchmarks/test_sub_problem_build.py).
        for i, name in enumerate(self.row_names):
            _check_stop(stop, i, self.name)
            lhs, rhs = lhss[i], rhss[i]
            row = model.addCons(
                ExprCons(Expr(), lhs, SCIP_INFINITY if lhs is None and rhs is None else rhs),
                name=name,
            )
            for j, a in zip(
                indices[indptr[i] : indptr[i + 1]], data[indptr[i] : indptr[i + 1]], strict=True
            ):
                if a:
                    model.addConsCoeff(row, xs[j], a)
        # The objective's coefficients came with the variables; only the sense is left.
        if self.sense == "maximize":
            model.setMaximize()
        else:
            model.setMinimize()
        if self.objective_offset:
            model.addObjoffset(float(self.objective_offset))
        return xs

    def write(self, path: str | Path) -> Path:
        """Write in a format SCIP writes, chosen by the extension (``.mps``, ``.lp``, ...).

        ``.mps`` and ``.mps.gz`` are written from the arrays (:mod:`lns.core.problem.mps_writer`,
        the variables in this problem's order), other formats by SCIP (:func:`write_with_scip`).
        A ``.gz`` suffix compresses the file (level 6: on a 44 MB set-cover file, 3x faster than
        level 9 for a 13% larger file); the gzip header carries no time stamp, so the same problem
        always gives the same bytes.
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.name.lower().endswith((".mps", ".mps.gz")) and write_mps(self, path):
            return path
        return write_with_scip(self, path)


def write_with_scip(problem: Problem, path: Path) -> Path:
    """Write ``problem`` through a SCIP model and SCIP's writer (a ``.gz`` suffix: compressed as
    :meth:`Problem.write` says)."""
    model = problem.to_scip()
    if path.suffix != ".gz":
        model.writeProblem(str(path), verbose=False)
        return path
    with tempfile.TemporaryDirectory(dir=path.parent) as folder:
        plain = Path(folder) / path.stem
        model.writeProblem(str(plain), verbose=False)
        with (
            open(plain, "rb") as source,
            open(path, "wb") as target,
            gzip.GzipFile(filename="", mode="wb", fileobj=target, mtime=0, compresslevel=6) as out,
        ):
            shutil.copyfileobj(source, out)
    return path


PROBLEM_FORMATS = ("mps", "lp", "cip", "opb", "wbo", "pip", "zpl", "fzn", "osil", "rlp", "cnf")
"""Extensions of the problem files SCIP reads, each also compressed (``.mps.gz``)."""

COMPRESSIONS = (".gz", ".bz2", ".zst", ".xz")


def is_problem_file(path: Path) -> bool:
    """Whether ``path`` is named as a problem file is (``x.mps.gz``, not ``manifest.json``)."""
    return _extension(path) in PROBLEM_FORMATS


def _extension(path: Path) -> str:
    """The format's extension of ``path``, lower case (``x.MPS.gz``: ``mps``; none: ``""``)."""
    name = path.name.lower()
    for ext in COMPRESSIONS:
        name = name.removesuffix(ext)
    return name.rsplit(".", 1)[-1] if "." in name else ""


def instance_name(path: Path) -> str:
    """File name without its problem and compression extensions (``air05.mps.gz`` -> ``air05``)."""
    name = path.name
    for ext in COMPRESSIONS:
        name = name.removesuffix(ext)
    return name.rsplit(".", 1)[0] if "." in name else name


@contextlib.contextmanager
def _captured_stderr():
    """Send file descriptor 2 (where SCIP prints its errors) to a temporary file for the block.

    Yields a list that holds the captured text once the block has ended.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    captured: list = []
    with tempfile.TemporaryFile(mode="w+") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield captured
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            captured.append(sink.read())


def read_scip_model(path: str | Path):
    """Read a problem file into a quiet SCIP model, raising :class:`ProblemReadError` on failure."""
    path = Path(path)
    _check_path(path)
    check_file_numbers(path)
    return _scip_model(path)


def _check_path(path: Path) -> None:
    """Raise :class:`ProblemReadError` if ``path`` is not a file."""
    if not path.exists():
        raise ProblemReadError(f"{path}: no such file")
    if not path.is_file():
        raise ProblemReadError(f"{path}: not a file")


def _scip_model(path: Path):
    from pyscipopt import Model

    model = Model()
    model.hideOutput()
    with _captured_stderr() as captured:
        try:
            model.readProblem(str(path))
            failure = None
        except Exception as error:  # pyscipopt raises bare OSError/Exception for reader errors
            failure = error
    if failure is not None:
        messages = [
            line.split("ERROR:", 1)[1].strip()
            for line in "".join(captured).splitlines()
            if "ERROR:" in line and "in function call" not in line
        ]
        reason = "; ".join(messages) or str(failure)
        raise ProblemReadError(f"{path}: SCIP could not read the file ({reason})")
    if model.getNVars() == 0:
        raise ProblemReadError(f"{path}: the file holds no variables")
    return model


def problem_from_scip(model, name: str, source: Path | None = None) -> Problem:
    """Extract the arrays of a SCIP model in problem stage; non-linear constraints are rejected.

    A variable listed twice in one constraint (an LP file may write ``x + y + x``) keeps the
    sum of its coefficients, as SCIP does. The matrix is built from one flat pass over the
    constraints' variables and values (0.17 s on 24,000 rows, 0.7 times the per-constraint
    loop it replaced: ``benchmarks/test_problem_io.py``).
    """
    variables = model.getVars()
    where = source if source is not None else name
    unknown = [v.vtype() for v in variables if v.vtype() not in _SCIP_TYPES]
    if unknown:
        raise UnsupportedProblemError(f"{where}: variable type {unknown[0]} is not supported")
    constraints = model.getConss()
    for cons in constraints:
        if cons.getConshdlrName() not in _LINEAR_HANDLERS:
            raise UnsupportedProblemError(
                f"{where}: constraint '{cons.name}' is of type '{cons.getConshdlrName()}'; "
                "only linear constraints are supported"
            )
    row_variables = [model.getConsVars(cons) for cons in constraints]
    row_values = [model.getConsVals(cons) for cons in constraints]
    n, m = len(variables), len(constraints)
    lengths = np.fromiter(map(len, row_variables), dtype=np.int64, count=m)
    nnz = int(lengths.sum())
    scip_index = np.fromiter((v.getIndex() for v in variables), dtype=np.int64, count=n)
    position = np.empty(int(scip_index.max()) + 1 if n else 0, dtype=np.int64)
    position[scip_index] = np.arange(n)
    cols = position[
        np.fromiter(
            (v.getIndex() for v in itertools.chain.from_iterable(row_variables)),
            dtype=np.int64,
            count=nnz,
        )
    ]
    vals = np.fromiter(itertools.chain.from_iterable(row_values), dtype=float, count=nnz)
    matrix = sp.csr_matrix((vals, cols, np.r_[0, np.cumsum(lengths)]), shape=(m, n))
    matrix.sum_duplicates()
    return Problem(
        name=name,
        var_names=tuple(v.name for v in variables),
        var_types=np.array([_SCIP_TYPES[v.vtype()] for v in variables]),
        lower=_from_scip(np.array([v.getLbOriginal() for v in variables], dtype=float)),
        upper=_from_scip(np.array([v.getUbOriginal() for v in variables], dtype=float)),
        objective=np.array([v.getObj() for v in variables], dtype=float),
        objective_offset=float(model.getObjoffset()),
        sense=model.getObjectiveSense(),
        matrix=matrix,
        row_lower=_from_scip(np.array([model.getLhs(c) for c in constraints], dtype=float)),
        row_upper=_from_scip(np.array([model.getRhs(c) for c in constraints], dtype=float)),
        row_names=tuple(c.name for c in constraints),
        source=source,
    )


#: :meth:`Problem.add_to_scip` asks its ``stop`` once per this many variables and rows.
BUILD_CHECK_EVERY = 1024


def _row_violation(activity: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> float:
    """The largest violation of the sides ``lower`` and ``upper`` by ``activity``, relative to
    ``max(1, |side|)``."""
    # The absolute excess first: at a feasible point (nearly every check) it is at most zero,
    # and so is the relative one, which then costs nothing more.
    if np.maximum(lower - activity, activity - upper).max(initial=0.0) <= 0.0:
        return 0.0
    with np.errstate(invalid="ignore"):  # an absent side gives inf / inf: NaN, skipped
        below = (lower - activity) / np.maximum(1.0, np.abs(lower))
        above = (activity - upper) / np.maximum(1.0, np.abs(upper))
    return float(max(np.fmax.reduce(below, initial=0.0), np.fmax.reduce(above, initial=0.0)))


def _check_stop(stop: Callable[[], bool] | None, count: int, name: str) -> None:
    """Raise :class:`BuildStoppedError` if ``stop`` says so (asked every
    :data:`BUILD_CHECK_EVERY` counts)."""
    if stop is not None and count % BUILD_CHECK_EVERY == 0 and stop():
        raise BuildStoppedError(f"{name}: building the SCIP model was stopped")


def _from_scip(values: np.ndarray) -> np.ndarray:
    values = values.copy()
    values[values >= SCIP_INFINITY] = np.inf
    values[values <= -SCIP_INFINITY] = -np.inf
    return values


def read_problem(path: str | Path) -> Problem:
    """Read a problem file (anything SCIP reads: ``.mps``, ``.mps.gz``, ``.lp``, ...).

    Raises
    ------
    ProblemReadError
        The file is missing, unreadable, malformed or empty.
    UnsupportedProblemError
        The file holds a constraint that is not linear (SOS, indicator, quadratic, ...).
    """
    return read_problem_and_model(path)[0]


def read_problem_and_model(path: str | Path) -> tuple[Problem, object]:
    """:func:`read_problem`, and the SCIP model of the file: the model SCIP read it into, or,
    where the MPS reader of :mod:`lns.core.problem.mps` read it, a function that has SCIP read it
    (for a solver that needs the whole model: SCIP's reader makes one faster than
    :meth:`Problem.add_to_scip`, and only then is it paid for)."""
    path = Path(path)
    _check_path(path)
    name = instance_name(path)
    if _extension(path) == "mps":
        fields = read_mps(path)  # its numbers are plain decimals, read right
        if fields is not None:
            return Problem(name=name, source=path, **fields), functools.partial(_scip_model, path)
    check_file_numbers(path)
    model = _scip_model(path)
    return problem_from_scip(model, name, source=path), model
