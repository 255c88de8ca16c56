"""Reading and writing solutions in SCIP's ``.sol`` format (and writing the MIPLIB checker's).

The format is one ``name value`` pair a line after an optional
``objective value:`` header; variables that are not listed are zero.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from lns.core.errors import SolutionFileError
from lns.core.problem import Problem


def write_sol(path: str | Path, problem: Problem, x: np.ndarray, objective: float,
              format: str = "scip") -> Path:
    """Write ``x`` (all variables of ``problem``) as a solution file; zeros are omitted.

    ``format="scip"``: SCIP's ``.sol`` format; ``"miplib"``: the MIPLIB solution checker's
    (see :func:`solution_lines`).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(solution_lines(problem, x, objective, format)) + "\n")
    return path


def solution_lines(problem: Problem, x: np.ndarray, objective: float,
                   format: str = "scip") -> list[str]:
    """The lines of a solution file: a header, then ``name value`` for every nonzero.

    SCIP's header is ``solution status: feasible`` and ``objective value: v``; the MIPLIB
    solution checker's (``solchecker``) is one ``=obj= v`` line, the objective as the solver
    computed it, which the checker compares with its own (absolute tolerance 1e-4 by default).
    Zeros are left out in both: the MIPLIB 2017 test scripts make the checker's file from SCIP's
    (which leaves them out) by rewriting the header alone (``scripts/run_scip.sh``).
    """
    headers = {"scip": ["solution status: feasible", f"objective value: {objective:.15g}"],
               "miplib": [f"=obj= {objective:.15g}"]}
    if format not in headers:
        raise ValueError(f"format: '{format}' is not a solution format; choose one of "
                         f"{list(headers)}")
    nonzeros = [f"{name} {value:.15g}" for name, value in zip(problem.var_names, x) if value != 0]
    return headers[format] + nonzeros


def read_sol(path: str | Path, problem: Problem, missing: float = 0.0) -> np.ndarray:
    """Read a ``.sol`` file into a full value vector of ``problem`` (``missing`` where not listed).

    Raises
    ------
    SolutionFileError
        The file is missing, a line is malformed, or it names a variable the problem lacks.
    """
    path = Path(path)
    if not path.is_file():
        raise SolutionFileError(f"{path}: no such file")
    index = {name: j for j, name in enumerate(problem.var_names)}
    x = np.full(problem.n_vars, missing, dtype=float)
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
