"""Bringing a chosen set of variables to the neighborhood size the loop asked for."""

from __future__ import annotations

import numpy as np


def fit_to_size(
    chosen: np.ndarray,
    size: int,
    rng: np.random.Generator,
    candidates: np.ndarray,
    complete: bool = True,
) -> np.ndarray:
    """Trim ``chosen`` to ``size`` at random, or complete it at random from ``candidates``.

    Parameters
    ----------
    chosen : numpy.ndarray of int
        Distinct variable indices a selector picked (a subset of ``candidates``).
    size : int
        The neighborhood size wanted.
    rng : numpy.random.Generator
        Draws the trimmed subset or the completion.
    candidates : numpy.ndarray of int
        Every index a neighborhood may hold (the integer variables).
    complete : bool
        Fill up a too-small ``chosen`` with uniformly drawn other candidates. ``False`` keeps it as
        it is, as in the CL-LNS authors' code, where Local Branching and LB-RELAX neighborhoods
        may be smaller than ``size`` and are only ever trimmed.

    Returns
    -------
    numpy.ndarray of int
        Sorted indices: ``min(size, len(candidates))`` of them when ``complete``, else
        ``min(size, len(chosen))``.
    """
    chosen = np.asarray(chosen, dtype=np.int64)
    size = min(int(size), len(candidates))
    if len(chosen) > size:
        chosen = rng.choice(chosen, size=size, replace=False)
    elif complete and len(chosen) < size:
        others = np.setdiff1d(candidates, chosen, assume_unique=True)
        chosen = np.concatenate(
            [chosen, rng.choice(others, size=size - len(chosen), replace=False)]
        )
    return np.sort(chosen).astype(np.int64)
