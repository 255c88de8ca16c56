"""DINS neighborhoods (Ghosh 2007): far from the LP solution, or changed in recent incumbents."""

from __future__ import annotations

import numpy as np

from heuristics.rins import RINS
from lns.core.search.selection import SearchState

#: An integer variable whose incumbent value is this far from its LP value or more is freed.
DISTANCE = 0.5


class DINS(RINS):
    """Distance Induced Neighborhood Search: free what the LP and recent incumbents call in doubt.

    Ghosh (2007) fixes an integer variable when its incumbent value ``x*_j`` is within 0.5 of the
    LP relaxation's value ``x̄_j`` and, for binaries, has not changed among the recent
    incumbents; SCIP's ``heur_dins`` does the same at a node. Here the root LP stands for the
    node LP (solved once, as for :class:`~heuristics.rins.RINS`), and the variables that are
    *not* fixed form the neighborhood: ``|x*_j - x̄_j| >= 0.5``, or ``x_j`` differs between the
    incumbent and one of the earlier incumbents in ``state.history``. The set is trimmed or
    completed uniformly at random to ``size``. Unlike RINS, a variable whose LP value is
    merely fractional near its incumbent value stays fixed. (DINS also narrows the domains
    of general integers to ``x*_j ± |x*_j - x̄_j|``; a neighborhood here only frees or
    fixes, so that part is left out.)

    References
    ----------
    S. Ghosh. "DINS, a MIP improvement heuristic." IPCO 2007, LNCS 4513, 310-323.
    """

    name = "dins"

    def differing(self, state: SearchState, lp_x: np.ndarray) -> np.ndarray:
        candidates = state.problem.integer_indices
        incumbent = state.incumbent[candidates]
        doubtful = np.abs(incumbent - lp_x[candidates]) >= DISTANCE
        for earlier in state.history:
            doubtful |= earlier[candidates] != incumbent
        return doubtful
