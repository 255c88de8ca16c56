"""The adaptive time limit of the sub-solves."""

import pytest

from lns.core.errors import InvalidArgumentError
from lns.core.search.sub_solve_limit import FLOOR_SHARE, SubSolveLimit


def test_an_idle_time_out_halves_the_limit_down_to_its_floor():
    limit = SubSolveLimit(8.0)
    limit.update(timed_out=True, complete=False, took=8.0, last_found=None)
    assert limit.seconds == 4.0
    limit.update(timed_out=True, complete=False, took=4.0, last_found=1.0)  # found early
    assert limit.seconds == 2.0
    for _ in range(5):
        limit.update(timed_out=True, complete=False, took=limit.seconds, last_found=None)
    assert limit.seconds == FLOOR_SHARE * 8.0


def test_a_late_solution_or_a_late_end_doubles_it_up_to_the_configured_limit():
    limit = SubSolveLimit(8.0)
    limit.update(timed_out=True, complete=False, took=8.0, last_found=None)
    limit.update(timed_out=True, complete=False, took=4.0, last_found=None)
    assert limit.seconds == 2.0
    limit.update(timed_out=True, complete=False, took=2.0, last_found=1.5)  # still finding
    assert limit.seconds == 4.0
    limit.update(timed_out=False, complete=True, took=3.0, last_found=None)  # proved late
    assert limit.seconds == 8.0
    limit.update(timed_out=False, complete=True, took=7.0, last_found=6.0)
    assert limit.seconds == 8.0


def test_quick_sub_solves_leave_it_alone_and_a_fixed_limit_never_moves():
    limit = SubSolveLimit(8.0)
    limit.update(timed_out=True, complete=False, took=8.0, last_found=None)
    limit.update(timed_out=False, complete=True, took=0.1, last_found=0.05)
    limit.update(timed_out=False, complete=False, took=0.3, last_found=None)  # a node limit
    assert limit.seconds == 4.0
    fixed = SubSolveLimit(8.0, adapt=False)
    fixed.update(timed_out=True, complete=False, took=8.0, last_found=None)
    assert fixed.seconds == 8.0


def test_a_limit_must_be_positive():
    with pytest.raises(InvalidArgumentError, match="limit"):
        SubSolveLimit(0.0)
