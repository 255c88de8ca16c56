"""The Local Branching LP after a new incumbent: solved cold, or hot-started with HiGHS options.

LB-RELAX (and the CL-LNS Local Branching features) solve ``min c x`` over the problem's rows with
``Σ|x_j - x*_j| <= k`` (k = 20 % of the integer variables) at each new incumbent ``x*``. For a
sequence of incumbents (``conftest.incumbent_sequence``) each variant solves, for each incumbent
after the first, the LP at ``k`` and once more at ``k`` grown by 2 % (the incumbent unchanged,
as after an LNS iteration without improvement); that sequence is what is timed (wall clock,
single thread, changes of the LP included):

- ``cold``: :func:`lns.core.solvers.lp.solve_lp` from scratch each time, with the rows of
  :meth:`heuristics.local_branching.Distance.lp_rows`;
- ``hot``: one :class:`heuristics.lb_relax.DistanceLP` (what LB-RELAX uses), solved cold at the
  first incumbent before the timing, then hot-started from the last basis; the other ``hot,``
  variants set HiGHS options after that first solve (Devex pricing, primal simplex, presolve
  off), or hand HiGHS the last basis with the changed row's slack made basic (an alien basis).

Every variant reaches the cold LP's objective on every solve. ``extra_info``: the median
simplex iterations of the hot solves.
"""

from __future__ import annotations

import functools
import statistics
from unittest import mock

import highspy
import pytest

from heuristics import lb_relax
from heuristics.local_branching import Distance
from lns.core.problem.mip import Problem
from lns.core.solvers.lp import WarmLP, solve_lp

#: Hot variants: HiGHS options set after the first (cold) solve; ``basic_slack`` is not HiGHS's.
HOT: dict[str, dict] = {
    "hot (used)": {},
    "hot, devex": {"simplex_dual_edge_weight_strategy": 1},
    "hot, primal simplex": {"simplex_strategy": 4},
    "hot, presolve off": {"presolve": "off"},
    "hot, basic slack": {"basic_slack": True},
}


class VariantLP(WarmLP):
    """A :class:`WarmLP` that sets HiGHS ``options`` after its first solve and counts iterations.

    With the option ``basic_slack``, a solve after changed coefficients of a row starts from the
    last basis with that row's slack made basic (an alien basis, which HiGHS repairs).

    Attributes
    ----------
    iterations : list of int
        Simplex iterations of each solve after the first.
    """

    def __init__(self, *args, options: dict, **kwargs):
        super().__init__(*args, **kwargs)
        self.options = dict(options)
        self.basic_slack = self.options.pop("basic_slack", False)
        self.iterations: list[int] = []
        self.solved = False
        self.changed_rows: set[int] = set()

    def change_coefficients(self, row, columns, values):
        super().change_coefficients(row, columns, values)
        if len(columns):
            self.changed_rows.add(int(row))

    def solve(self, *args, **kwargs):
        if self.basic_slack and self.changed_rows:
            self.make_slacks_basic(sorted(self.changed_rows))
        self.changed_rows = set()
        solution = super().solve(*args, **kwargs)
        if self.solved:
            self.iterations.append(self._highs.getInfo().simplex_iteration_count)
        else:
            for name, value in self.options.items():
                self._highs.setOptionValue(name, value)
            self.solved = True
        return solution

    def make_slacks_basic(self, rows: list[int]) -> None:
        basis = self._highs.getBasis()
        if basis.valid:
            status = basis.row_status
            for i in rows:
                status[i] = highspy.HighsBasisStatus.kBasic
            basis.row_status, basis.alien = status, True
            self._highs.setBasis(basis)


def radii(problem: Problem) -> tuple[float, float]:
    """``k`` (20 % of the integer variables, at least 2) and ``k`` grown by 2 %."""
    k = max(2, round(0.2 * len(problem.integer_indices)))
    return k, 1.02 * k


def cold_objectives(problem: Problem, xs: list) -> list[float]:
    """The objectives of the Local Branching LPs at ``k`` and grown ``k`` of each of ``xs``."""
    objectives = []
    for x in xs:
        distance = Distance.to(problem, x)
        for k in radii(problem):
            columns, rows = distance.lp_rows(k)
            objectives.append(solve_lp(problem, extra_rows=rows, extra_columns=columns).objective)
    return objectives


def hot_lp(problem: Problem, x, options: dict) -> lb_relax.DistanceLP:
    """A :class:`heuristics.lb_relax.DistanceLP` on a :class:`VariantLP`, solved cold at ``x``."""
    with mock.patch.object(lb_relax, "WarmLP", functools.partial(VariantLP, options=options)):
        lp = lb_relax.DistanceLP(problem)
    lp.solve(Distance.to(problem, x), radii(problem)[0], None)
    return lp


def hot_objectives(problem: Problem, lp: lb_relax.DistanceLP, xs: list) -> list[float]:
    """The objectives of ``lp``'s solves at ``k`` and grown ``k`` of each of ``xs``, in turn."""
    objectives: list[float] = []
    for x in xs:
        distance = Distance.to(problem, x)
        objectives.extend(lp.solve(distance, k, None).objective for k in radii(problem))
    return objectives


@pytest.fixture(scope="module")
def sequence(problem_of, incumbents, mode):
    """``sequence(name)``: the problem, its first incumbent, the next ones, and the cold LPs'
    objectives at those."""

    @functools.cache
    def of(name: str):
        problem = problem_of(name)
        first, *xs = incumbents(name, mode.pick(3, 5))
        return problem, first, xs, cold_objectives(problem, xs)

    return of


@pytest.mark.parametrize(
    "name",
    [
        "p0201",
        pytest.param("air05", marks=pytest.mark.full),
        pytest.param("seymour", marks=pytest.mark.full),
        pytest.param("mis-1500", marks=pytest.mark.full),
        pytest.param("mis-6000", marks=pytest.mark.full),
    ],
)
@pytest.mark.parametrize("variant", ["cold", *HOT])
def test_local_branching_lp(benchmark, measure, sequence, name, variant):
    benchmark.group = f"Local Branching LP, next incumbents: {name}"
    problem, first, xs, expected = sequence(name)
    if variant == "cold":
        objectives = measure(lambda: cold_objectives(problem, xs))
    else:
        objectives, iterations = measure(
            lambda lp: (hot_objectives(problem, lp, xs), lp.lp.iterations),
            setup=lambda: ((hot_lp(problem, first, HOT[variant]),), {}),
        )
        benchmark.extra_info["median iterations"] = statistics.median(iterations)
    assert objectives == pytest.approx(expected, rel=1e-7, abs=1e-6)
