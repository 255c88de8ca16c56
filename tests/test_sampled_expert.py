"""The sampled-neighborhood expert: labels, proposals, the process pool, resuming, expert
iteration."""

import dataclasses
import os
import select
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from instances.generators import instance_rng, problem_class
from learning.candidate_pool import CandidatePool, CandidatePoolError, CandidateResult
from learning.checkpoint_file import CheckpointError
from learning.collect import RenewedSolver, collect_files, collect_instance, load_instance_file
from learning.dataset import load_samples
from learning.proposals import PROPOSALS, make_proposals, weighted_draw
from learning.sampled_expert import (
    SampledConfig,
    SampledExpert,
    candidate_gains,
    label_candidates,
)
from lns.core.errors import UnknownNameError
from lns.core.problem.mip import Problem
from lns.core.search.selection import SearchState
from lns.core.solvers.scip.settings import SUB_MIP_SETTINGS
from lns.core.solvers.scip.subsolver import REDUCED_MIN_NONZEROS
from test_learning_pipeline import TINY, TINY_MODEL, tiny_mis

#: Candidates solved to the end within a node limit: the labels repeat exactly.
EXACT = SampledConfig(candidates=8, workers=1, time_limit=30.0, node_limit=200)


def pairs_problem() -> Problem:
    """max 2 x0 + x1 + 4 x2 + x3 + x4  s.t.  x0 + x1 <= 1,  x2 + x3 <= 1,  x1 + x4 <= 1.

    From x = (1, 0, 0, 1, 0) (objective 3): freeing {x2, x3} swaps x3 for x2 (+3, the best);
    freeing {x1, x4} sets x4 (+1, a third of the best); freeing {x0, x1} cannot improve (x0 is
    the better of its pair, and x4 stays 0).
    """
    rows = np.array([[1, 1, 0, 0, 0], [0, 0, 1, 1, 0], [0, 1, 0, 0, 1]], dtype=float)
    return Problem(
        name="pairs",
        var_names=tuple(f"x{j}" for j in range(5)),
        var_types=np.array(["B"] * 5),
        lower=np.zeros(5),
        upper=np.ones(5),
        objective=np.array([2.0, 1.0, 4.0, 1.0, 1.0]),
        objective_offset=0.0,
        sense="maximize",
        matrix=sp.csr_matrix(rows),
        row_lower=np.full(3, -np.inf),
        row_upper=np.ones(3),
        row_names=("a", "b", "c"),
    )


def test_labels_of_a_hand_checked_case():
    problem = pairs_problem()
    incumbent = np.array([1.0, 0, 0, 1, 0])
    candidates = [np.array([2, 3]), np.array([1, 4]), np.array([0, 1])]
    with CandidatePool(problem, SUB_MIP_SETTINGS["fast"], workers=1) as pool:
        results = pool.solve(candidates, [1, 2, 3], incumbent, time_limit=10.0)
    gains = candidate_gains(problem, 3.0, results)
    np.testing.assert_allclose(gains, [3.0, 1.0, 0.0])
    positives, negatives = label_candidates(gains, 1e-6, 0.5, 0.05)
    assert positives.tolist() == [0]  # contains the improving swap
    assert negatives.tolist() == [2]  # cannot improve; {x1, x4} (a third of the best) is neither
    assert label_candidates(np.zeros(3), 1e-6, 0.5, 0.05) is None  # nothing improves: no sample
    # A failed sub-solve (NaN) is neither; the positives come best first.
    positives, negatives = label_candidates(np.array([1.0, np.nan, 0.0, 2.0]), 1e-6, 0.5, 0.05)
    assert positives.tolist() == [3, 0] and negatives.tolist() == [2]


def test_a_neighborhood_sub_solve_solves_the_reduced_sub_mip_as_the_loop_does():
    mvc = problem_class("mvc")
    problem = mvc.generate(mvc.params("small", n_nodes=300, affinity=20), instance_rng(0, 0))
    assert problem.matrix.nnz >= REDUCED_MIN_NONZEROS  # large enough for the reduced sub-MIP
    solver = RenewedSolver(problem, SUB_MIP_SETTINGS["fast"])
    every_node = np.ones(problem.n_vars)
    outcome = solver.solve(time_limit=10.0, seed=1, free=np.arange(30), start=every_node)
    assert outcome.best is not None and outcome.best.objective < problem.n_vars
    assert problem.check(outcome.best.x).feasible
    assert solver.current.reduced_solves == 1


@pytest.mark.parametrize("name", PROPOSALS)
@pytest.mark.parametrize("size", [8, 100])
def test_each_proposal_draws_neighborhoods_of_the_size(name, size):
    problem = tiny_mis(3)
    incumbent = np.zeros(problem.n_vars)
    state = SearchState(problem, incumbent, 0.0)
    checkpoint = "mis" if name == "model" else None
    draws = [
        make_proposals([name], checkpoint)[0].draw(state, size, 5, np.random.default_rng(4))
        for _ in range(2)
    ]
    assert len(draws[0]) == 5
    for free, again in zip(*draws, strict=True):
        np.testing.assert_array_equal(free, again)  # one seed, the same neighborhoods
        assert len(np.unique(free)) == len(free) == min(size, problem.n_vars)
        assert set(free.tolist()) <= set(problem.integer_indices.tolist())


def test_weighted_draw_fills_up_beyond_the_positive_weights():
    rng = np.random.default_rng(0)
    drawn = weighted_draw(np.arange(10), np.array([1.0, 1.0] + [0.0] * 8), 4, rng)
    assert len(drawn) == 4 and {0, 1} <= set(drawn.tolist())
    assert len(weighted_draw(np.arange(10), np.zeros(10), 3, rng)) == 3


def test_proposal_names_are_checked():
    with pytest.raises(UnknownNameError, match="proposal 'local_branching'"):
        SampledConfig(proposals=["random", "local_branching"])
    with pytest.raises(ValueError, match="model proposal needs a checkpoint"):
        SampledConfig(proposals=["model"])
    assert SampledConfig(checkpoint="mis").proposals == ["random", "lb_relax", "graph", "model"]
    with pytest.raises(CheckpointError, match="missing.pt: no such checkpoint file"):
        SampledConfig(checkpoint="runs/missing.pt")
    with pytest.raises(UnknownNameError, match="sub_mip setting"):
        SampledConfig(sub_mip="fastest")


def labels_of(data: dict) -> list:
    return [
        (
            s["positives"].tolist(),
            s["negatives"].tolist(),
            s["positive_improvements"].tolist(),
            s["positive_proposals"],
            s["negative_proposals"],
        )
        for s in data["samples"]
    ]


def test_labels_repeat_exactly_in_one_process_or_two():
    problem = tiny_mis(0)
    one = collect_instance(problem, TINY, seed=5, expert=SampledExpert(EXACT))
    two = collect_instance(
        problem, TINY, seed=5, expert=SampledExpert(dataclasses.replace(EXACT, workers=2))
    )
    assert one["expert"] == "sampled" and one["expert_settings"]["workers"] == 1
    assert labels_of(one) and labels_of(one) == labels_of(two)
    assert any(len(s["negatives"]) for s in one["samples"])
    for s in one["samples"]:
        assert s["expert"] == "sampled"
        gains = np.asarray(s["positive_improvements"])
        assert np.all(gains >= 0.5 * gains.max())
        assert np.all(np.asarray(s["negative_improvements"]) <= 0.05 * gains.max())
        # Every neighborhood of a sample has the expert's size k.
        sizes = {int(v.sum()) for v in (*s["positives"], *s["negatives"])}
        assert sizes == {s["radius"]}


def test_an_interrupted_collection_resumes_writing_each_instance_once(tmp_path, monkeypatch):
    paths = [tiny_mis(seed).write(tmp_path / "inst" / f"tiny_mis_{seed}.lp") for seed in range(3)]
    saved = []
    save = torch.save
    monkeypatch.setattr(torch, "save", lambda obj, path: (saved.append(path), save(obj, path)))
    solve = CandidatePool.solve
    interrupt = {"tiny_mis_1"}

    def solve_or_interrupt(pool, *args, **kwargs):
        if pool.problem.name in interrupt:
            raise KeyboardInterrupt  # Ctrl-C while the candidates are solved
        return solve(pool, *args, **kwargs)

    monkeypatch.setattr(CandidatePool, "solve", solve_or_interrupt)
    expert = SampledExpert(EXACT)
    with pytest.raises(KeyboardInterrupt):
        collect_files(paths, tmp_path / "out", TINY, seed=0, expert=expert)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["tiny_mis_0.pt"]
    interrupt.clear()
    written = collect_files(paths, tmp_path / "out", TINY, seed=0, expert=expert)
    assert [p.name for p in written] == ["tiny_mis_1.pt", "tiny_mis_2.pt"]
    assert sorted(p.name.split(".")[0] for p in saved) == [f"tiny_mis_{s}" for s in range(3)]


def test_a_step_whose_sub_solves_all_fail_writes_no_file(tmp_path, monkeypatch):
    path = tiny_mis(0).write(tmp_path / "tiny_mis_0.lp")
    failed = CandidateResult("error")
    monkeypatch.setattr(
        CandidatePool, "solve", lambda pool, candidates, *a, **k: [failed] * len(candidates)
    )
    with pytest.raises(CandidatePoolError, match="all 8 sub-solves of step 0 failed"):
        collect_files([path], tmp_path / "out", TINY, seed=0, expert=SampledExpert(EXACT))
    assert not (tmp_path / "out").exists()


def test_a_pool_refuses_a_start_method_its_processes_cannot_use(monkeypatch):
    import multiprocessing

    monkeypatch.setattr(multiprocessing, "get_start_method", lambda allow_none=False: "loky")
    with pytest.raises(CandidatePoolError, match="start method is 'loky'.*sampled.workers=1"):
        CandidatePool(tiny_mis(0), SUB_MIP_SETTINGS["fast"], workers=2)
    assert CandidatePool(tiny_mis(0), SUB_MIP_SETTINGS["fast"], workers=1).workers == 1


@pytest.mark.slow
def test_expert_iteration_end_to_end_through_the_command_line(tmp_path, monkeypatch):
    """Round 1 (sampled expert) -> lns-train -> round 2 with the model as a proposal."""
    from lns.cli import collect
    from lns.cli import train as train_app

    for seed in range(4):
        tiny_mis(seed).write(tmp_path / "inst" / f"tiny_mis_{seed}.lp")
    monkeypatch.chdir(tmp_path)

    def run(app, *overrides):
        monkeypatch.setattr(sys, "argv", [app.__name__, *overrides])
        app.main()

    limits = (
        "collect_limits.iterations=4",
        "collect_limits.initial_fraction=0.2",
        "collect_limits.initial_solution_limit=1",
        "collect_limits.max_failures=1",
        "sampled.candidates=8",
        "sampled.workers=2",
        "sampled.node_limit=200",
    )
    run(collect, "expert=sampled", "instances=inst", "out_dir=round1", *limits)
    model = (f"model.{key}={value}" for key, value in TINY_MODEL.items())
    run(train_app, "data=[round1]", "checkpoint=m1.pt", "epochs=2", "tensorboard=null", *model)
    run(collect, "expert=sampled", "checkpoint=m1.pt", "instances=inst", "out_dir=round2", *limits)
    files = sorted((tmp_path / "round2").glob("*.pt"))
    assert len(files) == 4
    data = [load_instance_file(f) for f in files]
    assert all(d["expert_settings"]["checkpoint"] == "m1.pt" for d in data)
    labelled = {
        name
        for d in data
        for s in d["samples"]
        for name in (*s["positive_proposals"], *s["negative_proposals"])
    }
    assert "model" in labelled  # the round-1 model's neighborhoods were solved and labelled
    assert load_samples(files)  # lns-train reads them as it reads LB samples
    run(
        train_app,
        "data=[round1,round2]",
        "init=m1.pt",
        "checkpoint=m2.pt",
        "epochs=1",
        "tensorboard=null",
    )
    first, second = (torch.load(tmp_path / m, weights_only=True) for m in ("m1.pt", "m2.pt"))
    assert second["training"]["config"]["init"] == "m1.pt"
    assert second["training"]["validation_files"] == first["training"]["validation_files"]
    assert second["training"]["train_samples"] > first["training"]["train_samples"]


def test_command_line_refuses_a_bad_expert(tmp_path, monkeypatch, capsys):
    from lns.cli import collect

    tiny_mis(5).write(tmp_path / "inst" / "tiny_mis_5.lp")
    monkeypatch.chdir(tmp_path)
    for overrides, message in (
        (["expert=oracle"], "expert 'oracle'"),
        (["checkpoint=mis"], "checkpoint= is a proposal of expert=sampled"),
    ):
        monkeypatch.setattr(sys, "argv", ["lns-collect", "instances=inst", "out_dir=o", *overrides])
        with pytest.raises(SystemExit):
            collect.main()
        assert message in capsys.readouterr().err
        assert not (tmp_path / "o").exists()


def outcomes(results: list) -> list:
    return [(r.status, r.objective) for r in results]


def test_a_pool_whose_process_died_solves_again_on_new_processes(caplog):
    import signal

    problem = tiny_mis(0)
    candidates, seeds = [np.arange(10), np.arange(10, 20)], [1, 2]
    with CandidatePool(problem, SUB_MIP_SETTINGS["fast"], workers=1) as local:
        expected = local.solve(candidates, seeds, np.zeros(problem.n_vars), 10.0, node_limit=100)
    with CandidatePool(problem, SUB_MIP_SETTINGS["fast"], workers=2) as pool:
        pool.solve(candidates, seeds, np.zeros(problem.n_vars), 10.0, node_limit=100)
        victim = next(iter(pool._executor._processes.values()))  # noqa: SLF001
        os.kill(victim.pid, signal.SIGKILL)
        victim.join()
        # The death shows at the next submit (a new pool) or in its results (failed candidates).
        again = pool.solve(candidates, seeds, np.zeros(problem.n_vars), 10.0, node_limit=100)
        assert {r.status for r in again} == {"error"} or outcomes(again) == outcomes(expected)
        after = pool.solve(candidates, seeds, np.zeros(problem.n_vars), 10.0, node_limit=100)
    assert outcomes(after) == outcomes(expected)
    assert "a sub-solver process died; pool restarted" in caplog.text


POOL_SCRIPT = """
import sys
import numpy as np
from test_learning_pipeline import tiny_mis
from learning.candidate_pool import CandidatePool, CandidatePoolError, CandidateResult
from lns.core.solvers.scip.settings import SUB_MIP_SETTINGS
from lns.core.solvers.scip.subsolver import REDUCED_MIN_NONZEROS

problem = tiny_mis(0)
pool = CandidatePool(problem, SUB_MIP_SETTINGS["fast"], workers=2)
pool.solve([np.arange(5), np.arange(5, 10)], [1, 2], np.zeros(problem.n_vars), 5.0)
print("ready", flush=True)
sys.stdin.read()
"""


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs Linux's pidfd_open")
def test_pool_processes_end_when_the_collecting_process_is_killed():
    """SIGKILL leaves no time to close the pool: its processes must end by themselves."""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(root / "tests")])}
    collector = subprocess.Popen(
        [sys.executable, "-c", POOL_SCRIPT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=root,
        env=env,
        text=True,
    )
    try:
        assert collector.stdout.readline().strip() == "ready"
        children = Path(f"/proc/{collector.pid}/task/{collector.pid}/children").read_text().split()
        watched = [os.pidfd_open(int(pid)) for pid in children]
    finally:
        collector.kill()
        collector.wait()
    assert len(watched) >= 2  # the two sub-solver processes (and multiprocessing's tracker)
    for fd in watched:
        ended, _, _ = select.select([fd], [], [], 60)  # readable once the process has ended
        os.close(fd)
        assert ended
