"""Reading and writing solutions in SCIP's ``.sol`` format (and writing the MIPLIB checker's).

The format is one ``name value`` pair a line after an optional
``objective value:`` header; variables that are not listed are zero.

A solution file is written whole or not at all: :func:`write_sol` writes a temporary
file in the target's folder and renames it over the target (:func:`os.replace`, atomic
on POSIX and Windows), so a reader, a crash or a second run writing the same file never
sees a mixed or truncated one.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

from lns.core.errors import InvalidArgumentError, SolutionFileError
from lns.core.problem.mip import Problem


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: Permissions of a written file, as ``open`` gives a new one (a temporary file starts at 0600).
_FILE_MODE = 0o666 & ~_umask()


def write_sol(
    path: str | Path, problem: Problem, x: np.ndarray, objective: float, format: str = "scip"
) -> Path:
    """Write ``x`` (all variables of ``problem``) as a solution file; zeros are omitted.

    ``format="scip"``: SCIP's ``.sol`` format; ``"miplib"``: the MIPLIB solution checker's
    (see :func:`solution_lines`). The file is replaced atomically (see the module docstring);
    missing folders are created.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = solution_lines(problem, x, objective, format)
    descriptor, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(descriptor, "w") as file:
            file.write("\n".join(lines) + "\n")
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, _FILE_MODE)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def check_writable(path: str | Path) -> Path:
    """Check, before a run, that a solution can be written to ``path``.

    Raises
    ------
    SolutionFileError
        ``path`` is a folder, its folder does not exist, or no file can be created there.
    """
    path = Path(path)
    if path.is_dir():
        raise SolutionFileError(f"{path}: is a folder, not a solution file")
    if not path.parent.is_dir():
        raise SolutionFileError(f"{path}: folder {path.parent} does not exist")
    try:
        with tempfile.TemporaryFile(dir=path.parent):
            pass
    except OSError as error:
        folder, reason = path.parent, error.strerror
        raise SolutionFileError(f"{path}: cannot write in folder {folder} ({reason})") from None
    return path


def solution_lines(
    problem: Problem, x: np.ndarray, objective: float, format: str = "scip"
) -> list[str]:
    """The lines of a solution file: a header, then ``name value`` for every nonzero.

    SCIP's header is ``solution status: feasible`` and ``objective value: v``; the MIPLIB
    solution checker's (``solchecker``) is one ``=obj= v`` line, the objective as the solver
    computed it, which the checker compares with its own (absolute tolerance 1e-4 by default).
    Zeros are left out in both: the MIPLIB 2017 test scripts make the checker's file from SCIP's
    (which leaves them out) by rewriting the header alone (``scripts/run_scip.sh``).
    """
    headers = {
        "scip": ["solution status: feasible", f"objective value: {objective:.15g}"],
        "miplib": [f"=obj= {objective:.15g}"],
    }
    if format not in headers:
        raise InvalidArgumentError(
            f"format: '{format}' is not a solution format; choose one of {list(headers)}"
        )
    nonzeros = [
        f"{name} {value:.15g}"
        for name, value in zip(problem.var_names, x, strict=True)
        if value != 0
    ]
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
        if (
            not line
            or line.startswith("#")
            or line.startswith(("solution status", "objective value", "=obj="))
        ):
            continue
        parts = line.split()
        if len(parts) < 2:
            raise SolutionFileError(f"{path}:{number}: expected 'name value', got {line!r}")
        name, value = parts[0], parts[1]
        if name not in index:
            raise SolutionFileError(
                f"{path}:{number}: variable '{name}' is not in problem {problem.name}"
            )
        try:
            x[index[name]] = float(value)
        except ValueError:
            raise SolutionFileError(
                f"{path}:{number}: value {value!r} of '{name}' is not a number"
            ) from None
    return x
