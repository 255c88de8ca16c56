"""CL-LNS's draw of a neighborhood by the model's scores (the paper's sampling at the size cap).

Each variable is drawn independently with probability ``s_i ** m``, ``m`` chosen so that the
expected number of draws is the neighborhood's size: a score near one is drawn almost surely,
and the lower scores share what is left.
"""

from __future__ import annotations

import numpy as np


def sampling_probabilities(scores: np.ndarray, size: int, iterations: int = 60) -> np.ndarray:
    """``s_i ** m`` with ``m`` such that ``sum_i s_i ** m ≈ size``: CL-LNS's draw probabilities.

    ``f(m) = sum_i s_i^m`` decreases from ``n`` (``m -> 0``) to 0 (``m -> inf``) for scores in
    (0, 1), so ``m`` is found by bisection on ``log m``. All ones when ``size >= n``.

    Parameters
    ----------
    scores : numpy.ndarray, shape (n,)
        Scores in (0, 1) (sigmoid outputs).
    size : int
        Expected number of draws.
    iterations : int
        Bisection steps.
    """
    scores = np.clip(np.asarray(scores, dtype=float), 1e-12, 1.0 - 1e-12)
    if size >= len(scores):
        return np.ones(len(scores))
    log_scores = np.log(scores)
    low, high = -30.0, 30.0  # log m
    for _ in range(iterations):
        middle = 0.5 * (low + high)
        if np.exp(np.exp(middle) * log_scores).sum() > size:
            low = middle
        else:
            high = middle
    return np.exp(np.exp(0.5 * (low + high)) * log_scores)


def sample_by_scores(
    scores: np.ndarray,
    size: int,
    rng: np.random.Generator,
    iterations: int = 60,
    probabilities: np.ndarray | None = None,
) -> np.ndarray:
    """Indices drawn independently with probability ``s_i ** m``, ``sum_i s_i ** m ≈ size``.

    The sampling rule of CL-LNS at the size cap (:func:`sampling_probabilities`); the expected
    number of draws is ``size``. At least one index is returned.

    Parameters
    ----------
    scores : numpy.ndarray, shape (n,)
        Scores in (0, 1) (sigmoid outputs).
    size : int
        Expected number of indices.
    rng : numpy.random.Generator
    iterations : int
        Bisection steps.
    probabilities : numpy.ndarray, optional
        ``sampling_probabilities(scores, size, iterations)``, computed before (a run at its size
        cap draws from the same scores and size for many iterations).
    """
    if size >= len(scores):
        return np.arange(len(scores))
    if probabilities is None:
        probabilities = sampling_probabilities(scores, size, iterations)
    chosen = np.flatnonzero(rng.random(len(scores)) < probabilities)
    return chosen if len(chosen) else np.array([int(np.argmax(scores))])
