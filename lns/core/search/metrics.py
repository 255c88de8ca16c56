"""Anytime metrics of the primal side of a solver run.

A run's *trajectory* is what :attr:`lns.core.search.result.Result.trajectory` holds: ``(seconds
since
the start, objective)`` pairs in time order, one per new incumbent; an objective of
``None`` marks "no solution yet". Between entries the incumbent does not change, so the
primal gap of a run is a step function of time: 1 before the first solution, then the
gap of the latest entry at or before ``t``. A trajectory that ends before the time limit
keeps its last value; entries after the time limit are ignored.

The scalar functions take one run; the array forms (:func:`gap_curves`,
:func:`primal_integrals`) take whole tables of runs, and :func:`survival_rate` and
:func:`best_performing_rate` aggregate those arrays over instances.

References
----------
T. Berthold. "Measuring the impact of primal heuristics." Operations Research
Letters 41(6), 2013: the primal gap and the primal integral.

T. Huang, A. M. Ferber, Y. Tian, B. Dilkina, B. Steiner. "Searching Large Neighborhoods
for Integer Linear Programs with Contrastive Learning." ICML 2023, and "Local Branching
Relaxation Heuristics for Integer Linear Programs." CPAIOR 2023: the comparisons of LNS
selectors by primal gap, primal integral, survival rate (share of instances whose gap is
at or below a threshold at time ``t``) and best-performing rate (share of instances on
which a method has the best gap at time ``t``, ties counting for every tied method).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lns.core.errors import InvalidArgumentError


def primal_gap(value: float | None, reference: float | None) -> float:
    """Primal gap of ``value`` to the best known objective ``reference`` (Berthold 2013).

    0 if both are 0; 1 if there is no solution (``value is None``) or the signs differ;
    else ``|value - reference| / max(|value|, |reference|)``, which lies in [0, 1].
    The formula is symmetric in the two values, so it holds for minimisation and
    maximisation alike (the reference is the best value in the problem's own sense).
    """
    if value is None or reference is None:
        return 1.0
    if value == reference:
        return 0.0
    if value * reference < 0:
        return 1.0
    return abs(value - reference) / max(abs(value), abs(reference))


def _steps(trajectory: Sequence, time_limit: float) -> tuple[np.ndarray, list]:
    """Entry times (clipped to ``[0, time_limit]``, later ones dropped) and values, validated."""
    times = np.array([float(t) for t, _ in trajectory], dtype=float)
    if np.any(np.diff(times) < 0):
        raise InvalidArgumentError(f"trajectory times must be non-decreasing, got {times.tolist()}")
    keep = times <= time_limit
    values = [v for (_, v), k in zip(trajectory, keep, strict=True) if k]
    return np.clip(times[keep], 0.0, None), values


def gap_at(trajectory: Sequence, reference: float | None, t: float) -> float:
    """Primal gap of a run at time ``t``: that of its latest entry at or before ``t`` (1 if none).

    Parameters
    ----------
    trajectory : sequence of (float, float or None)
        ``(seconds, objective)`` in time order; ``None`` means no solution.
    reference : float or None
        The best known objective p*.
    t : float
        Seconds since the start of the run.
    """
    times, values = _steps(trajectory, t)
    return primal_gap(values[-1], reference) if values else 1.0


def primal_integral(trajectory: Sequence, reference: float | None, time_limit: float) -> float:
    """Primal integral ``P(T) = ∫_0^T p(t) dt`` of the step function ``p`` of primal gaps.

    Berthold (2013).

    ``p(t)`` is 1 before the first solution and the gap of the latest entry at or before ``t``
    afterwards; a trajectory that ends before ``T`` continues its last value to ``T``, and
    entries after ``T`` are ignored. The result is in seconds and lies in ``[0, T]``: ``T``
    for a run that never finds a solution, 0 for one that has the optimum at time 0.
    Divide by ``T`` for the mean gap over the run.

    Parameters
    ----------
    trajectory : sequence of (float, float or None)
        ``(seconds, objective)`` in time order, as in
        :attr:`lns.core.search.result.Result.trajectory`.
    reference : float or None
        The best known objective p*.
    time_limit : float
        ``T``, the end of the integration interval.
    """
    if time_limit < 0:
        raise InvalidArgumentError(f"time_limit must be >= 0, got {time_limit}")
    times, values = _steps(trajectory, time_limit)
    starts = np.concatenate([[0.0], times])
    ends = np.concatenate([times, [time_limit]])
    gaps = np.array([1.0] + [primal_gap(v, reference) for v in values])
    return float(np.sum(gaps * (ends - starts)))


def gap_curves(trajectories: Sequence, references: Sequence, times: np.ndarray) -> np.ndarray:
    """Primal gaps of many runs on a time grid.

    Parameters
    ----------
    trajectories : sequence of trajectories, length ``runs``
    references : sequence of float or None, length ``runs``
        Each run's p*.
    times : numpy.ndarray, shape (n_times,)
        Seconds at which to evaluate the gaps.

    Returns
    -------
    numpy.ndarray, shape (runs, n_times)
        ``gaps[r, i]`` = :func:`gap_at` of run ``r`` at ``times[i]``.
    """
    if len(trajectories) != len(references):
        raise InvalidArgumentError(
            f"{len(trajectories)} trajectories but {len(references)} references"
        )
    times = np.asarray(times, dtype=float)
    gaps = np.ones((len(trajectories), len(times)))
    for r, (trajectory, reference) in enumerate(zip(trajectories, references, strict=True)):
        entry_times, values = _steps(trajectory, float("inf"))
        if not values:
            continue
        step_gaps = np.array([1.0] + [primal_gap(v, reference) for v in values])
        gaps[r] = step_gaps[np.searchsorted(entry_times, times, side="right")]
    return gaps


def primal_integrals(trajectories: Sequence, references: Sequence, time_limit: float) -> np.ndarray:
    """:func:`primal_integral` of many runs with a common ``T``; shape ``(runs,)``."""
    if len(trajectories) != len(references):
        raise InvalidArgumentError(
            f"{len(trajectories)} trajectories but {len(references)} references"
        )
    return np.array(
        [primal_integral(t, p, time_limit) for t, p in zip(trajectories, references, strict=True)],
        dtype=float,
    )


def survival_rate(gaps: np.ndarray, threshold: float) -> np.ndarray:
    """Share of instances whose primal gap is at or below ``threshold`` (the survival rate).

    Parameters
    ----------
    gaps : numpy.ndarray, shape (instances,) or (instances, n_times)
        One row per instance (average the seeds first, or pass one row per run to count runs).
    threshold : float
        E.g. 0.01 for a 1% gap.

    Returns
    -------
    float or numpy.ndarray, shape (n_times,)
        The survival rate, in [0, 1], at each time.
    """
    gaps = np.asarray(gaps, dtype=float)
    if gaps.shape[0] == 0:
        raise InvalidArgumentError("survival_rate needs at least one instance")
    return np.mean(gaps <= threshold, axis=0)


def best_performing_rate(gaps: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """Share of instances on which each method has the best (lowest) gap (the best-performing rate).

    A method counts as best on an instance when its gap is within ``tol`` of the lowest gap
    of any method there; ties count for every tied method, so the rates of all methods can
    sum to more than 1.

    Parameters
    ----------
    gaps : numpy.ndarray, shape (methods, instances) or (methods, instances, n_times)
        Gap of each method on each instance (seeds averaged), at one time or on a grid.
    tol : float
        Absolute tolerance for a tie.

    Returns
    -------
    numpy.ndarray, shape (methods,) or (methods, n_times)
    """
    gaps = np.asarray(gaps, dtype=float)
    if gaps.ndim < 2 or gaps.shape[0] == 0 or gaps.shape[1] == 0:
        raise InvalidArgumentError(
            "best_performing_rate needs gaps of shape (methods, instances[, times]), "
            f"got {gaps.shape}"
        )
    best = gaps.min(axis=0, keepdims=True)
    return np.mean(gaps <= best + tol, axis=1)


def best_found(values: Sequence, sense: str) -> float | None:
    """The best of ``values`` (``None`` skipped) in the sense ``"minimize"`` or ``"maximize"``.

    This is the fallback reference p* where no optimum or best known value is recorded:
    the best objective any run found.
    """
    if sense not in ("minimize", "maximize"):
        raise InvalidArgumentError(f"sense must be 'minimize' or 'maximize', got {sense!r}")
    found = [float(v) for v in values if v is not None and np.isfinite(v)]
    if not found:
        return None
    return min(found) if sense == "minimize" else max(found)


def shifted_geometric_mean(values: Sequence[float] | np.ndarray, shift: float = 1.0) -> float:
    """``exp(mean(log(v + shift))) - shift`` over the values that are not NaN (NaN if none).

    The mean the MIP literature reports run times and primal integrals with: unlike the
    arithmetic mean it is not dominated by a few hard instances, and the shift keeps values
    near 0 from dominating it instead (shift 1 for primal integrals in seconds).
    """
    array = np.asarray(values, dtype=float)
    array = array[~np.isnan(array)]
    if not array.size:
        return float("nan")
    return float(np.exp(np.log(array + shift).mean()) - shift)


def first_solution_time(trajectory: Sequence, time_limit: float) -> float:
    """Seconds to the first solution of a run, ``time_limit`` if it found none."""
    return float(trajectory[0][0]) if len(trajectory) else float(time_limit)


def first_improvement_time(trajectory: Sequence, time_limit: float) -> float:
    """Seconds to the first improvement of a run's first solution, ``time_limit`` if none came
    within the limit (for LNS: the first improving iteration, or the start's own progress)."""
    found = [float(t) for t, value in trajectory if value is not None]
    return min(found[1], float(time_limit)) if len(found) > 1 else float(time_limit)


def time_to_gap(
    trajectory: Sequence, reference: float | None, tol: float, time_limit: float
) -> float:
    """Seconds until a run's primal gap to ``reference`` is at most ``tol`` (``0.01``: within
    1% of the best known objective), ``time_limit`` if it never was within the limit."""
    times, values = _steps(trajectory, time_limit)
    for at, value in zip(times, values, strict=True):
        if primal_gap(value, reference) <= tol:
            return float(at)
    return float(time_limit)
