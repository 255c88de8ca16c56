"""Reading and writing solutions in SCIP's ``.sol`` format.

The format is one ``name value`` pair a line after an optional
``objective value:`` header; variables that are not listed are zero.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from lns.core.errors import SolutionFileError
from lns.core.problem import Problem


def write_sol(path: str | Path, problem: Problem, x: np.ndarray, objective: float) -> Path:
    """Write ``x`` (all variables of ``problem``) in SCIP's ``.sol`` format; zeros are omitted."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["solution status: feasible", f"objective value: {objective:.15g}"]
    lines += [f"{name} {value:.15g}" for name, value in zip(problem.var_names, x) if value != 0]
    path.write_text("\n".join(lines) + "\n")
    return path


def read_sol(path: str | Path, problem: Problem) -> np.ndarray:
    """Read a ``.sol`` file into a full value vector of ``problem`` (missing variables are 0).

    Raises
    ------
    SolutionFileError
        The file is missing, a line is malformed, or it names a variable the problem lacks.
    """
    path = Path(path)
    if not path.is_file():
        raise SolutionFileError(f"{path}: no such file")
    index = {name: j for j, name in enumerate(problem.var_names)}
    x = np.zeros(problem.n_vars)
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#") or line.startswith(("solution status", "objective value", "=obj=")):
            continue
        parts = line.split()
        if len(parts) < 2:
            raise SolutionFileError(f"{path}:{number}: expected 'name value', got {line!r}")
        name, value = parts[0], parts[1]
        if name not in index:
            raise SolutionFileError(f"{path}:{number}: variable '{name}' is not in problem {problem.name}")
        try:
            x[index[name]] = float(value)
        except ValueError:
            raise SolutionFileError(f"{path}:{number}: value {value!r} of '{name}' is not a number") from None
    return x
