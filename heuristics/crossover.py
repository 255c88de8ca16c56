"""Crossover neighborhoods (Rothberg 2007): free what the recent incumbents disagree on."""

from __future__ import annotations

import numpy as np

from heuristics.sizing import fit_to_size
from lns.core.search.selection import Neighborhood, SearchState, Selector


class Crossover(Selector):
    """Free the integer variables on which the incumbent and the earlier incumbents differ.

    Rothberg's crossover (and SCIP's ``heur_crossover``, an arm of SCIP's adaptive LNS) fixes
    the integer variables that take the same value in several good solutions and searches
    over the rest: where good solutions agree, the value is probably right. Here the
    solutions are the incumbent and the earlier incumbents the loop keeps
    (``state.history``, ``LoopParams.history_length`` of them); the differing variables are
    trimmed or completed uniformly at random to ``size``. Before the first improvement there
    is no history, and the neighborhood is uniformly random (``info["fallback"] = True``).

    References
    ----------
    E. Rothberg. "An evolutionary algorithm for polishing mixed integer programming
    solutions." INFORMS Journal on Computing 19(4), 2007.
    """

    name = "crossover"

    def __call__(self, state: SearchState, size: int, rng: np.random.Generator) -> Neighborhood:
        candidates = state.problem.integer_indices
        incumbent = state.incumbent[candidates]
        differ = np.zeros(len(candidates), dtype=bool)
        for earlier in state.history:
            differ |= earlier[candidates] != incumbent
        info = {"differing": int(differ.sum()), "fallback": not state.history}
        return Neighborhood(fit_to_size(candidates[differ], size, rng, candidates), info=info)
