"""Stop rules: small objects asked once per iteration whether the run should end.

A rule is called with a :class:`StopState` and returns ``True`` to stop. Rules combine
with ``|`` into one rule that stops as soon as any of them does and reports which one
fired (:meth:`Stop.fired`), as the stopping criteria of the ``alns`` package
(``alns/stop/``) and PyVRP (``pyvrp/stop/``)::

    stop = NoImprovement(seconds=20) | Target(1500) | MaxIterations(400)

The budget of :func:`lns.solve` is such a rule: ``solve(..., stop=60)`` is
``stop=budget(60)``, a :class:`MaxRuntime` that keeps :data:`DEADLINE_MARGIN` in hand.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from dataclasses import dataclass

from lns.core.errors import InvalidArgumentError
from lns.core.problem.validation import check_integer, check_real

#: Seconds a time budget (:func:`budget`) keeps in hand before its deadline, so that the run ends
#: within it.
DEADLINE_MARGIN = 0.05


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
    """Stop once ``seconds`` of wall-clock time, less ``margin``, have passed since the run
    started.

    ``margin`` is time kept in hand for the run's last steps (stopping the solver, checking and
    writing the best solution), so that a run with a budget of ``seconds`` ends within it.
    """

    reason = StopReason.TIME_LIMIT

    def __init__(self, seconds: float, margin: float = 0.0):
        if not seconds >= 0 or not margin >= 0:
            raise InvalidArgumentError(
                f"MaxRuntime: seconds and margin must be >= 0, got {seconds}, {margin}"
            )
        self.seconds, self.margin = float(seconds), float(margin)
        self.deadline = max(0.0, self.seconds - self.margin)

    def __call__(self, state: StopState) -> bool:
        return state.elapsed >= self.deadline

    def remaining(self, state: StopState) -> float:
        return self.deadline - state.elapsed

    def __repr__(self) -> str:
        margin = f", margin={self.margin:g}" if self.margin else ""
        return f"MaxRuntime({self.seconds:g}{margin})"


TimeLimit = MaxRuntime


class MaxIterations(Stop):
    """Stop after ``iterations`` iterations."""

    reason = StopReason.ITERATION_LIMIT

    def __init__(self, iterations: int):
        if iterations < 0:
            raise InvalidArgumentError(f"MaxIterations: iterations must be >= 0, got {iterations}")
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
            raise InvalidArgumentError("NoImprovement: give seconds, iterations or both")
        if (seconds is not None and seconds < 0) or (iterations is not None and iterations < 0):
            raise InvalidArgumentError(
                f"NoImprovement: limits must be >= 0, got {seconds=}, {iterations=}"
            )
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


def budget(time_limit: float | None = None, iteration_limit: int | None = None) -> AnyOf:
    """The rule of a run's budget: ``time_limit`` seconds of wall-clock time, reading the problem
    included (:class:`MaxRuntime` with :data:`DEADLINE_MARGIN` in hand; ``None`` or ``inf``: no
    time limit), and ``iteration_limit`` iterations (``None``: no limit), whichever comes first.

    ``solve(..., stop=60)`` is ``stop=budget(60)``; the command line's ``time_limit`` and
    ``iteration_limit`` are ``budget(time_limit, iteration_limit)``.

    Raises
    ------
    lns.core.errors.InvalidArgumentError
        ``time_limit`` not positive (zero included: a run that may not spend any time could only
        return no solution), or ``iteration_limit`` not an integer >= 0.
    """
    check_real(
        "time_limit",
        time_limit,
        "expected seconds > 0, or None (or inf) for no limit",
        low=0,
        low_open=True,
        none_ok=True,
        infinite_ok=True,
    )
    check_integer(
        "iteration_limit",
        iteration_limit,
        "expected an integer >= 0, or None for no limit",
        low=0,
        none_ok=True,
    )
    rules: list[Stop] = []
    if iteration_limit is not None:
        rules.append(MaxIterations(iteration_limit))
    if time_limit is not None and not math.isinf(time_limit):
        rules.append(MaxRuntime(time_limit, margin=DEADLINE_MARGIN))
    return AnyOf(*rules)


def time_limit_of(rule: Stop) -> float | None:
    """The seconds of the tightest :class:`MaxRuntime` in ``rule`` (``None``: no time limit),
    the time limit a run's result reports."""
    if isinstance(rule, MaxRuntime):
        return rule.seconds
    if isinstance(rule, AnyOf):
        limits = [limit for r in rule.rules if (limit := time_limit_of(r)) is not None]
        return min(limits, default=None)
    return None
