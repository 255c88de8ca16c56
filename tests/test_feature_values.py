"""CL-LNS features against numbers computed by hand on a two-variable problem.

    min -2x - y   (or max 2x + y: the features are those of the minimisation)
    s.t. r1:  x + y <= 4
         r2:  x - y >= 1
         x integer in [0, 10], y continuous in [0, 3]

LP optimum x = 4, y = 0 (value -8; the vertex (2.5, 1.5) gives -6.5). At it r1 and y >= 0
bind, r2 has slack 3. Duals (minimisation, d_j = c_j - A_j' pi): x is basic, so
0 = -2 - pi_1 and pi_1 = -2, pi_2 = 0; the reduced cost of y is -1 - pi_1 = 1 >= 0 at its lower
bound. Split rows: node 0 is r1 (x + y <= 4), node 1 is r2's lower side (-x + y <= -1); both
rows have norm sqrt(2); max|c| = 2.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from learning.features import ConsFeature, EdgeFeature, FeatureExtractor, VarFeature
from lns.core.problem import Problem

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
