"""Translating a pure-integer problem into CP-SAT's model
(:func:`lns.core.solvers.cpsat.model.build_cpsat_model`): what the CP-SAT sub-solver, the CP-SAT
baseline and the loop's stall search (:mod:`lns.core.search.stall_search`) pay once per run.
``extra_info``: the problem's variables, rows and nonzeros.

Quick: air05; full: instance 0 of the set-cover, vertex-cover and auction classes at the paper's
sizes (``small``) and of the set cover at twice them (``large``).

Compare two versions of the code with ``--benchmark-save`` and ``--benchmark-compare``
(``docs/benchmarks.md``).
"""

from __future__ import annotations

import pytest

from lns.core.solvers.cpsat.model import build_cpsat_model

pytest.importorskip("ortools")

INSTANCES = [
    "air05",
    *(
        pytest.param(name, marks=pytest.mark.full)
        for name in ("sc-small", "mvc-1000", "ca-small", "sc-large")
    ),
]


@pytest.mark.parametrize("name", INSTANCES)
def test_build(benchmark, measure, problem_of, name):
    benchmark.group = "CP-SAT model"
    problem = problem_of(name)
    built = measure(lambda: build_cpsat_model(problem))
    assert len(built.variables) == problem.n_vars
    benchmark.extra_info.update(
        vars=problem.n_vars, rows=problem.n_rows, nonzeros=int(problem.matrix.nnz)
    )
