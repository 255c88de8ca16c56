"""lns-bench and lns-report: the matrix, resume, failures, a tiny end-to-end run, and bad input."""

import dataclasses
import faulthandler
import glob
import json
import os
import re
import signal
import subprocess
import sys
import threading

import pandas as pd
import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

import lns.api
from configs import CONFIG_DIR
from helpers import knapsack, mixed_problem, wait_for_exit, wait_until
from lns.bench import (
    ArmCounter,
    compose_matrix,
    expand_instances,
    expand_methods,
    method_names,
    parse_variants,
    run_matrix,
    shard,
)
from lns.bench_store import BenchStore, RunRecord
from lns.core.errors import (
    LNSError,
    ProblemReadError,
    UnknownNameError,
    UnsupportedProblemError,
)
from lns.core.search.stop import time_limit_of
from lns.params import GROUPS, PortfolioParams, SizeParams, SolveParams, SubSolveParams
from lns.report import references, write_report


@pytest.fixture()
def instance_dir(tmp_path):
    folder = tmp_path / "instances"
    knapsack("maximize").write(folder / "knapsack.mps")
    mixed_problem().write(folder / "mixed.mps")
    return folder


def _matrix(instance_dir, methods, seeds=(0,), time_limit=1.0):
    return compose_matrix(
        [str(instance_dir / "*.mps")], list(methods), list(seeds), time_limit, instance_set="tiny"
    )


def test_matrix_is_instances_times_methods_times_seeds(instance_dir):
    specs = _matrix(instance_dir, ["scip", "random"], seeds=[0, 1])
    assert [(s.instance, s.method, s.seed) for s in specs][:3] == [
        ("knapsack", "scip", 0),
        ("knapsack", "scip", 1),
        ("knapsack", "random", 0),
    ]
    assert len(specs) == 8
    assert (
        sorted(shard(specs, 0, 3) + shard(specs, 1, 3) + shard(specs, 2, 3), key=specs.index)
        == specs
    )
    single = compose_matrix(str(instance_dir / "mixed.mps"), "scip", 4, 2, instance_set="tiny")
    assert [(s.instance, s.method, s.seed, s.time_limit) for s in single] == [
        ("mixed", "scip", 4, 2.0)
    ]


def test_a_method_suffix_runs_a_portfolio_of_that_many_workers(instance_dir, tmp_path):
    specs = _matrix(instance_dir, ["random@2", "random"], time_limit=3.0)
    assert [(s.method, s.selector, s.workers) for s in specs[:2]] == [
        ("random@2", "random", 2),
        ("random", "random", 1),
    ]
    for bad in ("random@0", "random@x", "scip@2"):
        with pytest.raises(LNSError, match="suffix @N"):
            _matrix(instance_dir, [bad])
    store = BenchStore(tmp_path / "results")
    assert run_matrix(specs[:1], store, isolate=False).ran == 1
    record = store.get("knapsack", "random@2", 0, 3.0)
    assert record.status == "optimal" and record.objective == pytest.approx(23.0)
    assert [(w["worker"], w["kind"]) for w in record.workers] == [(0, "lns"), (1, "lns")]


def test_the_miplib2017_preset_runs_held_out_bundled_instances():
    cfg = _compose_bench("+experiment=miplib2017")
    paths = expand_instances(cfg.instances)
    assert len(paths) == 9 and all(p.parent.name == "miplib2017" for p in paths)
    assert not {p.name.split(".")[0] for p in paths} & {"glass-sc", "cod105", "rococoC10-001000"}
    assert expand_methods(cfg.methods) == ["scip", "cpsat", "random", "random@2"]


def test_all_methods_include_cl_lns_only_with_a_checkpoint():
    assert "cl_lns" not in expand_methods("all")
    portfolios = {"auto", "auto_stay", "auto_rate"}  # named explicitly (auto@2)
    assert set(expand_methods("all")) == set(method_names()) - {"cl_lns"} - portfolios
    assert "cl_lns" in expand_methods("all", {"cl_lns": {"checkpoint": "model.pt"}})
    with pytest.raises(LNSError, match="method_options.cl_lns.checkpoint"):
        expand_methods(["cl_lns"])
    with pytest.raises(LNSError, match="'all' cannot be combined"):
        expand_methods(["all", "scip"])


@pytest.mark.parametrize(
    "instances, methods, seeds, error, message",
    [
        (["nothere.mps"], ["scip"], [0], ProblemReadError, "instance 'nothere.mps': no such file"),
        (
            ["no/such/dir/*.mps"],
            ["scip"],
            [0],
            ProblemReadError,
            "pattern 'no/such/dir/\\*.mps' matches no file",
        ),
        (["p0201"], ["scip", "bogus"], [0], UnknownNameError, "method 'bogus' among choices"),
        ([], ["scip"], [0], LNSError, "empty matrix: 'instances' is empty"),
        (["p0201"], [], [0], LNSError, "empty matrix: 'methods' is empty"),
        (["p0201"], ["scip"], [], LNSError, "empty matrix: 'seeds' is empty"),
    ],
)
def test_bad_matrix_names_the_problem(instances, methods, seeds, error, message):
    with pytest.raises(error, match=message):
        compose_matrix(instances, methods, seeds, 10, instance_set="x")


def test_resume_runs_only_the_missing_run(instance_dir, tmp_path):
    store = BenchStore(tmp_path / "results")
    specs = compose_matrix(
        [str(instance_dir / "knapsack.mps")], ["scip", "cpsat"], [0], 2.0, instance_set="tiny"
    )
    first = run_matrix(specs, store)
    assert (first.ran, first.resumed, first.failed) == (2, 0, 0)
    kept = store.get("knapsack", "scip", 0, 2.0)
    assert kept.objective == pytest.approx(23.0) and kept.sense == "maximize"
    store.path("knapsack", "cpsat", 0, 2.0).unlink()  # as if the matrix had been interrupted there
    second = run_matrix(specs, store)
    assert (second.ran, second.resumed) == (1, 1)
    assert store.get("knapsack", "scip", 0, 2.0).finished_at == kept.finished_at
    rerun = store.get("knapsack", "cpsat", 0, 2.0)
    assert rerun.status == "optimal" and rerun.objective == pytest.approx(23.0)


def _raise(*args, **kwargs):
    raise RuntimeError("solver exploded")


def _segfault(*args, **kwargs):
    faulthandler.disable()  # pytest's handler would print the child's stack
    os.kill(os.getpid(), signal.SIGSEGV)


def _hang(*args, **kwargs):
    threading.Event().wait()  # forever: only the kill ends the run


@pytest.mark.parametrize(
    "isolate, broken, message",
    [
        (True, _raise, "RuntimeError: solver exploded"),
        (False, _raise, "RuntimeError: solver exploded"),
        (True, _segfault, "died with signal SIGSEGV"),
        (True, _hang, "killed 0.5s after its time limit of 0.5s"),
    ],
)
def test_a_crashing_run_is_recorded_and_the_matrix_goes_on(
    instance_dir, tmp_path, monkeypatch, isolate, broken, message
):
    store = BenchStore(tmp_path / "results")
    specs = compose_matrix(
        [str(instance_dir / "knapsack.mps")], ["scip"], [0, 1], 0.5, instance_set="tiny"
    )
    monkeypatch.setitem(lns.api.BASELINES, "scip", broken)
    summary = run_matrix(specs, store, isolate=isolate, kill_grace=0.5)
    assert (summary.ran, summary.failed) == (2, 2)
    for seed in (0, 1):
        record = store.get("knapsack", "scip", seed, 0.5)
        assert record.status == "error" and message in record.error
    monkeypatch.undo()
    assert run_matrix(specs, store, retry_failed=False).resumed == 2
    retried = run_matrix(specs, store)
    assert (retried.ran, retried.failed) == (2, 0)


def _unsupported(*args, **kwargs):
    raise UnsupportedProblemError("mixed.mps: the CP-SAT sub-solver needs a pure-integer problem")


def test_an_unsupported_run_is_skipped_with_its_reason_and_not_rerun(
    instance_dir, tmp_path, monkeypatch
):
    store = BenchStore(tmp_path / "results")
    specs = compose_matrix(
        [str(instance_dir / "mixed.mps")], ["random"], [0], 2.0, instance_set="tiny"
    )
    monkeypatch.setattr(lns.api, "solve", _unsupported)
    assert run_matrix(specs, store, isolate=False).skipped == 1
    record = store.get("mixed", "random", 0, 2.0)
    assert record.status == "skipped" and "pure-integer" in record.error
    assert run_matrix(specs, store, isolate=False).resumed == 1


def test_cpsat_runs_a_mip_through_its_mip_interface(instance_dir, tmp_path):
    store = BenchStore(tmp_path / "results")
    specs = compose_matrix(
        [str(instance_dir / "mixed.mps")], ["cpsat"], [0], 10.0, instance_set="tiny"
    )
    assert run_matrix(specs, store).ran == 1
    record = store.get("mixed", "cpsat", 0, 10.0)
    assert record.status == "feasible" and record.objective == pytest.approx(-14.0)


def _record(instance, method, objective, sense="maximize", known=None, trajectory=None, seed=0):
    return RunRecord(
        "set",
        instance,
        f"{instance}.mps",
        method,
        seed,
        10.0,
        "feasible",
        objective=objective,
        sense=sense,
        known_optimum=known,
        trajectory=trajectory or [[1.0, objective]],
    )


def test_references_take_the_sense_and_the_solu_value_into_account():
    refs = references(
        [
            _record("a", "scip", 20.0),
            _record("a", "random", 23.0),
            _record("b", "scip", 20.0, sense="minimize"),
            _record("b", "random", 23.0, sense="minimize"),
            _record("c", "scip", 20.0, known=25.0),
            _record("d", "scip", 26.0, known=25.0),
        ]
    )
    assert (refs[("set", "a")].value, refs[("set", "a")].source) == (23.0, "best_found")
    assert (refs[("set", "b")].value, refs[("set", "b")].source) == (20.0, "best_found")
    assert (refs[("set", "c")].value, refs[("set", "c")].source) == (25.0, "solu")
    assert (refs[("set", "d")].value, refs[("set", "d")].source) == (26.0, "best_found")


def test_report_has_median_per_instance_integral_and_win_tables(tmp_path):
    store = BenchStore(tmp_path)
    # minimisation, p* = 10 from the .solu value: the primal integral is the time to the first
    # solution (the only one, optimal)
    first_solution = {
        ("a", "scip"): 5.0,
        ("a", "random"): 0.0,
        ("b", "scip"): 0.0,
        ("b", "random"): 2.0,
        ("c", "scip"): 4.0,
        ("c", "random"): 1.0,
    }
    for (instance, method), seconds in first_solution.items():
        store.write(
            _record(
                instance, method, 10.0, sense="minimize", known=10.0, trajectory=[[seconds, 10.0]]
            )
        )
    text = write_report(tmp_path).read_text()
    integral_table = text.split("Primal integral per instance")[1]
    assert "| a | 5.00 | 0.00 |" in integral_table
    assert "| **mean** | 3.00 | 1.00 |" in integral_table
    assert "| **median** | 4.00 | 1.00 |" in integral_table
    assert "| **sgm (shift 1)** | 2.11 | 0.82 |" in integral_table  # (6 * 1 * 5) ** (1/3) - 1
    assert (
        "| scip | – | 1 |" in text and "| random | 2 | – |" in text
    )  # random beats scip on a and c
    summary = next(line for line in text.splitlines() if line.startswith("| scip |"))
    # mean, shifted geometric mean and median primal integral, median seconds to the first
    # solution and to within 1% (the same here: the only solution is optimal)
    assert summary.split("|")[8:13] == [" 3.00 ", " 2.11 ", " 4.00 ", " 4.00 ", " 4.00 "]
    # wins (the lowest integral: scip on b, random on a and c) and the median ratio to scip
    assert summary.split("|")[16:18] == [" 1 ", " 1.00 "]
    random = next(line for line in text.splitlines() if line.startswith("| random |"))
    assert random.split("|")[16] == " 2 "
    ratios = text.split("Primal integral over scip's per instance")[1]
    # b: scip's integral is 0, no ratio
    assert "| a | 1.00 | 0.00 |\n| b | – | – |\n| c | 1.00 | 0.25 |" in ratios


def _cli(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.mark.slow
def test_tiny_matrix_end_to_end_with_report_and_plots(instance_dir, tmp_path):
    results = tmp_path / "results"
    bench = _cli(
        "lns.cli.bench",
        f"instances=[{instance_dir}/*.mps]",
        "methods=[scip,cpsat,random]",
        "seeds=[0]",
        "time_limit=1",
        f"results_dir={results}",
        "name=tiny",
        "hydra/hydra_logging=disabled",
        cwd=tmp_path,
    )
    assert bench.returncode == 0, bench.stderr
    assert "6 runs done (0 failed, 0 skipped)" in bench.stdout
    report = _cli("lns.cli.report", f"results_dir={results}", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    text = (results / "report.md").read_text()
    assert "## tiny, T = 1 s" in text
    rows = {}
    for line in text.splitlines():
        if line.startswith("| "):
            rows.setdefault(
                line.split("|")[1].strip(), line
            )  # the first table a name heads a row of
    assert set(rows) >= {"scip", "cpsat", "random", "knapsack", "mixed"}
    # cpsat: 2 instances, 1 seed, 2 runs, 0 failed, 0 skipped (mixed through the MIP interface)
    assert rows["cpsat"].split("|")[2:7] == [" 2/2 ", " 1 ", " 2 ", " 0 ", " 0 "]
    assert "| knapsack | maximize | 23 | best_found |" in text
    for png in ("tiny_t1_gap.png", "tiny_t1_survival.png"):
        assert (results / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"]({png})" in text
    table = pd.read_csv(results / "runs.csv")
    assert len(table) == 6
    knapsack_scip = table[(table.instance == "knapsack") & (table.method == "scip")].iloc[0]
    assert (
        knapsack_scip.sense,
        knapsack_scip.reference_source,
        knapsack_scip.gap_at_time_limit,
    ) == ("maximize", "best_found", 0.0)
    assert json.loads(knapsack_scip.trajectory)[-1][1] == pytest.approx(23.0)
    again = _cli(
        "lns.cli.bench",
        f"instances=[{instance_dir}/*.mps]",
        "methods=[scip,cpsat,random]",
        "time_limit=1",
        f"results_dir={results}",
        "name=tiny",
        cwd=tmp_path,
    )
    assert "0 runs done (0 failed, 0 skipped), 6 found done, 0 running elsewhere" in again.stdout


@pytest.mark.slow
@pytest.mark.parametrize("launcher", ["local", "submitit_local"])
def test_multirun_shards_with_the_joblib_and_submitit_launchers(instance_dir, tmp_path, launcher):
    results = tmp_path / "results"
    bench = _cli(
        "lns.cli.bench",
        "--multirun",
        f"hydra/launcher={launcher}",
        f"instances=[{instance_dir}/*.mps]",
        "methods=[scip]",
        "time_limit=1",
        f"results_dir={results}",
        "name=tiny",
        cwd=tmp_path,
    )
    assert bench.returncode == 0, bench.stderr
    assert sorted(p.name for p in (results / "records").iterdir()) == [
        "knapsack__scip__s0__t1.json",
        "mixed__scip__s0__t1.json",
    ]
    assert {
        BenchStore(results).get(name, "scip", 0, 1.0).status for name in ("knapsack", "mixed")
    } == {"optimal"}
    jobs = sorted(p.parent.name for p in (results / "logs").glob("*/*/.hydra"))
    assert jobs == ["0", "1"]  # the default sweep: shard=0,1 of shards=2


@pytest.mark.parametrize(
    "override, message",
    [
        ("methods=[scip,bogus]", "lns-bench: error: Could not resolve method 'bogus'"),
        ("instances=[nothere.mps]", "lns-bench: error: instance 'nothere.mps': no such file"),
        ("seeds=[]", "lns-bench: error: empty matrix: 'seeds' is empty"),
    ],
)
def test_bad_input_gets_a_one_line_message(tmp_path, override, message):
    result = _cli("lns.cli.bench", override, f"results_dir={tmp_path}", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].startswith(message)


def test_report_of_an_empty_folder_names_it(tmp_path):
    with pytest.raises(LNSError, match="no run records"):
        write_report(tmp_path)
    record = tmp_path / "records" / "bad.json"
    record.parent.mkdir()
    record.write_text(json.dumps({"instance": "x"}))
    with pytest.raises(LNSError, match="bad.json: not a run record"):
        write_report(tmp_path)


PRESETS = sorted(p.stem for p in (CONFIG_DIR / "experiment").glob("*.yaml"))
GENERALISATION_PRESETS = [p for p in PRESETS if p.startswith("cl_lns_generalisation_")]
CL_LNS_PRESETS = [p for p in PRESETS if p.startswith("cl_lns_") and p not in GENERALISATION_PRESETS]
GENERATED_PRESETS = [p for p in PRESETS if p.endswith(("_small", "_large"))]


@pytest.mark.parametrize("preset", GENERATED_PRESETS)
def test_presets_compose_and_point_to_their_generated_test_set(preset):
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose("bench", overrides=[f"+experiment={preset}"])
    assert cfg.name == preset
    assert list(cfg.instances) == [f"data/{preset}/test/*.mps.gz"]
    assert cfg.results_dir == f"benchmarks/results/{preset}_60s"
    problem_class, size = preset.split("_")
    header = (CONFIG_DIR / "experiment" / f"{preset}.yaml").read_text()
    assert f"lns-generate problem={problem_class} size={size}" in header
    # every class has a shipped model, so the learned selector joins
    methods = expand_methods(cfg.methods, OmegaConf.to_container(cfg.method_options))
    assert "cl_lns" in methods


@pytest.mark.parametrize("preset", CL_LNS_PRESETS)
def test_cl_lns_presets_run_the_held_out_set_of_the_shipped_model(preset):
    problem_class = preset.removeprefix("cl_lns_")
    cfg = _compose_bench(f"+experiment={preset}")
    assert list(cfg.instances) == [f"data/{problem_class}_test/*.mps.gz"]
    assert expand_methods(cfg.methods, OmegaConf.to_container(cfg.method_options)) == [
        "scip",
        "random",
        "local_branching",
        "lb_relax",
        "cl_lns",
    ]
    assert cfg.method_options.cl_lns.checkpoint == problem_class
    header = (CONFIG_DIR / "experiment" / f"{preset}.yaml").read_text()
    assert f"out_dir=data/{problem_class}_test" in header
    assert f"results_dir={cfg.results_dir}" in header


@pytest.mark.parametrize("preset", GENERALISATION_PRESETS)
def test_generalisation_presets_run_a_shipped_model_on_larger_instances_against_the_baselines(
    preset,
):
    folder = preset.removeprefix("cl_lns_generalisation_")
    cfg = _compose_bench(f"+experiment={preset}")
    assert list(cfg.instances) == [f"data/{folder}_gen/*.mps.gz"]
    methods = expand_methods(cfg.methods, OmegaConf.to_container(cfg.method_options))
    assert {"scip", "random", "cl_lns", "cpsat"} <= set(methods)
    assert cfg.method_options.cl_lns.checkpoint == folder.removesuffix("6000")
    assert cfg.method_options.cpsat.num_workers == 2
    header = (CONFIG_DIR / "experiment" / f"{preset}.yaml").read_text()
    assert f"out_dir=data/{folder}_gen" in header
    assert f"lns-report results_dir={cfg.results_dir}" in header


def test_general_model_preset_runs_the_held_out_miplib2017_instances_with_and_without_it():
    held_out = list(_compose_bench("+experiment=miplib2017").instances)
    cfg = _compose_bench("+experiment=miplib2017_general")
    assert list(cfg.instances) == held_out
    assert expand_methods(cfg.methods, OmegaConf.to_container(cfg.method_options)) == [
        "adaptive",
        "cl_lns",
    ]
    assert list(cfg.method_options.adaptive.extra_arms) == ["cl_lns"]
    assert cfg.method_options.cl_lns.checkpoint == "general"
    without = _compose_bench(
        "+experiment=miplib2017_general",
        "name=miplib2017_general_without",
        "method_options.adaptive.extra_arms=[]",
    )
    assert without.results_dir == "benchmarks/results/miplib2017_general_without_60s"
    header = (CONFIG_DIR / "experiment" / "miplib2017_general.yaml").read_text()
    assert "name=miplib2017_general_without" in header and "extra_arms=[]" in header


def _compose_bench(*overrides):
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        return compose("bench", overrides=list(overrides))


@pytest.mark.parametrize(
    "launcher, target", [("local", "JoblibLauncher"), ("slurm", "SlurmLauncher")]
)
def test_shipped_launchers_compose(launcher, target):
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose("bench", overrides=[f"hydra/launcher={launcher}"], return_hydra_config=True)
    assert cfg.hydra.launcher._target_.endswith(target)
    assert cfg.results_dir == "benchmarks/results/miplib_60s" and cfg.methods == "all"


def _children(pid):
    """Ids of the live processes whose parent is ``pid`` (from /proc)."""
    found = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            fields = open(stat).read().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.split("/")[2]))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG and /proc")
def test_a_killed_benchmark_leaves_no_orphan_and_a_resume_runs_the_cell_once(tmp_path):
    args = [
        sys.executable,
        "-m",
        "lns.cli.bench",
        "instances=[air05]",
        "methods=[scip]",
        "time_limit=8",
        f"results_dir={tmp_path}",
        "name=orphans",
        "hydra/hydra_logging=disabled",
        "hydra/job_logging=disabled",
    ]
    specs = compose_matrix(["air05"], ["scip"], [0], 8, instance_set="orphans")
    parent = subprocess.Popen(
        args, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        workers = wait_until(lambda: _children(parent.pid), 60)
        assert workers, "lns-bench started no worker"
        beside = run_matrix(specs, BenchStore(tmp_path))  # a resume beside the run leaves it
        assert (beside.busy, beside.ran, beside.resumed) == (1, 0, 0)  # the worker holds the run
    finally:
        parent.kill()
        parent.wait()
    assert not wait_for_exit(workers, 10), "the worker outlived its killed parent"
    assert BenchStore(tmp_path).get("air05", "scip", 0, 8.0) is None
    resumed = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "1 runs done (0 failed, 0 skipped), 0 found done, 0 running elsewhere" in resumed.stdout
    assert [p.name for p in (tmp_path / "records").iterdir()] == ["air05__scip__s0__t8.json"]
    assert BenchStore(tmp_path).get("air05", "scip", 0, 8.0).status in ("feasible", "optimal")


def test_variants_are_named_methods_with_their_own_options(instance_dir, tmp_path, monkeypatch):
    variants = {
        "lns_whole": {"method": "random", "sub_solve": {"sub_problem": "whole"}},
        "rins_pair": {
            "method": "rins@2",
            "options": {"lp_method": "highs-ipm"},
            "portfolio": {"deterministic": True},
            "solve": {"iteration_limit": 5},
        },
    }
    specs = compose_matrix(
        [str(instance_dir / "knapsack.mps")],
        ["random", "lns_whole", "rins_pair"],
        [0],
        2.0,
        instance_set="tiny",
        params={"size": {"initial_fraction": 0.3}},
        variants=variants,
    )
    assert [(s.method, s.selector, s.workers) for s in specs] == [
        ("random", "random", 1),
        ("lns_whole", "random", 1),
        ("rins_pair", "rins", 2),
    ]
    assert specs[1].params == {
        "size": {"initial_fraction": 0.3},
        "sub_solve": {"sub_problem": "whole"},
    }
    assert specs[2].method_options == {"lp_method": "highs-ipm"}
    calls = []

    def record_call(instance, selector, stop, *, seed, params, callbacks):
        calls.append((selector, stop, seed, params, callbacks))
        raise UnsupportedProblemError("recorded")

    monkeypatch.setattr(lns.api, "solve", record_call)
    store = BenchStore(tmp_path / "results")
    run_matrix(specs, store, isolate=False)
    assert all(len(c) == 1 and isinstance(c[0], ArmCounter) for *_, c in calls)
    selector, stop, seed, params, _ = calls[1]
    assert selector.name == "random" and time_limit_of(stop) == 2.0 and seed == 0
    assert params == SolveParams(
        size=SizeParams(initial_fraction=0.3), sub_solve=SubSolveParams(sub_problem="whole")
    )
    selector, stop, _, params, _ = calls[2]
    assert selector.name == "rins" and selector.lp_method == "highs-ipm"
    assert [type(rule).__name__ for rule in stop.rules] == ["MaxIterations", "MaxRuntime"]
    assert params.portfolio == PortfolioParams(workers=2, deterministic=True)
    assert store.get("knapsack", "lns_whole", 0, 2.0).status == "skipped"


@pytest.mark.parametrize(
    "variants, message",
    [
        ({"v": {"size": {}}}, "variant 'v': 'method'"),
        ({"v": {"method": "nothing"}}, "variant 'v': method 'nothing'"),
        ({"v": {"method": "random", "colour": 1}}, "unknown keys \\['colour'\\]"),
        ({"v": {"method": "random", "solve": {"time_limit": 3}}}, "cannot be set per variant"),
        (
            {"v": {"method": "random", "sub_solve": {"node_limt": 3}}},
            "variant 'v': sub_solve parameter 'node_limt'",
        ),
        (
            {"v": {"method": "random", "portfolio": {"workers": 0}}},
            "variant 'v': portfolio.workers=0 is invalid",
        ),
        (
            {"v": {"method": "random", "portfolio": {"complete_worker": True}}},
            "variant 'v': portfolio.complete_worker=True needs workers >= 2",
        ),
        ({"random": {"method": "rins"}}, "the name is a method's"),
    ],
)
def test_bad_variants_name_the_problem(variants, message):
    with pytest.raises(LNSError, match=message):
        compose_matrix(["p0201"], list(variants), [0], 10, instance_set="x", variants=variants)


def test_the_sub_problem_preset_declares_its_variants():
    cfg = _compose_bench("+experiment=sub_problem")
    container = OmegaConf.to_container(cfg, resolve=True)
    specs = compose_matrix(
        cfg.instances[:1],
        container["methods"],
        [0],
        cfg.time_limit,
        instance_set=cfg.name,
        params={group: container[group] for group in GROUPS},
        variants=container["variants"],
    )
    assert [(s.method, s.params["sub_solve"]["sub_problem"]) for s in specs] == [
        ("random_whole", "whole"),
        ("random_reduced", "reduced"),
        ("random_auto", "auto"),
    ]


def test_a_run_record_says_where_its_iterations_went(tmp_path):
    variants = {
        "ucb": {
            "method": "adaptive",
            "options": {"policy": "ucb"},
            "sub_solve": {"node_limit": 50},
            "solve": {"iteration_limit": 4},
        }
    }
    specs = compose_matrix(["p0201"], ["ucb"], [0], 60.0, instance_set="x", variants=variants)
    store = BenchStore(tmp_path)
    run_matrix(specs, store, isolate=False)
    record = store.get("p0201", "ucb", 0, 60.0)
    assert record.iterations == 4 and sum(record.arms.values()) == 4
    assert 0 <= record.improving <= 4 and record.timeouts == 0  # node limits, no time-outs
    assert record.freed > 0 and 0 < record.solver_time < record.runtime
    assert record.select_time >= 0 and record.workers == []


def _worker(selector, kind, iterations, improvements, stop_reason):
    return dict(
        selector=selector,
        kind=kind,
        iterations=iterations,
        improvements=improvements,
        stop_reason=stop_reason,
    )


def _row(text: str, section: str, name: str) -> str:
    """The first line of ``text`` after ``section`` that starts with ``| name |``."""
    return next(
        line for line in text.split(section)[1].splitlines() if line.startswith(f"| {name} |")
    )


def test_report_shows_where_the_time_went_the_arms_and_the_portfolio_workers(tmp_path):
    store = BenchStore(tmp_path)
    solved = _record("a", "adaptive", 10.0, sense="minimize", trajectory=[[1.0, 12.0], [3.0, 10.0]])
    store.write(
        dataclasses.replace(
            solved,
            iterations=10,
            improving=4,
            timeouts=1,
            freed=20.0,
            select_time=0.5,
            solver_time=6.0,
            runtime=10.0,
            arms={"random": 6, "rins": 4},
            stop_reason="time_limit",
        )
    )
    workers = [
        _worker("random", "lns", 7, 2, "time_limit"),
        _worker("scip", "scip", 1, 1, "optimal"),
    ]
    portfolio = _record("a", "random@2", 10.0, sense="minimize", trajectory=[[2.0, 10.0]])
    store.write(
        dataclasses.replace(portfolio, workers=workers, found_by="scip", stop_reason="optimal")
    )
    text = write_report(tmp_path).read_text()
    where = "Where the time went"
    # the overhead is 1 - 6 / 10; the first improvement came at 3 s, none in the portfolio run
    assert _row(text, where, "adaptive") == (
        "| adaptive | 10.0 | 4.0 | 1.0 | 0.50 | 6.00 | 20 | 0.400 | 0.400 | 3.00 | time_limit 1 |"
    )
    assert _row(text, where, "random@2").endswith("| – | – | – | 10.00 | optimal 1 |")
    assert _row(text, "Arms played", "adaptive") == "| adaptive | 0.600 | 0.400 |"
    assert "| random@2 |" not in text.split("Arms played")[1].split("\n\n")[1]
    workers_table = text.split("Portfolio workers")[1]
    assert "| random@2 | lns/random | 1.0 | 7.0 | 2.00 | 0/1 | time_limit 1 |" in workers_table
    assert "| random@2 | scip | 1.0 | 1.0 | 1.00 | 1/1 | optimal 1 |" in workers_table
    table = pd.read_csv(tmp_path / "runs.csv")
    assert json.loads(table.set_index("method").loc["adaptive", "arms"]) == {"random": 6, "rins": 4}


def test_one_report_over_several_results_folders(tmp_path):
    for folder, objective in (("full", 12.0), ("rerun", 10.0)):
        run = _record("a", "random", objective, sense="minimize", trajectory=[[1.0, objective]])
        BenchStore(tmp_path / folder).write(run)
    folders = [tmp_path / "full", tmp_path / "rerun"]
    with pytest.raises(LNSError, match="both hold the run"):
        write_report(folders, tmp_path / "out")
    labelled = {"full": folders[0], "rerun": folders[1]}
    with pytest.raises(LNSError, match="out_dir"):
        write_report(labelled)
    with pytest.raises(UnknownNameError, match="baseline 'random'"):
        write_report(labelled, tmp_path / "out", baseline="random")
    text = write_report(labelled, tmp_path / "out", instance_set="both").read_text()
    assert "## both, T = 10 s" in text
    assert "| a | minimize | 10 | best_found |" in text  # one p* over both folders
    # full: no solution for 1 s, then a gap of 2/12 for 9 s
    assert "| a | 2.50 | 1.00 |" in text.split("Primal integral per instance")[1]
    assert "| random [full] | random [rerun] |" in text
    assert "lns-report 'results_dir={full: " in text and " instance_set=both`" in text


def test_the_report_takes_several_folders_from_the_command_line():
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        labelled = compose("report", overrides=["results_dir={full: a/b_60s, rerun: c/d_60s}"])
        listed = compose("report", overrides=["results_dir=[a/b_60s,c/d_60s]"])
    assert OmegaConf.to_container(labelled.results_dir) == {"full": "a/b_60s", "rerun": "c/d_60s"}
    assert OmegaConf.to_container(listed.results_dir) == ["a/b_60s", "c/d_60s"]


COMPARISONS = ["bandit", "complete_worker", "fast_start", "lns_vs_scip", "sub_mip", "subsolvers"]


@pytest.mark.parametrize("preset", PRESETS)
def test_every_method_list_of_a_preset_and_of_its_commands_expands(preset):
    container = OmegaConf.to_container(_compose_bench(f"+experiment={preset}"), resolve=True)
    variants = parse_variants(container["variants"])
    header = (CONFIG_DIR / "experiment" / f"{preset}.yaml").read_text()
    commands = re.findall(r"'methods=\[([^\]]*)\]'", header)
    for methods in [container["methods"], *(listed.split(",") for listed in commands)]:
        expand_methods(methods, container["method_options"], variants)


@pytest.mark.parametrize("preset", COMPARISONS)
def test_comparison_presets_name_their_instances_and_their_report(preset):
    cfg = _compose_bench(f"+experiment={preset}")
    bundled = [name for name in cfg.instances if not name.startswith("data/")]
    assert len(expand_instances(bundled)) == len(bundled)
    header = (CONFIG_DIR / "experiment" / f"{preset}.yaml").read_text()
    assert f"lns-bench +experiment={preset}" in header
    assert re.search(rf"lns-report .*results_dir=\[?{cfg.results_dir}", header)


@pytest.mark.parametrize("shipped_model", ["sc", "ca", "mis"])
def test_the_after_failure_preset_compares_both_draws_of_a_shipped_model(shipped_model):
    cfg = _compose_bench("+experiment=after_failure", f"shipped_model={shipped_model}")
    assert list(cfg.instances) == [f"data/{shipped_model}_paper/*.mps.gz"]
    methods = expand_methods(cfg.methods, OmegaConf.to_container(cfg.method_options), cfg.variants)
    assert methods == ["random", "cl_lns_greedy", "cl_lns_resample"]
    rules = {name: dict(v.options) for name, v in cfg.variants.items()}
    assert rules == {
        "cl_lns_greedy": {"checkpoint": shipped_model, "after_failure": "greedy"},
        "cl_lns_resample": {"checkpoint": shipped_model, "after_failure": "sample"},
    }
    header = (CONFIG_DIR / "experiment" / "after_failure.yaml").read_text()
    assert f"lns-report results_dir={cfg.results_dir} baseline=random" in header


def test_the_vertex_cover_models_preset_compares_both_models_with_the_baselines():
    cfg = _compose_bench("+experiment=mvc_models")
    assert list(cfg.instances) == ["data/mvc_gen/*.mps.gz"]
    methods = expand_methods(cfg.methods, OmegaConf.to_container(cfg.method_options), cfg.variants)
    assert methods == ["scip", "random", "lb_relax", "cl_lns_lb500", "cl_lns_sampled1000"]
    checkpoints = {name: v.options.checkpoint for name, v in cfg.variants.items()}
    assert checkpoints == {
        "cl_lns_lb500": "runs/mvc_lb500.pt",
        "cl_lns_sampled1000": "runs/mvc_sampled1000.pt",
        "cl_lns_round2": "runs/mvc_round2.pt",
        "cl_lns_resample": "runs/mvc_sampled1000.pt",
    }
    assert cfg.variants.cl_lns_resample.options.after_failure == "sample"
    header = (CONFIG_DIR / "experiment" / "mvc_models.yaml").read_text()
    assert f"lns-report results_dir={cfg.results_dir}" in header
