"""Anytime metrics of the primal side of a solver run.

References
----------
T. Berthold. "Measuring the impact of primal heuristics." Operations Research
Letters 41(6), 2013: the primal gap and the primal integral.
"""
from __future__ import annotations


def primal_gap(value: float | None, reference: float | None) -> float:
    """Primal gap of ``value`` to the reference (best known) objective ``reference`` (Berthold 2013).

    0 if both are 0; 1 if there is no solution (``value is None``) or the signs differ;
    else ``|value - reference| / max(|value|, |reference|)``, which lies in [0, 1].
    """
    if value is None or reference is None:
        return 1.0
    if value == reference:
        return 0.0
    if value * reference < 0:
        return 1.0
    return abs(value - reference) / max(abs(value), abs(reference))
