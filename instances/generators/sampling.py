"""Vectorised sampling of distinct values, shared by the generators."""
from __future__ import annotations

import numpy as np


def distinct_subsets(sizes: np.ndarray, population: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Draw, for every group ``g``, a uniform random subset of ``sizes[g]`` distinct values of ``range(population)``.

    Each group's values are drawn with replacement and the repeated ones are drawn again until
    none is left; the process is symmetric in the labels of the population, so the resulting
    set is uniform among the subsets of its size. A group asking for more than half of the
    population draws the values it leaves out instead, so every draw succeeds with probability
    at least one half and the cost stays proportional to the output.

    Parameters
    ----------
    sizes : numpy.ndarray of int, shape (g,)
        Subset size of each group, each at most ``population``.
    population : int
        Values are drawn from ``0, ..., population - 1``.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    groups, values : numpy.ndarray of int64, shape (sizes.sum(),)
        Group of each drawn value and the value, sorted by group then value.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    if sizes.size and (sizes.min() < 0 or sizes.max() > population):
        raise ValueError(f"subset sizes must lie in [0, {population}]")
    complement = sizes > population // 2
    drawn = np.where(complement, population - sizes, sizes)
    groups = np.repeat(np.arange(sizes.size, dtype=np.int64), drawn)
    values = rng.integers(population, size=groups.size, dtype=np.int64)
    while True:
        order = np.lexsort((values, groups))
        repeated = np.zeros(values.size, dtype=bool)
        same = (groups[order[1:]] == groups[order[:-1]]) & (values[order[1:]] == values[order[:-1]])
        repeated[order[1:][same]] = True
        if not repeated.any():
            break
        values[repeated] = rng.integers(population, size=int(repeated.sum()), dtype=np.int64)
    groups, values = groups[order], values[order]
    if not complement.any():
        return groups, values
    dense = np.flatnonzero(complement)
    keep = np.ones((dense.size, population), dtype=bool)
    slot = np.full(sizes.size, -1, dtype=np.int64)
    slot[dense] = np.arange(dense.size)
    left_out = complement[groups]
    keep[slot[groups[left_out]], values[left_out]] = False
    dense_slot, dense_values = np.nonzero(keep)
    groups = np.concatenate([groups[~left_out], dense[dense_slot]])
    values = np.concatenate([values[~left_out], dense_values])
    order = np.lexsort((values, groups))
    return groups[order], values[order]
