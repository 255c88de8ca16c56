"""Settings of the parallel portfolio (:mod:`lns.core.parallel.portfolio`): how many workers,
of which kinds, and whether a seeded run repeats."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lns.core.errors import InvalidArgumentError
from lns.core.parallel.plan import check_portfolio
from lns.core.parallel.prior import SHIPPED

#: :attr:`PortfolioParams.workers`: one worker per core this process may use.
ALL_CORES = "all"


@dataclass(frozen=True)
class PortfolioParams:
    """The workers of a run (one group of :class:`lns.params.SolveParams`).

    Attributes
    ----------
    workers : int or "all"
        Worker processes (of every kind: LNS workers unless ``mix`` names other kinds); ``1``
        runs the sequential loop in the calling process; ``"all"``: one per core this process
        may use (:func:`lns.api.usable_cores`), the default of ``lns-solve``. The API's default
        stays 1, so that a seeded run with an iteration limit
        and a node limit per sub-solve repeats exactly, every callback sees every iteration and
        any sub-solver object works. With 2 or more, each LNS worker runs the loop with a copy
        of the selector and its own seed, the stop rule's iteration limit limits each worker,
        and the sub-solver must be given by name and the stop rule be picklable. The workers
        import the calling script only when the selector or the stop rule is defined in it
        (:mod:`lns.core.parallel.spawn_main`); only then does the script need an
        ``if __name__ == "__main__":`` guard.
    deterministic : bool
        With 2 workers or more: exchange solutions only every
        :data:`lns.core.parallel.portfolio.SYNC_EVERY` iterations, so that a seeded run with an
        iteration limit and a node limit per sub-solve (no time limit reached) repeats. LNS
        workers only.
    mix : {None, "lns", "auto", "auto_rate", "auto_stay"} or dict
        The kinds of search of the workers (:mod:`lns.core.parallel.kinds`): ``None`` or
        ``"lns"``: LNS workers only; ``"auto"``: the ``workers`` cores go, slice by slice, to LNS
        workers, CP-SAT, Local-MIP and SCIP's tree search by the improvements each brings
        (:mod:`lns.core.parallel.allocation`; ``"auto_rate"`` and ``"auto_stay"`` name the
        rule; ``lns-solve``'s default); a mix ``{"lns": 5, "scip": 1, "cpsat": 1,
        "local_search": 1}``: that many workers of each kind (``workers``: their total, or left at
        1). A kind that cannot run (a missing package) is left out with a line of log. A
        ``scip`` or ``cpsat`` worker's proof of optimality ends the run
        (:mod:`lns.core.parallel.plan`).
    complete_worker : bool
        With 2 workers or more, not ``deterministic`` and no ``mix``: one of the workers is
        SCIP's tree search on the whole problem (the mix ``{"lns": workers - 1, "scip": 1}``).
    prior : str, optional
        With an ``auto`` mix: the learned prior of the kinds (:mod:`lns.core.parallel.prior`),
        ``"shipped"`` (the one in the package, fitted on the public sets' tuning parts) or the
        path of a file written by ``lns-prior``; the kinds that did well on similar problems
        hold the cores first. ``None``: no preference (the kinds in turn).

    Raises
    ------
    lns.core.errors.InvalidArgumentError
        A value out of its range or of the wrong type, or settings that do not go together
        (checked on creation; ``"all"`` is resolved when the run starts).
    """

    workers: Any = 1  # int | "all", which OmegaConf's structured configs refuse
    deterministic: bool = False
    mix: Any = None  # None | str | dict
    complete_worker: bool = False
    prior: str | None = None

    def __post_init__(self) -> None:
        workers = self.workers
        if workers != ALL_CORES and (
            isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
        ):
            raise InvalidArgumentError(
                f"workers={workers!r} is invalid: expected an integer >= 1 or '{ALL_CORES}'"
            )
        for name in ("deterministic", "complete_worker"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidArgumentError(
                    f"{name}={getattr(self, name)!r} is invalid: expected True or False"
                )
        if isinstance(self.mix, Mapping):
            object.__setattr__(self, "mix", dict(self.mix))
        elif self.mix is not None and not isinstance(self.mix, str):
            raise InvalidArgumentError(
                f"mix={self.mix!r} is invalid: expected None, a name or a dict kind -> workers"
            )
        check_portfolio(self.mix, 1 if workers == ALL_CORES else workers, self.deterministic)
        if self.complete_worker and (self.deterministic or self.mixed or workers == 1):
            raise InvalidArgumentError(
                f"complete_worker=True needs workers >= 2, deterministic=False and no mix "
                f"(got workers={workers!r}, deterministic={self.deterministic}, "
                f"mix={self.mix!r}; lns-solve: portfolio.mix=lns)"
            )
        self._check_prior()

    def _check_prior(self) -> None:
        if self.prior is None:
            return
        if not isinstance(self.prior, str) or not self.prior:
            raise InvalidArgumentError(
                f"prior={self.prior!r} is invalid: expected None, '{SHIPPED}' or a file's path"
            )
        if not (isinstance(self.mix, str) and self.mix.startswith("auto")):
            raise InvalidArgumentError(
                f"prior={self.prior!r} needs mix='auto' (or 'auto_rate', 'auto_stay'): it orders "
                f"the kinds that share the cores (got mix={self.mix!r})"
            )
        if self.prior != SHIPPED and not Path(self.prior).is_file():
            raise InvalidArgumentError(f"prior={self.prior!r}: no such file")

    @property
    def mixed(self) -> bool:
        """Whether :attr:`mix` names other workers than LNS ones (it is not ``None`` or
        ``"lns"``)."""
        return self.mix is not None and self.mix != "lns"
