"""CL-LNS features against numbers computed by hand on a two-variable problem.

    min -2x - y   (or max 2x + y: the features are those of the minimisation)
    s.t. r1:  x + y <= 4
         r2:  x - y >= 1
         x integer in [0, 10], y continuous in [0, 3]

LP optimum x = 4, y = 0 (value -8; the vertex (2.5, 1.5) gives -6.5). At it r1 and y >= 0
bind, r2 has slack 3. Duals (minimisation, d_j = c_j - A_j' pi): x is basic, so
0 = -2 - pi_1 and pi_1 = -2, pi_2 = 0; the reduced cost of y is -1 - pi_1 = 1 >= 0 at its lower
bound. Split rows: node 0 is r1 (x + y <= 4), node 1 is r2's lower side (-x + y <= -1); both
rows have norm sqrt(2); max|c| = 2. In the root LP's basis x and r2's slack are basic, y is
at its lower bound.

The Local Branching LP around the incumbent (3, 0) with radius k = 0.5: x is a general integer
inside its bounds, so the distance is an auxiliary d >= |x - 3| with d <= 0.5. Along r1
(x + y = 4) the objective is -x - 4, so x goes as far as the ball allows: x = 3.5, y = 0.5
(value -7.5; r2 has slack 2). x, y and d are basic, so both reduced costs are 0; LB-RELAX's
Δ is |3.5 - 3| = 0.5 for x and, y being continuous, 0.

The three-binary problem ``max 3a + 2b + c s.t. a + b + c <= 2`` around (0, 0, 1), k = 0.5:
the distance a + b + (1 - c) <= 0.5 is a + b - c <= -0.5, so c = 1, a + b <= 0.5 and the LP
puts the weight on a: (0.5, 0, 1), value 2.5, the capacity row slack. With a basic, the
distance row's dual (minimisation, c = (-3, -2, -1)) is pi = -3, so the reduced costs are
0, -2 - pi = 1 (b at its lower bound) and -1 + pi = -4 (c at its upper bound); max|c| = 3.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from helpers import knapsack, mixed_problem
from learning.features import (
    VARIABLE_COLUMNS,
    ConsFeature,
    EdgeFeature,
    ExtraVarFeature,
    FeatureExtractor,
    VarFeature,
    default_radius,
    resolve_columns,
)
from lns.core.errors import UnknownNameError
from lns.core.problem.mip import Problem

SQRT2 = np.sqrt(2.0)


def two_variable_problem(sense: str) -> Problem:
    objective = np.array([-2.0, -1.0]) if sense == "minimize" else np.array([2.0, 1.0])
    return Problem(
        name=f"two_{sense}",
        var_names=("x", "y"),
        var_types=np.array(["I", "C"]),
        lower=np.zeros(2),
        upper=np.array([10.0, 3.0]),
        objective=objective,
        objective_offset=0.0,
        sense=sense,
        matrix=sp.csr_matrix(np.array([[1.0, 1.0], [1.0, -1.0]])),
        row_lower=np.array([-np.inf, 1.0]),
        row_upper=np.array([4.0, np.inf]),
        row_names=("r1", "r2"),
    )


@pytest.fixture(params=["minimize", "maximize"])
def extractor(request):
    return FeatureExtractor(two_variable_problem(request.param))


def test_lp_values_and_reduced_costs(extractor):
    v = extractor.observe(np.array([3.0, 0.0])).variable_features
    np.testing.assert_allclose(extractor.lp.x, [4, 0], atol=1e-9)
    assert v[:, VarFeature.OBJECTIVE] == pytest.approx([-1, -0.5])
    assert v[:, VarFeature.LP_VALUE] == pytest.approx([np.log(5), 0])
    assert v[:, VarFeature.LP_FRACTIONALITY] == pytest.approx([0, 0])
    assert v[:, VarFeature.LP_AT_LOWER].tolist() == [0, 1]
    assert v[:, VarFeature.LP_AT_UPPER].tolist() == [0, 0]
    assert v[:, VarFeature.REDUCED_COST] == pytest.approx([0, 0.5], abs=1e-7)  # d / max|c|
    assert v[:, VarFeature.UPPER] == pytest.approx([np.log(11), np.log(4)])
    assert v[:, VarFeature.DEGREE] == pytest.approx([1, 1])
    # Normalised coefficients of x: 1/sqrt2 in node 0, -1/sqrt2 in node 1; of y: 1/sqrt2 in both.
    assert v[:, VarFeature.COEF_MEAN] == pytest.approx([0, 1 / SQRT2])
    assert v[:, VarFeature.COEF_MIN] == pytest.approx([-1 / SQRT2, 1 / SQRT2])
    assert v[:, VarFeature.COEF_MAX] == pytest.approx([1 / SQRT2, 1 / SQRT2])
    # At the incumbent (3, 0): slog(3) and slog(|3 - 4|).
    assert v[:, VarFeature.INCUMBENT] == pytest.approx([np.log(4), 0])
    assert v[:, VarFeature.INCUMBENT_LP_DISTANCE] == pytest.approx([np.log(2), 0])


def test_duals_slacks_and_constraint_columns(extractor):
    c = extractor.observe(np.array([3.0, 0.0])).constraint_features
    assert extractor.rhs.tolist() == [4, -1]
    assert c[:, ConsFeature.RHS] == pytest.approx([4 / SQRT2, -1 / SQRT2])
    assert c[:, ConsFeature.IS_LOWER_SIDE].tolist() == [0, 1]
    assert c[:, ConsFeature.IS_EQUALITY].tolist() == [0, 0]
    # cos(a, c) with c = (-2, -1): (1, 1) gives -3/sqrt10, (-1, 1) gives 1/sqrt10.
    assert c[:, ConsFeature.OBJ_COSINE] == pytest.approx([-3 / np.sqrt(10), 1 / np.sqrt(10)])
    # pi_1 = -2 times ||a|| / max|c|; r2 is not binding.
    assert c[:, ConsFeature.LP_DUAL] == pytest.approx([-SQRT2, 0], abs=1e-6)
    assert c[:, ConsFeature.LP_SLACK] == pytest.approx([0, np.log1p(3 / SQRT2)], abs=1e-7)
    assert c[:, ConsFeature.LP_TIGHT].tolist() == [1, 0]
    # At (3, 0): r1 slack 1, r2's node -x + y <= -1 slack 2.
    assert c[:, ConsFeature.INCUMBENT_SLACK] == pytest.approx(np.log1p([1 / SQRT2, 2 / SQRT2]))
    assert c[:, ConsFeature.INCUMBENT_TIGHT].tolist() == [0, 0]


def test_edge_columns(extractor):
    observation = extractor.observe(np.array([3.0, 0.0]))
    pairs = observation.edge_index.T.tolist()
    edges = {(i, j): row for (i, j), row in zip(pairs, observation.edge_features, strict=True)}
    assert sorted(edges) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    log2 = np.log(2)
    expected = {  # slog(a), a / ||a||, slog(a / max(1e-6, |b|)) with b = 4 (node 0) and -1 (node 1)
        (0, 0): [log2, 1 / SQRT2, np.log(1.25)],
        (0, 1): [log2, 1 / SQRT2, np.log(1.25)],
        (1, 0): [-log2, -1 / SQRT2, -log2],
        (1, 1): [log2, 1 / SQRT2, log2],
    }
    columns = [EdgeFeature.COEF, EdgeFeature.COEF_NORMALIZED, EdgeFeature.COEF_OVER_RHS]
    for key, values in expected.items():
        assert edges[key][columns] == pytest.approx(values), key


def three_binaries(sense: str) -> Problem:
    objective = np.array([3.0, 2.0, 1.0]) * (1 if sense == "maximize" else -1)
    return Problem(
        name=f"three_{sense}",
        var_names=("a", "b", "c"),
        var_types=np.array(["B", "B", "B"]),
        lower=np.zeros(3),
        upper=np.ones(3),
        objective=objective,
        objective_offset=0.0,
        sense=sense,
        matrix=sp.csr_matrix(np.ones((1, 3))),
        row_lower=np.array([-np.inf]),
        row_upper=np.array([2.0]),
        row_names=("capacity",),
    )


def _all_columns(observation):
    """The variable features of an extractor of every column, by column name."""
    return dict(zip(VARIABLE_COLUMNS, observation.variable_features.T, strict=True))


@pytest.mark.parametrize("sense", ["minimize", "maximize"])
def test_root_basis_and_local_branching_lp_of_a_general_integer(sense):
    extractor = FeatureExtractor(two_variable_problem(sense), variable_columns="all")
    v = _all_columns(extractor.observe(np.array([3.0, 0.0]), radius=0.5))
    assert v["LP_BASIS_BASIC"].tolist() == [1, 0]
    assert v["LP_BASIS_LOWER"].tolist() == [0, 1]
    assert v["LP_BASIS_UPPER"].tolist() == [0, 0]
    assert v["LB_LP_VALUE"] == pytest.approx(np.log1p([3.5, 0.5]))
    assert v["LB_LP_DELTA"] == pytest.approx([0.5, 0])
    assert v["LB_LP_REDUCED_COST"] == pytest.approx([0, 0], abs=1e-7)


@pytest.mark.parametrize("sense", ["minimize", "maximize"])
def test_local_branching_lp_of_binaries_and_its_history(sense):
    problem = three_binaries(sense)
    extractor = FeatureExtractor(problem, variable_columns="all")
    first, second = np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0])
    v = _all_columns(extractor.observe(first, radius=0.5))
    assert v["LB_LP_VALUE"] == pytest.approx(np.log1p([0.5, 0, 1]))
    assert v["LB_LP_DELTA"] == pytest.approx([0.5, 0, 0])
    assert v["LB_LP_REDUCED_COST"] == pytest.approx([0, 1 / 3, -4 / 3], abs=1e-7)
    assert not v["HISTORY_1_LB_VALUE"].any()
    # The next incumbent's history slot 1 holds the LB LP solved when `first` was current.
    v = _all_columns(extractor.observe(second, [first, np.zeros(3)], radius=0.5))
    assert v["HISTORY_1_LB_VALUE"] == pytest.approx(np.log1p([0.5, 0, 1]))
    assert v["HISTORY_1_VALUE"] == pytest.approx(np.log1p(first))
    assert not v["HISTORY_2_LB_VALUE"].any()  # never observed while current
    assert v["HISTORY_2_PRESENT"].all() and not v["HISTORY_3_PRESENT"].any()
    # Without a radius: the loop's first neighborhood size (20% of 3 variables: 1).
    assert default_radius(problem) == 1
    np.testing.assert_array_equal(
        extractor.observe(second).variable_features,
        extractor.observe(second, radius=1).variable_features,
    )


@pytest.mark.parametrize(
    "problem, incumbent",
    [
        (two_variable_problem("maximize"), np.array([3.0, 0.0])),
        (mixed_problem(), np.array([1, 1, 3, 3, 0.5])),
        (knapsack(), np.array([1.0, 0.0, 1.0, 0.0])),
    ],
    ids=["two", "mixed", "knapsack"],
)
def test_default_columns_are_the_base_columns_and_selections_pick_by_name(problem, incumbent):
    history = [np.zeros(problem.n_vars)]
    base = FeatureExtractor(problem)
    observation = base.observe(incumbent, history)
    assert base.variable_columns == tuple(f.name for f in VarFeature)
    assert base.spec["variable"] == [f.name for f in VarFeature]
    assert base.lp.basis is None and base._lb_lp is None  # noqa: SLF001 - nothing extra computed
    every = FeatureExtractor(problem, variable_columns="all").observe(incumbent, history)
    np.testing.assert_array_equal(
        every.variable_features[:, : len(VarFeature)], observation.variable_features
    )
    np.testing.assert_array_equal(every.constraint_features, observation.constraint_features)
    picked = FeatureExtractor(problem, variable_columns=["LB_LP_DELTA", "OBJECTIVE"])
    np.testing.assert_array_equal(
        picked.observe(incumbent, history).variable_features,
        every.variable_features[:, [ExtraVarFeature.LB_LP_DELTA, VarFeature.OBJECTIVE]],
    )


def test_column_selections_are_checked_by_name():
    assert resolve_columns("all") == VARIABLE_COLUMNS and len(VARIABLE_COLUMNS) == 34
    with pytest.raises(UnknownNameError, match="variable column 'PSEUDOCOST'"):
        resolve_columns(["OBJECTIVE", "PSEUDOCOST"])
    with pytest.raises(UnknownNameError, match="variable column selection 'most'"):
        resolve_columns("most")
    with pytest.raises(ValueError, match="distinct"):
        resolve_columns(["OBJECTIVE", "OBJECTIVE"])
