import numpy as np
import pytest
import scipy.sparse as sp

from helpers import knapsack, miplib, mixed_problem
from lns import (
    InfeasibleProblemError,
    Problem,
    SizeParams,
    SolutionFileError,
    SolveParams,
    SubSolveParams,
    UnboundedProblemError,
    UnknownNameError,
    read_problem,
    solve,
    solve_scip,
)
from lns.core.problem.solu_file import known_objective
from lns.core.problem.solution_file import read_sol
from lns.core.search.result import Callback
from lns.core.search.stop import budget
from lns.core.solvers.scip.subsolver import ScipSubSolver

# Small neighbourhoods first, growing to the whole problem: the last iterations prove optimality.
EXACT = SolveParams(
    size=SizeParams(initial_fraction=0.3, growth=2.0, max_fraction=1.0),
    sub_solve=SubSolveParams(node_limit=100000),
)


@pytest.mark.parametrize("name", ["bell5", "p0201", "p0282"])
def test_reaches_known_optimum_under_an_iteration_limit(name):
    result = solve(miplib(name), stop=budget(None, 40), seed=0, params=EXACT)
    assert result.status == "optimal" and result.stop_reason == "optimal"
    assert result.objective == pytest.approx(known_objective(miplib(name)), rel=1e-6)
    assert result.feasibility.feasible


def test_every_solution_is_feasible_and_the_trajectory_improves():
    result = solve(
        miplib("p0201"),
        stop=budget(60, 15),
        seed=3,
        params=SolveParams.from_dict({"size.initial_fraction": 0.1}),
    )
    problem = read_problem(miplib("p0201"))
    assert problem.check(result.x).feasible
    assert result.objective == pytest.approx(problem.objective_value(result.x))
    objectives = [value for _, value in result.trajectory]
    assert objectives == sorted(objectives, reverse=True) and len(set(objectives)) == len(
        objectives
    )
    times = [t for t, _ in result.trajectory]
    assert times == sorted(times)
    assert objectives[-1] == result.objective
    assert result.solution[problem.var_names[0]] == result.x[0]


def test_same_seed_and_iteration_limit_repeat_exactly():
    runs = [
        solve(
            miplib("misc07"),
            stop=budget(60, 12),
            seed=7,
            params=SolveParams.from_dict(
                {"size.initial_fraction": 0.2, "sub_solve.node_limit": 500}
            ),
        )
        for _ in range(2)
    ]
    assert [v for _, v in runs[0].trajectory] == [v for _, v in runs[1].trajectory]
    assert [r.neighborhood_size for r in runs[0].iterations] == [
        r.neighborhood_size for r in runs[1].iterations
    ]
    np.testing.assert_array_equal(runs[0].x, runs[1].x)


def test_maximisation_reaches_the_knapsack_optimum():
    result = solve(knapsack("maximize"), stop=budget(60, 10), params=EXACT)
    assert result.objective == pytest.approx(23.0)
    assert result.solution == {"a": 1.0, "b": 1.0, "c": 0.0, "d": 0.0}


def test_general_integers_and_continuous_variables():
    result = solve(mixed_problem(), stop=budget(60, 10), params=EXACT)
    assert result.objective == pytest.approx(-14.25)
    assert result.status == "optimal"


def test_time_limit_is_kept_and_counts_everything():
    result = solve(miplib("air05"), stop=3.0, seed=0)
    assert result.stop_reason == "time_limit"  # how late: benchmarks/test_run_control.py
    assert result.x is not None and result.feasibility.feasible
    assert result.trajectory[-1][0] <= result.runtime


def test_plain_scip_method_gives_a_like_for_like_result():
    result = solve_scip(miplib("p0201"), stop=30)
    assert result.method == "scip" and result.selector is None and result.iterations == []
    assert result.status == "optimal" and result.objective == pytest.approx(7615)
    assert result.dual_bound == pytest.approx(7615)
    assert len(result.trajectory) >= 1 and result.trajectory[-1][1] == result.objective


def test_problem_without_integer_variables_is_solved_directly(caplog):
    problem = Problem(
        name="lp",
        var_names=("x", "y"),
        var_types=np.array(["C", "C"]),
        lower=np.zeros(2),
        upper=np.array([4.0, 4.0]),
        objective=np.array([-1.0, -2.0]),
        objective_offset=0.0,
        sense="minimize",
        matrix=sp.csr_matrix(np.array([[1.0, 1.0]])),
        row_lower=np.array([-np.inf]),
        row_upper=np.array([5.0]),
        row_names=("c",),
    )
    with caplog.at_level("INFO", logger="lns"):
        result = solve(problem)
    assert "no integer variables: solved directly by SCIP" in caplog.text
    assert result.stop_reason == "no_integer_variables" and result.status == "optimal"
    assert result.objective == pytest.approx(-9.0)


def _one_row(lower, upper, var_upper=1.0, vtype="B", sense="minimize", objective=1.0):
    return Problem(
        name="tiny",
        var_names=("x",),
        var_types=np.array([vtype]),
        lower=np.zeros(1),
        upper=np.array([var_upper]),
        objective=np.array([objective]),
        objective_offset=0.0,
        sense=sense,
        matrix=sp.csr_matrix(np.array([[1.0]])),
        row_lower=np.array([lower]),
        row_upper=np.array([upper]),
        row_names=("c",),
    )


def test_infeasible_problem_raises_a_typed_error(tmp_path):
    path = _one_row(2.0, np.inf).write(tmp_path / "infeasible.lp")
    with pytest.raises(
        InfeasibleProblemError, match="infeasible.lp: SCIP proved the problem infeasible"
    ):
        solve(path, stop=10)


def test_unbounded_problem_raises_a_typed_error(tmp_path):
    path = _one_row(0.0, np.inf, var_upper=np.inf, vtype="I", sense="maximize").write(
        tmp_path / "unbounded.lp"
    )
    with pytest.raises(UnboundedProblemError, match="unbounded.lp"):
        solve(path, stop=10)


def test_no_solution_within_the_budget_is_a_status_not_a_crash():
    result = solve(miplib("air05"), stop=0.05)
    assert result.status == "no_solution" and result.objective is None and result.x is None


def test_unknown_names_and_options_are_rejected():
    with pytest.raises(
        UnknownNameError, match=r"Could not resolve selector 'nope' among choices \[.*'random'"
    ):
        solve(miplib("p0201"), selector="nope")
    with pytest.raises(UnknownNameError, match="sub_solve parameter 'bogus'"):
        SolveParams.from_dict({"sub_solve": {"bogus": 1}})
    with pytest.raises(TypeError, match="params: expected lns.SolveParams"):
        solve(miplib("p0201"), params={"sub_solve": {"node_limit": 1}})


def test_initial_solution_from_a_sol_file_and_out(tmp_path):
    first = solve(miplib("p0201"), stop=budget(60, 2), out=tmp_path / "first.sol")
    problem = read_problem(miplib("p0201"))
    np.testing.assert_array_equal(read_sol(tmp_path / "first.sol", problem), first.x)
    again = solve(miplib("p0201"), stop=budget(60, 3), initial_solution=tmp_path / "first.sol")
    assert again.trajectory[0][1] == first.objective
    assert again.iterations[0].objective_before == first.objective  # the search goes on from it


def test_sol_file_is_readable_by_scip(tmp_path):
    result = solve(miplib("p0201"), stop=budget(60, 2))
    result.write_sol(tmp_path / "best.sol")
    solver = ScipSubSolver(read_problem(miplib("p0201")))
    solution = solver.model.readSolFile(str(tmp_path / "best.sol"))
    assert solver.model.getSolObjVal(solution, original=True) == pytest.approx(result.objective)


def test_bad_initial_solutions_are_named(tmp_path):
    bad = tmp_path / "bad.sol"
    bad.write_text("objective value: 3\nnot_a_variable 1\n")
    with pytest.raises(
        SolutionFileError, match="bad.sol:2: variable 'not_a_variable' is not in problem p0201"
    ):
        solve(miplib("p0201"), initial_solution=bad)
    with pytest.raises(SolutionFileError, match="missing.sol: no such file"):
        solve(miplib("p0201"), initial_solution=tmp_path / "missing.sol")


class _InterruptAfter(Callback):
    def __init__(self, iterations):
        self.iterations = iterations

    def on_iteration(self, record):
        if record.iteration + 1 >= self.iterations:
            raise KeyboardInterrupt


def test_interrupt_returns_the_best_solution_and_writes_out(tmp_path):
    result = solve(
        miplib("air05"), stop=60, callbacks=[_InterruptAfter(3)], out=tmp_path / "best.sol"
    )
    assert result.stop_reason == "interrupted" and len(result.iterations) == 3
    assert result.x is not None and result.feasibility.feasible
    assert (tmp_path / "best.sol").exists()


def test_iteration_records_and_dataframe():
    result = solve(
        miplib("p0201"),
        stop=budget(60, 5),
        params=SolveParams.from_dict({"start.strategy": "first"}),
    )
    frame = result.to_dataframe()
    assert list(frame["iteration"]) == [0, 1, 2, 3, 4]
    assert set(frame.columns) >= {
        "selector",
        "neighborhood_size",
        "status",
        "select_time",
        "solve_time",
        "objective_before",
        "objective_after",
        "improved",
    }
    stats = result.statistics()
    assert stats["neighborhood_size"].shape == (5,)
    assert (frame["improved"] == (frame["objective_after"] < frame["objective_before"])).all()
    assert frame["improved"].any()  # p0201's first solution is far from its optimum
    assert 0 < result.solver_time < result.runtime


def test_initial_time_limit_without_a_solution_searches_on():
    result = solve(
        miplib("air05"),
        stop=budget(60, 1),
        params=SolveParams.from_dict({"start.time_limit": 0.01}),
    )
    assert result.x is not None and result.trajectory[0][0] > 0.01
