"""Local Branching against LB-RELAX on the same incumbents: selection time and improvement.

For a sequence of incumbents (``conftest.incumbent_sequence``) each selector is called on them
in order, as in an LNS run (so LB-RELAX's LP is hot-started from the previous incumbent's
basis), for a neighborhood of ``k`` = 5 % of the integer variables; those calls are what is
timed. Then, untimed, for each incumbent ``x*`` and its neighborhood:

- ``iteration improvement``: one LNS iteration as the loop runs it: a better solution the
  selector found on the way (Local Branching's) becomes the start, then one sub-solve frees
  the neighborhood;
- ``neighborhood improvement``: one sub-solve of the neighborhood from ``x*`` itself, so that
  the neighborhood is judged apart from the solutions Local Branching finds on its own (the
  CL-LNS authors' evaluation).

Improvements are relative, ``(f(x*) - f(new)) / max(1, |f(x*)|)`` in the minimisation sense;
every sub-solve of one incumbent has the same SCIP seed. ``extra_info`` has their medians and
means over the incumbents, and how many selections fell back to random.
"""

from __future__ import annotations

import numpy as np
import pytest

from heuristics.lb_relax import LBRelax
from heuristics.local_branching import LocalBranching
from heuristics.subproblem import FRESH_START
from lns.core.problem.mip import Problem
from lns.core.search.selection import Neighborhood, SearchState, Selector
from lns.core.solvers.scip.subsolver import ScipSubSolver

SELECTORS = ["LB", "LB-RELAX (positive)", "LB-RELAX (topk)", "LB-RELAX (positive, cold LP)"]


def make_selector(label: str, lb_time: float) -> Selector:
    """The selector ``label`` of :data:`SELECTORS`; Local Branching with ``lb_time`` s a call."""
    if label == "LB":
        return LocalBranching(time_limit=lb_time)
    if label == "LB-RELAX (positive, cold LP)":
        return LBRelax(warm_start=False)
    return LBRelax(variant=label.removeprefix("LB-RELAX (").removesuffix(")"))


def select_all(selector: Selector, problem: Problem, xs: list, k: int) -> list[Neighborhood]:
    """``selector``'s neighborhood of each incumbent of ``xs``, in order (seeds 0, 1, ...)."""
    return [
        selector(SearchState(problem, x, problem.objective_value(x)), k, np.random.default_rng(i))
        for i, x in enumerate(xs)
    ]


def sub_solve(problem: Problem, solver, x, free, time_limit: float, seed: int) -> float:
    """The best objective after one sub-solve freeing ``free`` around ``x`` (``f(x)`` if none
    better)."""
    best = problem.objective_value(x)
    for found in solver.solve(time_limit=time_limit, seed=seed, free=free, start=x).found:
        if problem.check(found.x).feasible and problem.is_better(found.objective, best):
            best = found.objective
    return best


def improvements(problem: Problem, x, neighborhood: Neighborhood, time_limit: float, seed: int):
    """The relative iteration and neighborhood improvements of ``neighborhood`` at ``x``."""
    solver = ScipSubSolver(problem, FRESH_START)
    before = problem.objective_value(x)
    start = x
    found = neighborhood.solution
    if found is not None and problem.check(found).feasible:
        if problem.is_better(problem.objective_value(found), before):
            start = found
    sign = 1.0 if problem.sense == "minimize" else -1.0
    after = [
        sub_solve(problem, solver, origin, neighborhood.free, time_limit, seed)
        for origin in (start, x)
    ]
    solver.close()
    return [sign * (before - value) / max(1.0, abs(before)) for value in after]


@pytest.mark.parametrize(
    "name",
    [
        "p0201",
        pytest.param("air05", marks=pytest.mark.full),
        pytest.param("seymour", marks=pytest.mark.full),
    ],
)
@pytest.mark.parametrize("label", SELECTORS)
def test_selection(benchmark, measure, mode, problem_of, incumbents, name, label):
    benchmark.group = f"Local Branching against LB-RELAX: {name}"
    problem = problem_of(name)
    xs = incumbents(name, mode.pick(2, 4))
    k = max(2, round(0.05 * len(problem.integer_indices)))

    def setup():
        selector = make_selector(label, lb_time=mode.pick(1.0, 10.0))
        selector.setup(problem)
        return (selector,), {}

    neighborhoods = measure(lambda selector: select_all(selector, problem, xs, k), setup, rounds=1)
    assert all(len(n.free) == k for n in neighborhoods)
    figures = np.array(
        [
            improvements(problem, x, n, mode.pick(1.0, 10.0), seed)
            for seed, (x, n) in enumerate(zip(xs, neighborhoods, strict=True))
        ]
    )
    assert (figures >= 0).all()
    for column, figure in enumerate(("iteration improvement", "neighborhood improvement")):
        benchmark.extra_info[f"{figure}, median"] = float(np.median(figures[:, column]))
        benchmark.extra_info[f"{figure}, mean"] = float(np.mean(figures[:, column]))
    fallbacks = sum(bool(n.info.get("fallback", False)) for n in neighborhoods)
    benchmark.extra_info["fallbacks"] = fallbacks
