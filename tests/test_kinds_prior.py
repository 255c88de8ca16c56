"""The learned prior of the auto portfolio: root features, the nearest-neighbour weights, fitting
from benchmark records, and the allocation it changes."""

from __future__ import annotations

import dataclasses
import json
import logging
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from helpers import miplib, mixed_problem
from lns import SolveParams, solve
from lns.bench_store import BenchStore, RunRecord
from lns.core.errors import InvalidArgumentError
from lns.core.parallel.allocation import DEFER_BELOW, EXPLORE, Allocation, RateRule, StayRule
from lns.core.parallel.params import PortfolioParams
from lns.core.parallel.prior import FEATURES, SHIPPED, KindPrior, load_prior, root_features
from lns.core.problem.mip import Problem, read_problem
from lns.kinds_prior import fit_prior, kind_records, leave_one_out

KINDS = ("lns", "cpsat", "local_search", "scip")


def set_partitioning() -> Problem:
    """x1 + x2 = 1, x2 + x3 = 1 on binaries, and a cost row 2 x1 + 5 x3 <= 6."""
    matrix = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [2.0, 0.0, 5.0]])
    return Problem(
        name="partition",
        var_names=("x1", "x2", "x3"),
        var_types=np.array(["B"] * 3),
        lower=np.zeros(3),
        upper=np.ones(3),
        objective=np.array([1.0, 0.0, 2.0]),
        objective_offset=0.0,
        sense="minimize",
        matrix=sp.csr_matrix(matrix),
        row_lower=np.array([1.0, 1.0, -np.inf]),
        row_upper=np.array([1.0, 1.0, 6.0]),
        row_names=("a", "b", "cost"),
    )


def test_root_features_of_hand_checked_problems():
    mixed = dict(zip(FEATURES, root_features(mixed_problem()), strict=True))
    # 5 variables (2 binary, 2 integer, 1 continuous), 4 rows, 9 nonzeros, 7 of them +-1,
    # coefficients from 1 to 3, no equality, no row of 1s on binaries only (w is continuous)
    assert mixed == pytest.approx(
        {
            "log_variables": np.log10(5),
            "log_rows": np.log10(4),
            "binary_share": 0.4,
            "general_integer_share": 0.4,
            "continuous_share": 0.2,
            "log_density": np.log10(9 / 20),
            "equality_share": 0.0,
            "set_row_share": 0.0,
            "unit_coefficient_share": 7 / 9,
            "log_coefficient_range": np.log10(3),
            "objective_share": 1.0,
        }
    )
    partition = dict(zip(FEATURES, root_features(set_partitioning()), strict=True))
    assert partition["equality_share"] == pytest.approx(2 / 3)
    assert partition["set_row_share"] == pytest.approx(2 / 3)
    assert partition["unit_coefficient_share"] == pytest.approx(4 / 6)
    assert partition["objective_share"] == pytest.approx(2 / 3)


def _prior(neighbours: int = 2) -> KindPrior:
    """Two instances where LNS won, near each other in the features, and two where CP-SAT won."""
    points = np.zeros((4, len(FEATURES))) + np.array([[0.0], [0.1], [5.0], [5.1]])
    scores = np.array(
        [[1.0, 0.2, 0.5, 0.3], [1.0, 0.1, 0.6, 0.4], [0.3, 1.0, 0.2, 0.5], [0.2, 1.0, 0.1, 0.4]]
    )
    return KindPrior(KINDS, ("k", "p", "m", "m2"), points, scores, neighbours)


def test_the_weights_are_the_mean_scores_of_the_nearest_instances():
    prior = _prior()
    query = np.full(len(FEATURES), 4.9)
    assert list(prior.nearest(query)) == [2, 3]
    assert prior.weights(query) == pytest.approx(
        {"lns": 0.25, "cpsat": 1.0, "local_search": 0.15, "scip": 0.45}
    )
    # left out, an instance is not its own neighbour
    assert list(prior.nearest(prior.points[2], exclude=2)) == [3, 1]
    check = leave_one_out(dataclasses.replace(prior, neighbours=1))
    assert check.first == ["lns", "lns", "cpsat", "cpsat"] == check.best
    # each instance's neighbour ranks the kinds as its own scores do: the best order
    np.testing.assert_allclose(check.scores, check.best_order)
    halves = np.array([0.5, 0.25, 0.125, 0.0625]) / 0.9375
    # k: lns, local_search, scip, cpsat against lns, cpsat, local_search, scip without a prior
    assert check.scores[0] == pytest.approx(halves @ [1.0, 0.5, 0.3, 0.2])
    assert check.unordered[0] == pytest.approx(halves @ [1.0, 0.2, 0.5, 0.3])
    assert check.unordered[2] == pytest.approx(halves @ [0.3, 1.0, 0.2, 0.5])
    assert check.unordered[2] < check.scores[2]


def test_a_prior_is_saved_loaded_and_refused_when_its_features_differ(tmp_path):
    prior = _prior()
    path = prior.save(tmp_path / "prior.json")
    loaded = load_prior(str(path))
    assert loaded.instances == prior.instances and loaded.neighbours == 2
    np.testing.assert_allclose(loaded.points, prior.points)
    np.testing.assert_allclose(loaded.scores, prior.scores)
    data = json.loads(path.read_text())
    data["features"] = data["features"][:-1]
    path.write_text(json.dumps(data))
    with pytest.raises(InvalidArgumentError, match=r"prior.json: features .* refit it"):
        load_prior(str(path))
    with pytest.raises(InvalidArgumentError, match="missing.json: cannot be read"):
        load_prior(str(tmp_path / "missing.json"))
    with pytest.raises(InvalidArgumentError, match="neighbours=5, expected 1 to 4"):
        _prior(neighbours=5)


def test_the_shipped_prior_loads_and_weighs_every_kind():
    prior = load_prior(SHIPPED)
    assert set(prior.kinds) == set(KINDS) and len(prior.instances) >= 20
    assert (prior.scores > 0).all() and (prior.scores <= 1).all()
    weights = prior.for_problem(read_problem(miplib("air05")))
    assert set(weights) == set(KINDS) and all(0 < w <= 1 for w in weights.values())


def test_the_prior_changes_the_allocation():
    weights = {1: 0.9, 2: 0.2, 3: 0.6, 4: 0.5}  # worker 2 is deferred (below DEFER_BELOW)
    assert weights[2] < DEFER_BELOW <= min(weights[w] for w in (1, 3, 4))
    without = Allocation([4, 3, 2, 1], slots=1, rule=RateRule(), slice_seconds=1.0)
    assert without.holding == [4]
    allocation = Allocation([4, 3, 2, 1], 1, RateRule(), slice_seconds=1.0, weights=weights)
    assert allocation.holding == [1]  # the highest weight first
    order, now = [], 0.0
    allocation.begin(now)
    for _ in range(EXPLORE):  # nobody improves: each worker is tried in turn
        order += allocation.holding
        now += 1.0
        allocation.step(now)
    # the untried by weight (3, then 4); the deferred one only at the exploration turn
    assert order == [1, 3, 4, 1] and allocation.holding == [2]
    stay = Allocation([4, 3, 2, 1], 1, StayRule(), slice_seconds=1.0, weights=weights)
    assert stay.holding == [1] and stay.waiting() == [3, 4, 2]


def _record(instance, path, method, trajectory, status="feasible"):
    objective = trajectory[-1][1] if trajectory else None
    return RunRecord(
        "tuning",
        instance,
        path,
        method,
        0,
        10.0,
        status,
        objective=objective,
        sense="minimize",
        known_optimum=10.0,
        trajectory=trajectory,
    )


def tuning_records() -> list:
    """Each kind alone on p0201 and stein45 (every kind), and on air05 (one kind only)."""
    p0201, stein45 = str(miplib("p0201")), str(miplib("stein45"))
    return [
        # p0201: the optimum found at 1 s (random), 3 s (cpsat), 7 s (localmip), never (scip)
        _record("p0201", p0201, "random", [[1.0, 10.0]]),
        _record("p0201", p0201, "cpsat", [[3.0, 10.0]]),
        _record("p0201", p0201, "localmip", [[7.0, 10.0]]),
        _record("p0201", p0201, "scip", [], status="error"),
        # stein45: scip first, the others at a gap of 0.5 throughout
        *[_record("stein45", stein45, m, [[0.0, 20.0]]) for m in ("random", "cpsat", "localmip")],
        _record("stein45", stein45, "scip", [[0.0, 10.0]]),
        _record("air05", str(miplib("air05")), "random", [[1.0, 10.0]]),
    ]


def test_a_prior_is_fitted_from_the_records_of_each_kind_alone():
    records = tuning_records()
    table = kind_records(records)
    assert table.instances == ["p0201", "stein45"] and table.kinds == KINDS
    np.testing.assert_allclose(table.integrals, [[1.0, 3.0, 7.0, 10.0], [5.0, 5.0, 5.0, 0.0]])
    np.testing.assert_allclose(table.scores()[0], [1.0, 0.5, 0.25, 2 / 11])
    prior = fit_prior(table, neighbours=1)
    np.testing.assert_allclose(prior.points[0], root_features(read_problem(miplib("p0201"))))
    check = leave_one_out(prior)
    assert check.best == ["lns", "scip"] and check.first == ["scip", "lns"]


@pytest.mark.parametrize(
    "arguments, message",
    [
        (dict(workers=2, prior=SHIPPED), "needs mix='auto'"),
        (dict(workers=2, mix="lns", prior=SHIPPED), "needs mix='auto'"),
        (dict(workers=2, mix="auto", prior="nowhere.json"), "nowhere.json'?: no such file"),
        (dict(workers=2, mix="auto", prior=3), "expected None"),
    ],
)
def test_invalid_priors_are_refused(arguments, message):
    with pytest.raises(InvalidArgumentError, match=message):
        PortfolioParams(**arguments)


def test_an_auto_portfolio_with_the_prior_logs_it_and_runs(caplog):
    params = {"portfolio.workers": 2, "portfolio.mix": "auto", "portfolio.prior": SHIPPED}
    with caplog.at_level(logging.INFO, logger="lns"):
        result = solve(miplib("p0201"), stop=4, seed=0, params=SolveParams.from_dict(params))
    assert result.feasibility.feasible
    assert any("prior of the kinds" in r.getMessage() for r in caplog.records)


def test_lns_prior_fits_and_writes_a_prior_from_a_results_folder(tmp_path):
    store = BenchStore(tmp_path / "results")
    for record in tuning_records():
        store.write(record)
    out = tmp_path / "prior.json"
    command = [sys.executable, "-m", "lns.cli.prior", f"results_dir={store.root}", f"out={out}"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    # neighbours=auto: with 2 instances, 1 (each the other's neighbour, whose best kind differs)
    assert (
        "neighbours=1; leave-one-out on 2 instances: the kind of the highest weight is the "
        "best kind on 0" in run.stdout
    )
    assert load_prior(str(out)).instances == ("p0201", "stein45")
    run = subprocess.run([*command, "neighbours=3"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "neighbours=3, expected 1 to 2" in run.stderr
