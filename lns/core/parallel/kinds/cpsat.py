"""The ``cpsat`` worker kind: CP-SAT on the whole problem (one search thread), the shared
incumbent as its solution hint, restarted with the newest one (:class:`WholeProblemWorker`).

On a pure-integer problem CP-SAT's own model is solved (:class:`lns.core.solvers.cpsat.subsolver.
CpSatSubSolver`): the incumbent is also its cutoff, every solution comes back through a solution
callback as it is found, and a proof of optimality ends the run. Any other MIP goes, as the
``cpsat`` baseline does, through OR-Tools' MIP interface to CP-SAT (:class:`MipInterface`),
which scales continuous variables and real coefficients itself and returns its solution at
the end of a solve only: its solves are short (:data:`MIP_FIRST_SEGMENT` seconds, doubling),
its "optimal" proves nothing about the original problem (the worker then ends,
``solver_finished``), and its solutions, like every kind's, are checked against the original
problem in the main process before they are accepted.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from lns.core.errors import UnsupportedProblemError
from lns.core.parallel.kinds.protocol import KindUnavailable
from lns.core.parallel.kinds.whole_problem import WholeProblemWorker
from lns.core.problem.mip import Problem
from lns.core.solvers.protocol import FoundSolution, SolveOutcome, SolveStatus

#: Seconds of the first solve through the MIP interface (each restart doubles them).
MIP_FIRST_SEGMENT = 2.0


class CpSatWorker(WholeProblemWorker):
    """CP-SAT on the whole problem, restarted from the newest shared incumbent."""

    kind = "cpsat"

    def prepare(self) -> None:
        try:
            from lns.core.solvers.cpsat.subsolver import CpSatSubSolver
        except ImportError as error:  # OR-Tools is an optional dependency
            raise KindUnavailable(f"cpsat: OR-Tools is not installed ({error})") from None
        try:
            self.solver = CpSatSubSolver(self.spec.problem)
        except UnsupportedProblemError:
            self.solver = MipInterface(self.spec.problem)
            self.first_segment = MIP_FIRST_SEGMENT


class MipInterface:
    """CP-SAT on any MIP through OR-Tools' ``model_builder``, as a whole-problem solver.

    Attributes
    ----------
    proves : bool
        ``False``: CP-SAT's "optimal" here is that of its discretised model.
    """

    proves = False

    def __init__(self, problem: Problem):
        from ortools.linear_solver.python import model_builder

        self.problem, self._builder = problem, model_builder
        self.model = model_builder.Model()
        with tempfile.TemporaryDirectory(prefix="lns-cpsat-kind-") as folder:
            path = problem.write(Path(folder) / "model.mps")
            if not self.model.import_from_mps_file(str(path)):
                raise KindUnavailable(f"cpsat: OR-Tools could not read {problem.name}'s model")
        position = {v.name: v for v in self.model.get_variables()}
        if len(position) != problem.n_vars or any(n not in position for n in problem.var_names):
            raise KindUnavailable(f"cpsat: OR-Tools renamed the variables of {problem.name}")
        self.variables = [position[name] for name in problem.var_names]
        self._solver: Any = None
        self._stopped = False

    def solve(self, *, time_limit: float, seed: int, start=None, on_found=None) -> SolveOutcome:
        """Solve from the hint ``start`` for ``time_limit`` seconds; its solution, if any, to
        ``on_found`` (a :class:`FoundSolution`) at the end."""
        solver = self._builder.Solver("sat")
        solver.set_time_limit_in_seconds(max(0.01, float(time_limit)))
        # CP-SAT's Ctrl-C catching would leave the default action (end the process) behind
        solver.set_solver_specific_parameters(
            f"num_workers:1,random_seed:{int(seed)},catch_sigint_signal:false"
        )
        self.model.clear_hints()
        if start is not None:
            for variable, value in zip(self.variables, start.tolist(), strict=True):
                self.model.add_hint(variable, value)
        self._solver, self._stopped = solver, False
        try:
            status = solver.solve(self.model)
        finally:
            self._solver = None
        statuses = self._builder.SolveStatus
        if status in (statuses.OPTIMAL, statuses.FEASIBLE):
            x = solver.values(self.variables).to_numpy(dtype=float)
            if on_found is not None:
                found = FoundSolution(time.perf_counter(), self.problem.objective_value(x), x)
                on_found(found)
        if self._stopped:
            return SolveOutcome(SolveStatus.INTERRUPTED)
        if status == statuses.OPTIMAL:
            return SolveOutcome(SolveStatus.OPTIMAL)
        if status in (statuses.FEASIBLE, statuses.NOT_SOLVED, statuses.UNKNOWN_STATUS):
            return SolveOutcome(SolveStatus.TIME_LIMIT)
        return SolveOutcome(SolveStatus.ERROR)

    def stop(self) -> None:
        """End the solve in progress (from another thread)."""
        self._stopped = True
        solver = self._solver
        if solver is not None:
            solver.stop_search()
