"""The ``scip`` worker kind: SCIP's tree search on the whole problem, with its own settings
(``SubSolveParams.scip_params``, as plain SCIP), from the shared incumbent as start and cutoff; its
proof of optimality ends the run (:class:`WholeProblemWorker`)."""

from __future__ import annotations

from lns.core.parallel.kinds.whole_problem import WholeProblemWorker
from lns.core.solvers.scip.subsolver import ScipSubSolver


class ScipWorker(WholeProblemWorker):
    """SCIP on the whole problem, restarted from the newest shared incumbent."""

    kind = "scip"

    def prepare(self) -> None:
        self.solver = ScipSubSolver(self.spec.problem, self.spec.sub_solve.scip_params)
