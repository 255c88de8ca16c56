"""Uniformly random neighborhoods."""

from __future__ import annotations

import numpy as np

from lns.core.search.selection import Neighborhood, SearchState, Selector


class RandomSelector(Selector):
    """Free ``size`` integer variables drawn uniformly without replacement.

    The baseline of every LNS paper (e.g. Song et al. 2020; Huang et al. 2023).
    """

    name = "random"

    def __call__(self, state: SearchState, size: int, rng: np.random.Generator) -> Neighborhood:
        candidates = state.problem.integer_indices
        size = min(size, len(candidates))
        return Neighborhood(np.sort(rng.choice(candidates, size=size, replace=False)))
