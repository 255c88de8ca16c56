"""Vectorised sampling of distinct values, shared by the generators."""

from __future__ import annotations

import numpy as np

from lns.core.errors import InvalidArgumentError


def distinct_subsets(
    sizes: np.ndarray, population: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """For each group ``g``, a uniform random subset of ``sizes[g]`` items of ``range(population)``.

    Each group's values are drawn with replacement, and as many as were repeated are drawn again
    until none is; the process is symmetric in the labels of the population, so the resulting
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
        raise InvalidArgumentError(f"subset sizes must lie in [0, {population}]")
    complement = sizes > population // 2
    drawn = np.where(complement, population - sizes, sizes)
    if sizes.size * population >= 2**62:
        raise InvalidArgumentError(
            f"{sizes.size} groups of a population of {population} overflow the int64 keys"
        )
    keys = np.zeros(0, dtype=np.int64)
    missing = drawn
    while missing.any():
        groups = np.repeat(np.arange(sizes.size, dtype=np.int64), missing)
        keys = _sorted_unique(
            np.concatenate(
                [
                    keys,
                    groups * population
                    + rng.integers(population, size=groups.size, dtype=np.int64),
                ]
            )
        )
        missing = drawn - np.bincount(keys // population, minlength=sizes.size)
    groups, values = np.divmod(keys, population)
    if not complement.any():
        return groups, values
    dense = np.flatnonzero(complement)
    keep = np.ones((dense.size, population), dtype=bool)
    slot = np.full(sizes.size, -1, dtype=np.int64)
    slot[dense] = np.arange(dense.size)
    left_out = complement[groups]
    keep[slot[groups[left_out]], values[left_out]] = False
    dense_slot, dense_values = np.nonzero(keep)
    keys = np.sort(np.concatenate([keys[~left_out], dense[dense_slot] * population + dense_values]))
    return np.divmod(keys, population)


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique`` by sorting: numpy 2.4's is some fifty times slower on large int arrays."""
    values = np.sort(values)
    return values[np.concatenate([[True], values[1:] != values[:-1]])] if values.size else values
