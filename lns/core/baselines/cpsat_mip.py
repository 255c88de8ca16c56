"""CP-SAT on any MIP, through OR-Tools' ``model_builder``: the CP-SAT baseline where the
native model (:mod:`lns.core.solvers.cpsat.model`, pure integer) does not apply.

OR-Tools' MIP interface to CP-SAT imports an MPS file and turns continuous variables and real
coefficients into integer ones itself (CP-SAT's ``mip_*`` parameters). It reports no solution
before the end of the solve, only its log, so :func:`solve_cpsat_mip` runs the solve in a child
process (:mod:`lns.core.baselines.cpsat_mip_child`) and reads the child's log line by line: each
improving objective (``#3  1.25s best:6534588 ...``) is taken with the time its line arrived.
The final solution comes back as a file and is offered to the run's incumbent, which checks it
against the original problem; only if it passes do the logged objectives before it enter the
trajectory (:meth:`lns.core.search.incumbent.Incumbent.merge_reported`), since those come without
their solutions. A stop (Ctrl-C, a signal) closes the child's standard input: the child stops
the search, and its best solution still comes back.
"""

from __future__ import annotations

import contextlib
import logging
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from lns.core.baselines.cpsat_mip_child import STATUS_PREFIX
from lns.core.errors import InfeasibleProblemError, SolverFailedError, UnsupportedProblemError
from lns.core.interrupt import active_guard
from lns.core.search.incumbent import Incumbent
from lns.core.search.stop import StopReason

log = logging.getLogger("lns")

#: A CP-SAT log line of a new solution: ``#<count> <seconds>s best:<objective> ...``.
SOLUTION_LINE = re.compile(r"^#(\d+)\s+[\d.]+s\s+best:(\S+)")
#: Seconds the child may take past its time limit (start-up, import, writing the solution).
GRACE_SECONDS = 30.0
#: The longest timer ``threading`` takes (an infinite time limit waits this long).
_LONGEST_WAIT = 1e6


def solve_cpsat_mip(
    incumbent: Incumbent, *, time_limit: float, seed: int, num_workers: int = 2
) -> StopReason:
    """Solve ``incumbent.problem`` with CP-SAT through ``model_builder``.

    Parameters are those of :func:`lns.core.baselines.cpsat.run_cpsat` (a solution the incumbent
    already holds is not passed on). The final solution is rejected, and the logged objectives
    with it, when it violates the original problem (CP-SAT's scaling of continuous variables
    can lose feasibility).

    Returns
    -------
    StopReason
        ``INTERRUPTED`` after a stop signal; when CP-SAT proved its solution optimal,
        ``OPTIMAL`` for a pure-integer problem and ``SOLVER_FINISHED`` with continuous variables
        (CP-SAT solves them on a grid: on ``min -0.5 w + ...`` with the optimum at ``w = 0.5``
        it proved ``w = 0`` optimal); else ``TIME_LIMIT``.

    Raises
    ------
    InfeasibleProblemError
        CP-SAT proved the problem infeasible.
    UnsupportedProblemError
        CP-SAT refuses the model OR-Tools built (its scaling can leave a row without integer
        solutions: ``-403 <= ... <= -402`` after rounding, on neos-3627168-kasai).
    """
    problem = incumbent.problem
    where = problem.source or problem.name
    with contextlib.ExitStack() as stack:
        folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="lns-cpsat-mip-"))
        model_path = problem.write(Path(folder) / "model.mps")
        solution_path = Path(folder) / "solution.npz"
        command = [sys.executable, "-m", "lns.core.baselines.cpsat_mip_child", str(model_path)]
        command.append(str(solution_path))
        deadline = time.time() + time_limit  # the wall clock the child shares
        command += [repr(deadline), str(int(seed)), str(int(num_workers))]
        errors = stack.enter_context(tempfile.TemporaryFile(mode="w+"))
        child = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )
        reported, status = _follow(child, time_limit)
        if child.returncode and not status:
            errors.seek(0)
            raise SolverFailedError(
                f"{where}: the CP-SAT process failed "
                f"(exit status {child.returncode}): {errors.read()[-500:].strip()}"
            )
        if status == "INFEASIBLE":
            raise InfeasibleProblemError(f"{where}: CP-SAT proved the problem infeasible")
        if status.startswith("MODEL_INVALID"):
            raise UnsupportedProblemError(
                f"{where}: CP-SAT refuses the model its MIP interface built from the problem "
                f"({status.partition(': ')[2] or 'no reason given'})"
            )
        if solution_path.exists():
            found_at = reported[-1][0] if reported else time.perf_counter()
            x = _in_problem_order(problem, np.load(solution_path))
            if x is not None and incumbent.offer(x, found_at=found_at, source="cpsat"):
                incumbent.merge_reported(reported[:-1])
    guard = active_guard()
    if guard is not None and guard.requested:
        return StopReason.INTERRUPTED
    if status != "OPTIMAL" or incumbent.x is None:
        return StopReason.TIME_LIMIT
    exact = len(problem.integer_indices) == problem.n_vars
    return StopReason.OPTIMAL if exact else StopReason.SOLVER_FINISHED


def _in_problem_order(problem, saved) -> np.ndarray | None:
    """The child's values (``saved["names"]``, ``saved["values"]``) in the order of
    ``problem.var_names``; ``None``, with a warning, if the names do not match."""
    names, values = [str(name) for name in saved["names"]], saved["values"]
    position = {name: i for i, name in enumerate(names)}
    if len(position) != problem.n_vars or any(name not in position for name in problem.var_names):
        log.warning("%s: CP-SAT's solution names other variables; it is left out", problem.name)
        return None
    return values[[position[name] for name in problem.var_names]]


class _ChildStop:
    """The stop hook of the interrupt guard: closing the child's standard input stops its
    search (see :func:`main`)."""

    def __init__(self, child: subprocess.Popen):
        self.child = child

    def stop(self) -> None:
        if self.child.stdin is not None and not self.child.stdin.closed:
            self.child.stdin.close()


def _follow(child: subprocess.Popen, time_limit: float) -> tuple[list, str]:
    """Read ``child``'s log until it ends: the ``(time.perf_counter(), objective)`` of each
    logged solution, and the status word it prints last (``MODEL_INVALID`` with CP-SAT's
    reason). A child past its time limit by
    :data:`GRACE_SECONDS` is killed."""
    assert child.stdout is not None
    guard = active_guard()
    killer = threading.Timer(min(time_limit + GRACE_SECONDS, _LONGEST_WAIT), child.kill)
    killer.daemon = True
    reported: list = []
    status = invalid = ""
    killer.start()
    try:
        with guard.solving(_ChildStop(child)) if guard is not None else contextlib.nullcontext():
            for line in child.stdout:
                matched = SOLUTION_LINE.match(line)
                if matched:
                    reported.append((time.perf_counter(), float(matched.group(2))))
                elif line.startswith(STATUS_PREFIX):
                    status = line[len(STATUS_PREFIX) :].strip()
                elif line.startswith("Invalid model:"):
                    invalid = line.strip()
    finally:
        killer.cancel()
        if child.poll() is None:
            child.kill()
        child.wait()
    return reported, status if status != "MODEL_INVALID" else f"{status}: {invalid}"
