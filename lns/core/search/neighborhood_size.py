"""Adaptive neighborhood size.

CL-LNS (Huang et al. 2023) starts at a fraction of the integer variables and
grows the size by a factor (1.02) after every iteration that did not improve,
up to a cap (50%); it never shrinks. Sonnerat et al. (2021) also shrink after a
sub-solve that hit its time limit, so that the sub-problems stay solvable.
Both are one class here: ``shrink=None`` gives the CL-LNS rule. When the loop tries the
whole problem beyond the cap: :mod:`lns.core.search.whole_problem`.
"""

from __future__ import annotations

import math

from lns.core.errors import InvalidArgumentError


class AdaptiveSize:
    """Neighborhood size over a run.

    Parameters
    ----------
    n_integer : int
        Number of integer variables of the problem.
    initial_fraction : float
        Start size as a fraction of ``n_integer`` (in (0, 1]).
    growth : float
        Factor applied after an iteration without improvement (>= 1), by at least one variable;
        1 keeps the size fixed.
    max_fraction : float
        Cap as a fraction of ``n_integer`` (in (0, 1]).
    shrink : float or None
        Factor applied after a sub-solve that timed out (in (0, 1]); ``None`` never shrinks.
    min_size : int
        Floor of the size.
    """

    def __init__(
        self,
        n_integer: int,
        initial_fraction: float = 0.2,
        growth: float = 1.02,
        max_fraction: float = 0.5,
        shrink: float | None = None,
        min_size: int = 1,
    ):
        for name, value in (("initial_fraction", initial_fraction), ("max_fraction", max_fraction)):
            if not 0 < value <= 1:
                raise InvalidArgumentError(f"{name} must be in (0, 1], got {value}")
        if growth < 1:
            raise InvalidArgumentError(f"growth must be >= 1, got {growth}")
        if shrink is not None and not 0 < shrink <= 1:
            raise InvalidArgumentError(f"shrink must be in (0, 1] or None, got {shrink}")
        self.cap = max(1, min(n_integer, math.ceil(max_fraction * n_integer)))
        self.floor = max(1, min(min_size, self.cap))
        self.growth = growth
        self.shrink = shrink
        self._size = float(min(self.cap, max(self.floor, round(initial_fraction * n_integer))))
        self.at_cap = False

    @property
    def size(self) -> int:
        return int(round(self._size))

    def update(self, improved: bool, timed_out: bool) -> None:
        """Adapt after an iteration: shrink on a time-out (if enabled), else grow unless
        improved."""
        if timed_out and self.shrink is not None:
            self._size = max(self.floor, min(self.cap, self._size * self.shrink))
            self.at_cap = False
        elif not improved:
            self.at_cap = self._size >= self.cap
            grown = max(self._size * self.growth, self._size + 1) if self.growth > 1 else self._size
            self._size = min(self.cap, grown)
        else:
            self._size, self.at_cap = min(self._size, self.cap), False
