"""Reading problem files, and making instances: generators, the file writer, plain SCIP on them.

``reading``: per file, the framework's MPS reader (:func:`lns.core.problem.mps.read_mps`,
decompression included), and the path it replaces: SCIP's own read
(``pyscipopt.Model.readProblem``), the number check that
:func:`lns.core.problem.file_numbers.check_file_numbers` runs before it (it reads the file once
more, decompression included), that decompression alone, and the problem's arrays taken from
the read SCIP model (:func:`lns.core.problem.mip.problem_from_scip`). Quick: air05; full: the
ten largest bundled files, and generated independent-set (6,000 and 96,000 nodes) and
vertex-cover instances.

``generate`` and ``write .mps.gz``: one instance (seed 0) of each class and preset (quick: the
``small`` preset with its sizes divided by about ten): the seconds to generate its arrays and to
write it, from the arrays (``arrays``: :mod:`lns.core.problem.mps_writer`, gzip) and through SCIP
(``SCIP``: building the SCIP model, SCIP's MPS writer, gzip); ``extra_info`` has its numbers of
variables, rows and nonzeros and the file's size.

``plain SCIP on a generated instance``: SCIP alone on the first three instances of each class's
``small`` preset (quick: one, a tenth of the size) under a time limit (quick: 1 s; full: 60 s);
``extra_info`` has the gap between its primal and dual bounds, ``|p - d| / max(|p|, |d|)``. LNS
matters where this gap stays open.
"""

from __future__ import annotations

import gzip
from itertools import chain
from pathlib import Path

import pytest
from pyscipopt import Model

from instances.bundled import BUNDLED_DIR, MIPLIB2017_DIR
from instances.generators import CLASSES, instance_rng, problem_class
from lns.core.problem.file_numbers import check_file_numbers
from lns.core.problem.mip import Problem, problem_from_scip, read_scip_model, write_with_scip
from lns.core.problem.mps import read_mps
from lns.core.search.metrics import primal_gap
from lns.core.solvers.scip.subsolver import ScipSubSolver

#: The ten largest bundled files, by name.
LARGEST = [
    path.name.split(".")[0]
    for path in sorted(
        chain(BUNDLED_DIR.glob("*.mps*"), MIPLIB2017_DIR.glob("*.mps*")),
        key=lambda path: path.stat().st_size,
    )[-10:]
]
FILES = [
    "air05",
    *(pytest.param(name, marks=pytest.mark.full) for name in LARGEST if name != "air05"),
    pytest.param("mis-6000", marks=pytest.mark.full),
    pytest.param("mvc-1000", marks=pytest.mark.full),
    pytest.param("mis-96000", marks=pytest.mark.full),
]


def scip_read(path: Path) -> Model:
    model = Model()
    model.hideOutput()
    model.readProblem(str(path))
    return model


def decompress(path: Path) -> bytes:
    return gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()


def numpy_read(path: Path) -> Problem:
    fields = read_mps(path)
    assert fields is not None, f"{path}: the MPS reader left the file to SCIP"
    return Problem(name=path.name, **fields)


STEPS = {
    "numpy MPS read": numpy_read,
    "SCIP read": scip_read,
    "number check": check_file_numbers,
    "number check's decompression": decompress,
}


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("step", [*STEPS, "problem arrays from the SCIP model"])
def test_reading(benchmark, measure, path_of, name, step):
    benchmark.group = f"reading: {name}"
    path = path_of(name)
    if step in STEPS:
        measure(lambda: STEPS[step](path))
        return
    model = read_scip_model(path)
    problem = measure(lambda: problem_from_scip(model, name))
    assert problem.n_vars == model.getNVars()
    benchmark.extra_info["rows"] = problem.n_rows


#: The quick mode's instances: the ``small`` preset of each class with its sizes divided by
#: about ten.
TENTH = {
    "mis": {"n_nodes": 600},
    "mvc": {"n_nodes": 100},
    "sc": {"n_rows": 500, "n_cols": 400},
    "ca": {"n_items": 200, "n_bids": 400},
    "cfl": {"n_customers": 10, "n_facilities": 10},
}
SIZES = [
    "small/10",
    pytest.param("small", marks=pytest.mark.full),
    pytest.param("large", marks=pytest.mark.full),
]


def generate(name: str, size: str, index: int = 0) -> Problem:
    """Instance ``index`` (seed 0) of the class ``name`` at ``size`` (a preset, or
    ``small/10``: :data:`TENTH`)."""
    cls = problem_class(name)
    params = cls.params("small", **TENTH[name]) if size == "small/10" else cls.params(size)
    return cls.generate(params, instance_rng(0, index), f"{name}_{size.replace('/', '_')}_{index}")


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", sorted(CLASSES))
def test_generate(benchmark, measure, name, size):
    benchmark.group = "generate"
    problem = measure(lambda: generate(name, size))
    benchmark.extra_info.update(
        vars=problem.n_vars, rows=problem.n_rows, nonzeros=int(problem.matrix.nnz)
    )


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", sorted(CLASSES))
@pytest.mark.parametrize("writer", ["arrays", "SCIP"])
def test_write(benchmark, measure, tmp_path, name, size, writer):
    benchmark.group = "write .mps.gz"
    problem = generate(name, size)
    path = tmp_path / f"{problem.name}.mps.gz"
    write = problem.write if writer == "arrays" else lambda p: write_with_scip(problem, p)
    measure(lambda: write(path))
    benchmark.extra_info["MB"] = path.stat().st_size / 1e6


@pytest.mark.parametrize(
    "size, index",
    [("small/10", 0), *(pytest.param("small", i, marks=pytest.mark.full) for i in range(3))],
)
@pytest.mark.parametrize("name", sorted(CLASSES))
def test_plain_scip(benchmark, measure, mode, name, size, index):
    benchmark.group = "plain SCIP on a generated instance"
    problem = generate(name, size, index)
    time_limit = mode.pick(1.0, 60.0)

    def solve():
        solver = ScipSubSolver(problem)
        try:
            return solver.solve(time_limit=time_limit, seed=0)
        finally:
            solver.close()

    outcome = measure(solve, rounds=1)
    primal = outcome.best.objective if outcome.best is not None else None
    benchmark.extra_info.update(
        status=str(outcome.status),
        primal=primal,
        dual=outcome.dual_bound,
        gap_percent=100 * primal_gap(primal, outcome.dual_bound),
    )
