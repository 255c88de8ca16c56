"""A general CL-LNS model: collected and trained on a tiny mixture of classes and MIPLIB
instances, picked by ``cl_lns`` when no model of the problem's class is shipped."""

import dataclasses
import logging
import shutil
import sys

import numpy as np
import pytest
import torch

from helpers import knapsack, miplib
from instances.generators.registry import CLASSES
from learning.checkpoint_file import CheckpointError
from learning.collect import collect_files, load_instance_file
from learning.dataset import load_samples
from learning.model import GATPolicy
from learning.selector import CLLNS, PRETRAINED_DIR
from learning.train import TrainConfig, graph_logits, train
from lns import SolveParams
from lns.api import solve
from lns.core.errors import UnknownNameError
from lns.core.problem.mip import read_problem
from lns.core.search.stop import budget
from lns.registry import make_selector
from test_learning_pipeline import TINY, TINY_MODEL, TINY_PARAMS, tiny_mis

#: An independent set, a facility location with continuous assignments, and MIPLIB instances:
#: pure binary (p0201), general integers and continuous variables (bell5), equality rows (b-ball).
MIPLIB = ("p0201", "bell5", "b-ball")
#: Short LB and negative sub-solves, three LB steps: negatives on most of the mixture.
MIXTURE_COLLECT = dataclasses.replace(
    TINY, iterations=3, expert={"time_limit": 0.5}, negative_time_limit=0.2
)


def tiny(name: str, seed: int = 0):
    """A tiny instance of a generated class (``TINY_PARAMS``)."""
    cls = CLASSES[name]
    return cls.generate(
        cls.params("small", **TINY_PARAMS[name]), np.random.default_rng(seed), f"tiny_{name}"
    )


@pytest.fixture(scope="module")
def mixture(tmp_path_factory):
    """The mixture's instance paths, its samples and a general model trained on them."""
    root = tmp_path_factory.mktemp("general")
    paths = [
        tiny_mis(0).write(root / "instances" / "tiny_mis.lp"),
        tiny("cfl").write(root / "instances" / "tiny_cfl.lp"),
        *(miplib(name) for name in MIPLIB),
    ]
    collect_files(paths, root / "samples", MIXTURE_COLLECT, seed=0)
    config = TrainConfig(
        epochs=1, batch_size=8, validation_fraction=0.2, model=TINY_MODEL, problem_class="general"
    )
    train([root / "samples"], root / "general.pt", config)
    return root, paths


@pytest.fixture
def shipped(mixture, tmp_path, monkeypatch):
    """A shipped-models folder holding the shipped ``mis`` model and the tiny general one."""
    root, _ = mixture
    shutil.copy(PRETRAINED_DIR / "mis.pt", tmp_path / "mis.pt")
    shutil.copy(root / "general.pt", tmp_path / "general.pt")
    monkeypatch.setattr("learning.selector.PRETRAINED_DIR", tmp_path)
    return tmp_path


def test_collection_records_which_variables_are_integer(mixture):
    root, paths = mixture
    for path in paths:
        problem = read_problem(path)
        data = load_instance_file(root / "samples" / f"{problem.name}.pt")
        integer = data["integer_mask"].numpy()
        np.testing.assert_array_equal(integer, problem.integer_mask)
        for s in data["samples"]:
            changed = torch.cat([s["positives"], s["negatives"]])
            assert s["variable_features"].shape[0] == problem.n_vars
            assert not changed[:, ~integer].any()  # neighborhoods change integer variables only
    samples = load_samples(sorted((root / "samples").glob("*.pt")), min_negatives=0)
    assert {s.instance for s in samples} >= {"tiny_cfl", "bell5"}
    for s in samples:
        width = int(s.integer.sum())
        assert s.positives.shape[1] == width and s.negatives.shape[1] == width


def test_files_without_the_integer_mask_give_it_by_their_columns(mixture, tmp_path):
    root, _ = mixture
    data = torch.load(root / "samples" / "bell5.pt", weights_only=True)
    expected = data.pop("integer_mask")
    torch.save(data, tmp_path / "bell5.pt")
    older = load_samples([tmp_path / "bell5.pt"], min_negatives=0)
    assert older and all(torch.equal(s.integer, expected) for s in older)
    columns = data["features"]["variable"]
    columns[columns.index("IS_CONTINUOUS")] = "LB_LP_VALUE"  # collected without the column
    torch.save(data, tmp_path / "bell5.pt")
    unknown = load_samples([tmp_path / "bell5.pt"], min_negatives=0, variable_columns=["UPPER"])
    assert all(bool(s.integer.all()) for s in unknown)


def test_graphs_of_different_sizes_score_in_one_batch_as_alone(mixture):
    root, _ = mixture
    samples = load_samples(sorted((root / "samples").glob("*.pt")), min_negatives=0)
    one_each = list({s.instance: s for s in samples}.values())
    assert len({s.graph.variable_features.shape[0] for s in one_each}) >= 3
    torch.manual_seed(0)
    model = GATPolicy(25, 10, 3, **TINY_MODEL).eval()
    with torch.no_grad():
        batched = graph_logits(model, one_each)
        for s, logits in zip(one_each, batched, strict=True):
            torch.testing.assert_close(logits, model(s.graph)[s.integer], rtol=1e-5, atol=1e-5)


def test_the_general_checkpoint_records_its_class_and_sizes(mixture):
    root, paths = mixture
    problem = torch.load(root / "general.pt", weights_only=True)["problem"]
    assert problem["class"] == "general"
    sizes = [read_problem(path).n_vars for path in paths]
    assert min(sizes) <= problem["n_variables"][0] <= problem["n_variables"][1] <= max(sizes)
    with pytest.raises(UnknownNameError, match="'mixed' among choices .*'general'"):
        TrainConfig(problem_class="mixed")


def test_lns_train_records_problem_class_general(mixture, tmp_path, monkeypatch):
    from lns.cli import train as train_app

    root, _ = mixture
    monkeypatch.chdir(tmp_path)
    overrides = [f"data=[{root / 'samples'}]", "checkpoint=m.pt", "epochs=1", "tensorboard=null"]
    overrides += [f"model.{key}={value}" for key, value in TINY_MODEL.items()]
    monkeypatch.setattr(sys, "argv", ["lns-train", *overrides, "problem_class=general"])
    train_app.main()
    assert torch.load("m.pt", weights_only=True)["problem"]["class"] == "general"


@pytest.mark.parametrize(
    "name, model, why",
    [
        ("mis", "mis", "(set packing"),
        ("sc", "general", "(it looks like sc (set covering"),
        ("cfl", "general", "(it is none of the CL-LNS classes: not a pure binary program)"),
    ],
)
def test_without_a_checkpoint_the_class_model_is_used_else_the_general_one(
    shipped, caplog, name, model, why
):
    selector = CLLNS()
    with caplog.at_level(logging.INFO, logger="lns"):
        selector.check(tiny_mis(0) if name == "mis" else tiny(name))
    assert selector.checkpoint == shipped / f"{model}.pt"
    assert f"cl_lns uses the shipped {model} model {why}" in caplog.text


def test_cl_lns_solves_a_problem_of_no_class_with_the_general_model(shipped):
    selector = CLLNS()
    result = solve(
        miplib("bell5"),
        selector,
        stop=budget(20, 3),
        seed=0,
        params=SolveParams.from_dict({"start.strategy": "first"}),
    )
    assert selector.checkpoint == shipped / "general.pt"
    assert result.feasibility.feasible and len(result.iterations) == 3
    assert all(r.selector == "cl_lns" for r in result.iterations)


def test_without_a_general_model_the_error_names_the_detected_class(shipped):
    (shipped / "general.pt").unlink()
    with pytest.raises(
        CheckpointError,
        match=r"fits tiny_sc: it looks like sc \(set covering.*\['mis'\], and no general model",
    ):
        CLLNS().check(tiny("sc"))
    with pytest.raises(CheckpointError, match="none of the CL-LNS classes .*no general model"):
        CLLNS().check(knapsack())


def test_a_general_checkpoint_fits_any_class_without_a_warning(mixture, caplog):
    root, _ = mixture
    with caplog.at_level(logging.WARNING, logger="lns"):
        CLLNS(root / "general.pt").check(tiny_mis(7))
    assert not caplog.records


def test_adaptive_with_a_cl_lns_arm_uses_the_general_model(shipped):
    selector = make_selector("adaptive", selectors=["random", "cl_lns"])
    result = solve(
        miplib("p0201"),
        selector,
        stop=budget(20, 8),
        seed=0,
        params=SolveParams.from_dict({"start.strategy": "first"}),
    )
    assert selector.arms[1].checkpoint == shipped / "general.pt"
    assert result.feasibility.feasible and len(result.iterations) == 8
    assert selector.statistics.pulls[1] > 0  # the learned arm was played
