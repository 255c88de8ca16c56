"""Which workers a portfolio runs: :class:`lns.core.parallel.params.PortfolioParams`'s
``workers`` and ``mix`` as a plan.

- ``mix=None`` or ``"lns"``: ``workers`` LNS workers (the portfolio before worker kinds).
- ``mix="auto"``: ``workers`` cores shared by an allocation rule
  (:mod:`lns.core.parallel.allocation`) among ``workers`` LNS workers and one worker of each
  other kind that can run (:data:`AUTO_ORDER`); with one worker there is nothing to share,
  and the sequential loop runs.
- a mix, ``{"lns": 5, "scip": 1, "cpsat": 1, "local_search": 1}``: that many workers of each
  kind, all running; ``workers`` is then their total (or left at 1).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from lns.core.errors import InvalidArgumentError, UnknownNameError
from lns.core.parallel.allocation import DEFAULT_RULE, RULES
from lns.core.parallel.kinds import KINDS, missing
from lns.core.problem.mip import Problem

log = logging.getLogger("lns")

#: The other kinds of an ``auto`` portfolio, in the order they first take turns.
AUTO_ORDER = ("cpsat", "local_search", "scip")
NAMED = ("lns", "auto")


@dataclass(frozen=True)
class Plan:
    """A portfolio's workers: ``lns`` LNS workers, then one per entry of ``kinds``; with a
    ``rule``, ``cores`` of them run at once."""

    lns: int
    kinds: tuple = ()
    rule: str | None = None
    cores: int | None = None

    @property
    def workers(self) -> int:
        """Worker processes in all."""
        return self.lns + len(self.kinds)


def check_portfolio(mix, workers: int, deterministic: bool) -> int:
    """``mix`` checked against the other arguments; the number of cores it uses.

    Raises
    ------
    InvalidArgumentError
        An unknown name or kind, a mix whose total is not ``workers``, or another kind than LNS
        in deterministic mode (their searches are timed, so a run would not repeat).
    """
    if mix is None or mix == "lns":
        return workers
    if isinstance(mix, str):
        name = "auto" if mix.startswith("auto_") and mix[5:] in RULES else mix
        if name != "auto":
            raise UnknownNameError("mix", mix, (*NAMED, *(f"auto_{r}" for r in RULES)))
        mix_total, other = workers, True
    else:
        mix_total, other = _check_mix(dict(mix)), any(k != "lns" for k in mix)
    if workers not in (1, mix_total):
        raise InvalidArgumentError(f"workers={workers} but mix={mix!r} has {mix_total} workers")
    if deterministic and other and mix_total > 1:
        raise InvalidArgumentError(
            f"mix={mix!r}: deterministic=True takes LNS workers only (the other "
            f"kinds' searches are timed, so a run would not repeat): set mix='lns' "
            f"(lns-solve: portfolio.mix=lns)"
        )
    return mix_total


def _check_mix(mix: dict) -> int:
    for kind, count in mix.items():
        if kind not in KINDS:
            raise UnknownNameError("mix kind", kind, tuple(KINDS))
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InvalidArgumentError(f"mix[{kind!r}]={count!r}: expected an integer >= 0")
    if mix.get("lns", 0) < 1:
        raise InvalidArgumentError(
            f"mix={mix!r}: a portfolio needs at least one LNS worker (it finds the start)"
        )
    return sum(mix.values())


def make_plan(mix, workers: int, problem: Problem) -> Plan:
    """The plan of a checked ``mix`` on ``workers`` cores for ``problem``; a kind that
    cannot run here is left out with one line of log saying why."""
    if mix is None or mix == "lns":
        return Plan(workers)
    if isinstance(mix, str):
        rule = mix[5:] if mix.startswith("auto_") else DEFAULT_RULE
        auto = tuple(kind for kind in AUTO_ORDER if _runs(kind, problem))
        return Plan(workers, auto, rule, workers)
    kinds: list = []
    for kind, count in mix.items():
        if kind != "lns" and _runs(kind, problem):
            kinds += [kind] * count
    lns = workers - len(kinds)  # a kind left out gives its cores to LNS
    return Plan(lns, tuple(kinds))


def _runs(kind: str, problem: Problem) -> bool:
    """Whether ``kind`` can run here; the reason logged when not."""
    reason = missing(kind)
    if reason is not None:
        log.warning("%s: %s; the other kinds go on", problem.name, reason)
    return reason is None
