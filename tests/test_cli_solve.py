import re
import signal
import subprocess
import sys

import numpy as np
import pytest

from helpers import miplib
from lns.api import usable_cores
from lns.core.problem.mip import read_problem
from lns.core.problem.solution_file import read_sol


def lns_solve(*overrides, cwd, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "lns.cli.solve", *overrides],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_solves_a_bundled_instance_and_writes_the_solution(tmp_path):  # on every core
    run = lns_solve(
        "instance=p0201",
        "selector=random",
        "iteration_limit=3",
        "seed=0",
        "out=best.sol",
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert (
        "status       feasible (iteration_limit)" in run.stdout
        or "status       optimal" in run.stdout
    )
    x = read_sol(tmp_path / "best.sol", read_problem(miplib("p0201")))
    assert read_problem(miplib("p0201")).check(x).feasible
    assert "(initial)" in run.stderr and "(initial)" not in run.stdout  # log lines go to stderr
    cores = usable_cores()
    # the default portfolio: an LNS worker per core beside the other kinds (docs/workers/auto.md)
    assert (f"workers ({cores} lns" in run.stdout) == (cores > 1), run.stdout


def test_bad_inputs_give_one_line_and_exit_code_2(tmp_path):
    (tmp_path / "broken.mps").write_text("NAME x\nROWS\nFOO\n")
    for overrides, message in [
        (["instance=missing.mps"], "lns-solve: error: missing.mps: no such file"),
        (
            ["instance=broken.mps"],
            "lns-solve: error: broken.mps: SCIP could not read the file (Syntax error in line 3)",
        ),
        (
            ["instance=p0201", "method=gurobi"],
            "lns-solve: error: unknown method 'gurobi'",
        ),
    ]:
        run = lns_solve(*overrides, cwd=tmp_path)
        assert run.returncode == 2
        assert run.stderr.strip().splitlines()[-1].startswith(message)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["lns", "scip"])
def test_ctrl_c_stops_the_run_and_keeps_the_best_solution(tmp_path, method):
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lns.cli.solve",
            "instance=air05",
            "time_limit=60",
            f"method={method}",
            "out=best.sol",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen = []
    while not any("(initial)" in line for line in seen):  # a first solution, logged on stderr
        seen.append(process.stderr.readline())
        assert seen[-1], "lns-solve ended before its first solution"
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 128 + signal.SIGINT, stderr
    assert "(interrupted)" in stdout
    problem = read_problem(miplib("air05"))
    x = read_sol(tmp_path / "best.sol", problem)
    assert problem.check(x).feasible
    objective = float(re.search(r"^objective\s+(\S+)$", stdout, re.MULTILINE).group(1))
    assert np.isclose(problem.objective_value(x), objective)
