"""The ``lns`` worker kind: the LNS loop with the worker's own selector, sub-solver and seed."""

from __future__ import annotations

import logging

import numpy as np

from lns.core.parallel.kinds.protocol import KindWorker
from lns.core.search.loop import run_lns, size_rule_of
from lns.core.search.result import Callback
from lns.core.search.stop import StopReason
from lns.core.solvers.protocol import SubSolver

log = logging.getLogger("lns")


class LnsWorker(KindWorker, Callback):
    """:func:`lns.core.search.loop.run_lns` on the worker's own model; between two iterations the
    loop's ``exchange`` hook sends the worker's new incumbent and takes the shared one (in
    deterministic mode every ``sync_every`` iterations only, waiting for the others)."""

    kind = "lns"

    def prepare(self) -> None:
        make_sub_solver = self.spec.make_sub_solver
        assert make_sub_solver is not None, "an LNS worker's spec has a sub-solver"
        self.sub_solver = make_sub_solver(self.spec.problem, self.spec.sub_solve)

    def interrupt(self) -> None:
        if self.told is not None:  # a pause waits for the iteration's end
            self.sub_solver.stop()

    def search(self, rng: np.random.Generator) -> tuple[list, StopReason]:
        """The loop; a sub-solver that was abandoned (SCIP went on past its time limit and the
        grace, as on an oversubscribed machine) is replaced by a new one (:meth:`renew`): a
        portfolio that lost its workers would end before its time limit."""
        spec = self.spec
        assert spec.selector is not None, "an LNS worker's spec has a selector"
        return run_lns(
            spec.problem,
            spec.selector,
            self.sub_solver,
            self.incumbent,
            rng=rng,
            stop=spec.stop,
            callbacks=[self],
            size_rule=size_rule_of(spec.problem, spec.size),
            sub_solve=spec.sub_solve,
            loop=spec.loop,
            exchange=self.exchange,
            renew=self.renew,
        )

    def renew(self) -> SubSolver | None:
        """A new sub-solver in place of the abandoned one; none once the worker is told to stop
        or pause."""
        spec = self.spec
        assert spec.make_sub_solver is not None, "an LNS worker's spec has a sub-solver"
        if self.told is not None:
            return None
        log.warning("%s: worker %d goes on with a new sub-solver", spec.problem.name, spec.worker)
        self.sub_solver = spec.make_sub_solver(spec.problem, spec.sub_solve)
        return self.sub_solver

    def on_selection(self, state, size, neighborhood) -> None:
        self.last_arm = neighborhood.info.get("arm")

    def on_iteration(self, record) -> None:
        self.last_size = record.neighborhood_size

    def exchange(self, iterations: int) -> StopReason | None:
        """The loop's hook: share and take solutions; a reason to stop, or ``None``."""
        spec = self.spec
        if spec.sync_every is None:
            self.share(iterations - 1)
            return self.take()
        if iterations and iterations % spec.sync_every == 0:
            self.outbox.put(("sync", spec.worker, self.incumbent.x, self.incumbent.objective))
            return self.take(block=True)
        return None
