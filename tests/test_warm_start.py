"""Warm starts: complete, partial (dict, NaN vector, .sol file) and unusable starts."""

import logging
import re

import numpy as np
import pytest

from helpers import miplib, mixed_problem
from lns import SolutionFileError, SolveParams, solve
from lns.core.search.result import Callback
from lns.core.search.stop import budget
from lns.core.solvers.protocol import SolveOutcome, SolveStatus
from lns.core.solvers.scip.subsolver import ScipSubSolver

NAN = np.nan


class _Sources(Callback):
    def __init__(self):
        self.sources = []

    def on_improvement(self, improvement):
        self.sources.append(improvement.source)


def _start(start):
    sources = _Sources()
    result = solve(
        mixed_problem(),
        stop=budget(60, 0),
        initial_solution=start,
        seed=0,
        callbacks=[sources],
    )
    return result, sources.sources


@pytest.mark.parametrize(
    "start", [{"y1": 1, "z2": 3}, np.array([1, NAN, NAN, 3, NAN])], ids=["dict", "nan_vector"]
)
def test_a_partial_start_is_completed_around_its_fixed_values(start):
    result, sources = _start(start)
    # y1 = 1 and z2 = 3 fixed; the best completion is the optimum y2 = 1, z1 = 3, w = 0.5.
    assert result.x[0] == 1 and result.x[3] == 3
    assert result.objective == pytest.approx(-14.25) and result.feasibility.feasible
    assert set(sources) == {"user"}


def test_a_sol_file_whose_unlisted_zeros_are_feasible_is_taken_as_it_is(tmp_path):
    path = tmp_path / "start.sol"
    path.write_text("objective value: -9\ny1 1\nz2 3\n")
    result, sources = _start(path)
    np.testing.assert_array_equal(result.x, [1, 0, 0, 3, 0])
    assert result.objective == -9 and sources == ["user"]


def test_a_sol_file_whose_zeros_are_infeasible_is_a_partial_start(tmp_path):
    path = tmp_path / "start.sol"
    path.write_text("z2 -2\n")  # z1 + z2 >= 0 fails at z1 = 0: z1 is completed, not read as zero
    result, _ = _start(path)
    # Best with z2 = -2: y = (1, 1), z1 = 3, w = 0.5: -3 - 2 - 3 + 4 - 0.25.
    assert result.x[3] == -2 and result.objective == pytest.approx(-4.25)


@pytest.mark.parametrize(
    "start, reason",
    [
        ({"y1": 0.5}, "integer variable 'y1' = 0.5 is fractional"),
        ({"z1": 9}, r"'z1' = 9 is outside its bounds \[0, 4\]"),
        ({"y1": 0, "z1": 4}, "SCIP found no completion: infeasible"),  # z1 - 3 y1 <= 1 fails
        (
            np.array([0, 0, 4, 0, 0.0]),
            "SCIP found no completion: infeasible",
        ),  # complete, infeasible
    ],
)
def test_an_unusable_start_warns_and_falls_back_to_scip(start, reason, caplog):
    with caplog.at_level(logging.WARNING, logger="lns"):
        result, sources = _start(start)
    assert re.search(reason, caplog.text), caplog.text
    assert "finding a first solution without it" in caplog.text
    assert result.feasibility.feasible and "initial" in sources and "user" not in sources


@pytest.mark.parametrize(
    "start, message",
    [
        ({"nope": 1}, "initial_solution: variable 'nope' is not in problem mixed"),
        ({"y1": "one"}, "initial_solution: value 'one' of 'y1' is not a number"),
        ({"y1": float("inf")}, "initial_solution: value inf of 'y1' is not finite"),
        (
            np.zeros(3),
            r"initial_solution: expected 5 values \(one per variable of mixed\), got shape",
        ),
    ],
)
def test_a_malformed_start_is_an_error_naming_it(start, message):
    with pytest.raises(SolutionFileError, match=message):
        _start(start)


def test_a_complete_feasible_start_is_not_solved_again(monkeypatch):
    def no_solve(*args, **kwargs):
        raise AssertionError("a feasible start needs no solve")

    monkeypatch.setattr(ScipSubSolver, "solve", no_solve)
    result, sources = _start(np.array([1, 1, 3, 3, 0.5]))
    assert result.objective == -14.25 and sources == ["user"]


def test_an_empty_sol_file_is_completed_by_a_solve_of_everything(tmp_path):
    path = tmp_path / "empty.sol"
    path.write_text("")  # all zeros is infeasible for p0201: every variable is unassigned
    sources = _Sources()
    result = solve(
        miplib("p0201"),
        stop=budget(60, 0),
        initial_solution=path,
        seed=0,
        callbacks=[sources],
        params=SolveParams.from_dict({"sub_solve.time_limit": 0.5}),
    )
    assert result.feasibility.feasible and set(sources.sources) == {"user"}


def test_an_interrupt_during_the_completion_keeps_no_warning_and_stops(caplog):
    def interrupted(*args, **kwargs):
        return SolveOutcome(SolveStatus.INTERRUPTED)

    with pytest.MonkeyPatch.context() as patch, caplog.at_level(logging.WARNING, logger="lns"):
        patch.setattr(ScipSubSolver, "solve", interrupted)
        result, sources = _start({"y1": 1})
    assert result.stop_reason == "interrupted" and result.x is None and sources == []
    assert "cannot be completed" not in caplog.text
