"""SIGINT, SIGTERM and SIGHUP sent to ``lns-solve`` at start-up, in the initial solve and mid-run.

Whenever a solution existed, a feasible ``.sol`` is written; the exit code is ``128 + signal``;
a signal before the run prints one line, not a traceback.
"""

import re
import signal
import subprocess
import sys

import numpy as np
import pytest

from helpers import miplib
from lns.core.interrupt import DeferredSignals, InterruptGuard
from lns.core.problem.mip import read_problem
from lns.core.problem.solution_file import read_sol

STOP_SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


def start(tmp_path, *overrides, python_flags=()):
    """``python -m lns.cli.solve`` with stdout and stderr merged into one pipe."""
    command = [sys.executable, *python_flags, "-m", "lns.cli.solve", *overrides]
    return subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def wait_for(process, marker: str) -> list:
    """Read lines until one contains ``marker``; returns the lines read."""
    seen = []
    while not seen or marker not in seen[-1]:
        seen.append(process.stdout.readline())
        assert seen[-1], f"lns-solve ended before printing {marker!r}:\n{''.join(seen[-20:])}"
    return seen


def stop(process, signum, seen: list) -> str:
    """Send ``signum``, wait for the end; returns everything the process printed."""
    process.send_signal(signum)
    rest, _ = process.communicate(timeout=60)
    return "".join(seen) + rest


def assert_best_solution_written(path, output: str, instance: str):
    problem = read_problem(miplib(instance))
    x = read_sol(path, problem)
    assert problem.check(x).feasible
    objective = float(re.search(r"^objective\s+(\S+)$", output, re.MULTILINE).group(1))
    assert np.isclose(problem.objective_value(x), objective)


@pytest.mark.parametrize("signum", STOP_SIGNALS, ids=lambda s: s.name)
def test_signal_at_start_up_prints_one_line(signum, tmp_path):
    # ``-v`` lists each import as it happens: the signal arrives while Hydra is being imported.
    process = start(tmp_path, "instance=air05", "out=best.sol", python_flags=("-v",))
    seen = wait_for(process, "hydra")
    output = stop(process, signum, seen)
    assert process.returncode == 128 + signum
    assert "Traceback" not in output
    message = f"lns-solve: stopped by {signum.name} before the run started"
    last = output.splitlines()[-1]
    # -v writes an import's trace line (each starts with "# ") and its newline apart: the message
    # may follow the first on its line
    assert last == message or (last.startswith("# ") and last.endswith(message))
    assert not (tmp_path / "best.sol").exists()


@pytest.mark.parametrize("signum", STOP_SIGNALS, ids=lambda s: s.name)
def test_signal_during_the_initial_solve_keeps_its_solution(signum, tmp_path):
    # Without a solution limit the initial SCIP solve goes on after its first solution.
    process = start(
        tmp_path,
        "instance=air05",
        "time_limit=60",
        "start.strategy=first",
        "start.solution_limit=-1",
        "out=best.sol",
    )
    seen = wait_for(process, "(initial)")
    output = stop(process, signum, seen)
    assert process.returncode == 128 + signum
    assert "(interrupted)" in output and "0 iterations" in output
    assert output.splitlines()[-1] == f"lns-solve: stopped by {signum.name}"
    assert_best_solution_written(tmp_path / "best.sol", output, "air05")


@pytest.mark.parametrize("signum", STOP_SIGNALS, ids=lambda s: s.name)
def test_signal_mid_run_keeps_the_best_solution(signum, tmp_path):
    process = start(
        tmp_path, "instance=air05", "time_limit=60", "start.strategy=first", "out=best.sol"
    )
    seen = wait_for(process, "  iteration ")  # an LNS iteration's improvement: into the loop
    output = stop(process, signum, seen)
    assert process.returncode == 128 + signum
    assert "(interrupted)" in output and " 0 iterations" not in output
    assert_best_solution_written(tmp_path / "best.sol", output, "air05")


def test_a_finished_run_exits_with_0(tmp_path):
    process = start(tmp_path, "instance=p0201", "iteration_limit=2", "out=best.sol")
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 0, output
    assert_best_solution_written(tmp_path / "best.sol", output, "p0201")


def test_deferred_signals_pass_on_before_a_run_and_hold_back_after_it():
    received = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: received.append(signum))
    try:
        with DeferredSignals() as deferred:
            signal.raise_signal(signal.SIGTERM)  # no run yet: the previous handler's
            assert received == [signal.SIGTERM] and deferred.signal is None
            with InterruptGuard() as guard:
                signal.raise_signal(signal.SIGHUP)
            assert guard.requested and guard.signal == signal.SIGHUP
            signal.raise_signal(signal.SIGTERM)  # after the run: held back
        assert received == [signal.SIGTERM]
        assert deferred.signal == signal.SIGHUP
    finally:
        signal.signal(signal.SIGTERM, previous)
