"""The ``cpsat`` worker kind: CP-SAT on the whole problem (one search thread), the shared
incumbent as its solution hint and cutoff, restarted with the newest one
(:class:`WholeProblemWorker`); its solutions come back through a solution callback as they are
found, checked against the problem in the worker and again in the main process.

CP-SAT takes pure-integer problems with finite bounds and rows that scale to integers
(:func:`lns.core.cpsat_model.build_cpsat_model`); on any other problem the kind is unavailable
(:class:`KindUnavailable`, with CP-SAT's reason), and its core goes to the other kinds.
"""

from __future__ import annotations

from lns.core.errors import UnsupportedProblemError
from lns.core.parallel.kinds.protocol import KindUnavailable
from lns.core.parallel.kinds.whole_problem import WholeProblemWorker


class CpSatWorker(WholeProblemWorker):
    """CP-SAT on the whole problem, restarted from the newest shared incumbent."""

    kind = "cpsat"

    def prepare(self) -> None:
        try:
            from lns.core.cpsat_subsolver import CpSatSubSolver
        except ImportError as error:  # OR-Tools is an optional dependency
            raise KindUnavailable(f"cpsat: OR-Tools is not installed ({error})") from None
        try:
            self.solver = CpSatSubSolver(self.spec.problem)
        except UnsupportedProblemError as error:
            raise KindUnavailable(f"cpsat: {error}") from None
