"""Typed errors raised by the library.

Every error names the file (or the parameter) and the cause in one line, so the
command line can print ``str(error)`` and exit, and API users can catch the
family they care about.
"""


class LNSError(Exception):
    """Base class of every error this project raises on purpose."""


class ProblemReadError(LNSError):
    """A problem file is missing, unreadable or malformed."""


class InvalidProblemDataError(ProblemReadError, ValueError):
    """A problem (read or built in code) holds a number SCIP must not see, e.g. NaN."""


class InvalidArgumentError(LNSError, ValueError):
    """An argument or setting of a run is out of its range or of the wrong type."""


class UnsupportedProblemError(LNSError):
    """The problem holds something the LNS loop cannot handle (e.g. a nonlinear constraint)."""


class InfeasibleProblemError(LNSError):
    """SCIP proved the problem infeasible."""


class UnboundedProblemError(LNSError):
    """SCIP proved the problem unbounded (or infeasible-or-unbounded)."""


class SolutionFileError(LNSError):
    """A ``.sol`` file given as the initial solution is unreadable or does not fit the problem."""


class UnknownNameError(LNSError, ValueError):
    """A name (selector, method, problem class, ...) that no registry knows."""

    def __init__(self, kind: str, name: str, choices):
        self.kind = kind
        self.name = name
        self.choices = sorted(choices)
        super().__init__(f"Could not resolve {kind} '{name}' among choices {self.choices}")


class BuildStoppedError(LNSError):
    """Building a solver's model was stopped: its time limit came, or a stop was requested."""


class InvalidArgumentTypeError(LNSError, TypeError):
    """An argument of a kind the call does not take (a selector that is neither a name, a
    selector nor a function; parameters of another class)."""


class SolverFailedError(LNSError, RuntimeError):
    """A solver's process failed (exited with an error) instead of solving."""
