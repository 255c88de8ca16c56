"""Large Neighborhood Search for mixed-integer linear programs, with SCIP as the sub-solver.

>>> from lns import solve
>>> result = solve("air05.mps.gz", selector="random", time_limit=60, seed=0)  # doctest: +SKIP

The names below load on first use (PEP 562), so that importing one module of the
package (``lns.problem``, say, from a selector) does not import the whole API.
"""
from importlib import import_module

_EXPORTS = {
    "solve": "lns.api",
    "Problem": "lns.problem", "read_problem": "lns.problem",
    "Result": "lns.result", "Status": "lns.result", "Improvement": "lns.result", "IterationRecord": "lns.result",
    "Callback": "lns.result",
    "LNSConfig": "lns.loop",
    "LNSError": "lns.errors", "ProblemReadError": "lns.errors", "UnsupportedProblemError": "lns.errors",
    "InfeasibleProblemError": "lns.errors", "UnboundedProblemError": "lns.errors", "SolutionFileError": "lns.errors",
    "UnknownNameError": "lns.errors",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'lns' has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
