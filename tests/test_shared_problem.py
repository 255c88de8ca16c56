"""A portfolio's problem in shared memory: what a worker unpickles maps the main process's block."""

import multiprocessing
import pickle
import subprocess
import sys
from multiprocessing import shared_memory

import numpy as np
import pytest

from helpers import miplib
from lns.core.parallel.shared_problem import SharedProblem
from lns.core.problem.mip import read_problem
from lns.core.problem.names import Names


def _same_problem(a, b) -> None:
    for field in ("var_types", "lower", "upper", "objective", "row_lower", "row_upper"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert (a.matrix != b.matrix).nnz == 0 and (a.by_column != b.by_column).nnz == 0
    assert a.var_names == b.var_names and a.row_names == b.row_names
    assert (a.name, a.sense, a.objective_offset, a.source) == (
        b.name,
        b.sense,
        b.objective_offset,
        b.source,
    )


def _maps_a_block(problem) -> bool:
    """Whether every array of ``problem`` is a view of memory it does not own."""
    arrays = [problem.lower, problem.objective, problem.row_upper, problem.matrix.data]
    arrays += [problem.by_column.indices, Names.of(problem.var_names).buffer]
    return not any(array.flags.owndata for array in arrays)


def _in_worker(payload: bytes) -> tuple:
    problem = pickle.loads(payload)
    x = np.zeros(problem.n_vars)
    return _maps_a_block(problem), problem.check(x).feasible, list(problem.var_names[:3])


def test_a_shared_problem_unpickles_as_views_of_one_block():
    problem = read_problem(miplib("bell5"))  # general integers, continuous variables, names
    shared = SharedProblem(problem)
    try:
        copy = pickle.loads(pickle.dumps(shared))
        _same_problem(copy, problem)
        assert _maps_a_block(copy)
        assert len(pickle.dumps(shared)) < 2_000  # the block's name and layout, no array
    finally:
        shared.close()


def test_a_spawned_worker_maps_the_block_and_the_block_is_gone_after_close():
    problem = read_problem(miplib("p0201"))
    shared = SharedProblem(problem)
    name = shared._block.name
    try:
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            mapped, feasible, names = pool.apply(_in_worker, (pickle.dumps(shared),))
        assert mapped and names == list(problem.var_names[:3])
        assert feasible == problem.check(np.zeros(problem.n_vars)).feasible
    finally:
        shared.close()
    with pytest.raises(FileNotFoundError):
        shared_memory.SharedMemory(name=name)


def test_without_room_in_shared_memory_the_workers_get_copies(monkeypatch, caplog):
    import lns.core.parallel.shared_problem as shared_problem
    from lns import PortfolioParams, SolveParams, solve

    problem = read_problem(miplib("p0201"))
    monkeypatch.setattr(shared_problem, "SHARED_MEMORY_DIR", "/no/such/dir")
    assert shared_problem.shared_or_none(problem) is None

    class Full:
        f_bavail, f_frsize = 1, 4096

    monkeypatch.setattr(shared_problem.os, "statvfs", lambda _: Full())
    with caplog.at_level("INFO", logger="lns"):
        result = solve(
            problem, "random", 3, params=SolveParams(portfolio=PortfolioParams(workers=2))
        )
    assert "each worker gets its own copy" in caplog.text
    assert result.x is not None and problem.check(result.x).feasible


ATTACH_AND_EXIT = """
import pickle, sys
problem = pickle.load(open(sys.argv[1], "rb"))
print(problem.n_vars, float(problem.matrix.data.sum()))
"""


def test_a_worker_that_exits_with_the_views_alive_prints_nothing(tmp_path):
    """A SharedMemory collected at the exit fails to close a mapping that arrays still view."""
    problem = read_problem(miplib("p0201"))
    shared = SharedProblem(problem)
    try:
        (tmp_path / "shared.pickle").write_bytes(pickle.dumps(shared))
        run = subprocess.run(
            [sys.executable, "-c", ATTACH_AND_EXIT, str(tmp_path / "shared.pickle")],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        shared.close()
    assert run.returncode == 0 and run.stderr == ""
    assert run.stdout.split() == [str(problem.n_vars), str(float(problem.matrix.data.sum()))]
