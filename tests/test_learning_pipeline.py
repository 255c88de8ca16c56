"""CL-LNS end to end on tiny instances of each class: collect -> train -> solve, in seconds."""

import csv
import dataclasses
import importlib.util
import math
import re
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch

from instances.generators import mis
from instances.generators.registry import CLASSES
from learning.checkpoint_file import CheckpointError
from learning.collect import CollectConfig, collect_files, load_instance_file
from learning.dataset import evenly_spaced, load_samples
from learning.draw_record import DrawRecord
from learning.selector import CLLNS
from learning.train import TrainConfig, train
from lns import SolveParams
from lns.api import solve
from lns.core.errors import InvalidArgumentError, UnknownNameError
from lns.core.search.result import IterationRecord
from lns.core.search.selection import SearchState
from lns.core.search.stop import budget
from lns.core.solvers.protocol import SolveStatus

TINY = CollectConfig(
    iterations=4,
    initial_fraction=0.2,
    expert={"time_limit": 1.0},
    initial_time_limit=2.0,
    initial_solution_limit=1,
    negative_time_limit=0.5,
    max_tries=10,
    max_failures=1,
)
TINY_MODEL = {"emb_size": 16, "heads": 2, "head_channels": 4}
#: ``TINY`` as lns-collect overrides, with one LB step.
TINY_OVERRIDES = (
    "collect_limits.iterations=1",
    "collect_limits.expert.time_limit=1",
    "collect_limits.initial_solution_limit=1",
    "collect_limits.negative_time_limit=0.5",
    "collect_limits.initial_fraction=0.2",
    "collect_limits.max_failures=1",
)
#: Tiny sizes of the other classes (generator parameters over their "small" presets).
TINY_PARAMS = {
    "mvc": {"n_nodes": 40, "affinity": 3},
    "sc": {"n_rows": 30, "n_cols": 20, "density": 0.2},
    "ca": {"n_items": 20, "n_bids": 40},
    "cfl": {"n_customers": 6, "n_facilities": 3},
}


def tiny_mis(seed: int):
    return mis.generate(
        mis.MISParams(n_nodes=40, affinity=2), np.random.default_rng(seed), name=f"tiny_mis_{seed}"
    )


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    root = tmp_path_factory.mktemp("cl_lns")
    paths = [tiny_mis(seed).write(root / "instances" / f"tiny_mis_{seed}.lp") for seed in range(4)]
    written = collect_files(paths, root / "samples", TINY, seed=0)
    result = train(
        [root / "samples"],
        root / "model.pt",
        TrainConfig(epochs=2, batch_size=4, validation_fraction=0.25, model=TINY_MODEL),
        log_csv=root / "curves.csv",
    )
    return root, paths, written, result


def test_collection_writes_one_file_per_instance_and_resumes(pipeline):
    root, paths, written, _ = pipeline
    assert sorted(p.name for p in written) == [f"tiny_mis_{s}.pt" for s in range(4)]
    assert (
        collect_files(paths, root / "samples", TINY, seed=0) == []
    )  # a rerun skips finished instances
    samples = [
        s
        for seed in range(4)
        for s in load_instance_file(root / "samples" / f"tiny_mis_{seed}.pt")["samples"]
    ]
    assert samples and any(len(s["negatives"]) for s in samples)
    for s in samples:
        assert s["positives"].shape[1] == 40 and s["variable_features"].shape[0] == 40
        gains = s["positive_improvements"]
        assert torch.all(gains >= 0.5 * gains.max())
        if len(s["negatives"]):
            assert torch.all(s["negative_improvements"] <= 0.05 * gains.max() + 1e-9)
            # Swapped variants keep the size of LB's neighborhood.
            assert set(s["negatives"].sum(dim=1).tolist()) == {int(s["positives"][0].sum())}


def test_training_logs_curves_and_keeps_a_loadable_checkpoint(pipeline):
    root, _, _, result = pipeline
    rows = list(csv.DictReader((root / "curves.csv").open()))
    assert [int(r["epoch"]) for r in rows] == [0, 1]
    assert all(np.isfinite(float(r["train_loss"])) for r in rows)
    checkpoint = torch.load(root / "model.pt", weights_only=True)
    assert checkpoint["training"]["epoch"] == result["best_epoch"]
    assert checkpoint["model_config"]["emb_size"] == 16
    held_out = checkpoint["training"]["validation_files"]
    assert len(held_out) == 1  # a quarter of the 4 instances
    expected = len(load_samples([root / "samples" / name for name in held_out]))
    assert result["validation_samples"] == expected > 0 and result["train_samples"] > 0


def test_samples_per_instance_takes_evenly_spaced_samples_of_each_file(pipeline, tmp_path):
    assert evenly_spaced(list(range(10)), 3) == [0, 4, 9]  # first and last included
    assert evenly_spaced(list(range(10)), 1) == [0]
    assert evenly_spaced(list(range(2)), 5) == [0, 1] and evenly_spaced([7], None) == [7]
    root, *_ = pipeline
    files = sorted((root / "samples").glob("*.pt"))
    every = load_samples(files)
    one_each = load_samples(files, per_instance=1)
    by_file = [len(load_samples([f])) for f in files]
    assert len(one_each) == sum(n > 0 for n in by_file) < len(every)
    config = TrainConfig(
        epochs=1, batch_size=4, validation_fraction=0.25, model=TINY_MODEL, samples_per_instance=1
    )
    result = train([root / "samples"], tmp_path / "one_each.pt", config)
    assert result["train_samples"] + result["validation_samples"] == len(one_each)
    checkpoint = torch.load(tmp_path / "one_each.pt", weights_only=True)
    assert checkpoint["training"]["config"]["samples_per_instance"] == 1
    with pytest.raises(InvalidArgumentError, match="samples_per_instance"):
        TrainConfig(samples_per_instance=0)


def test_training_is_seeded(pipeline, tmp_path):
    root, *_ = pipeline
    config = TrainConfig(epochs=1, batch_size=4, validation_fraction=0.25, model=TINY_MODEL, seed=3)
    a = train([root / "samples"], tmp_path / "a.pt", config)
    b = train([root / "samples"], tmp_path / "b.pt", config)
    assert a["history"][0]["train_loss"] == b["history"][0]["train_loss"]


def test_each_step_clips_the_gradient_to_max_grad_norm(pipeline, tmp_path, monkeypatch):
    root, *_ = pipeline
    clipped = []
    clip = torch.nn.utils.clip_grad_norm_

    def recording_clip(parameters, max_norm):
        parameters = [p for p in parameters if p.grad is not None]
        clip(parameters, max_norm)
        clipped.append(
            float(torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in parameters])))
        )

    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", recording_clip)
    config = TrainConfig(
        epochs=1, batch_size=4, validation_fraction=0.25, model=TINY_MODEL, max_grad_norm=1e-3
    )
    train([root / "samples"], tmp_path / "clipped.pt", config)
    assert clipped and max(clipped) <= 1e-3 * (1 + 1e-4)
    assert (
        torch.load(tmp_path / "clipped.pt", weights_only=True)["training"]["config"][
            "max_grad_norm"
        ]
        == 1e-3
    )
    with pytest.raises(ValueError, match="max_grad_norm must be positive or null, got 0"):
        TrainConfig(max_grad_norm=0)


def test_an_instance_in_two_collection_folders_stays_on_one_side_of_the_split(tmp_path):
    from learning.dataset import split_files

    names = [f"i{n}.pt" for n in range(8)]
    files = [tmp_path / folder / name for folder in ("round1", "round2") for name in names]
    training, validation = split_files(files, 0.25, np.random.default_rng(0))
    assert {f.name for f in training}.isdisjoint({f.name for f in validation})
    assert len(validation) == 4 and len(training) == 12  # 2 of 8 instances, in both folders
    training, validation = split_files(files, 0.25, np.random.default_rng(0), ["i5.pt", "x.pt"])
    assert [f.parent.name for f in validation] == ["round1", "round2"]
    assert {f.name for f in validation} == {"i5.pt"} and len(training) == 14
    alone = split_files(files[:8], 0.25, np.random.default_rng(1))  # one folder: as before
    assert len(alone[1]) == 2 and sorted(alone[0] + alone[1]) == sorted(files[:8])


def test_training_further_starts_from_the_checkpoint_and_keeps_its_held_out_instances(
    pipeline, tmp_path
):
    root, *_ = pipeline
    first = torch.load(root / "model.pt", weights_only=True)
    still = TrainConfig(epochs=1, batch_size=4, lr=0.0, init=str(root / "model.pt"), seed=5)
    result = train([root / "samples"], tmp_path / "still.pt", still)
    again = torch.load(tmp_path / "still.pt", weights_only=True)
    for key, weights in first["state_dict"].items():
        assert torch.equal(again["state_dict"][key], weights), key  # lr 0: the same weights
    assert again["model_config"] == first["model_config"]  # TINY_MODEL, not the default GAT
    held_out = first["training"]["validation_files"]
    assert again["training"]["validation_files"] == held_out  # despite another seed
    assert result["validation_samples"] == len(load_samples([root / "samples" / held_out[0]]))
    train(
        [root / "samples"],
        tmp_path / "moved.pt",
        TrainConfig(epochs=1, batch_size=4, init=str(root / "model.pt")),
    )
    moved = torch.load(tmp_path / "moved.pt", weights_only=True)["state_dict"]
    assert any(not torch.equal(moved[k], w) for k, w in first["state_dict"].items())


def test_training_further_with_other_features_is_refused_by_name(pipeline, tmp_path):
    root, *_ = pipeline
    config = TrainConfig(epochs=1, init=str(root / "model.pt"), features="all")
    with pytest.raises(CheckpointError, match="model.pt: reads the variable columns"):
        train([root / "samples"], tmp_path / "m.pt", config)
    with pytest.raises(CheckpointError, match="missing.pt: no such checkpoint file"):
        train([root / "samples"], tmp_path / "m.pt", TrainConfig(init="runs/missing.pt"))


def test_top_k_recall_counts_the_expert_neighborhood_among_the_top_scores():
    from learning.train import top_k_recall

    logits = torch.tensor([3.0, -1.0, 2.0, 0.5, 1.0])
    expert = torch.tensor([[1.0, 1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0, 0.0]])
    assert top_k_recall(logits, expert) == pytest.approx(2 / 3)  # top 3: variables 0, 2, 4
    assert top_k_recall(logits, expert[[1]]) == 0.0


@pytest.mark.parametrize("select_by, kept", [("loss", 1), ("recall", 2)])
def test_checkpoint_selection_by_validation_loss_or_recall(
    pipeline, tmp_path, monkeypatch, select_by, kept
):
    import learning.train

    root, *_ = pipeline
    scripted = iter(
        [(1.0, 0.2), (0.5, 0.3), (0.8, 0.9)]
    )  # (validation loss, recall) of epochs 0, 1, 2
    monkeypatch.setattr(learning.train, "evaluate", lambda *args: next(scripted))
    config = TrainConfig(
        epochs=3, batch_size=4, validation_fraction=0.25, model=TINY_MODEL, select_by=select_by
    )
    result = train([root / "samples"], tmp_path / "m.pt", config)
    assert result["validation_samples"] > 0 and result["best_epoch"] == kept
    training = torch.load(tmp_path / "m.pt", weights_only=True)["training"]
    assert training["epoch"] == kept and training["validation_recall"] == [0.2, 0.3, 0.9][kept]
    assert result["best_validation_recall"] == [0.2, 0.3, 0.9][kept]


def test_unknown_checkpoint_selection_is_named(pipeline, tmp_path):
    root, *_ = pipeline
    with pytest.raises(UnknownNameError, match="checkpoint selection"):
        train([root / "samples"], tmp_path / "x.pt", TrainConfig(select_by="accuracy"))


def test_training_curves_go_to_tensorboard(pipeline, tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    root, *_ = pipeline
    config = TrainConfig(epochs=2, batch_size=4, validation_fraction=0.25, model=TINY_MODEL)
    result = train(
        [root / "samples"], tmp_path / "m.pt", config, tensorboard_dir=tmp_path / "board"
    )
    events = EventAccumulator(str(tmp_path / "board"))
    events.Reload()
    train_curve = events.Scalars("loss/train")
    assert [e.step for e in train_curve] == [0, 1]
    assert [e.value for e in train_curve] == pytest.approx(
        [row["train_loss"] for row in result["history"]]
    )


def solve_four_iterations(checkpoint):
    """Four cl_lns iterations with ``checkpoint`` on a tiny MIS: a feasible result, every
    iteration the learned selector's."""
    result = solve(
        tiny_mis(99),
        CLLNS(checkpoint),
        stop=budget(20, 4),
        seed=0,
        params=SolveParams.from_dict(
            {"start.strategy": "first", "start.solution_limit": 1, "sub_solve.time_limit": 2.0}
        ),
    )
    assert result.x is not None and result.feasibility.feasible
    assert len(result.iterations) == 4 and all(r.selector == "cl_lns" for r in result.iterations)


def test_cl_lns_solves_with_the_trained_checkpoint(pipeline):
    root, *_ = pipeline
    solve_four_iterations(root / "model.pt")


def test_cl_lns_selector_contract(pipeline):
    root, *_ = pipeline
    problem = tiny_mis(7)
    selector = CLLNS(root / "model.pt")
    selector.setup(problem)
    incumbent = np.zeros(problem.n_vars)
    for at_cap in (False, True):
        state = SearchState(problem, incumbent, 0.0, [], 0, at_cap)
        first = selector(state, 10, np.random.default_rng(0))
        again = selector(state, 10, np.random.default_rng(0))
        np.testing.assert_array_equal(first.free, again.free)
        assert np.all(np.diff(first.free) > 0) and set(first.free) <= set(problem.integer_indices)
        assert first.info["sampled"] == at_cap
        if not at_cap:
            assert len(first.free) == 10
            scores = selector.scores(state)
            assert scores[first.free].min() >= np.delete(scores, first.free).max()


def test_cl_lns_reuses_scores_while_the_incumbent_stays(pipeline):
    root, *_ = pipeline
    problem = tiny_mis(7)
    selector = CLLNS(root / "model.pt", after_failure="greedy", random_arm=False)
    selector.setup(problem)
    calls = []
    logits = selector._policy.logits
    selector._policy.logits = lambda *args: calls.append(1) or logits(*args)
    incumbent, other = np.zeros(problem.n_vars), np.zeros(problem.n_vars)
    other[0] = 1.0
    first = selector(
        SearchState(problem, incumbent, 0.0, [], 0, False), 10, np.random.default_rng(0)
    )
    again = selector(
        SearchState(problem, incumbent.copy(), 0.0, [], 1, False), 12, np.random.default_rng(0)
    )
    moved = selector(
        SearchState(problem, other, 1.0, [incumbent], 2, False), 10, np.random.default_rng(0)
    )
    assert [first.info["cached"], again.info["cached"], moved.info["cached"]] == [
        False,
        True,
        False,
    ]
    assert len(calls) == 2 and again.info["inference_time"] == 0.0
    assert set(first.free) <= set(again.free)  # the same ranking, two more variables
    fresh = CLLNS(root / "model.pt", after_failure="greedy", random_arm=False)
    fresh.setup(problem)
    np.testing.assert_array_equal(
        fresh(
            SearchState(problem, other, 1.0, [incumbent], 0, False), 10, np.random.default_rng(0)
        ).free,
        moved.free,
    )


def test_cl_lns_samples_after_a_failure_when_asked_instead_of_repeating_the_top_k(pipeline):
    """After a failure (without the random arm, which replaces these rules): the top-scored
    again (greedy), a draw by the scores (sample) or a uniformly random neighborhood (random);
    on a new incumbent each rule takes the top 20."""
    root, *_ = pipeline
    problem = tiny_mis(7)
    incumbent, other = np.zeros(problem.n_vars), np.zeros(problem.n_vars)
    other[0] = 1.0
    states = [
        SearchState(problem, incumbent, 0.0, [], 0, False),
        SearchState(problem, incumbent.copy(), 0.0, [], 1, False),  # the first failed
        SearchState(problem, other, 1.0, [incumbent], 2, False),  # the second improved
    ]
    draws = {}
    for rule in ("greedy", "sample", "random"):
        selector = CLLNS(root / "model.pt", after_failure=rule, random_arm=False)
        selector.setup(problem)
        draws[rule] = [selector(state, 20, np.random.default_rng(1)) for state in states]
    greedy, sample, uniform = draws["greedy"], draws["sample"], draws["random"]
    assert [d.info["sampled"] for d in greedy] == [False, False, False]
    assert [d.info["sampled"] for d in sample] == [False, True, False]
    assert [d.info["random"] for d in uniform] == [False, True, False]
    np.testing.assert_array_equal(greedy[1].free, greedy[0].free)  # the failed one again
    assert not np.array_equal(sample[1].free, sample[0].free)
    assert len(uniform[1].free) == 20 and uniform[1].info["inference_time"] == 0.0
    np.testing.assert_array_equal(
        uniform[1].free, np.sort(np.random.default_rng(1).choice(problem.n_vars, 20, replace=False))
    )
    for drawn in (sample, uniform):  # on a new incumbent every rule takes the top 20
        for a in (0, 2):
            np.testing.assert_array_equal(drawn[a].free, greedy[a].free)
    with pytest.raises(UnknownNameError, match="after_failure"):
        CLLNS(root / "model.pt", after_failure="uniform")


def _outcome(gain: float, seconds: float) -> IterationRecord:
    return IterationRecord(
        iteration=0,
        selector="cl_lns",
        neighborhood_size=20,
        target_size=20,
        status=SolveStatus.OPTIMAL,
        select_time=0.0,
        solve_time=seconds,
        objective_before=0.0,
        objective_after=gain,
        improved=gain > 0,
        time=1.0,
    )


def test_cl_lns_draws_a_new_incumbent_as_asked_or_as_has_gained_more(pipeline):
    """``draw`` decides a new incumbent's neighborhood: the top-scored, a draw by the scores, or
    (auto) the top-scored first, then the untried draw by the scores, then as the record says
    (``test_the_auto_draw_favours_the_draw_that_gains_more_and_still_tries_the_others``)."""
    root, *_ = pipeline
    problem = tiny_mis(7)
    incumbents = [np.zeros(problem.n_vars) for _ in range(4)]
    for i, x in enumerate(incumbents[1:]):
        x[: i + 1] = 1.0  # a new incumbent at every call

    def state(i: int, deadline: float = math.inf) -> SearchState:
        history = incumbents[:i][::-1]
        return SearchState(problem, incumbents[i], float(i), history, i, False, deadline)

    def draws(draw: str, outcomes: list, deadline: float = math.inf) -> list[bool]:
        selector = CLLNS(root / "model.pt", draw=draw, until_ready="wait")
        selector.setup(problem)
        sampled = []
        for i, outcome in enumerate(outcomes):
            neighborhood = selector(state(i, deadline), 20, np.random.default_rng(0))
            sampled.append(neighborhood.info["sampled"])
            if outcome is not None:
                selector.update(outcome)
        return sampled

    slow_greedy = [_outcome(1.0, 5.0), _outcome(1.0, 0.1), None, None]
    assert draws("greedy", slow_greedy) == [False] * 4
    assert draws("sample", slow_greedy) == [True] * 4
    later = time.perf_counter() + 3600
    assert draws("auto", slow_greedy, later)[:2] == [False, True]
    assert draws("auto", slow_greedy) == draws("auto", slow_greedy)  # one seed, one sequence
    selector = CLLNS(root / "model.pt", draw="sample")
    selector.setup(problem)
    top = selector.scores(state(0))
    drawn = selector(state(0), 20, np.random.default_rng(0))
    assert len(drawn.free) != 20 or top[drawn.free].min() < np.delete(top, drawn.free).max()
    selector.update(dataclasses.replace(_outcome(2.0, 5.0), status=SolveStatus.TIME_LIMIT))
    record = selector.draw_record
    assert (record.used, record.improving, record.timeouts) == (
        {"greedy": 0, "sample": 1},
        {"greedy": 0, "sample": 1},
        {"greedy": 0, "sample": 1},
    )
    assert (record.seconds["sample"], record.gain["sample"]) == (5.0, 2.0)
    with pytest.raises(UnknownNameError, match="draw"):
        CLLNS(root / "model.pt", draw="top")


def test_the_auto_draw_favours_the_draw_that_gains_more_and_still_tries_the_others():
    """Thompson sampling of the record: the draw with ten times the gain per second is chosen
    most often, one that failed once is still tried now and then, one whose single failure cost
    5 s seldom; per neighborhood (no deadline) two draws of equal gain each are chosen alike."""
    record = DrawRecord(("greedy", "sample", "random"))
    for _ in range(5):
        for drawn, seconds in (("greedy", 1.0), ("sample", 0.1)):
            record.add(drawn, _outcome(2.0, seconds))
            record.add(drawn, _outcome(0.0, seconds))
    record.add("random", _outcome(0.0, 0.1))
    rng = np.random.default_rng(0)
    timed = Counter(record.best(True, rng) for _ in range(1000))
    assert timed["sample"] > 800 and timed["greedy"] < 50 and 20 < timed["random"] < 200
    per_neighborhood = Counter(record.best(False, rng) for _ in range(1000))
    assert abs(per_neighborhood["greedy"] - per_neighborhood["sample"]) < 100
    assert per_neighborhood["random"] > 50
    costly = DrawRecord()
    costly.add("greedy", _outcome(0.0, 5.0))
    for _ in range(20):
        costly.add("sample", _outcome(1.0, 0.1))
        costly.add("sample", _outcome(0.0, 0.1))
    assert Counter(costly.best(True, rng) for _ in range(1000))["greedy"] < 10
    assert record.best(True, rng, among=("sample", "random")) in ("sample", "random")


def test_cl_lns_random_arm_is_tried_after_the_model_draws_without_scores(pipeline):
    """With ``random_arm``, the uniformly random neighborhood is a third draw of ``auto``: tried
    after the top-scored and the sampled, with no scores computed, and counted in the record
    (and named as each neighborhood's arm);
    after a failure the top-scored is not among the choices."""
    root, *_ = pipeline
    problem = tiny_mis(7)
    incumbents = [np.zeros(problem.n_vars) for _ in range(5)]
    for i, x in enumerate(incumbents[1:]):
        x[: i + 1] = 1.0
    deadline = time.perf_counter() + 3600
    selector = CLLNS(root / "model.pt", random_arm=True, until_ready="wait")
    selector.setup(problem)
    drawn = []
    for i, outcome in enumerate([_outcome(1.0, 5.0), _outcome(1.0, 5.0), _outcome(1.0, 0.1)]):
        history = incumbents[:i][::-1]
        state = SearchState(problem, incumbents[i], float(i), history, i, False, deadline)
        drawn.append(selector(state, 20, np.random.default_rng(0)))
        selector.update(outcome)
    assert [(d.info["sampled"], d.info["random"]) for d in drawn] == [
        (False, False),
        (True, False),
        (False, True),
    ]
    assert [d.info["arm"] for d in drawn] == ["greedy", "sample", "random"]
    assert drawn[2].info["inference_time"] == 0.0 and len(drawn[2].free) == 20
    assert selector.draw_record.used == {"greedy": 1, "sample": 1, "random": 1}
    assert selector.draw_record.seconds["random"] == 0.1
    # a failure at the top-scored: the sampled or the random, never the same top 20 again
    selector = CLLNS(root / "model.pt", random_arm=True, until_ready="wait")
    selector.setup(problem)
    first = SearchState(problem, incumbents[0], 0.0, [], 0, False, deadline)
    assert not selector(first, 20, np.random.default_rng(0)).info["sampled"]
    selector.update(_outcome(0.0, 0.1))
    again = selector(dataclasses.replace(first, iteration=1), 20, np.random.default_rng(0))
    assert again.info["sampled"] and selector.draw_record.used["greedy"] == 1
    assert not CLLNS(root / "model.pt", draw="greedy").random_arm  # an arm of auto only


def test_cl_lns_probes_each_model_draw_until_it_has_improved(pipeline):
    """With ``draw="auto"``, a neighborhood of the top-scored or the sampled draw carries the
    probe's sub-solve limit until that draw has improved once; then the loop's (``None``)."""
    root, *_ = pipeline
    problem = tiny_mis(7)
    first, second = np.zeros(problem.n_vars), np.zeros(problem.n_vars)
    second[0] = 1.0
    selector = CLLNS(
        root / "model.pt", random_arm=False, after_failure="greedy", until_ready="wait"
    )
    selector.setup(problem)
    limits = []
    for iteration, outcome in enumerate([_outcome(0.0, 1.0), _outcome(2.0, 0.3), None]):
        state = SearchState(problem, first, 0.0, [], iteration, False)
        drawn = selector(state, 20, np.random.default_rng(0))
        assert not drawn.info["sampled"]  # the top-scored, then again after each failure
        limits.append((drawn.time_limit, drawn.info["probe"]))
        if outcome is not None:
            selector.update(outcome)
    assert limits == [(1.0, True), (1.0, True), (None, False)]
    sampled = selector(
        SearchState(problem, second, 1.0, [first], 3, False), 20, np.random.default_rng(0)
    )
    assert sampled.info["sampled"] and sampled.time_limit == 1.0  # not improved yet
    for options in ({"draw": "greedy"}, {"probe_time_limit": None}):
        other = CLLNS(root / "model.pt", until_ready="wait", **options)
        other.setup(problem)
        state = SearchState(problem, first, 0.0, [], 0, False)
        assert other(state, 20, np.random.default_rng(0)).time_limit is None
    with pytest.raises(InvalidArgumentError, match="probe_time_limit"):
        CLLNS(root / "model.pt", probe_time_limit=0)


def test_cl_lns_past_its_score_share_draws_a_new_incumbent_from_the_last_scores(pipeline):
    """With scoring over its share of the run's time, a new incumbent is not scored: its
    neighborhood is sampled from the last scores; without a share it is scored. The first call
    with scores (the static features) does not count."""
    root, *_ = pipeline
    problem = tiny_mis(7)
    incumbent, other, third = (np.zeros(problem.n_vars) for _ in range(3))
    other[0] = third[0] = third[2] = 1.0
    states = [
        SearchState(problem, incumbent, 0.0, [], 0, False),
        SearchState(problem, other, 1.0, [incumbent], 1, False),  # each improved
        SearchState(problem, third, 2.0, [other, incumbent], 2, False),
    ]
    draws = {}
    for share in (None, 1e-9):
        selector = CLLNS(root / "model.pt", score_share=share)
        selector.setup(problem)
        calls = []
        logits = selector._policy.logits
        selector._policy.logits = lambda *args, calls=calls, logits=logits: (
            calls.append(1) or logits(*args)
        )
        draws[share] = ([selector(state, 20, np.random.default_rng(1)) for state in states], calls)
    (scored, scored_calls), (stale, stale_calls) = draws[None], draws[1e-9]
    assert len(scored_calls) == 3 and len(stale_calls) == 2
    assert [d.info["stale"] for d in scored] == [False, False, False]
    assert [d.info["stale"] for d in stale] == [False, False, True]
    assert stale[2].info["sampled"] and stale[2].info["inference_time"] == 0.0
    for a in (0, 1):
        np.testing.assert_array_equal(stale[a].free, scored[a].free)
    assert not np.array_equal(stale[2].free, scored[2].free)
    with pytest.raises(InvalidArgumentError, match="score_share"):
        CLLNS(root / "model.pt", score_share=0)


def test_cl_lns_names_a_checkpoint_that_does_not_fit(tmp_path):
    from learning.checkpoint import CheckpointError

    (tmp_path / "bad.pt").write_bytes(b"\0")
    with pytest.raises(CheckpointError, match="bad.pt"):
        solve(
            tiny_mis(0),
            CLLNS(tmp_path / "bad.pt"),
            stop=budget(10, 1),
            seed=0,
            params=SolveParams.from_dict({"start.strategy": "first"}),
        )


@pytest.mark.slow
def test_command_line_collect_train_solve(tmp_path, monkeypatch, capsys):
    """The three apps in-process, as ``lns-collect``, ``lns-train``, ``lns-solve`` run them."""
    from lns.cli import collect
    from lns.cli import solve as solve_app
    from lns.cli import train as train_app

    instance = tiny_mis(5).write(tmp_path / "inst" / "tiny_mis_5.lp")
    tiny_mis(6).write(tmp_path / "inst" / "tiny_mis_6.lp")
    (tmp_path / "inst" / "manifest.json").write_text("{}")  # as lns-generate writes one
    monkeypatch.chdir(tmp_path)

    def run(app, *overrides):
        monkeypatch.setattr(sys, "argv", [app.__name__, *overrides])
        app.main()
        return capsys.readouterr().out

    out = run(
        collect,
        "instances=inst",
        "out_dir=samples",
        "collect_limits.iterations=4",
        "collect_limits.expert.time_limit=1",
        "collect_limits.initial_solution_limit=1",
        "collect_limits.negative_time_limit=0.5",
        "collect_limits.initial_fraction=0.2",
        "collect_limits.max_failures=1",
    )
    assert "2 new instance files" in out
    out = run(
        train_app,
        "data=[samples]",
        "checkpoint=m.pt",
        "epochs=1",
        "batch_size=4",
        "model.emb_size=16",
        "model.heads=2",
        "model.head_channels=4",
    )
    assert "best epoch 0" in out and Path("m.pt.csv").exists()
    if importlib.util.find_spec("tensorboard"):
        assert list(Path("runs/tensorboard").rglob("events.out.tfevents.*"))
    out = run(
        solve_app,
        f"instance={instance}",
        "selector=cl_lns",
        "selector.checkpoint=m.pt",
        "time_limit=20",
        "iteration_limit=2",
        "progress=none",
    )
    assert "feasible     True" in out and "(cl_lns)" in out


def test_a_folder_of_instances_is_its_problem_files(tmp_path):
    from lns.cli.collect import instance_paths

    for name in ("b.mps.gz", "a.lp", "manifest.json", "miplib.solu", "notes.txt", "c.MPS"):
        (tmp_path / name).write_text("")
    assert [p.name for p in instance_paths(str(tmp_path))] == ["a.lp", "b.mps.gz", "c.MPS"]


def _p0201_start():
    from helpers import miplib
    from lns.core.problem.mip import read_problem
    from lns.core.solvers.scip.subsolver import ScipSubSolver

    problem = read_problem(miplib("p0201"))
    return problem, ScipSubSolver(problem).solve(time_limit=20, seed=0, solution_limit=1).best.x


@pytest.mark.parametrize(
    "build, size",
    [
        (lambda: (__import__("helpers").mixed_problem(), np.zeros(5)), 2),
        (lambda: (__import__("helpers").knapsack("maximize"), np.zeros(4)), 2),
        (_p0201_start, 40),
    ],
    ids=["mixed", "knapsack_max", "p0201"],
)
def test_cl_lns_meets_the_selector_contract(pipeline, build, size):
    """The battery of tests/test_selectors.py::test_contract, on the fixture's checkpoint."""
    root, *_ = pipeline
    problem, x = build()
    selector = CLLNS(root / "model.pt")
    selector.setup(problem)
    state = SearchState(problem, x, problem.objective_value(x))
    neighborhood = selector(state, size, np.random.default_rng(3))
    free = neighborhood.free
    assert free.dtype.kind == "i" and len(np.unique(free)) == len(free)
    assert set(free.tolist()) <= set(problem.integer_indices.tolist())
    assert len(free) == min(size, len(problem.integer_indices))
    assert neighborhood.solution is None
    np.testing.assert_array_equal(selector(state, size, np.random.default_rng(3)).free, free)


def test_cl_lns_config_composes_with_the_shipped_default():
    from hydra import compose, initialize_config_dir
    from hydra.utils import instantiate

    from configs import CONFIG_DIR
    from learning.selector import PRETRAINED_DIR

    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        selector = instantiate(compose("solve", overrides=["selector=cl_lns"]).selector)
        other = instantiate(
            compose("solve", overrides=["selector=cl_lns", "selector.checkpoint=mvc"]).selector
        )
    assert (
        isinstance(selector, CLLNS) and selector.checkpoint is None
    )  # the problem's class picks it
    assert other.checkpoint == PRETRAINED_DIR / "mvc.pt"


@pytest.mark.slow
def test_cl_lns_benchmark_runs_and_reports_through_lns_bench(pipeline, tmp_path):
    from lns.bench import compose_matrix, run_matrix
    from lns.bench_store import BenchStore
    from lns.report import write_report

    root, *_ = pipeline
    specs = compose_matrix(
        [str(root / "instances" / "tiny_mis_[01].lp")],
        ["random", "cl_lns"],
        [0],
        2.0,
        instance_set="tiny_mis",
        method_options={"cl_lns": {"checkpoint": str(root / "model.pt")}},
        params={"start": {"strategy": "first"}},
    )  # the default start solves them
    assert run_matrix(specs, BenchStore(tmp_path), isolate=False).ran == 4
    records = BenchStore(tmp_path).load()
    assert sorted((r.instance, r.method) for r in records) == [
        (f"tiny_mis_{i}", m) for i in (0, 1) for m in ("cl_lns", "random")
    ]
    assert all(
        r.status in ("feasible", "optimal") and r.iterations > 0
        for r in records
        if r.method == "cl_lns"
    )
    text = write_report(tmp_path).read_text()
    assert "| tiny_mis_1 |" in text and "| **median** |" in text
    assert re.search(r"^\| cl_lns \| [0-2] \| – \|$", text, re.MULTILINE)  # its wins against random


@pytest.mark.parametrize(
    "name",
    [
        "mis_test",
        "mvc_test",
        "mvc1000_train",
        "ca_paper_train",
        "mvc_gen",
        "sc_train",
        "sc_gen",
        "ca_train",
        "ca_gen",
        "general_sc_train",
        "general_ca_train",
        "general_cfl_train",
    ],
)
def test_shipped_models_sets_regenerate_from_their_manifests(name, tmp_path):
    """The first instance of each recorded held-out set comes back byte for byte.

    The sets are regenerated with the commands of docs/cl_lns.md.
    """
    import json

    from instances.generators import problem_class
    from instances.generators.writing import write_set

    recorded = json.loads(
        (
            Path(__file__).parents[1] / "learning" / "pretrained" / "sets" / f"{name}.json"
        ).read_text()
    )
    params = problem_class(recorded["problem"]).params(recorded["size"], **recorded["params"])
    prefix = recorded["instances"][0]["name"].rsplit("_", 1)[0]
    written = write_set(
        recorded["problem"],
        params,
        n=1,
        seed=recorded["seed"],
        out_dir=tmp_path,
        prefix=prefix,
        writer=recorded.get("writer", "scip"),  # these sets were written by SCIP
    )
    assert written["instances"][0] == recorded["instances"][0]


@pytest.mark.parametrize("name", ["mvc", "sc", "ca"])
def test_collect_train_and_solve_each_class(name, tmp_path, caplog):
    """The pipeline on two tiny instances of each class besides mis (the fixture's): the
    checkpoint records the class, and solving an instance of that class raises no warning."""
    cls = CLASSES[name]
    instances = [
        cls.generate(
            cls.params("small", **TINY_PARAMS[name]), np.random.default_rng(s), f"{name}_{s}"
        )
        for s in range(3)
    ]
    paths = [p.write(tmp_path / f"{p.name}.lp") for p in instances[:2]]
    # From SCIP's first auction solution every random neighborhood improves: no negatives
    # (the shipped MVC model's recipe starts later for the same reason).
    collect = dataclasses.replace(TINY, initial_solution_limit=3) if name == "ca" else TINY
    assert collect_files(paths, tmp_path / "samples", collect, seed=0)
    config = TrainConfig(epochs=1, batch_size=4, model=TINY_MODEL, problem_class=name)
    train([tmp_path / "samples"], tmp_path / "model.pt", config)
    selector = CLLNS(tmp_path / "model.pt")
    with caplog.at_level("WARNING", logger="lns"):
        result = solve(
            instances[2],
            selector,
            stop=budget(20, 2),
            params=SolveParams.from_dict({"start.strategy": "first"}),
        )
    assert selector._trained_on["class"] == name  # noqa: SLF001 - what the checkpoint records
    assert not [r for r in caplog.records if r.levelname == "WARNING"]
    assert result.feasibility.feasible and len(result.iterations) == 2


@pytest.fixture(scope="module")
def all_columns(tmp_path_factory):
    """One collection with every variable column, two models: on all of them and on the base."""
    root = tmp_path_factory.mktemp("cl_lns_all")
    paths = [tiny_mis(seed).write(root / "instances" / f"tiny_mis_{seed}.lp") for seed in range(3)]
    collect_files(paths, root / "samples", TINY, seed=0, variable_columns="all")
    for features in ("all", "base"):
        config = TrainConfig(epochs=1, batch_size=4, model=TINY_MODEL, features=features)
        train([root / "samples"], root / f"{features}.pt", config)
    return root


def test_collection_with_all_columns_records_the_local_branching_lp(all_columns):
    from learning.features import VARIABLE_COLUMNS

    files = sorted((all_columns / "samples").glob("*.pt"))
    samples = [s for f in files for s in load_instance_file(f)["samples"]]
    assert samples and load_instance_file(files[0])["features"]["variable"] == list(
        VARIABLE_COLUMNS
    )
    delta = VARIABLE_COLUMNS.index("LB_LP_DELTA")
    for s in samples:
        assert s["variable_features"].shape == (40, len(VARIABLE_COLUMNS))
        # The LB LP's solution lies in the ball of the expert's radius around the incumbent.
        assert 0 < float(s["variable_features"][:, delta].sum()) <= s["radius"] + 1e-4


def test_checkpoints_record_the_columns_they_were_trained_on(all_columns):
    from learning.features import VARIABLE_COLUMNS, feature_spec

    every = torch.load(all_columns / "all.pt", weights_only=True)
    base = torch.load(all_columns / "base.pt", weights_only=True)
    assert (
        every["features"] == feature_spec(VARIABLE_COLUMNS) and base["features"] == feature_spec()
    )
    assert every["training"]["train_files"] == base["training"]["train_files"]
    # The base model was trained on the first 25 of the collected columns.
    means = every["normalization"]["variable"]["mean"]
    assert base["normalization"]["variable"]["mean"] == means[:25] and len(means) == 34


def test_cl_lns_solves_with_the_local_branching_lp_columns(all_columns):
    solve_four_iterations(all_columns / "all.pt")


def test_cl_lns_scores_again_when_the_radius_of_its_lp_changes(all_columns):
    from learning.features import VARIABLE_COLUMNS

    problem = tiny_mis(7)
    selector = CLLNS(all_columns / "all.pt")
    selector.setup(problem)
    state = SearchState(problem, np.zeros(problem.n_vars), 0.0, [], 0, False)
    calls = [selector(state, size, np.random.default_rng(0)).info["cached"] for size in (8, 8, 12)]
    assert calls == [False, True, False]
    assert selector._extractor.variable_columns == VARIABLE_COLUMNS  # noqa: SLF001


def test_a_checkpoint_naming_an_unknown_column_is_refused(all_columns, tmp_path):
    from learning.checkpoint import CheckpointError, load_checkpoint

    raw = torch.load(all_columns / "all.pt", weights_only=True)
    raw["features"]["variable"][30] = "LB_LP_GAP"
    torch.save(raw, tmp_path / "unknown.pt")
    message = r"unknown\.pt: .*variable column LB_LP_GAP \(column 30\), which this code does not"
    with pytest.raises(CheckpointError, match=message):
        CLLNS(tmp_path / "unknown.pt")
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(tmp_path / "unknown.pt")


def test_training_on_columns_that_were_not_collected_names_the_first(pipeline, tmp_path):
    from learning.checkpoint import CheckpointError

    root, *_ = pipeline
    config = TrainConfig(epochs=1, model=TINY_MODEL, features="all")
    with pytest.raises(
        CheckpointError, match="collected without the variable column LP_BASIS_BASIC"
    ):
        train([root / "samples"], tmp_path / "m.pt", config)
    with pytest.raises(UnknownNameError, match="variable column 'PSEUDOCOST'"):
        TrainConfig(features=["OBJECTIVE", "PSEUDOCOST"])


def test_command_line_feature_options(all_columns, tmp_path, monkeypatch):
    """``lns-collect features=all`` and ``lns-train features=[...]`` reach the library."""
    from lns.cli import collect
    from lns.cli import train as train_app

    tiny_mis(5).write(tmp_path / "inst" / "tiny_mis_5.lp")
    monkeypatch.chdir(tmp_path)

    def run(app, *overrides):
        monkeypatch.setattr(sys, "argv", [app.__name__, *overrides])
        app.main()

    run(collect, "instances=inst", "out_dir=samples", "features=all", *TINY_OVERRIDES)
    collected = load_instance_file(tmp_path / "samples" / "tiny_mis_5.pt")["features"]
    assert len(collected["variable"]) == 34
    run(
        train_app,
        f"data=[{all_columns / 'samples'}]",
        "checkpoint=m.pt",
        "epochs=1",
        "features=[LB_LP_DELTA,OBJECTIVE]",
        "tensorboard=null",
        *(f"model.{key}={value}" for key, value in TINY_MODEL.items()),
    )
    trained = torch.load("m.pt", weights_only=True)["features"]
    assert trained["variable"] == ["LB_LP_DELTA", "OBJECTIVE"]


def test_collection_replaces_a_sub_solver_whose_solve_was_abandoned(monkeypatch):
    import learning.collect as collect
    from lns.core.solvers.protocol import SolveOutcome, SolveStatus

    made = []

    class Abandoning:
        def __init__(self, problem, params=None, sub_problem="whole"):
            made.append(self)

        def solve(self, **kwargs):
            return SolveOutcome(SolveStatus.ABANDONED if len(made) == 1 else SolveStatus.OPTIMAL)

    monkeypatch.setattr(collect, "ScipSubSolver", Abandoning)
    solver = collect.RenewedSolver(tiny_mis(0))
    assert solver.solve(time_limit=1.0).status is SolveStatus.ABANDONED
    assert solver.solve(time_limit=1.0).status is SolveStatus.OPTIMAL
    assert len(made) == 2 and solver.current is made[1]
