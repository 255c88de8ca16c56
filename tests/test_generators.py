"""Instance generators: structure, reproducibility, files SCIP reads back, parameter checks."""

from __future__ import annotations

import dataclasses
import itertools
import json

import numpy as np
import pytest

from instances.generators import CLASSES, MANIFEST, instance_rng, problem_class, write_set
from instances.generators.ca import draw_auction
from instances.generators.random_graphs import barabasi_albert, erdos_renyi, greedy_clique_partition
from instances.generators.sampling import distinct_subsets
from lns.core.errors import UnknownNameError
from lns.core.problem.mip import read_problem

# Tiny parameters per class: every test below runs in well under a second per class.
TINY = {
    "mvc": dict(n_nodes=30, affinity=3),
    "mis": dict(n_nodes=40, affinity=2.0),
    "sc": dict(n_rows=30, n_cols=20, density=0.15, max_cost=10),
    "ca": dict(n_items=15, n_bids=30),
    "cfl": dict(n_customers=8, n_facilities=5, ratio=3.0),
}
NAMES = sorted(CLASSES)


def tiny(name: str, **overrides):
    return problem_class(name).params("small", **{**TINY[name], **overrides})


def generate(name: str, seed: int = 0, **overrides):
    return problem_class(name).generate(
        tiny(name, **overrides), instance_rng(seed, 0), f"{name}_tiny"
    )


def rows_as_sets(problem) -> list[frozenset]:
    csr = problem.matrix
    return [
        frozenset(csr.indices[csr.indptr[i] : csr.indptr[i + 1]].tolist())
        for i in range(problem.n_rows)
    ]


# ---------------------------------------------------------------- sampling and graphs


def test_distinct_subsets_sizes_and_distinctness_including_dense_groups():
    sizes = np.array([0, 1, 5, 9, 10])
    groups, values = distinct_subsets(sizes, 10, np.random.default_rng(0))
    assert np.array_equal(np.bincount(groups, minlength=5), sizes)
    for g in range(5):
        assert len(set(values[groups == g].tolist())) == sizes[g]
    assert values.min() >= 0 and values.max() < 10


def test_distinct_subsets_are_uniform():
    rng = np.random.default_rng(1)
    counts = np.zeros(6)
    for _ in range(2000):
        _, values = distinct_subsets(np.array([2, 4]), 6, rng)
        counts += np.bincount(values, minlength=6)
    # each value is in a 2-subset w.p. 1/3 and in a 4-subset w.p. 2/3: 2000 expected per value
    assert np.all(np.abs(counts - 2000) < 150)


def test_erdos_renyi_with_probability_one_is_the_complete_graph():
    edges = erdos_renyi(7, 3.0, np.random.default_rng(0))
    assert sorted(map(tuple, edges.tolist())) == list(itertools.combinations(range(7), 2))


def test_erdos_renyi_edge_count_matches_affinity():
    edges = erdos_renyi(2000, 4.0, np.random.default_rng(0))
    assert abs(len(edges) - 8000) < 5 * np.sqrt(8000)
    assert np.all(edges[:, 0] < edges[:, 1])
    assert len({tuple(e) for e in edges.tolist()}) == len(edges)


def test_barabasi_albert_structure():
    n, m = 50, 4
    edges = barabasi_albert(n, m, np.random.default_rng(0))
    assert len(edges) == m * (n - m)
    assert len({tuple(e) for e in edges.tolist()}) == len(edges)
    assert np.all(edges[:, 0] < edges[:, 1])
    later = edges[:, 1]
    assert np.all(
        np.bincount(later, minlength=n)[m:] == m
    )  # every node from m on joins m earlier ones
    assert {tuple(e) for e in edges[edges[:, 1] == m].tolist()} == {(i, m) for i in range(m)}


def test_greedy_clique_partition_gives_cliques_covering_every_node():
    edges = erdos_renyi(60, 6.0, np.random.default_rng(3))
    clique_of = greedy_clique_partition(60, edges)
    adjacent = {tuple(e) for e in edges.tolist()}
    assert clique_of.min() == 0
    for c in range(clique_of.max() + 1):
        members = np.flatnonzero(clique_of == c).tolist()
        assert all((u, v) in adjacent for u, v in itertools.combinations(members, 2))
    assert np.bincount(clique_of).max() >= 3


# ---------------------------------------------------------------- structure of each class


def test_vertex_cover_rows_are_the_edges():
    problem = generate("mvc")
    assert problem.sense == "minimize" and np.all(problem.var_types == "B")
    assert np.all(np.diff(problem.matrix.indptr) == 2) and np.all(problem.matrix.data == 1)
    assert np.all(problem.row_lower == 1) and np.all(np.isposinf(problem.row_upper))
    assert problem.n_rows == 3 * (30 - 3)
    assert len(set(rows_as_sets(problem))) == problem.n_rows
    assert np.all((problem.objective > 0) & (problem.objective < 1))


@pytest.mark.parametrize("graph", ["erdos_renyi", "barabasi_albert"])
def test_independent_set_clique_formulation_covers_exactly_the_edges(graph):
    edge_form = generate("mis", graph=graph, formulation="edge")
    clique_form = generate("mis", graph=graph, formulation="clique")
    edges = set(rows_as_sets(edge_form))
    assert all(len(e) == 2 for e in edges) and len(edges) == edge_form.n_rows
    cliques = rows_as_sets(clique_form)
    pairs = {frozenset(p) for row in cliques for p in itertools.combinations(row, 2)}
    assert pairs == edges  # every edge has a row and every row is a clique
    assert clique_form.n_rows < edge_form.n_rows
    for problem in (edge_form, clique_form):
        assert problem.sense == "maximize" and np.all(problem.objective == 1)
        assert np.all(problem.row_upper == 1) and np.all(np.isneginf(problem.row_lower))


@pytest.mark.parametrize(
    "overrides", [{}, dict(n_rows=5, n_cols=3, density=1.0), dict(density=0.8)]
)
def test_set_cover_rows_are_coverable_and_columns_cover_two_rows(overrides):
    params = tiny("sc", **overrides)
    problem = generate("sc", **overrides)
    matrix = problem.matrix
    assert matrix.shape == (params.n_rows, params.n_cols)
    assert matrix.nnz == int(params.n_rows * params.n_cols * params.density) and np.all(
        matrix.data == 1
    )
    assert np.all(matrix.getnnz(axis=1) >= 1) and np.all(matrix.getnnz(axis=0) >= 2)
    assert np.all(problem.row_lower == 1) and np.all(np.isposinf(problem.row_upper))
    costs = problem.objective
    assert np.all(costs == np.round(costs)) and costs.min() >= 1 and costs.max() <= params.max_cost
    assert problem.check(np.ones(params.n_cols)).feasible


def test_auction_item_rows_hold_exactly_their_bids_and_bidder_rows_their_xor_group():
    params = tiny("ca")
    auction = draw_auction(params, instance_rng(0, 0))
    problem = generate("ca")
    assert problem.sense == "maximize" and problem.n_vars == params.n_bids
    assert np.allclose(problem.objective, auction.prices) and np.all(auction.prices >= 0)
    rows = dict(zip(problem.row_names, rows_as_sets(problem), strict=True))
    for item in range(params.n_items):
        holders = frozenset(b for b, bundle in enumerate(auction.bundles) if item in bundle)
        assert rows.get(f"item{item}", frozenset()) == holders
    assert [rows[f"bidder{k}"] for k in range(len(auction.xor_groups))] == [
        frozenset(g) for g in auction.xor_groups
    ]
    assert len(rows) == len({i for b in auction.bundles for i in b.tolist()}) + len(
        auction.xor_groups
    )
    for group in auction.xor_groups:
        first = set(auction.bundles[group[0]].tolist())
        assert len(group) >= 3 and all(first & set(auction.bundles[b].tolist()) for b in group)
        assert len({tuple(auction.bundles[b]) for b in group}) == len(group)
    assert np.all(problem.row_upper == 1) and np.all(np.isneginf(problem.row_lower))


def test_auction_bundle_growth_samplers_follow_interest_times_compatibility():
    from instances.generators.ca import _grow, _grow_exactly

    rng = np.random.default_rng(0)
    n, draws = 10, 20000
    interests = rng.random(n)
    compat = np.triu(rng.random((n, n)), k=1)
    compat = compat + compat.T
    compat /= compat.sum(axis=1, keepdims=True)
    expected = interests * compat[3]
    expected /= expected.sum()
    members = np.full((draws, 2), 3)
    by_rejection = _grow(members[:, 0], 2, interests, compat, compat.max(), rng)
    exactly = _grow_exactly(members.copy(), interests, compat, rng)
    for bundles in (by_rejection, exactly):
        second = np.where(bundles[:, 0] == 3, bundles[:, 1], bundles[:, 0])
        frequency = np.bincount(second, minlength=n) / draws
        assert frequency[3] == 0 and np.abs(frequency - expected).max() < 0.015


@pytest.mark.parametrize("continuous", [True, False])
def test_facility_location_demands_capacities_and_links(continuous):
    params = tiny("cfl", continuous_assignment=continuous)
    nc, nf = params.n_customers, params.n_facilities
    problem = generate("cfl", continuous_assignment=continuous)
    assert problem.n_vars == nf + nc * nf and problem.n_rows == nc + nf + 1 + nc * nf
    dense = problem.matrix.toarray()
    rows = {name: dense[i] for i, name in enumerate(problem.row_names)}
    column = {name: j for j, name in enumerate(problem.var_names)}
    x = np.array([[column[f"x{i}_{j}"] for j in range(nf)] for i in range(nc)])
    y = np.array([column[f"y{j}"] for j in range(nf)])
    demand = np.array([rows["capacity0"][x[i, 0]] for i in range(nc)])
    capacity = -np.array([rows[f"capacity{j}"][y[j]] for j in range(nf)])
    assert np.all((demand >= 5) & (demand <= 35) & (demand == np.round(demand)))
    assert np.all(capacity == np.round(capacity)) and np.all(capacity >= 0)
    assert params.ratio * demand.sum() - nf < capacity.sum() <= params.ratio * demand.sum()
    for j in range(nf):
        assert np.array_equal(rows[f"capacity{j}"][x[:, j]], demand)
    for i in range(nc):
        assert np.array_equal(np.flatnonzero(rows[f"demand{i}"]), np.sort(x[i]))
    assert np.array_equal(rows["total_capacity"][y], capacity)
    assert problem.row_lower[problem.row_names.index("total_capacity")] == demand.sum()
    link = rows["link2_1"]
    assert link[x[2, 1]] == 1 and link[y[1]] == -1 and np.count_nonzero(link) == 2
    assert np.all(problem.var_types[y] == "B")
    assert np.all(problem.var_types[x.ravel()] == ("C" if continuous else "B"))
    if continuous:  # all open, every customer split in proportion to the capacities: feasible
        point = np.zeros(problem.n_vars)
        point[y] = 1
        point[x] = capacity / capacity.sum()
        assert problem.check(point).feasible


# ---------------------------------------------------------------- every class: the same contract


@pytest.mark.parametrize("name", NAMES)
def test_every_class_has_tiny_parameters_and_valid_presets(name):
    cls = problem_class(name)
    assert set(cls.presets) == {"small", "large"}
    assert all(isinstance(p, cls.params_type) for p in cls.presets.values())
    assert isinstance(tiny(name), cls.params_type)


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_bytes_other_seed_other_bytes(name, tmp_path):
    cls = problem_class(name)
    paths = [
        generate(name, seed).write(tmp_path / f"{tag}.mps.gz")
        for tag, seed in (("a", 5), ("b", 5), ("c", 6))
    ]
    a, b, c = (p.read_bytes() for p in paths)
    assert a == b and a != c
    assert cls.generate(tiny(name), instance_rng(5, 1), "x").matrix.nnz > 0


@pytest.mark.parametrize("name", NAMES)
def test_file_read_back_by_scip_holds_the_same_problem(name, tmp_path):
    problem = generate(name)
    back = read_problem(problem.write(tmp_path / f"{name}.mps.gz"))
    assert (back.n_vars, back.n_rows) == (problem.n_vars, problem.n_rows)
    assert back.row_names == problem.row_names and back.sense == problem.sense
    # SCIP's MPS writer may list variables without any nonzero first: compare by name
    order = np.array([back.var_names.index(v) for v in problem.var_names])
    assert np.array_equal(back.var_types[order], problem.var_types)
    assert np.allclose(back.objective[order], problem.objective)
    assert np.array_equal(back.lower[order], problem.lower) and np.array_equal(
        back.upper[order], problem.upper
    )
    assert abs(back.matrix[:, order] - problem.matrix).max() < 1e-9
    assert np.array_equal(back.row_lower, problem.row_lower) and np.array_equal(
        back.row_upper, problem.row_upper
    )


@pytest.mark.parametrize("name", NAMES)
def test_scip_solves_a_tiny_instance_to_a_feasible_optimum(name):
    problem = generate(name)
    model = problem.to_scip()
    model.setParam("limits/time", 20)
    model.optimize()
    assert model.getStatus() == "optimal"
    x = np.array([model.getVal(v) for v in model.getVars()])
    assert problem.check(x).feasible


def test_unknown_class_size_and_parameter_are_named_with_the_choices():
    with pytest.raises(UnknownNameError, match=r"problem class 'tsp'.*'mis'.*'mvc'"):
        problem_class("tsp")
    with pytest.raises(UnknownNameError, match="size 'huge'"):
        problem_class("mvc").params("huge")
    with pytest.raises(UnknownNameError, match="parameter 'nodes'.*'n_nodes'"):
        problem_class("mvc").params("small", nodes=5)


BAD = [  # (class, parameter, bad value, other overrides it needs)
    ("mvc", "n_nodes", -5, {}),
    ("mvc", "affinity", 0, {}),
    ("mvc", "affinity", 30, {}),
    ("mvc", "affinity", 20, {"graph": "erdos_renyi"}),
    ("mvc", "weights", "gaussian", {}),
    ("mis", "n_nodes", 0, {}),
    ("mis", "affinity", -1.0, {}),
    ("mis", "affinity", 25.0, {}),
    ("mis", "affinity", 2.5, {"graph": "barabasi_albert"}),
    ("mis", "formulation", "star", {}),
    ("mis", "graph", "grid", {}),
    ("sc", "n_rows", -1, {}),
    ("sc", "n_cols", 0, {}),
    ("sc", "density", 0.0, {}),
    ("sc", "density", 1.5, {}),
    ("sc", "density", 0.01, {}),
    ("sc", "max_cost", 0, {}),
    ("ca", "n_items", -2, {}),
    ("ca", "n_bids", 0, {}),
    ("ca", "add_item_prob", 1.0, {}),
    ("ca", "max_value", 0.5, {}),
    ("ca", "value_deviation", -0.1, {}),
    ("ca", "integers", "yes", {}),
    ("cfl", "n_customers", -1, {}),
    ("cfl", "n_facilities", 0, {}),
    ("cfl", "ratio", 0.0, {}),
    ("cfl", "ratio", -2.0, {}),
    ("cfl", "continuous_assignment", "yes", {}),
]


@pytest.mark.parametrize(("name", "field", "value", "others"), BAD)
def test_bad_parameters_are_rejected_naming_the_parameter(name, field, value, others):
    with pytest.raises(ValueError, match=rf"{name}: {field} "):
        tiny(name, **others, **{field: value})


# ---------------------------------------------------------------- sets and manifests


def test_write_set_is_reproducible_and_indexed_by_seed_and_position(tmp_path):
    params = tiny("mvc")
    first = write_set("mvc", params, 3, 7, tmp_path / "a", "mvc_tiny", size="small")
    again = write_set("mvc", params, 1, 7, tmp_path / "b", "mvc_tiny", start=2)
    assert [i["file"] for i in first["instances"]] == [f"mvc_tiny_{i:04d}.mps.gz" for i in range(3)]
    assert again["instances"][0]["sha256"] == first["instances"][2]["sha256"]
    assert len({i["sha256"] for i in first["instances"]}) == 3
    manifest = json.loads((tmp_path / "a" / MANIFEST).read_text())
    assert manifest == first and manifest["params"] == dataclasses.asdict(params)
    entry = manifest["instances"][1]
    back = read_problem(tmp_path / "a" / entry["file"])
    assert (back.n_vars, back.n_rows) == (entry["n_vars"], entry["n_rows"])
    assert entry["bytes"] == (tmp_path / "a" / entry["file"]).stat().st_size


def test_extending_a_set_keeps_the_manifest_entries_of_its_first_instances(tmp_path):
    params = tiny("mvc")
    first = write_set("mvc", params, 2, 7, tmp_path, "mvc_tiny", size="small")
    extended = write_set("mvc", params, 2, 7, tmp_path, "mvc_tiny", start=2, size="small")
    assert [i["index"] for i in extended["instances"]] == [0, 1, 2, 3]
    assert extended["instances"][:2] == first["instances"]
    assert json.loads((tmp_path / MANIFEST).read_text()) == extended
    with pytest.raises(ValueError, match=r"holds another set \(seed differ: seed 7 there, 8 here"):
        write_set("mvc", params, 1, 8, tmp_path, "mvc_tiny", start=4, size="small")
    (tmp_path / MANIFEST).write_text("{")
    with pytest.raises(ValueError, match="manifest.json: not a readable manifest"):
        write_set("mvc", params, 1, 7, tmp_path, "mvc_tiny", start=4, size="small")


def test_a_set_records_its_writer_and_a_set_without_one_was_written_by_scip(tmp_path):
    params = tiny("mvc")
    arrays = write_set("mvc", params, 1, 7, tmp_path / "a", "mvc_tiny", size="small")
    scip = write_set("mvc", params, 1, 7, tmp_path / "b", "mvc_tiny", size="small", writer="scip")
    assert (arrays["writer"], scip["writer"]) == ("arrays", "scip")
    assert arrays["instances"][0]["sha256"] != scip["instances"][0]["sha256"]
    problems = [read_problem(tmp_path / folder / "mvc_tiny_0000.mps.gz") for folder in "ab"]
    assert problems[0].var_names == problems[1].var_names
    assert (problems[0].matrix != problems[1].matrix).nnz == 0
    manifest = json.loads((tmp_path / "b" / MANIFEST).read_text())
    del manifest["writer"]  # as every set written before the arrays' writer
    (tmp_path / "b" / MANIFEST).write_text(json.dumps(manifest))
    extended = write_set(
        "mvc", params, 1, 7, tmp_path / "b", "mvc_tiny", start=1, size="small", writer="scip"
    )
    assert [i["index"] for i in extended["instances"]] == [0, 1]
    with pytest.raises(ValueError, match="writer 'scip' there, 'arrays' here"):
        write_set("mvc", params, 1, 7, tmp_path / "b", "mvc_tiny", start=2, size="small")
    with pytest.raises(UnknownNameError):
        write_set("mvc", params, 1, 7, tmp_path / "c", "mvc_tiny", writer="lp")


# ---------------------------------------------------------------- the lns-generate app


def compose_generate(overrides):
    from hydra import compose, initialize_config_dir

    import lns.cli.generate  # noqa: F401  (registers the presets with Hydra)
    from configs import CONFIG_DIR

    with initialize_config_dir(version_base="1.3", config_dir=str(CONFIG_DIR)):
        return compose(config_name="generate", overrides=overrides)


@pytest.mark.parametrize("name", NAMES)
def test_app_config_composes_every_preset_and_overrides(name):
    cfg = compose_generate([f"problem={name}", "size=large"])
    assert cfg.params == dataclasses.asdict(problem_class(name).presets["large"])
    assert cfg.prefix == f"{name}_large" and cfg.out_dir == f"data/{name}_large"
    field = dataclasses.fields(problem_class(name).params_type)[0].name
    cfg = compose_generate([f"problem={name}", f"params.{field}=7"])
    assert cfg.params[field] == 7


def test_app_rejects_a_bad_parameter_with_one_line_and_exit_status_2(tmp_path, capsys):
    from lns.cli.generate import run

    cfg = compose_generate(["problem=sc", "params.density=1.5", f"out_dir={tmp_path}"])
    with pytest.raises(SystemExit) as exit_info:
        run(cfg)
    assert exit_info.value.code == 2
    message = capsys.readouterr().err
    assert message.count("\n") == 1 and "lns-generate: error: sc: density must be" in message
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
def test_app_end_to_end_writes_two_files_and_the_manifest(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "mis"
    command = [
        sys.executable,
        "-m",
        "lns.cli.generate",
        "problem=mis",
        "n=2",
        "seed=3",
        f"out_dir={out}",
        "params.n_nodes=30",
        "params.formulation=clique",
        f"hydra.run.dir={tmp_path / 'hydra'}",
    ]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    manifest = json.loads((out / MANIFEST).read_text())
    assert sorted(p.name for p in out.glob("*.mps.gz")) == [
        "mis_small_0000.mps.gz",
        "mis_small_0001.mps.gz",
    ]
    assert manifest["problem"] == "mis" and manifest["seed"] == 3
    assert manifest["params"]["n_nodes"] == 30 and manifest["params"]["formulation"] == "clique"
    params = problem_class("mis").params("small", n_nodes=30, formulation="clique")
    expected = write_set("mis", params, 2, 3, tmp_path / "direct", "mis_small", size="small")
    assert [i["sha256"] for i in manifest["instances"]] == [
        i["sha256"] for i in expected["instances"]
    ]
