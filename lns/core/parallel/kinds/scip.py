"""The ``scip`` worker kind: SCIP's tree search on the whole problem, with its own settings
(``SubSolveParams.scip_params``, as plain SCIP), from the shared incumbent as start and cutoff; its
proof of optimality ends the run (:class:`WholeProblemWorker`).

One search for the whole run: a pause or the end of a segment keeps it, and the next solve
continues it with the newest shared incumbent handed to SCIP
(:class:`lns.core.solvers.scip.subsolver.ScipSubSolver`'s ``resume``), where a new search would
solve the root LP again (on a large auction, longer than the allocation's slice)."""

from __future__ import annotations

from lns.core.parallel.kinds.whole_problem import WholeProblemWorker
from lns.core.solvers.scip.subsolver import ScipSubSolver


class ScipWorker(WholeProblemWorker):
    """SCIP on the whole problem, one search continued from pause to pause."""

    kind = "scip"

    def prepare(self) -> None:
        self.solver = ScipSubSolver(self.spec.problem, self.spec.sub_solve.scip_params, resume=True)
