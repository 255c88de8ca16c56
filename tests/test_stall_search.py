"""The local search at the loop's stalls: when a slice may run, for how long, and what it finds."""

import time

import numpy as np
import pytest

from helpers import FakeSubSolver, knapsack
from lns.core.errors import UnsupportedProblemError
from lns.core.search.incumbent import Incumbent
from lns.core.search.loop import run_lns
from lns.core.search.neighborhood_size import AdaptiveSize
from lns.core.search.params import LoopParams, SubSolveParams
from lns.core.search.selection import Neighborhood, Selector
from lns.core.search.stall_search import (
    FIRST_SLICE,
    MAX_SLICE,
    MIN_QUIET,
    QUIET,
    SHARE,
    StallSearch,
    StallSlices,
)
from lns.core.search.stop import MaxIterations

START = np.array([1.0, 0.0, 0.0, 0.0])  # knapsack value 10 (optimum 23: a and b)


def test_a_slice_waits_for_a_quiet_incumbent():
    slices = StallSlices()
    elapsed = 100.0
    assert slices.limit(elapsed, quiet=QUIET * elapsed - 0.1) is None
    assert slices.limit(elapsed, quiet=QUIET * elapsed) == FIRST_SLICE
    assert slices.limit(elapsed=1.0, quiet=MIN_QUIET - 0.01) is None  # never sooner than that


def test_fruitless_slices_double_and_stay_within_a_share_of_the_run():
    slices, lengths = StallSlices(), []
    for elapsed in np.arange(1.0, 2000.0, 0.5):
        limit = slices.limit(elapsed, quiet=elapsed)
        if limit is not None:
            assert slices.spent + limit <= SHARE * elapsed
            lengths.append(limit)
            slices.ran(limit, improved=False)
    assert lengths[:6] == [min(FIRST_SLICE * 2**k, MAX_SLICE) for k in range(6)]
    assert lengths[-1] == MAX_SLICE


def test_slices_that_improve_are_not_counted_and_keep_their_length():
    slices = StallSlices()
    slices.ran(FIRST_SLICE, improved=True)
    assert (slices.spent, slices.length) == (0.0, FIRST_SLICE)
    slices.ran(FIRST_SLICE, improved=False)
    assert (slices.spent, slices.length) == (FIRST_SLICE, 2 * FIRST_SLICE)


def _quiet_incumbent(problem, seconds=100.0):
    """An incumbent at ``START`` that has not improved for ``seconds`` (its run as old)."""
    incumbent = Incumbent(problem, time.perf_counter())
    assert incumbent.offer(START, found_at=time.perf_counter(), source="user")
    incumbent.started -= seconds
    incumbent.improved_at -= seconds
    return incumbent


def test_a_problem_the_solver_does_not_take_turns_the_stall_search_off():
    builds = []

    def build(problem):
        builds.append(problem)
        raise UnsupportedProblemError("not pure integer")

    problem = knapsack()
    search = StallSearch(problem, np.random.default_rng(0), build=build)
    incumbent = _quiet_incumbent(problem)
    assert not search.step(incumbent, time_left=10.0, iteration=0)
    assert search.off and not search.step(incumbent, time_left=10.0, iteration=0)
    assert len(builds) == 1
    assert incumbent.objective == 10.0


class _FailingSolver:
    def solve(self, **kwargs):
        raise RuntimeError("CP-SAT crashed")


def test_a_failing_slice_ends_the_stall_search_and_keeps_the_incumbent():
    problem = knapsack()
    search = StallSearch(problem, np.random.default_rng(0), build=lambda p: _FailingSolver())
    incumbent = _quiet_incumbent(problem)
    assert search.step(incumbent, time_left=10.0, iteration=0)
    assert search.off and not search.step(incumbent, time_left=10.0, iteration=0)
    assert incumbent.objective == 10.0


def test_a_slice_from_a_quiet_incumbent_finds_a_better_solution():
    pytest.importorskip("ortools")
    problem = knapsack()
    search = StallSearch(problem, np.random.default_rng(0))
    incumbent = _quiet_incumbent(problem)
    just_improved = _quiet_incumbent(problem, seconds=0.0)
    assert not search.step(just_improved, time_left=10.0, iteration=0)
    assert search.step(incumbent, time_left=10.0, iteration=0)
    assert incumbent.objective == 23.0
    assert incumbent.found_by == "stall search"
    assert problem.check(incumbent.x).feasible


@pytest.mark.parametrize(
    ("loop", "sub_solve", "runs"),
    [
        (LoopParams(), SubSolveParams(), True),
        (LoopParams(stall_search=False), SubSolveParams(), False),
        (LoopParams(), SubSolveParams(node_limit=10), False),  # runs that must repeat
    ],
)
def test_the_loop_runs_the_stall_search_unless_switched_off_or_without_the_clock(
    loop, sub_solve, runs
):
    pytest.importorskip("ortools")
    problem = knapsack()
    incumbent = _quiet_incumbent(problem)
    run_lns(
        problem,
        _FirstTwo(),
        FakeSubSolver(),  # never improves
        incumbent,
        rng=np.random.default_rng(0),
        stop=MaxIterations(1),
        callbacks=[],
        size_rule=AdaptiveSize(4, 0.5, max_fraction=0.5),
        sub_solve=sub_solve,
        loop=loop,
    )
    assert (incumbent.found_by == "stall search") is runs
    assert incumbent.objective == (23.0 if runs else 10.0)


class _FirstTwo(Selector):
    """Frees the first two variables."""

    name = "first_two"

    def __call__(self, state, size, rng):
        return Neighborhood(state.problem.integer_indices[:2])
