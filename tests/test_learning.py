"""CL-LNS pieces in isolation: features, model, loss, checkpoints, the at-cap sampling rule."""

import math
import subprocess
import sys

import numpy as np
import pytest
import torch
from torch_geometric.data import Batch

from helpers import knapsack, mixed_problem
from learning.bipartite_graph import make_graph, observation_graph
from learning.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from learning.dataset import Sample, normalization_stats
from learning.features import (
    CONS_DYNAMIC_START,
    VAR_DYNAMIC_START,
    ConsFeature,
    EdgeFeature,
    FeatureExtractor,
    VarFeature,
    split_rows,
)
from learning.loss import imitation_bce, info_nce, loss_function
from learning.model import GATPolicy
from learning.sampling import sample_by_scores
from learning.train import TrainConfig, _train_epoch, edge_groups
from lns.core.errors import UnknownNameError


def _model(**options):
    torch.manual_seed(0)
    return GATPolicy(len(VarFeature), len(ConsFeature), len(EdgeFeature), **options)


@pytest.mark.parametrize("make", [knapsack, mixed_problem])
def test_feature_matrices_match_their_enums(make):
    problem = make()
    extractor = FeatureExtractor(problem)
    x = problem.round_integers(np.clip(extractor.lp.x, problem.lower, problem.upper))
    observation = extractor.observe(x, [x])
    matrix, *_ = split_rows(problem)
    assert observation.variable_features.shape == (problem.n_vars, len(VarFeature))
    assert observation.constraint_features.shape == (matrix.shape[0], len(ConsFeature))
    assert observation.edge_features.shape == (matrix.nnz, len(EdgeFeature))
    assert observation.edge_index.shape == (2, matrix.nnz)
    for array in (
        observation.variable_features,
        observation.constraint_features,
        observation.edge_features,
    ):
        assert np.isfinite(array).all()


def test_mixed_problem_features_have_their_meaning():
    problem = mixed_problem()  # y1 y2 binary, z1 z2 integer, w continuous; rows r1..r3 <=, r4 >= 0
    extractor = FeatureExtractor(problem)
    v = extractor.observe(
        np.array([1, 1, 3, 3, 0.5]), [np.array([0, 0, 0, 0, 0.0])]
    ).variable_features
    assert v[:, VarFeature.IS_BINARY].tolist() == [1, 1, 0, 0, 0]
    assert v[:, VarFeature.IS_INTEGER].tolist() == [0, 0, 1, 1, 0]
    assert v[:, VarFeature.IS_CONTINUOUS].tolist() == [0, 0, 0, 0, 1]
    assert v[:, VarFeature.OBJECTIVE].tolist() == pytest.approx(
        [-1, -2 / 3, -1 / 3, -2 / 3, -1 / 6]
    )
    assert v[:, VarFeature.INCUMBENT] == pytest.approx(np.log1p([1, 1, 3, 3, 0.5]))
    assert v[:, VarFeature.HISTORY_1_PRESENT].tolist() == [1] * 5
    assert v[:, VarFeature.HISTORY_2_PRESENT].tolist() == [0] * 5
    c = extractor.observe(np.array([1, 1, 3, 3, 0.5])).constraint_features
    # r1: y1 + y2 + w = 2.5 at its upper side 2.5 -> tight;
    # r4 (z1 + z2 >= 0) becomes -z1 - z2 <= 0 with slack 6.
    assert c[0, ConsFeature.INCUMBENT_TIGHT] == 1
    assert c[-1, ConsFeature.IS_LOWER_SIDE] == 1
    assert c[-1, ConsFeature.INCUMBENT_SLACK] == pytest.approx(np.log1p(6 / np.sqrt(2)))


def test_observe_changes_only_dynamic_columns():
    problem = mixed_problem()
    extractor = FeatureExtractor(problem)
    a = extractor.observe(np.zeros(5))
    b = extractor.observe(np.array([1, 1, 3, 3, 0.5]), [np.zeros(5)])
    np.testing.assert_array_equal(
        a.variable_features[:, :VAR_DYNAMIC_START], b.variable_features[:, :VAR_DYNAMIC_START]
    )
    np.testing.assert_array_equal(
        a.constraint_features[:, :CONS_DYNAMIC_START], b.constraint_features[:, :CONS_DYNAMIC_START]
    )
    assert not np.array_equal(a.variable_features, b.variable_features)


def _graph(n_vars, n_cons, edges, seed):
    rng = np.random.default_rng(seed)
    return make_graph(
        rng.normal(size=(n_vars, len(VarFeature))),
        rng.normal(size=(n_cons, len(ConsFeature))),
        np.array(edges).T,
        rng.normal(size=(len(edges), len(EdgeFeature))),
    )


def test_model_shapes_and_probabilities():
    model = _model()
    graph = _graph(3, 2, [(0, 0), (0, 1), (1, 1), (1, 2)], seed=0)
    logits = model(graph)
    assert logits.shape == (3,)
    scores = torch.sigmoid(logits)
    assert torch.all((scores > 0) & (scores < 1))


def test_batching_two_graphs_equals_running_them_separately():
    model = _model().eval()
    first = _graph(3, 2, [(0, 0), (0, 1), (1, 1), (1, 2)], seed=0)
    second = _graph(4, 3, [(0, 3), (1, 0), (2, 1), (2, 2), (0, 0)], seed=1)
    batch = Batch.from_data_list([first, second])
    assert batch.edge_index[:, 4:].min(dim=1).values.tolist() == [
        2,
        3,
    ]  # shifted by (constraints, variables)
    together = model(batch)
    apart = torch.cat([model(first), model(second)])
    torch.testing.assert_close(together, apart, rtol=1e-5, atol=1e-6)
    assert batch.ptr.tolist() == [0, 3, 7]


def test_model_hyperparameters_are_constructor_arguments():
    small = _model(emb_size=16, heads=2, head_channels=4)
    assert small.config["emb_size"] == 16
    assert small(_graph(2, 1, [(0, 0), (0, 1)], seed=0)).shape == (2,)
    default_size = sum(p.numel() for p in _model().parameters())
    assert 55_000 < default_size < 70_000  # the paper: about 62k


def test_infonce_matches_hand_computation():
    # logits 0 -> pi = 0.5; tau = 0.5: positive score (1+1)*0.5/0.5 = 2, negatives 1 and 2.
    # L = -log(e^2 / (e^2 + e^1 + e^2)) = log(2 + e^-1).
    logits = torch.zeros(3)
    positives = torch.tensor([[1.0, 1.0, 0.0]])
    negatives = torch.tensor([[0.0, 0.0, 1.0], [1.0, 0.0, 1.0]])
    assert float(info_nce(logits, positives, negatives, temperature=0.5)) == pytest.approx(
        math.log(2 + math.exp(-1))
    )


def test_infonce_averages_positives_and_stays_finite():
    logits = torch.tensor([1.0, -1.0, 0.5, 0.0])
    positives = torch.tensor([[1.0, 0, 1, 0], [0, 0, 1, 1]])
    negatives = torch.tensor([[1.0, 1, 1, 0], [1.0, 0, 0, 1]])
    value = info_nce(logits, positives, negatives, temperature=0.07)
    pi = torch.sigmoid(logits).double()
    negative_sum = sum(torch.exp(a @ pi / 0.07) for a in negatives.double())
    expected = -np.mean(
        [
            float(torch.log(torch.exp(p @ pi / 0.07) / (torch.exp(p @ pi / 0.07) + negative_sum)))
            for p in positives.double()
        ]
    )
    assert expected > 1.0
    assert float(value) == pytest.approx(expected, rel=1e-5)
    huge = info_nce(
        torch.full((4000,), 10.0), torch.ones(1, 4000), torch.ones(1, 4000), temperature=0.07
    )
    assert torch.isfinite(huge) and float(huge) == pytest.approx(math.log(2), rel=1e-4)


def test_bce_ablation_and_loss_names():
    logits = torch.tensor([0.0, 2.0])
    expected = -(math.log(0.5) + math.log(1 / (1 + math.exp(-2)))) / 2
    assert float(imitation_bce(logits, torch.tensor([[1.0, 1.0]]))) == pytest.approx(expected)
    assert loss_function("bce") is imitation_bce
    with pytest.raises(UnknownNameError, match="infonce"):
        loss_function("triplet")


def test_checkpoint_round_trip(tmp_path):
    model = _model(emb_size=32, heads=4, head_channels=8)
    model.set_normalization(
        {
            "variable": (
                torch.arange(len(VarFeature)).float(),
                torch.full((len(VarFeature),), 2.0),
            ),
            "constraint": (torch.zeros(len(ConsFeature)), torch.ones(len(ConsFeature))),
            "edge": (torch.zeros(len(EdgeFeature)), torch.ones(len(EdgeFeature))),
        }
    )
    path = save_checkpoint(tmp_path / "m.pt", model, training={"epoch": 3})
    raw = torch.load(path, weights_only=True)
    assert raw["model_class"] == "GATPolicy" and raw["training"]["epoch"] == 3
    loaded, checkpoint = load_checkpoint(path)
    graph = _graph(3, 2, [(0, 0), (0, 1), (1, 1), (1, 2)], seed=0)
    torch.testing.assert_close(loaded(graph), model.eval()(graph))
    assert checkpoint["normalization"]["variable"]["std"][0] == 2.0


def test_checkpoint_that_does_not_fit_is_rejected_by_name(tmp_path):
    path = save_checkpoint(tmp_path / "m.pt", _model())
    raw = torch.load(path, weights_only=True)
    raw["features"]["variable"] = raw["features"]["variable"][:-1]
    torch.save(raw, tmp_path / "old.pt")
    with pytest.raises(CheckpointError, match=r"old\.pt.*columns"):
        load_checkpoint(tmp_path / "old.pt")
    with pytest.raises(CheckpointError, match="missing.pt: no such"):
        load_checkpoint(tmp_path / "missing.pt")
    (tmp_path / "junk.pt").write_text("not a checkpoint")
    with pytest.raises(CheckpointError, match="junk.pt"):
        load_checkpoint(tmp_path / "junk.pt")


@pytest.mark.parametrize("size", [5, 50, 300])
def test_sampling_at_cap_has_expected_size(size):
    rng = np.random.default_rng(0)
    scores = rng.uniform(0.01, 0.99, size=1000)
    sizes = [len(sample_by_scores(scores, size, rng)) for _ in range(200)]
    assert np.mean(sizes) == pytest.approx(size, rel=0.1)
    chosen = np.concatenate([sample_by_scores(scores, size, rng) for _ in range(200)])
    # Higher scores are drawn more often: the drawn ones score above the mean, the more so the
    # smaller the size.
    assert scores[chosen].mean() > scores.mean() + 0.05


def test_sampling_is_reproducible_and_nonempty():
    scores = np.random.default_rng(1).uniform(size=100)
    a = sample_by_scores(scores, 10, np.random.default_rng(7))
    b = sample_by_scores(scores, 10, np.random.default_rng(7))
    np.testing.assert_array_equal(a, b)
    assert len(sample_by_scores(np.full(100, 1e-9), 1, np.random.default_rng(0))) >= 1
    assert len(sample_by_scores(scores, 100, np.random.default_rng(0))) == 100


def test_classical_solve_does_not_import_torch():
    code = (
        "import sys; from helpers import knapsack; import lns.registry; from lns.api import solve; "
        "from lns.core.search.stop import budget; "
        "r = solve(knapsack(), 'random', budget(5, 2), seed=0); "
        "assert r.objective is not None; print('torch' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=str(_tests_dir()),
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def _tests_dir():
    from pathlib import Path

    return Path(__file__).parent


def test_observation_graph_is_float32():
    problem = knapsack()
    extractor = FeatureExtractor(problem)
    graph = observation_graph(extractor.observe(np.zeros(4)))
    assert graph.variable_features.dtype == torch.float32 and graph.edge_index.dtype == torch.int64
    assert graph.num_nodes == 4


def test_normalization_stats_accumulated_by_sample_match_the_stacked_ones():
    rng = np.random.default_rng(0)
    samples = []
    for n_vars, n_rows, n_edges in ((3, 2, 4), (7, 5, 11), (1, 1, 1)):
        variables = rng.normal(5.0, 3.0, (n_vars, 4))
        variables[:, 2] = 1.5  # constant: std 1
        graph = make_graph(
            variables,
            rng.normal(size=(n_rows, 2)),
            np.zeros((2, n_edges), dtype=np.int64),
            rng.exponential(size=(n_edges, 3)) * 1e3,
        )
        samples.append(Sample(graph, torch.ones(1, n_vars), torch.zeros(1, n_vars), "x", None))
    stats = normalization_stats(samples)
    for block, key in (("variable", "variable_features"), ("edge", "edge_features")):
        stacked = torch.cat([getattr(s.graph, key) for s in samples]).double()
        mean, std = stats[block]
        assert torch.allclose(mean.double(), stacked.mean(dim=0), rtol=1e-6)
        expected = stacked.std(dim=0, unbiased=False)
        expected = torch.where(expected > 1e-8, expected, torch.ones_like(expected))
        assert torch.allclose(std.double(), expected, rtol=1e-5)
    assert stats["variable"][1][2] == 1.0


def _random_sample(rng, n_vars: int, n_rows: int, n_edges: int) -> Sample:
    edges = np.stack([rng.integers(n_rows, size=n_edges), rng.integers(n_vars, size=n_edges)])
    graph = make_graph(
        rng.normal(size=(n_vars, len(VarFeature))),
        rng.normal(size=(n_rows, len(ConsFeature))),
        edges,
        rng.normal(size=(n_edges, len(EdgeFeature))),
    )
    positives = torch.zeros(1, n_vars)
    positives[0, :2] = 1
    negatives = torch.zeros(2, n_vars)
    negatives[0, 2:4] = negatives[1, 3:5] = 1
    return Sample(graph, positives, negatives, "x", torch.ones(n_vars, dtype=torch.bool))


def test_a_batch_in_edge_bounded_passes_takes_the_step_of_one_pass():
    rng = np.random.default_rng(1)
    samples = [_random_sample(rng, 6 + i, 4, 10 + 5 * i) for i in range(4)]
    assert [len(g) for g in edge_groups(samples, 25)] == [2, 1, 1]  # 10+15, 20, 25
    assert [len(g) for g in edge_groups(samples, 5)] == [1, 1, 1, 1]  # a graph alone
    assert edge_groups(samples, None) == [samples]
    steps = []
    for pass_edges in (None, 25):
        model = _model()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)  # the step is the gradient
        config = TrainConfig(batch_size=4, pass_edges=pass_edges)
        loss = _train_epoch(model, optimizer, info_nce, samples, np.random.default_rng(0), config)
        steps.append((loss, torch.cat([p.detach().flatten() for p in model.parameters()])))
    assert steps[0][0] == pytest.approx(steps[1][0], rel=1e-5)
    assert torch.allclose(steps[0][1], steps[1][1], atol=1e-6)
    assert not torch.allclose(steps[1][1], torch.cat([p.flatten() for p in _model().parameters()]))
