"""Metrics on hand-computed trajectories.

Berthold (2013)'s primal gap and integral, survival and best-performing rates.
"""

import numpy as np
import pytest

from lns.core.search.metrics import (
    best_found,
    best_performing_rate,
    first_improvement_time,
    gap_at,
    gap_curves,
    primal_gap,
    primal_integral,
    primal_integrals,
    survival_rate,
    time_to_gap,
)


@pytest.mark.parametrize(
    "value, reference, gap",
    [
        (0.0, 0.0, 0.0),
        (None, 5.0, 1.0),
        (5.0, None, 1.0),
        (-1.0, 2.0, 1.0),
        (12.0, 10.0, 2 / 12),
        (8.0, 10.0, 0.2),
        (-8.0, -10.0, 0.2),
        (10.0, 10.0, 0.0),
    ],
)
def test_primal_gap(value, reference, gap):
    assert primal_gap(value, reference) == pytest.approx(gap)


def test_no_solution_at_all_integrates_to_the_time_limit():
    assert primal_integral([], 10.0, 7.0) == pytest.approx(7.0)
    assert primal_integral([(0.0, None), (3.0, None)], 10.0, 7.0) == pytest.approx(7.0)
    assert gap_at([], 10.0, 5.0) == 1.0


def test_time_to_within_a_gap():
    trajectory = [(1.0, 20.0), (3.0, 10.5), (7.0, 10.05)]  # minimisation, reference 10
    assert time_to_gap(trajectory, 10.0, 0.01, 60.0) == 7.0  # 0.5% from 7 s on
    assert time_to_gap(trajectory, 10.0, 0.05, 60.0) == 3.0  # 4.8% from 3 s on
    assert time_to_gap(trajectory, 10.0, 0.001, 60.0) == 60.0  # never that close
    assert time_to_gap(trajectory, 10.0, 0.01, 5.0) == 5.0  # not within the limit
    assert time_to_gap([], 10.0, 0.01, 60.0) == 60.0


def test_time_to_the_first_improvement():
    trajectory = [(0.0, None), (1.0, 20.0), (3.0, 10.5)]
    assert first_improvement_time(trajectory, 60.0) == 3.0
    assert first_improvement_time(trajectory, 2.0) == 2.0  # not within the limit
    assert first_improvement_time(trajectory[:2], 60.0) == 60.0  # the first solution only


def test_first_solution_late():
    # gap 1 on [0, 4), then |12 - 10| / 12 on [4, 10]
    assert primal_integral([(4.0, 12.0)], 10.0, 10.0) == pytest.approx(4.0 + 6.0 * 2 / 12)
    assert gap_at([(4.0, 12.0)], 10.0, 3.99) == 1.0
    assert gap_at([(4.0, 12.0)], 10.0, 4.0) == pytest.approx(2 / 12)


def test_none_entry_before_the_first_solution():
    assert primal_integral([(0.0, None), (2.0, 10.0)], 10.0, 4.0) == pytest.approx(2.0)


def test_sign_change():
    # minimisation with p* = -10: 5 has the other sign (gap 1), then -5 (gap 0.5)
    trajectory = [(1.0, 5.0), (3.0, -5.0)]
    assert primal_integral(trajectory, -10.0, 5.0) == pytest.approx(1.0 + 2.0 * 1.0 + 2.0 * 0.5)


def test_maximisation():
    # a knapsack with optimum 23 found at 2.5 s: gaps 13/23 on [0, 2), 3/23 on [2, 2.5), 0 after
    trajectory = [(0.0, 10.0), (2.0, 20.0), (2.5, 23.0)]
    assert primal_integral(trajectory, 23.0, 4.0) == pytest.approx((2.0 * 13 + 0.5 * 3) / 23)
    assert gap_at(trajectory, 23.0, 4.0) == 0.0
    assert best_found([10.0, None, 23.0, 20.0], "maximize") == 23.0
    assert best_found([10.0, None, 23.0, 20.0], "minimize") == 10.0
    assert best_found([None], "maximize") is None


def test_run_shorter_than_the_time_limit_keeps_its_last_value_and_later_points_are_ignored():
    assert primal_integral([(1.0, 12.0)], 10.0, 10.0) == pytest.approx(1.0 + 9.0 * 2 / 12)
    assert primal_integral([(1.0, 12.0), (20.0, 10.0)], 10.0, 10.0) == pytest.approx(
        1.0 + 9.0 * 2 / 12
    )
    assert gap_at([(1.0, 12.0), (20.0, 10.0)], 10.0, 10.0) == pytest.approx(2 / 12)


def test_unsorted_trajectory_is_rejected():
    with pytest.raises(ValueError, match="non-decreasing"):
        primal_integral([(2.0, 1.0), (1.0, 2.0)], 1.0, 5.0)


def test_array_forms_agree_with_the_scalar_functions():
    trajectories = [[], [(4.0, 12.0)], [(0.0, 10.0), (2.0, 20.0), (2.5, 23.0)]]
    references = [10.0, 10.0, 23.0]
    times = np.array([0.0, 1.0, 2.0, 2.5, 4.0, 9.0])
    curves = gap_curves(trajectories, references, times)
    assert curves.shape == (3, 6)
    expected = [
        [gap_at(t, p, s) for s in times] for t, p in zip(trajectories, references, strict=True)
    ]
    np.testing.assert_allclose(curves, expected)
    np.testing.assert_allclose(
        primal_integrals(trajectories, references, 10.0),
        [primal_integral(t, p, 10.0) for t, p in zip(trajectories, references, strict=True)],
    )
    # the integral is the area under the step curve (right Riemann sum on a fine grid)
    grid = np.linspace(0, 10, 100001)
    fine = gap_curves(trajectories, references, grid)
    np.testing.assert_allclose(
        fine[:, :-1].sum(axis=1) * (grid[1] - grid[0]),
        primal_integrals(trajectories, references, 10.0),
        atol=1e-3,
    )


def test_survival_rate():
    gaps = np.array([[1.0, 0.5, 0.0], [1.0, 0.01, 0.01], [1.0, 1.0, 0.2]])
    np.testing.assert_allclose(survival_rate(gaps, 0.01), [0.0, 1 / 3, 2 / 3])
    assert survival_rate(np.array([0.0, 0.5]), 0.1) == pytest.approx(0.5)


def test_best_performing_rate_counts_ties_for_each_method():
    gaps = np.array(
        [
            [0.0, 0.2, 0.5],  # method A: best on instance 0 (tied) and 1
            [0.0, 0.3, 0.1],  # method B: best on instance 0 (tied) and 2
            [0.4, 0.9, 0.9],
        ]
    )  # method C: never
    np.testing.assert_allclose(best_performing_rate(gaps), [2 / 3, 2 / 3, 0.0])
    over_time = best_performing_rate(np.stack([gaps, gaps[::-1]], axis=-1))
    assert over_time.shape == (3, 2)
    with pytest.raises(ValueError):
        best_performing_rate(np.zeros(3))


def test_shifted_geometric_mean_ignores_missing_runs():
    from lns.core.search.metrics import shifted_geometric_mean

    assert shifted_geometric_mean([0.0, 3.0, float("nan")]) == pytest.approx(1.0)  # sqrt(1*4)-1
    assert shifted_geometric_mean([2.0, 2.0], shift=10) == pytest.approx(2.0)
    assert np.isnan(shifted_geometric_mean([float("nan")]))
