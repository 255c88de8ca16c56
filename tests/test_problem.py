import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

from helpers import knapsack, miplib, mixed_problem
from lns.core.errors import ProblemReadError, UnsupportedProblemError
from lns.core.problem.mip import read_problem
from lns.core.solvers.scip.subsolver import ScipSubSolver


@pytest.mark.parametrize(
    "name, rows, cols, integers",
    [
        ("air05", 426, 7195, 7195),
        ("dano3mip", 3202, 13873, 552),
        ("bell5", 91, 104, 58),
        ("timtab1", 171, 397, 171),
    ],
)
def test_read_matches_miplib_sizes(name, rows, cols, integers):
    problem = read_problem(miplib(name))
    assert (problem.n_rows, problem.n_vars, len(problem.integer_indices)) == (rows, cols, integers)
    assert problem.name == name
    assert problem.sense == "minimize"


@pytest.mark.parametrize("suffix", [".mps", ".mps.gz", ".lp"])
def test_write_and_read_back_round_trips(tmp_path, suffix):
    original = mixed_problem()
    again = read_problem(original.write(tmp_path / f"mixed{suffix}"))
    assert sorted(again.var_names) == sorted(original.var_names)
    order = [
        again.var_names.index(name) for name in original.var_names
    ]  # writers may reorder columns
    assert list(again.var_types[order]) == list(original.var_types)
    np.testing.assert_array_equal(again.lower[order], original.lower)
    np.testing.assert_array_equal(again.upper[order], original.upper)
    np.testing.assert_allclose(again.objective[order], original.objective)
    np.testing.assert_allclose(again.matrix.toarray()[:, order], original.matrix.toarray())
    np.testing.assert_array_equal(again.row_lower, original.row_lower)
    np.testing.assert_array_equal(again.row_upper, original.row_upper)


def test_maximisation_sense_survives_writing(tmp_path):
    again = read_problem(knapsack("maximize").write(tmp_path / "k.lp"))
    assert again.sense == "maximize"
    np.testing.assert_allclose(again.objective, [10, 13, 7, 8])


def test_objective_offset_survives_the_scip_model_and_writing(tmp_path):
    problem = dataclasses.replace(knapsack(), objective_offset=5.5)
    assert problem.to_scip().getObjoffset() == 5.5
    again = read_problem(problem.write(tmp_path / "offset.mps"))
    chosen = {"a", "b"}  # the optimum, value 23
    x = np.array([float(name in chosen) for name in again.var_names])
    assert again.objective_offset == 5.5 and again.objective_value(x) == 23.0 + 5.5


def test_the_scip_model_holds_each_row_with_its_sides_and_coefficients():
    """Rows of each kind (at most, at least, ranged, equality, free) reach SCIP with their sides
    and their nonzero coefficients; a zero stored in the matrix is left out."""
    problem = mixed_problem()
    matrix = problem.matrix.toarray()
    matrix = np.vstack(
        [matrix, [1.0, 0.0, 2.0, 0.0, 0.0], [0.0, 1.0, 0.0, 1.0, 0.0], [1, 1, 1, 1, 1]]
    )
    stored = sp.csr_matrix(matrix)
    stored.data[0] = 0.0  # r1's coefficient of y1, kept as a stored zero
    problem = dataclasses.replace(
        problem,
        matrix=stored,
        row_lower=np.array([-np.inf, -np.inf, -np.inf, 0.0, 1.0, 2.0, -np.inf]),
        row_upper=np.array([2.5, 7.0, 1.0, np.inf, 5.0, 2.0, np.inf]),
        row_names=("r1", "r2", "r3", "r4", "ranged", "equal", "free"),
    )
    model = problem.to_scip()
    rows = {row.name: row for row in model.getConss()}
    assert list(rows) == list(problem.row_names)
    for i, name in enumerate(problem.row_names):
        sides = (model.getLhs(rows[name]), model.getRhs(rows[name]))
        lower, upper = problem.row_lower[i], problem.row_upper[i]
        assert sides == (max(lower, -1e20), min(upper, 1e20)), name
        values = model.getValsLinear(rows[name])
        row = stored.getrow(i)
        expected = {
            problem.var_names[j]: a for j, a in zip(row.indices, row.data, strict=True) if a
        }
        assert values == expected, name
    assert "y1" not in model.getValsLinear(rows["r1"])


def test_a_variable_written_twice_in_a_row_keeps_the_sum_of_its_coefficients(tmp_path):
    path = tmp_path / "twice.lp"
    path.write_text(
        "Minimize\n obj: x + y\nSubject To\n c1: x + y + x >= 3\n"
        "Bounds\n 0 <= x <= 1\n 0 <= y <= 5\nGeneral\n x y\nEnd\n"
    )
    problem = read_problem(path)
    assert problem.matrix.toarray().tolist() == [[2.0, 1.0]]
    assert problem.check(np.array([1.0, 1.0])).feasible  # 2 + 1 >= 3; read as x + y, it is not


def test_check_measures_violations():
    problem = mixed_problem()
    optimum = np.array([1, 1, 3, 3, 0.5])
    assert problem.check(optimum).feasible
    assert problem.objective_value(optimum) == pytest.approx(-14.25)
    row = problem.check(np.array([1, 1, 3, 3, 1.5]))
    assert not row.feasible and row.max_row_violation == pytest.approx((3.5 - 2.5) / 2.5)
    fractional = problem.check(np.array([1, 1, 2.5, 3, 0.5]))
    assert not fractional.feasible and fractional.max_integrality_violation == pytest.approx(0.5)
    bound = problem.check(np.array([1, 1, 3, 4, 0.5]))
    assert not bound.feasible and bound.max_bound_violation == pytest.approx(1.0)
    assert not problem.check(np.zeros(3)).feasible


def test_is_better_respects_the_sense():
    assert knapsack("maximize").is_better(24, 23) and not knapsack("maximize").is_better(22, 23)
    assert mixed_problem().is_better(-15, -14.25) and not mixed_problem().is_better(-14.25, -14.25)


def test_model_built_from_arrays_solves_to_the_known_optimum():
    outcome = ScipSubSolver(mixed_problem()).solve(time_limit=10, seed=0)
    assert outcome.status == "optimal"
    assert outcome.best.objective == pytest.approx(-14.25)


def test_missing_file_is_named(tmp_path):
    with pytest.raises(ProblemReadError, match="nothere.mps: no such file"):
        read_problem(tmp_path / "nothere.mps")


def test_malformed_file_reports_scip_reason(tmp_path):
    path = tmp_path / "broken.mps"
    path.write_text("NAME x\nROWS\n N obj\nCOLUMNS\n x obj 1\nBOUNDS\n XX BND x 1\nENDATA\n")
    with pytest.raises(
        ProblemReadError,
        match=r"broken.mps: SCIP could not read the file \(Syntax error in line 6\)",
    ):
        read_problem(path)


def test_file_without_variables_is_rejected(tmp_path):
    path = tmp_path / "empty.lp"
    path.write_text("garbage\n")
    with pytest.raises(ProblemReadError, match="empty.lp"):
        read_problem(path)


def test_nonlinear_constraint_is_named(tmp_path):
    path = tmp_path / "quadratic.lp"
    path.write_text(
        "Minimize\n obj: x + y\nSubject To\n c1: x + y >= 1\n c2: [ x^2 ] <= 4\n"
        "Bounds\n 0 <= x <= 5\nGenerals\n y\nEnd\n"
    )
    with pytest.raises(
        UnsupportedProblemError, match="quadratic.lp: constraint 'c2' is of type 'nonlinear'"
    ):
        read_problem(path)


def _bounds(solver):
    return [(v.getLbOriginal(), v.getUbOriginal()) for v in solver.variables]


def test_kept_fixings_change_only_what_differs_and_are_restored():
    problem = read_problem(miplib("p0201"))
    fresh, kept = ScipSubSolver(problem), ScipSubSolver(problem)
    original = _bounds(kept)
    start = fresh.solve(time_limit=10, seed=0, solution_limit=1).best.x
    rng = np.random.default_rng(0)
    with kept.session():
        for _ in range(5):
            fixed = rng.choice(problem.integer_indices, 150, replace=False)
            free = np.setdiff1d(problem.integer_indices, fixed)
            a = fresh.solve(time_limit=10, seed=1, free=free, start=start)
            b = kept.solve(time_limit=10, seed=1, free=free, start=start)
            assert (a.status, [f.objective for f in a.found]) == (
                b.status,
                [f.objective for f in b.found],
            )
            assert _bounds(fresh) == original  # a solve outside the block restores at once
            if b.best is not None:
                start = b.best.x
    assert _bounds(kept) == original


def test_kept_fixings_are_restored_after_an_error():
    problem = read_problem(miplib("p0201"))
    solver = ScipSubSolver(problem)
    original = _bounds(solver)
    start = solver.solve(time_limit=10, seed=0, solution_limit=1).best.x
    with pytest.raises(RuntimeError), solver.session():
        solver.solve(time_limit=10, seed=0, free=problem.integer_indices[100:], start=start)
        raise RuntimeError
    assert _bounds(solver) == original
