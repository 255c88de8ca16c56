"""Stop rules: small objects asked once per iteration whether the run should end.

A rule is called with a :class:`StopState` and returns ``True`` to stop. Rules combine
with ``|`` into one rule that stops as soon as any of them does and reports which one
fired (:meth:`Stop.fired`), as the stopping criteria of the ``alns`` package
(``alns/stop/``) and PyVRP (``pyvrp/stop/``)::

    stop = NoImprovement(seconds=20) | Target(1500) | MaxIterations(400)

The time and iteration limits of :func:`lns.solve` are such rules too, combined with the
one passed as ``solve(..., stop=...)``.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from dataclasses import dataclass


class StopReason(str, enum.Enum):
    """Why a run ended. The values are the strings stored in earlier records."""

    TIME_LIMIT = "time_limit"
    ITERATION_LIMIT = "iteration_limit"
    INTERRUPTED = "interrupted"
    OPTIMAL = "optimal"
    NO_INTEGER_VARIABLES = "no_integer_variables"
    FAILURES = "failures"
    NO_IMPROVEMENT = "no_improvement"
    TARGET = "target"
    CALLBACK = "callback"
    SUB_SOLVER_ABANDONED = "sub_solver_abandoned"
    #: The whole-problem solver ended on its own, without a proof for the original problem
    #: (CP-SAT's "optimal" for the discretised model of a MIP with continuous variables).
    SOLVER_FINISHED = "solver_finished"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class StopState:
    """What a stop rule sees between two iterations.

    Attributes
    ----------
    elapsed : float
        Seconds since the run started (reading the problem included).
    iterations : int
        Iterations done so far.
    objective : float or None
        The incumbent's objective, in the problem's own sense (``None``: no solution yet).
    sense : {"minimize", "maximize"}
        The problem's sense.
    since_improvement : float
        Seconds since the incumbent last improved (since the start when it never did).
    iterations_since_improvement : int
        Iterations since the one that last improved the incumbent.
    """

    elapsed: float
    iterations: int
    objective: float | None
    sense: str = "minimize"
    since_improvement: float = 0.0
    iterations_since_improvement: int = 0


class Stop:
    """Base class of stop rules: subclasses set :attr:`reason` and implement :meth:`__call__`."""

    reason: StopReason

    def __call__(self, state: StopState) -> bool:
        raise NotImplementedError

    def fired(self, state: StopState) -> StopReason | None:
        """The reason to stop now, or ``None`` to go on."""
        return self.reason if self(state) else None

    def remaining(self, state: StopState) -> float:
        """Seconds this rule leaves the run at most (infinite unless it limits time)."""
        return math.inf

    def __or__(self, other: Stop) -> AnyOf:
        return AnyOf(self, other)


class AnyOf(Stop):
    """Stops as soon as one of ``rules`` does; :meth:`fired` names the first that fires."""

    def __init__(self, *rules: Stop):
        self.rules: tuple = tuple(
            r for rule in rules for r in (rule.rules if isinstance(rule, AnyOf) else (rule,))
        )

    def __call__(self, state: StopState) -> bool:
        return self.fired(state) is not None

    def fired(self, state: StopState) -> StopReason | None:
        reasons = (rule.fired(state) for rule in self.rules)
        return next((reason for reason in reasons if reason is not None), None)

    def remaining(self, state: StopState) -> float:
        return min((rule.remaining(state) for rule in self.rules), default=math.inf)

    def __repr__(self) -> str:
        return " | ".join(map(repr, self.rules))


class MaxRuntime(Stop):
    """Stop once ``seconds`` of wall-clock time have passed since the run started."""

    reason = StopReason.TIME_LIMIT

    def __init__(self, seconds: float):
        if not seconds >= 0:
            raise ValueError(f"MaxRuntime: seconds must be >= 0, got {seconds}")
        self.seconds = float(seconds)

    def __call__(self, state: StopState) -> bool:
        return state.elapsed >= self.seconds

    def remaining(self, state: StopState) -> float:
        return self.seconds - state.elapsed

    def __repr__(self) -> str:
        return f"MaxRuntime({self.seconds:g})"


TimeLimit = MaxRuntime


class MaxIterations(Stop):
    """Stop after ``iterations`` iterations."""

    reason = StopReason.ITERATION_LIMIT

    def __init__(self, iterations: int):
        if iterations < 0:
            raise ValueError(f"MaxIterations: iterations must be >= 0, got {iterations}")
        self.iterations = int(iterations)

    def __call__(self, state: StopState) -> bool:
        return state.iterations >= self.iterations

    def __repr__(self) -> str:
        return f"MaxIterations({self.iterations})"


class NoImprovement(Stop):
    """Stop when the incumbent has not improved for ``seconds`` or for ``iterations``."""

    reason = StopReason.NO_IMPROVEMENT

    def __init__(self, seconds: float | None = None, iterations: int | None = None):
        if seconds is None and iterations is None:
            raise ValueError("NoImprovement: give seconds, iterations or both")
        if (seconds is not None and seconds < 0) or (iterations is not None and iterations < 0):
            raise ValueError(f"NoImprovement: limits must be >= 0, got {seconds=}, {iterations=}")
        self.seconds, self.iterations = seconds, iterations

    def __call__(self, state: StopState) -> bool:
        seconds, iterations = self.seconds, self.iterations
        return (seconds is not None and state.since_improvement >= seconds) or (
            iterations is not None and state.iterations_since_improvement >= iterations
        )

    def __repr__(self) -> str:
        return f"NoImprovement(seconds={self.seconds}, iterations={self.iterations})"


class Target(Stop):
    """Stop once the incumbent's objective is at least as good as ``objective``."""

    reason = StopReason.TARGET

    def __init__(self, objective: float):
        self.objective = float(objective)

    def __call__(self, state: StopState) -> bool:
        if state.objective is None:
            return False
        sign = 1.0 if state.sense == "minimize" else -1.0
        return sign * (state.objective - self.objective) <= 0

    def __repr__(self) -> str:
        return f"Target({self.objective:g})"


class Callback(Stop):
    """Stop when ``function(state)`` returns ``True`` (as CP-SAT's ``StopSearch``)."""

    reason = StopReason.CALLBACK

    def __init__(self, function: Callable[[StopState], bool]):
        self.function = function

    def __call__(self, state: StopState) -> bool:
        return bool(self.function(state))

    def __repr__(self) -> str:
        return f"Callback({self.function!r})"
