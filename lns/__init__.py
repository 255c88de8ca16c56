"""Large Neighborhood Search for mixed-integer linear programs, with SCIP as the sub-solver.

>>> from lns import solve
>>> result = solve("air05.mps.gz", "random", 60, seed=0)  # doctest: +SKIP

The names below load on first use (PEP 562), so that importing one module of the
package (``lns.core.problem.mip``, say, from a selector) does not import the whole API.
"""

import re
from importlib import import_module, metadata
from pathlib import Path

_EXPORTS = {
    "solve": "lns.api",
    "solve_scip": "lns.api",
    "solve_cpsat": "lns.api",
    "solve_localmip": "lns.api",
    "SolveParams": "lns.params",
    "SizeParams": "lns.core.search.params",
    "StartParams": "lns.core.search.params",
    "SubSolveParams": "lns.core.search.params",
    "LoopParams": "lns.core.search.params",
    "PortfolioParams": "lns.core.parallel.params",
    "make_selector": "lns.registry",
    "Problem": "lns.core.problem.mip",
    "read_problem": "lns.core.problem.mip",
    "Result": "lns.core.search.result",
    "Status": "lns.core.search.result",
    "Improvement": "lns.core.search.result",
    "IterationRecord": "lns.core.search.result",
    "Callback": "lns.core.search.result",
    "LNSError": "lns.core.errors",
    "ProblemReadError": "lns.core.errors",
    "UnsupportedProblemError": "lns.core.errors",
    "InfeasibleProblemError": "lns.core.errors",
    "UnboundedProblemError": "lns.core.errors",
    "SolutionFileError": "lns.core.errors",
    "UnknownNameError": "lns.core.errors",
    "InvalidArgumentError": "lns.core.errors",
}
#: Modules reachable as attributes: ``lns.stop.NoImprovement(seconds=20) | lns.stop.Target(1500)``.
_MODULES = {"stop": "lns.core.search.stop"}

__all__ = [*_EXPORTS, *_MODULES, "__version__"]


def _version() -> str:
    """The installed distribution's version; from ``pyproject.toml`` when run from a source tree."""
    try:
        return metadata.version("learned-lns")
    except metadata.PackageNotFoundError:
        pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
        found = (
            re.search(r'^version\s*=\s*"([^"]+)"', pyproject.read_text(), re.MULTILINE)
            if pyproject.is_file()
            else None
        )
        return found.group(1) if found else "unknown"


__version__ = _version()


def __getattr__(name: str):
    if name in _MODULES:
        return import_module(_MODULES[name])
    if name not in _EXPORTS:
        raise AttributeError(f"module 'lns' has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
