"""What an API user meets first: instances in every form, function selectors, repr, version."""

import re
from importlib import metadata

import numpy as np
import pytest
from pyscipopt import Model

import lns
from helpers import knapsack, miplib
from lns import SolveParams, solve
from lns.core.problem.mip import read_problem
from lns.core.problem.solution_file import read_sol
from lns.core.search.result import Result
from lns.core.search.selection import Neighborhood
from lns.core.search.stop import budget


def _knapsack_model() -> Model:
    """The knapsack of ``helpers.knapsack`` built in PySCIPOpt: optimum 23 (a and b)."""
    model = Model("knapsack_code")
    x = {name: model.addVar(name, vtype="B") for name in "abcd"}
    model.addCons(4 * x["a"] + 6 * x["b"] + 3 * x["c"] + 5 * x["d"] <= 10, name="capacity")
    model.setObjective(10 * x["a"] + 13 * x["b"] + 7 * x["c"] + 8 * x["d"], sense="maximize")
    return model


def test_a_scip_model_built_in_code_is_solved_and_left_untouched():
    model = _knapsack_model()
    result = solve(model, stop=budget(60, 10), seed=0)
    assert result.instance == "knapsack_code"
    assert result.objective == 23 and result.solution == {"a": 1, "b": 1, "c": 0, "d": 0}
    assert model.getStage() == 1 and model.getNVars() == 4  # still in problem stage, as given


def test_a_bundled_instance_is_found_by_name():
    result = solve("p0201", stop=budget(60, 1), seed=0)
    assert result.instance == "p0201"
    assert result.problem.source == miplib("p0201")


def test_an_instance_of_another_type_is_refused_with_its_type():
    with pytest.raises(TypeError, match="instance: expected .* got int"):
        solve(42)


def test_a_plain_function_is_a_selector_named_after_itself():
    calls = []

    def first_k(state, size, rng):
        calls.append(size)
        return state.problem.integer_indices[:size]  # an index array is wrapped in a Neighborhood

    def all_free(state, size, rng):
        return Neighborhood(state.problem.integer_indices)

    result = solve(
        knapsack(),
        first_k,
        stop=budget(60, 3),
        seed=0,
        params=SolveParams.from_dict({"start.strategy": "first", "start.greedy": False}),
    )
    assert [r.selector for r in result.iterations] == ["first_k"] * 3 and len(calls) == 3
    assert result.selector == "first_k"
    freed = solve(knapsack(), all_free, stop=budget(60, 3), seed=0)
    assert freed.objective == 23 and freed.stop_reason == "optimal"  # all free: SCIP proves it
    with pytest.raises(TypeError, match="selector: expected .* got int"):
        solve(knapsack(), 3)


def test_repr_is_one_short_line():
    result = solve(
        knapsack(),
        stop=budget(60, 2),
        seed=0,
        params=SolveParams.from_dict({"start.strategy": "first"}),
    )
    text = repr(result)
    assert "\n" not in text and len(text) < 150
    expected = (
        rf"Result\(instance='knapsack_maximize', method='lns/random', "
        rf"status='{result.status}', objective={result.objective:g}, "
        r"runtime=\d+\.\d\ds, iterations=2\)"
    )
    assert re.fullmatch(expected, text), text
    empty = Result(
        "x", "scip", None, "no_solution", "time_limit", None, None, [], [], 1.0, None, 0, 1.0
    )
    assert repr(empty) == (
        "Result(instance='x', method='scip', status='no_solution', "
        "objective=None, runtime=1.00s, iterations=0)"
    )


def test_version_comes_from_the_distribution_or_pyproject(monkeypatch):
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", lns.__version__)

    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    pyproject = (miplib("p0201").parents[2] / "pyproject.toml").read_text()
    assert lns._version() == re.search(r'^version = "(.+)"', pyproject, re.MULTILINE).group(1)


def test_miplib_checker_format_round_trips(tmp_path):
    result = solve(miplib("p0201"), stop=budget(60, 2), seed=0)
    path = result.write_sol(tmp_path / "best.sol", format="miplib")
    lines = path.read_text().splitlines()
    assert lines[0] == f"=obj= {result.objective:.15g}"
    assert all(re.fullmatch(r"[^=\s]\S* -?[\d.e+-]+", line) for line in lines[1:])
    assert len(lines) - 1 == np.count_nonzero(result.x)
    np.testing.assert_array_equal(read_sol(path, read_problem(miplib("p0201"))), result.x)
    with pytest.raises(ValueError, match="format: 'gams' is not a solution format"):
        result.write_sol(tmp_path / "x.sol", format="gams")
