"""Building an LNS sub-problem: reducing it to its free variables and their rows, then putting
it into SCIP, rows filled coefficient by coefficient against an expression per row.

Per instance, 10 random neighborhoods of 20 % and 10 of 50 % of the integer variables at an
incumbent (:func:`conftest.incumbent_sequence`):

- ``reduce``: their reduced problems (:meth:`lns.core.problem.reduced.Reducer.reduce`), the
  numpy part of a reduced sub-solve; ``extra_info``: the mean rows the free columns hold and the
  mean rows kept.
- ``build``: each reduced problem put into a fresh ``pyscipopt.Model``: ``coefficients`` is
  :meth:`lns.core.problem.mip.Problem.add_to_scip` (an empty linear row, then ``addConsCoeff`` for
  each nonzero: what the SCIP sub-solver uses), ``expressions`` a sum of terms per row
  (``quicksum``) and its comparison with the row's sides, as the framework built rows before. Both
  make the same rows. ``extra_info``: the mean variables, rows and nonzeros of the sub-problems.

Quick: air05; full: instance 0 of the auction and set-cover classes at the paper's sizes
(``small``) and twice them (``large``), a 6,000-node independent set, and (``reduce`` only)
vertex covers of 1,000 and 2,000 nodes, whose rows are a dense graph's edges.

``rows``, on no instance: the rows of random entries found by a count over all rows and by a sort
of the entries (:func:`lns.core.problem.reduced._rows_held` and its threshold
:data:`~lns.core.problem.reduced.DENSE_ROW_MAP`), at one entry per 1 to 8 rows of problems of
10,000 rows (quick) and a million (full).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
import scipy.sparse as sp
from pyscipopt import Model, quicksum

import lns.core.problem.reduced as reduced_module
from lns.core.problem.mip import Problem
from lns.core.problem.reduced import Reducer, _rows_held

INSTANCES = [
    "air05",
    *(
        pytest.param(name, marks=pytest.mark.full)
        for name in ("ca-small", "ca-large", "sc-small", "sc-large", "mis-6000")
    ),
]
#: Vertex covers of the paper's size and twice it: ``reduce`` only.
GRAPHS = ("mvc-1000", "mvc-2000")
BUILDS = ("coefficients", "expressions")


def by_expressions(problem: Problem, model: Model) -> list:
    """``problem`` put into ``model`` with a ``quicksum`` expression per row; its variables as
    :meth:`Problem.add_to_scip` adds them."""
    columns_only = dataclasses.replace(
        problem,
        matrix=sp.csr_matrix((0, problem.n_vars)),
        row_lower=np.zeros(0),
        row_upper=np.zeros(0),
        row_names=(),
    )
    xs = columns_only.add_to_scip(model)
    matrix = problem.matrix
    indptr, indices, data = matrix.indptr.tolist(), matrix.indices.tolist(), matrix.data.tolist()
    for i, (lhs, rhs) in enumerate(
        zip(problem.row_lower.tolist(), problem.row_upper.tolist(), strict=True)
    ):
        begin, end = indptr[i], indptr[i + 1]
        expr = quicksum(a * xs[j] for j, a in zip(indices[begin:end], data[begin:end], strict=True))
        if lhs == rhs:
            model.addCons(expr == rhs)
        elif np.isfinite(lhs) and np.isfinite(rhs):
            model.addCons((lhs <= expr) <= rhs)
        elif np.isfinite(lhs):
            model.addCons(expr >= lhs)
        else:
            model.addCons(expr <= rhs)
    return xs


@pytest.fixture(scope="module")
def neighborhoods(problem_of, incumbents):
    """``neighborhoods(name)``: a reducer of the instance, its incumbent and the free columns of
    its 20 neighborhoods."""

    @functools.cache
    def of(name: str) -> tuple[Reducer, np.ndarray, list[np.ndarray]]:
        problem = problem_of(name)
        reducer, rng = Reducer(problem), np.random.default_rng(0)
        integers = problem.integer_indices
        frees = [
            np.sort(rng.choice(integers, round(share * len(integers)), replace=False))
            for share in (0.2, 0.5)
            for _ in range(10)
        ]
        return reducer, incumbents(name, 1)[0], [reducer.free_columns(free) for free in frees]

    return of


@pytest.fixture(scope="module")
def sub_problems(neighborhoods):
    """``sub_problems(name)``: the reduced problems of the instance's 20 neighborhoods."""

    @functools.cache
    def of(name: str) -> list[Problem]:
        reducer, incumbent, columns = neighborhoods(name)
        return [reducer.reduce(free, incumbent).problem for free in columns]

    return of


@pytest.mark.parametrize(
    "name", [*INSTANCES, *(pytest.param(name, marks=pytest.mark.full) for name in GRAPHS)]
)
def test_reduce(benchmark, measure, neighborhoods, name):
    benchmark.group = f"reduced problems of {name}"
    reducer, incumbent, columns = neighborhoods(name)
    reduced = measure(lambda: [reducer.reduce(free, incumbent) for free in columns])
    assert all(reducer.problem.check(r.lift(r.start)).feasible for r in reduced)
    benchmark.extra_info.update(
        held_rows=float(np.mean([len(r.scope.rows) for r in reduced])),
        kept_rows=float(np.mean([r.problem.n_rows for r in reduced])),
    )


@pytest.mark.parametrize("way", ["count", "sort"])
@pytest.mark.parametrize("per", [1, 2, 4, 8])
@pytest.mark.parametrize("n_rows", [10_000, pytest.param(1_000_000, marks=pytest.mark.full)])
def test_rows(benchmark, measure, monkeypatch, n_rows, per, way):
    benchmark.group = f"rows of one entry per {per} rows of {n_rows}"
    row = np.random.default_rng(0).integers(0, n_rows, n_rows // per)
    monkeypatch.setattr(reduced_module, "DENSE_ROW_MAP", 1e-9 if way == "sort" else 1e9)
    rows, _, _ = measure(lambda: _rows_held(row, n_rows), rounds=20)
    assert np.array_equal(rows, np.unique(row))


def build_all(sub_problems: list[Problem], build: str, count: bool = False) -> list:
    """Each sub-problem put into a fresh model by ``build``; with ``count``, per model, its
    variables, rows and nonzeros."""
    shapes = []
    for sub in sub_problems:
        model = Model()
        model.hideOutput()
        model.createProbBasic(sub.name)
        if build == "coefficients":
            sub.add_to_scip(model)
        else:
            by_expressions(sub, model)
        if count:
            rows = model.getConss()
            nonzeros = sum(len(model.getValsLinear(row)) for row in rows)
            shapes.append((model.getNVars(), len(rows), nonzeros))
        model.freeProb()
    return shapes


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("name", INSTANCES)
def test_build(benchmark, measure, sub_problems, name, build):
    benchmark.group = f"sub-problems of {name} into SCIP"
    subs = sub_problems(name)
    measure(lambda: build_all(subs, build))
    shapes = build_all(subs, build, count=True)
    assert shapes == [(sub.n_vars, sub.n_rows, sub.matrix.nnz) for sub in subs]
    benchmark.extra_info.update(
        dict(zip(("variables", "rows", "nonzeros"), np.mean(shapes, axis=0).tolist(), strict=True))
    )
