"""CL-LNS start-up, checkpoint matching and packaging: numpy inference, torch-free reading,
problem classes, the budget, the shipped models in the wheel."""

import logging
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
import types
import zipfile
from pathlib import Path

import numpy as np
import pytest

import learning.features
import learning.prefetch
import learning.selector
from helpers import knapsack, miplib
from instances.generators.registry import CLASSES
from learning.checkpoint_file import CheckpointError, read_checkpoint
from learning.features import FeatureExtractor
from learning.inference import BLOCK_EDGES, NumpyPolicy
from learning.problem_class import detect_class
from learning.sampling import sample_by_scores
from learning.selector import CLLNS, PRETRAINED_DIR, resolve_checkpoint
from lns import SolveParams
from lns.api import solve
from lns.core.errors import InvalidArgumentError
from lns.core.problem.mip import read_problem
from lns.core.search.selection import SearchState
from lns.core.search.stop import budget
from lns.registry import make_selector

ROOT = Path(__file__).resolve().parents[1]
TINY = {
    "mis": {"n_nodes": 40, "affinity": 2},
    "mvc": {"n_nodes": 40, "affinity": 3},
    "sc": {"n_rows": 30, "n_cols": 20, "density": 0.2},
    "ca": {"n_items": 20, "n_bids": 40},
    "cfl": {"n_customers": 6, "n_facilities": 3},
}
#: Logits of the first six variables of :func:`_tiny_observation` by each shipped checkpoint, read
#: off the shipped files (for mis, mvc and general their sigmoids are the scores main's torch model
#: gave before the checkpoints carried their problem metadata). Logits, not scores: the sc model's
#: scores on this graph all round to 0.
SHIPPED_LOGITS = {
    "mis": [-2.99696, 0.42871, 0.5748, -2.89538, -2.65892, 0.43576],
    "mvc": [-0.07541, -0.07238, -0.0632, -0.07118, -0.06016, -0.05981],
    "sc": [-97.08916, -97.45264, -97.84513, -99.88618, -97.94427, -98.02013],
    "ca": [-0.10679, -0.11338, -0.11331, -0.12578, -0.11315, -0.11366],
    "general": [-1.08556, -1.87123, -1.68415, -4.0059, -1.43533, -1.45539],
}


@pytest.fixture
def no_sc_model(monkeypatch):
    """The shipped models without the set-cover one (as a checkout that has none)."""
    shipped = learning.selector.shipped_models
    monkeypatch.setattr(
        learning.selector,
        "shipped_models",
        lambda: {name: path for name, path in shipped().items() if name != "sc"},
    )


@pytest.fixture
def no_general_model(monkeypatch, no_sc_model):
    """The shipped models without the general and the set-cover ones."""
    shipped = learning.selector.shipped_models
    monkeypatch.setattr(
        learning.selector,
        "shipped_models",
        lambda: {name: path for name, path in shipped().items() if name != "general"},
    )


@pytest.fixture(autouse=True)
def no_prefetch_left():
    """A prefetch a test started and never waited for (its root LP) would run on into the
    tests after it, which then share the cores with it."""
    yield
    learning.prefetch.cancel_running()


def tiny(name: str, seed: int = 0):
    cls = CLASSES[name]
    return cls.generate(
        cls.params("small", **TINY[name]), np.random.default_rng(seed), f"tiny_{name}"
    )


def _tiny_observation():
    problem = CLASSES["mis"].generate(
        CLASSES["mis"].params(n_nodes=40, affinity=2), np.random.default_rng(0), "tiny"
    )
    x = np.zeros(problem.n_vars)
    x[0] = 1
    return problem, FeatureExtractor(problem).observe(x, [np.zeros(problem.n_vars)])


def _numpy_logits_and_scores(path, observation, block_edges=BLOCK_EDGES):
    checkpoint = read_checkpoint(path)
    policy = NumpyPolicy(checkpoint["state_dict"], checkpoint["model_config"])
    cache = policy.graph_cache(observation.edge_index, observation.edge_features, block_edges)
    inputs = (observation.variable_features, observation.constraint_features, cache)
    return policy.logits(*inputs), policy.scores(*inputs)


@pytest.mark.parametrize("block_edges", [BLOCK_EDGES, 5])
@pytest.mark.parametrize("name", ["mis", "mvc", "sc", "ca", "general"])
def test_shipped_models_score_as_before_with_numpy_and_with_torch(name, block_edges):
    """The numpy forward pass matches torch's, in one block of edges or in blocks of five (many
    blocks, and targets with more edges than a block holds)."""
    import torch

    from learning.bipartite_graph import observation_graph
    from learning.checkpoint import load_checkpoint

    problem, observation = _tiny_observation()
    logits, scores = _numpy_logits_and_scores(
        PRETRAINED_DIR / f"{name}.pt", observation, block_edges
    )
    np.testing.assert_allclose(logits[:6], SHIPPED_LOGITS[name], rtol=1e-5, atol=1e-4)
    model, _ = load_checkpoint(PRETRAINED_DIR / f"{name}.pt")
    with torch.no_grad():
        reference = torch.sigmoid(model(observation_graph(observation))).numpy()
    np.testing.assert_allclose(scores, reference, atol=1e-6)


@pytest.mark.parametrize("name", ["mis", "mvc", "sc", "ca", "general"])
def test_shipped_models_record_class_sizes_and_schema(name):
    from learning.features import feature_spec

    checkpoint = read_checkpoint(PRETRAINED_DIR / f"{name}.pt")
    assert checkpoint["problem"]["class"] == name
    low, high = checkpoint["problem"]["n_variables"]
    assert 0 < low <= high
    assert checkpoint["features"] == feature_spec()


def test_reader_refuses_objects_other_than_tensors_and_plain_values(tmp_path):
    path = tmp_path / "evil.pt"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(
            "evil/data.pkl", b"\x80\x02cos\nsystem\nX\x04\x00\x00\x00trueq\x00\x85R."
        )  # os.system("true")
        archive.writestr("evil/byteorder", b"little")
    with pytest.raises(
        CheckpointError, match=r"evil.pt: not a readable checkpoint \(refused object os.system\)"
    ):
        read_checkpoint(path)


def _with_features(tmp_path, change):
    import torch

    checkpoint = torch.load(PRETRAINED_DIR / "mis.pt", weights_only=True)
    change(checkpoint["features"])
    torch.save(checkpoint, tmp_path / "other.pt")
    return tmp_path / "other.pt"


def test_mismatched_feature_schema_is_refused_when_the_selector_is_built(tmp_path):
    path = _with_features(tmp_path, lambda spec: spec["variable"].__setitem__(3, "PSEUDOCOST"))
    with pytest.raises(CheckpointError) as error:
        CLLNS(path)
    assert str(error.value) == (
        f"{path}: feature schema does not match: trained on variable column PSEUDOCOST "
        "(column 3), which this code does not compute; retrain it"
    )
    fewer = _with_features(tmp_path, lambda spec: spec["edge"].pop())
    with pytest.raises(CheckpointError, match="2 edge columns, this code computes 3"):
        CLLNS(fewer)


def test_missing_checkpoint_is_reported_before_the_problem_is_read(tmp_path):
    with pytest.raises(CheckpointError, match="no_such.pt: no such checkpoint file"):
        solve(
            tmp_path / "not_read.mps",
            make_selector("cl_lns", checkpoint=str(tmp_path / "no_such.pt")),
        )


@pytest.mark.parametrize(
    "name, expected", [("mis", "mis"), ("mvc", "mvc"), ("sc", "sc"), ("ca", "ca"), ("cfl", None)]
)
def test_class_detection_on_tiny_generated_instances(name, expected):
    detected = detect_class(tiny(name))
    assert detected.name == expected, detected.reason


def test_class_detection_reads_the_sense_from_the_objective():
    problem = tiny("mis")
    flipped = type(problem)(
        **{**problem.__dict__, "objective": -problem.objective, "sense": "minimize"}
    )
    assert detect_class(flipped).name == "mis"
    assert detect_class(type(problem)(**{**problem.__dict__, "sense": "minimize"})).name is None
    assert detect_class(knapsack()).reason == "coefficients other than 1"


@pytest.mark.parametrize("name", ["mis", "mvc", "sc", "ca"])
def test_without_a_checkpoint_the_shipped_model_of_the_class_is_used(name):
    selector = CLLNS()
    selector.check(tiny(name))
    assert selector.checkpoint == PRETRAINED_DIR / f"{name}.pt"


def test_without_a_checkpoint_a_problem_of_no_shipped_class_gets_the_general_model(no_sc_model):
    for problem in (tiny("sc"), knapsack()):
        selector = CLLNS()
        selector.check(problem)
        assert selector.checkpoint == PRETRAINED_DIR / "general.pt"


def test_without_a_matching_model_the_run_fails_before_solving(monkeypatch, no_general_model):
    from lns.core.solvers.scip.subsolver import ScipSubSolver

    def no_solve(*args, **kwargs):
        raise AssertionError("solved before refusing")

    monkeypatch.setattr(ScipSubSolver, "solve", no_solve)
    with pytest.raises(
        CheckpointError, match=r"no shipped model fits tiny_sc: it looks like sc \(set covering"
    ):
        solve(tiny("sc"), "cl_lns", stop=5)


def test_a_model_of_another_class_is_used_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="lns"):
        CLLNS("mvc").check(tiny("mis"))
    assert "was trained on mvc, but the problem looks like mis (set packing" in caplog.text


def test_a_local_folder_does_not_shadow_a_shipped_model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mis").mkdir()
    (tmp_path / "mvc.pt").write_bytes(b"not a model")
    assert resolve_checkpoint("mis") == PRETRAINED_DIR / "mis.pt"
    assert resolve_checkpoint("mvc.pt") == PRETRAINED_DIR / "mvc.pt"
    assert resolve_checkpoint("./mis") == Path("./mis")
    CLLNS("mis")


def test_first_call_stops_at_the_deadline_on_a_slow_lp():
    """dano3mip's root LP takes far longer than the 0.5 s left: the call returns in time, empty."""
    problem = read_problem(miplib("dano3mip"))
    selector = CLLNS("mis", until_ready="wait")
    selector.check(problem)
    state = SearchState(problem, np.zeros(problem.n_vars), 0.0, deadline=time.perf_counter() + 0.5)
    neighborhood = selector(state, 10, np.random.default_rng(0))
    assert neighborhood.info["stopped"] == "time_limit" and len(neighborhood.free) == 0
    selector.prefetch.join(timeout=5)  # the background root LP was cancelled
    assert not selector.prefetch.is_alive()


def test_one_second_budget_is_respected():
    """air05 from a known solution (the LNS starts at once): root LP, features and model fit a
    1 s budget, which ends the run (the seconds they take: ``benchmarks/test_cl_lns_cost.py``)."""
    from lns.core.solvers.scip.subsolver import ScipSubSolver

    problem = read_problem(miplib("air05"))
    start = ScipSubSolver(problem).solve(time_limit=30, seed=0, solution_limit=1).best.x
    result = solve(miplib("air05"), CLLNS("mis"), stop=1.0, seed=0, initial_solution=start)
    assert result.feasibility.feasible and result.stop_reason == "time_limit"


def test_cl_lns_run_does_not_need_torch(tmp_path):
    """A run where torch (and torch_geometric) cannot be imported: it never tries."""
    instance = tiny("mis").write(tmp_path / "tiny.lp")
    script = textwrap.dedent(f"""
        import sys
        class NoTorch:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("torch", "torch_geometric"):
                    raise ImportError("torch is not available here")
        sys.meta_path.insert(0, NoTorch())
        from lns import SolveParams, StartParams, solve
        from lns.core.search.stop import budget
        params = SolveParams(start=StartParams(strategy="first"))  # the default solves it
        result = solve({str(instance)!r}, "cl_lns", budget(20, 3), seed=0, params=params)
        assert result.feasibility.feasible and len(result.iterations) == 3, result
        print("ok", [r.selector for r in result.iterations])
    """)
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("ok ['cl_lns', 'cl_lns', 'cl_lns']")


def test_first_call_needs_are_prepared_in_the_background(tmp_path, monkeypatch):
    """A slow import (a fake module whose import waits until the test lets it finish), the
    static features and the graph cache run beside the caller, from ``check`` on (with the
    paper's wait for them); the first call uses them instead of computing them again."""
    gate = types.ModuleType("fake_import_gate")
    gate.release, gate.imported = threading.Event(), False
    monkeypatch.setitem(sys.modules, "fake_import_gate", gate)
    (tmp_path / "slow_fake_module.py").write_text(
        "import fake_import_gate as gate\ngate.release.wait(30)\ngate.imported = True\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(CLLNS, "background_imports", ("slow_fake_module",))
    built, graphs = [], []
    cache = learning.prefetch.graph_cache
    for module in (learning.prefetch, learning.selector):  # the thread's and the caller's
        monkeypatch.setattr(
            module,
            "FeatureExtractor",
            lambda *args, **kwargs: built.append(FeatureExtractor(*args, **kwargs)) or built[-1],
        )
        monkeypatch.setattr(
            module,
            "graph_cache",
            lambda *args: graphs.append(threading.current_thread().name) or cache(*args),
        )
    selector, problem = CLLNS("mis", until_ready="wait"), tiny("mis")
    selector.check(problem)
    assert selector.prefetch.is_alive() and not gate.imported  # check did not wait for it
    gate.release.set()
    selector.prefetch.join(timeout=30)
    assert gate.imported and "slow_fake_module" in sys.modules
    sys.modules.pop("slow_fake_module")
    assert len(built) == 1 and selector.prefetch.extractor is built[0]
    state = SearchState(problem, np.zeros(problem.n_vars), 0.0, deadline=time.perf_counter() + 30)
    selector.setup(problem)
    assert len(selector(state, 3, np.random.default_rng(0)).free) == 3
    assert len(built) == 1 and graphs == ["cl_lns prefetch"]


def test_the_first_call_builds_the_graph_cache_while_the_root_lp_is_solved(monkeypatch):
    """When the first call comes while the prefetch still solves the root LP (a fake slow LP
    here, which ends only once the graph is built, or after 30 s), it builds the graph cache
    meanwhile, not after the LP."""
    events = []
    lp_started, graph_built = threading.Event(), threading.Event()
    solve_lp = learning.features.solve_root_lp

    def slow_lp(*args, **kwargs):
        events.append("lp started")
        lp_started.set()
        graph_built.wait(30)
        events.append("lp solved")
        return solve_lp(*args, **kwargs)

    cache = learning.prefetch.graph_cache
    monkeypatch.setattr(learning.features, "solve_root_lp", slow_lp)
    for module in (learning.prefetch, learning.selector):
        monkeypatch.setattr(
            module,
            "graph_cache",
            lambda *args: (
                cache(*args),
                events.append(f"graph built in {threading.current_thread().name}"),
                graph_built.set(),
            )[0],
        )
    selector, problem = CLLNS("mis", until_ready="wait"), tiny("mis")
    selector.check(problem)
    assert lp_started.wait(30)
    state = SearchState(problem, np.zeros(problem.n_vars), 0.0, deadline=time.perf_counter() + 30)
    selector.setup(problem)
    assert len(selector(state, 3, np.random.default_rng(0)).free) == 3
    assert events == ["lp started", "graph built in MainThread", "lp solved"]


def test_calls_before_the_features_are_ready_draw_at_random_in_a_run_with_a_deadline(
    monkeypatch, caplog
):
    """While the prefetch solves the root LP (a fake slow one, released by the test), a call
    with a deadline draws a random neighborhood at once; a call without one (an iteration
    limit) waits, so that it repeats exactly; once the features are there, the model scores."""
    release, started = threading.Event(), threading.Event()
    solve_lp = learning.features.solve_root_lp

    def slow_lp(*args, **kwargs):
        started.set()
        release.wait(30)
        return solve_lp(*args, **kwargs)

    monkeypatch.setattr(learning.features, "solve_root_lp", slow_lp)
    selector, problem = CLLNS("mis"), tiny("mis")
    selector.check(problem)
    selector.setup(problem)
    assert started.wait(30)
    incumbent = np.zeros(problem.n_vars)
    timed = SearchState(problem, incumbent, 0.0, deadline=time.perf_counter() + 30)
    draws = [selector(timed, 5, np.random.default_rng(seed)) for seed in range(2)]
    assert [(n.info["random"], n.info["arm"]) for n in draws] == [(True, "until_ready")] * 2
    assert [len(n.free) for n in draws] == [5, 5]
    assert not np.array_equal(draws[0].free, draws[1].free)  # the generator's draws
    assert selector.prefetch.is_alive()
    untimed = SearchState(problem, incumbent, 0.0, iteration=2)
    threading.Timer(0.3, release.set).start()
    with caplog.at_level(logging.INFO, logger="lns"):
        scored = selector(untimed, 5, np.random.default_rng(0))
    assert not scored.info["random"] and scored.info["inference_time"] > 0
    assert scored.info["arm"] in ("greedy", "sample")
    assert not selector.prefetch.is_alive()
    assert "features ready after 2 random neighborhoods" in caplog.text
    assert not selector(timed, 5, np.random.default_rng(0)).info["random"]


@pytest.mark.parametrize("until_ready, from_check", [("wait", True), ("random", False)])
def test_the_features_are_prepared_from_check_only_when_the_calls_wait_for_them(
    until_ready, from_check
):
    """Waiting for its features, the selector prepares them beside the search for a first
    solution, from ``check`` on; drawing at random meanwhile, from ``setup`` on (once there is a
    first solution), so that the thread takes no core from that search."""
    selector, problem = CLLNS("mis", until_ready=until_ready), tiny("mis")
    selector.check(problem)
    assert (selector.prefetch.ident is not None) == from_check
    selector.setup(problem)
    selector.prefetch.join(timeout=30)
    assert selector.prefetch.extractor is not None


def test_a_selector_checked_and_never_set_up_lets_the_process_exit_cleanly(tmp_path):
    """The main process of a portfolio checks the selector and leaves the search to its workers:
    its features thread is never started, and the exit's cancel-and-join of the started ones
    passes it by (joining a thread never started raises)."""
    instance = tiny("mis").write(tmp_path / "tiny.lp")
    script = textwrap.dedent(f"""
        from learning.selector import CLLNS
        from lns.core.problem.mip import read_problem
        selector = CLLNS("mis")
        selector.check(read_problem({str(instance)!r}))
        assert selector.prefetch.ident is None
        print("ok")
    """)
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0 and out.stdout == "ok\n", out.stderr[-2000:]
    assert "Error" not in out.stderr, out.stderr[-2000:]


def test_cl_lns_runs_on_portfolio_workers():
    """The selector, checked in the main process (its features thread built, not started: it
    draws at random until they are ready), is pickled into each worker, which prepares its own
    features."""
    result = solve(
        tiny("mis"),
        CLLNS("mis"),
        stop=budget(30, 3),
        params=SolveParams.from_dict({"portfolio.workers": 2, "start.strategy": "first"}),
    )
    assert result.feasibility.feasible
    assert [worker.iterations for worker in result.workers] == [3, 3]
    assert {record.selector for record in result.iterations} == {"cl_lns"}


def test_the_wheel_contains_the_shipped_models(tmp_path):
    source = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    for name in ("lns", "heuristics", "learning", "instances", "configs"):
        shutil.copytree(ROOT / name, source / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            ".",
        ],
        cwd=source,
        check=True,
        capture_output=True,
    )
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        assert {
            f"learning/pretrained/{name}.pt" for name in ("mis", "mvc", "sc", "ca", "general")
        } <= names
        assert (
            archive.read("learning/pretrained/mis.pt") == (PRETRAINED_DIR / "mis.pt").read_bytes()
        )


def test_a_requested_interrupt_stops_the_first_call_before_the_lp(monkeypatch):
    from types import SimpleNamespace

    import learning.selector as selector_module

    problem = read_problem(miplib("dano3mip"))
    selector = CLLNS("mis")
    selector.check(problem)
    monkeypatch.setattr(selector_module, "active_guard", lambda: SimpleNamespace(requested=True))
    neighborhood = selector(
        SearchState(problem, np.zeros(problem.n_vars), 0.0), 10, np.random.default_rng(0)
    )
    assert neighborhood.info["stopped"] == "interrupted" and len(neighborhood.free) == 0


@pytest.mark.parametrize(
    "options, message",
    [
        ({"lp_time_limit": 0}, "lp_time_limit=0 is invalid"),
        ({"lp_time_limit": float("nan")}, "lp_time_limit=nan is invalid"),
        ({"threads": 0}, "threads=0 is invalid"),
        ({"score_share": True}, "score_share=True is invalid"),
        ({"features_nice": True}, "features_nice=True is invalid"),
        ({"features_nice": 20}, "features_nice=20 is invalid"),
    ],
)
def test_invalid_options_are_named(options, message):
    """Each bad option named with its value; NaN and booleans are refused, not read as numbers."""
    with pytest.raises(ValueError, match=f"cl_lns: {message}"):
        CLLNS("mis", **options)


def test_cl_lns_is_an_arm_of_the_adaptive_selector(no_general_model):
    """Checked with the adaptive selector before the run: the model of the problem's class, and
    without a general model a problem of no class is refused."""
    selector = make_selector("adaptive", selectors=["random", "cl_lns"])
    problem = tiny("mis")
    result = solve(
        problem,
        selector,
        stop=budget(30, 12),
        params=SolveParams.from_dict({"start.strategy": "first"}),
    )
    assert result.feasibility.feasible and len(result.iterations) == 12
    assert selector.arms[1].checkpoint == PRETRAINED_DIR / "mis.pt"  # chosen in check()
    with pytest.raises(CheckpointError, match="no shipped model fits"):
        make_selector("adaptive", selectors=["random", "cl_lns"]).check(knapsack())


@pytest.mark.skipif(sys.platform != "linux", reason="a niceness per thread is Linux's")
def test_the_features_thread_runs_nicer_than_the_search_by_features_nice():
    """The prefetch thread lowers its own priority by ``features_nice``, not the caller's."""
    own = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    for nice in (0, 7):
        selector, problem = CLLNS("mis", until_ready="wait", features_nice=nice), tiny("mis")
        selector.check(problem)
        selector.prefetch.join(timeout=30)
        assert selector.prefetch.niceness == min(own + nice, 19)
        assert selector.prefetch.extractor is not None
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == own
    for wrong in (-1, 20, 2.5):
        with pytest.raises(InvalidArgumentError, match="features_nice"):
            CLLNS("mis", features_nice=wrong)


def test_sampled_draws_from_the_same_scores_and_size_compute_their_probabilities_once(
    monkeypatch,
):
    """At the size cap a run draws from the same scores for many iterations: the bisection of
    the draw probabilities runs once per scores and size, and the draws are those of
    :func:`sample_by_scores` called afresh."""
    computed = []
    bisection = learning.selector.sampling_probabilities
    monkeypatch.setattr(
        learning.selector,
        "sampling_probabilities",
        lambda scores, size, *args: computed.append(size) or bisection(scores, size, *args),
    )
    selector, problem = CLLNS("mis", until_ready="wait", draw="sample"), tiny("mis")
    incumbent = np.zeros(problem.n_vars)

    def draw(iteration: int, size: int, seed: int) -> np.ndarray:
        state = SearchState(problem, incumbent, 0.0, iteration=iteration, at_cap=True)
        return selector(state, size, np.random.default_rng(seed)).free

    draws = [draw(iteration, 5, seed) for iteration, seed in enumerate((1, 2, 3))]
    assert computed == [5]
    draw(3, 6, 4)
    assert computed == [5, 6]
    scores = selector.scores(SearchState(problem, incumbent, 0.0))[problem.integer_indices]
    for seed, drawn in zip((1, 2, 3), draws, strict=True):
        afresh = sample_by_scores(scores, 5, np.random.default_rng(seed))
        assert np.array_equal(drawn, np.sort(problem.integer_indices[afresh]))
