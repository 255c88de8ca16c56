"""Checks of generator parameters: a failure is a ``ValueError`` naming the parameter and value."""

from __future__ import annotations

import numpy as np

from lns.core.errors import InvalidArgumentError


def check_count(owner: str, name: str, value, minimum: int = 1) -> None:
    """``value`` is an integer of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InvalidArgumentError(
            f"{owner}: {name} must be an integer >= {minimum}, got {value!r}"
        )


def check_range(
    owner: str,
    name: str,
    value,
    low: float,
    high: float,
    low_open: bool = False,
    high_open: bool = False,
) -> None:
    """``value`` is a real number in the interval from ``low`` to ``high`` (open where said)."""
    valid = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if valid:
        value = float(value)
        valid = (value > low if low_open else value >= low) and (
            value < high if high_open else value <= high
        )
    if not valid:
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise InvalidArgumentError(f"{owner}: {name} must be a number in {interval}, got {value!r}")


def check_choice(owner: str, name: str, value, choices) -> None:
    """``value`` is one of ``choices``."""
    if value not in choices:
        raise InvalidArgumentError(f"{owner}: {name} must be one of {list(choices)}, got {value!r}")
