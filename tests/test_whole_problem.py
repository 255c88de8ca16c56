"""When the loop tries the whole problem, and for how long."""

import pytest

from lns.core.search.whole_problem import FIRST_FRACTION, SHARE, WholeProblemAttempts


def test_the_attempts_double_up_to_a_sub_solve_limit_and_stay_within_a_share_of_the_run():
    attempts = WholeProblemAttempts(time_limit=4.0)
    first = attempts.limit(elapsed=0.1)  # the first one at once
    assert first == pytest.approx(FIRST_FRACTION * 4.0)
    attempts.attempted(first, first)
    limits, elapsed = [], 0.1
    while not attempts.done:
        if (limit := attempts.limit(elapsed)) is not None:
            assert attempts.spent + limit <= SHARE * elapsed
            limits.append(limit)
            attempts.attempted(limit, limit)
        elapsed += 0.5
        assert elapsed < 1000, "the attempts never reached the sub-solve's limit"
    assert limits == pytest.approx([0.4, 0.8, 1.6, 3.2, 4.0])
    assert attempts.limit(1e9) is None  # done after the attempt at the full limit


def test_an_attempt_that_ended_early_counts_its_seconds_not_its_limit():
    attempts = WholeProblemAttempts(time_limit=4.0)
    attempts.attempted(0.01, 0.2)
    assert attempts.limit(elapsed=(0.01 + 0.4) / SHARE - 0.01) is None
    assert attempts.limit(elapsed=(0.01 + 0.4) / SHARE + 0.01) == pytest.approx(0.4)


def test_without_the_clock_there_is_one_attempt_under_the_sub_solve_limit():
    attempts = WholeProblemAttempts(time_limit=4.0, timed=False)
    assert attempts.limit(elapsed=0.0) == 4.0
    attempts.attempted(0.5, 4.0)
    assert attempts.limit(elapsed=1e9) is None


def test_an_attempt_that_was_abandoned_is_the_last():
    attempts = WholeProblemAttempts(time_limit=4.0)
    attempts.attempted(1.2, 0.2, abandoned=True)
    assert attempts.limit(elapsed=1e9) is None
