"""Attempts on the whole problem, when the neighborhoods at the size cap stop finding anything.

At the size cap, a sub-solve that searched its neighborhood completely (proven optimal or
infeasible under the incumbent's cutoff) without improving suggests that the cap no longer
bounds a hard problem: the loop then tries the whole problem, whose complete solve proves the
incumbent optimal, so that a small problem ends optimal at once instead of running to its time
limit.

The suggestion is often wrong: half of a vertex cover's nodes, most of them forced by fixed
neighbors, solve in milliseconds, where the whole problem takes minutes. An attempt that ran a
sub-solve's whole time limit at the first such neighborhood cost every run of a large vertex
cover, set cover, auction or independent set its first seconds, when the gap is largest. So the
attempts grow: the first takes a twentieth of a sub-solve's time limit, each next one twice
the last, up to that limit, which is the last attempt; an attempt after the first starts only
if all of them together, it included, stay within a tenth of the run's time so far. With the
default 5 s, a problem that the whole solve proves in a quarter of a second ends at its first
stall, as before; one that needs a second, at the third attempt, after about 18 s; a large one
spends a quarter of a second at its first stall and then at most a tenth of its run, mostly
late, where the gap is small. An attempt that SCIP did not stop in time (it was abandoned, and
goes on beside the search for a while) is the last: the whole problem does not fit a sub-solve.

With a node limit per sub-solve (runs that repeat exactly), when an attempt may start must not
depend on the clock: there is one attempt, at the first stall, under the sub-solves' own
limits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: The first attempt's time limit, as a fraction of a sub-solve's.
FIRST_FRACTION = 0.05
#: The share of the run's seconds that the attempts together may take.
SHARE = 0.1


@dataclass
class WholeProblemAttempts:
    """When the loop may try the whole problem, and for how long.

    Parameters
    ----------
    time_limit : float
        A sub-solve's time limit: the longest attempt, and the last.
    timed : bool
        Whether the attempts grow with the run's time; ``False`` (runs with a node limit):
        one attempt under ``time_limit``.
    """

    time_limit: float
    timed: bool = True
    attempts: int = field(default=0, init=False)
    spent: float = field(default=0.0, init=False)
    done: bool = field(default=False, init=False)

    def limit(self, elapsed: float) -> float | None:
        """The time limit of an attempt starting ``elapsed`` seconds into the run, or ``None``
        if none may start then."""
        if self.done:
            return None
        if not self.timed:
            return self.time_limit
        limit = min(self.time_limit, FIRST_FRACTION * self.time_limit * 2**self.attempts)
        if self.attempts and self.spent + limit > SHARE * elapsed:
            return None
        return limit

    def attempted(self, seconds: float, limit: float, abandoned: bool = False) -> None:
        """Count an attempt that took ``seconds`` under ``limit``; ``abandoned``: the sub-solver
        did not stop at the limit and was given up."""
        self.attempts += 1
        self.spent += seconds
        self.done = not self.timed or limit >= self.time_limit or abandoned
