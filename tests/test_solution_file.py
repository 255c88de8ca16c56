"""Solution files: written whole or not at all, and ``out=`` checked before a run."""

import os
import threading

import numpy as np
import pytest

from helpers import knapsack
from lns.api import solve
from lns.core.errors import SolutionFileError
from lns.core.problem.solution_file import check_writable, read_sol, write_sol


def test_concurrent_writers_never_leave_a_mixed_file(tmp_path):
    # Two writers replace the same file with different solutions many times while a reader
    # checks every version it sees: each is one of the two, complete.
    problem = knapsack()
    solutions = [np.array([1.0, 1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0, 1.0])]
    path = tmp_path / "best.sol"
    write_sol(path, problem, solutions[0], 23.0)

    def write(x):
        for _ in range(300):
            write_sol(path, problem, x, problem.objective_value(x))

    writers = [threading.Thread(target=write, args=(x,)) for x in solutions]
    for writer in writers:
        writer.start()
    seen = 0
    while any(writer.is_alive() for writer in writers) or not seen:
        x = read_sol(path, problem)
        assert any(np.array_equal(x, solution) for solution in solutions)
        seen += 1
    for writer in writers:
        writer.join()
    assert any(np.array_equal(read_sol(path, problem), solution) for solution in solutions)
    assert os.listdir(tmp_path) == ["best.sol"]  # no temporary file left behind


def test_written_file_gets_the_usual_permissions(tmp_path):
    mask = os.umask(0o022)
    os.umask(mask)
    path = write_sol(tmp_path / "best.sol", knapsack(), np.zeros(4), 0.0)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask


@pytest.mark.parametrize(
    "where, message",
    [
        (".", "is a folder"),
        ("missing/best.sol", "folder missing does not exist"),
    ],
)
def test_unwritable_out_is_refused_before_the_run(tmp_path, monkeypatch, where, message):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SolutionFileError, match=message):
        check_writable(where)
    with pytest.raises(SolutionFileError, match=message):
        solve(knapsack(), stop=30, out=where)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in a read-only folder")
def test_out_in_a_read_only_folder_is_refused(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir(mode=0o500)
    with pytest.raises(SolutionFileError, match="cannot write in folder"):
        check_writable(folder / "best.sol")
