"""Large Neighborhood Search for mixed-integer linear programs, with SCIP as the sub-solver.

>>> from lns import solve
>>> result = solve("instances/miplib/p0201.mps.gz", selector="random", time_limit=10, seed=0)  # doctest: +SKIP
"""
from lns.api import solve
from lns.errors import (InfeasibleProblemError, LNSError, ProblemReadError, SolutionFileError,
                        UnboundedProblemError, UnknownNameError, UnsupportedProblemError)
from lns.loop import LNSConfig
from lns.problem import Problem, read_problem
from lns.result import Callback, Improvement, IterationRecord, Result, Status

__all__ = ["solve", "Problem", "read_problem", "Result", "Status", "Improvement", "IterationRecord", "Callback",
           "LNSConfig", "LNSError", "ProblemReadError", "UnsupportedProblemError", "InfeasibleProblemError",
           "UnboundedProblemError", "SolutionFileError", "UnknownNameError"]
