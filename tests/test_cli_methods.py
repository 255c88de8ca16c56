"""``lns-solve`` with every method on a small bundled instance: it runs and writes a feasible
``.sol``."""

import re
import subprocess
import sys

import numpy as np
import pytest

from helpers import miplib
from lns.core.problem.mip import read_problem
from lns.core.problem.solution_file import read_sol


@pytest.mark.parametrize("method", ["lns", "scip", "cpsat"])
def test_every_method_solves_and_writes_a_feasible_solution(tmp_path, method):
    command = [
        sys.executable,
        "-m",
        "lns.cli.solve",
        "instance=p0201",
        f"method={method}",
        "time_limit=3",
        "seed=0",
        "out=best.sol",
        "sub_solve.time_limit=1",
    ]
    run = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert re.search(rf"^method\s+{method}\b", run.stdout, re.MULTILINE)
    problem = read_problem(miplib("p0201"))
    x = read_sol(tmp_path / "best.sol", problem)
    assert problem.check(x).feasible
    objective = float(re.search(r"^objective\s+(\S+)$", run.stdout, re.MULTILINE).group(1))
    assert np.isclose(problem.objective_value(x), objective)
