"""The time limit of each sub-solve, adapted to when the sub-solves find their solutions.

A sub-solve that reaches its time limit long after its last solution, or without one, spent the
rest of it proving nothing: the next limit is halved, down to a floor (a share of the configured
limit). One whose last solution came, or which ended complete, in the second half of its limit
was still finding or proving when the limit came: the next limit is doubled, up to the configured
one. The size rule (:mod:`lns.core.search.neighborhood_size`) shrinks the neighborhood after a
time-out as well; this rule keeps the time-outs that still come from costing a whole limit each.
"""

from __future__ import annotations

from lns.core.errors import InvalidArgumentError

#: The smallest limit, as a share of the configured one.
FLOOR_SHARE = 0.125
#: The share of its limit after which a sub-solve's last solution, or its end, counts as late.
LATE_SHARE = 0.5


class SubSolveLimit:
    """Seconds of the next sub-solve.

    Parameters
    ----------
    limit : float
        The configured limit (``SubSolveParams.time_limit``), the largest.
    adapt : bool
        Whether the limit adapts; without, it stays ``limit``.
    """

    def __init__(self, limit: float, adapt: bool = True):
        if not limit > 0:
            raise InvalidArgumentError(f"limit must be > 0 seconds, got {limit}")
        self.largest, self.adapt = float(limit), adapt
        self.seconds = self.largest

    def update(
        self, timed_out: bool, complete: bool, took: float, last_found: float | None
    ) -> None:
        """Adapt after a sub-solve that ``took`` seconds: whether it hit its time limit or
        ``complete``\\ d its neighborhood, and the seconds after its beginning at which its last
        accepted solution came (``None``: none)."""
        if not self.adapt:
            return
        late = LATE_SHARE * self.seconds
        if timed_out and (last_found is None or last_found < late):
            self.seconds = max(FLOOR_SHARE * self.largest, self.seconds / 2)
        elif (last_found is not None and last_found >= late) or (complete and took >= late):
            self.seconds = min(self.largest, self.seconds * 2)
