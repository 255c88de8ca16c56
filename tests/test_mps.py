"""The MPS reader gives the problem SCIP's reader gives, or leaves the file to SCIP; the MPS
writer's files read back, by it, SCIP and OR-Tools, as the problem written."""

from __future__ import annotations

import gzip
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from helpers import mixed_problem
from lns.core.errors import ProblemReadError
from lns.core.problem.mip import (
    Problem,
    problem_from_scip,
    read_problem,
    read_problem_and_model,
    read_scip_model,
)
from lns.core.problem.mps import read_mps
from lns.core.solvers.scip.subsolver import ScipSubSolver

INSTANCES = Path(__file__).parent.parent / "instances"
#: The bundled MPS files small enough to read twice in a test (the others: the same code).
SMALL_FILES = sorted(
    path
    for path in [*INSTANCES.glob("miplib/*.mps*"), *INSTANCES.glob("miplib2017/*.mps*")]
    if path.stat().st_size < 150_000
)


def by_scip(path: Path) -> Problem:
    return problem_from_scip(read_scip_model(path), "x", source=path)


def by_numpy(path: Path) -> Problem | None:
    fields = read_mps(path)
    return None if fields is None else Problem(name="x", **fields)


def assert_same_problem(ours: Problem, theirs: Problem) -> None:
    """The same problem, up to the order of the variables (SCIP's lists binaries first)."""
    assert sorted(ours.var_names) == sorted(theirs.var_names)
    position = {name: k for k, name in enumerate(ours.var_names)}
    order = np.array([position[name] for name in theirs.var_names], dtype=np.int64)
    assert list(ours.row_names) == list(theirs.row_names)
    for field in ("var_types", "lower", "upper", "objective"):
        assert np.array_equal(getattr(ours, field)[order], getattr(theirs, field)), field
    for field in ("row_lower", "row_upper"):
        assert np.array_equal(getattr(ours, field), getattr(theirs, field)), field
    assert (ours.sense, ours.objective_offset) == (theirs.sense, theirs.objective_offset)
    difference = ours.matrix[:, order] - theirs.matrix
    assert difference.count_nonzero() == 0
    assert ours.matrix.nnz == theirs.matrix.nnz


@pytest.mark.parametrize("path", SMALL_FILES, ids=lambda path: path.name)
def test_bundled_files_read_as_scip_reads_them(path):
    ours = by_numpy(path)
    assert ours is not None, f"{path.name}: the reader declined a plain MPS file"
    assert_same_problem(ours, by_scip(path))


def test_a_problem_read_without_scip_keeps_the_files_order_and_source():
    path = INSTANCES / "miplib" / "p0201.mps.gz"
    problem, model = read_problem_and_model(path)
    assert callable(model)  # SCIP reads the file only if a solver asks for its model
    assert problem.source == path and problem.name == "p0201"
    assert ScipSubSolver(problem, model=model).model.getNVars() == problem.n_vars
    with gzip.open(path, "rt") as file:
        text = file.read()
    columns = text.split("\nCOLUMNS")[1].split("\nRHS")[0].split("\n")
    first_names = [line.split()[0] for line in columns if line.strip() and "MARKER" not in line]
    assert list(problem.var_names) == list(dict.fromkeys(first_names))


MPS = """NAME          t
{sense}ROWS
 N  obj
 L  c1
 G  c2
 E  c3
COLUMNS
{columns}RHS
{rhs}{ranges}BOUNDS
{bounds}ENDATA
"""


def random_mps(rng: np.random.Generator) -> str:
    """A small MPS text with what the reader handles: integer markers, repeated and tiny
    coefficients, right-hand sides with and without a set name, ranges, comments, every bound
    type applied to continuous and integer columns, in any order."""
    rows = ["obj", "c1", "c2", "c3"]
    coefficients = ["1", "-2", "0.5", "0", "1e-10", "3e-9", "7", "-1.5e3"]
    sides = ["0", "1", "-3", "2.5", "1e-12", "4"]
    bound_values = ["-3", "-0.5", "0", "0.5", "1", "2", "1e30", "-1e30"]
    n = int(rng.integers(1, 7))
    integer = rng.random(n) < 0.5
    lines = []
    for j in range(n):
        if j == 0 or integer[j] != integer[j - 1]:
            if j > 0 and integer[j - 1]:
                lines.append("    M2  'MARKER'  'INTEND'")
            if integer[j]:
                lines.append("    M1  'MARKER'  'INTORG'")
        entries = [(row, str(rng.choice(coefficients))) for row in rows if rng.random() < 0.6]
        entries = entries or [("c1", "1")]
        if rng.random() < 0.2:  # the same row twice: SCIP sums the two
            entries.append((entries[-1][0] if entries[-1][0] != "obj" else "c2", "2"))
        while entries:
            take, entries = entries[:2], entries[2:]
            lines.append(f"    x{j}  " + "  ".join(f"{r}  {v}" for r, v in take))
        if rng.random() < 0.1:
            lines.append("* a comment between the lines")
    if integer[-1]:
        lines.append("    M2  'MARKER'  'INTEND'")
    named = rng.random() < 0.5
    rhs = [
        ("    RHS  " if named else "    ") + f"{row}  {rng.choice(sides)}"
        for row in rows
        if rng.random() < 0.6
    ]
    ranges = [f"    RNG  {row}  {rng.choice(['2', '-2', '0.5', '3'])}" for row in rows[1:]]
    ranges = [line for line in ranges if rng.random() < 0.3]
    bounds = []
    for _ in range(int(rng.integers(0, 2 * n + 1))):
        kind = str(rng.choice(["UP", "LO", "FX", "LI", "UI", "MI", "PL", "FR", "BV"]))
        value = f"  {rng.choice(bound_values)}" if kind in ("UP", "LO", "FX", "LI", "UI") else ""
        bounds.append(f" {kind}  BND  x{rng.integers(n)}{value}")
        if rng.random() < 0.1:
            bounds.append("")  # a blank line
    sense = str(rng.choice(["", "OBJSENSE\n    MAX\n", "OBJSENSE MAX\n", "OBJSENSE\n    MIN\n"]))
    return MPS.format(
        sense=sense,
        columns="".join(line + "\n" for line in lines),
        rhs="".join(line + "\n" for line in rhs),
        ranges="RANGES\n" + "".join(line + "\n" for line in ranges) if ranges else "",
        bounds="".join(line + "\n" for line in bounds),
    )


def outcome(read, path: Path):
    try:
        return read(path)
    except Exception as error:
        return type(error)


@pytest.mark.parametrize("seed", range(4))
def test_random_files_read_as_scip_reads_them(tmp_path, seed):
    rng = np.random.default_rng(seed)
    read_by_us = 0
    for k in range(60):
        path = tmp_path / f"random_{k}.mps"
        path.write_text(random_mps(rng))
        ours, theirs = outcome(read_problem, path), outcome(by_scip, path)
        if isinstance(theirs, type):
            assert ours is theirs, path.read_text()
            continue
        assert isinstance(ours, Problem), (ours, path.read_text())
        assert_same_problem(ours, theirs)
        read_by_us += by_numpy(path) is not None
    assert read_by_us >= 30, "the reader declined most of the files"


DECLINED = {
    "a second objective row": ("ROWS\n N  obj\n", "ROWS\n N  obj\n N  other\n"),
    "an SOS section": ("ENDATA", "SOS\n S1 SOS s1\n    x0  1\n    x1  2\nENDATA"),
    "a second bound set": ("ENDATA", " UP  OTHER  x0  4\nENDATA"),
    "an infinity word": ("ENDATA", " UP  BND  x1  Infinity\nENDATA"),
    "a second entry of the objective": ("    x0  obj  1", "    x0  obj  1\n    x0  obj  2"),
}


@pytest.mark.parametrize("change", sorted(DECLINED))
def test_files_it_leaves_to_scip_are_read_by_scip(tmp_path, change):
    text = MPS.format(
        sense="",
        columns="    x0  obj  1  c1  1\n    x1  obj  2  c2  1\n",
        rhs="    RHS  c1  4  c2  1\n",
        ranges="",
        bounds=" UP  BND  x0  3\n",
    )
    old, new = DECLINED[change]
    assert old in text
    path = tmp_path / "declined.mps"
    path.write_text(text.replace(old, new, 1))
    assert by_numpy(path) is None
    theirs = outcome(by_scip, path)
    if isinstance(theirs, type):  # the SOS section: a constraint the framework does not take
        with pytest.raises(theirs):
            read_problem(path)
        return
    problem, model = read_problem_and_model(path)
    assert not callable(model) and model.getNVars() == 2  # SCIP's model of the file
    assert_same_problem(problem, theirs)


def test_a_misread_number_is_still_an_error_naming_the_line(tmp_path):
    path = tmp_path / "bad.mps"
    path.write_text(
        MPS.format(
            sense="",
            columns="    x0  obj  1  c1  1.5abc\n",
            rhs="    RHS  c1  4\n",
            ranges="",
            bounds="",
        )
    )
    assert by_numpy(path) is None
    with pytest.raises(ProblemReadError, match=r"bad\.mps: line 8: .*1\.5abc"):
        read_problem(path)


def test_a_broken_gzip_file_is_an_error_naming_the_file(tmp_path):
    path = tmp_path / "broken.mps.gz"
    path.write_bytes(gzip.compress(b"NAME x\nROWS\n N obj\n")[:-6])
    with pytest.raises(ProblemReadError, match="broken.mps.gz"):
        read_problem(path)


def written_and_read(problem: Problem, folder: Path, name: str = "written.mps.gz") -> Problem:
    path = problem.write(folder / name)
    assert by_numpy(path) is not None, "the reader declined the writer's file"
    return read_problem(path)


@pytest.mark.parametrize("path", SMALL_FILES[::3], ids=lambda path: path.name)
def test_written_files_read_back_as_the_problem(tmp_path, path):
    problem = read_problem(path)
    back = written_and_read(problem, tmp_path)
    assert list(back.var_names) == list(problem.var_names)
    assert_same_problem(back, problem)
    assert_same_problem(by_scip(tmp_path / "written.mps.gz"), problem)


def test_every_kind_of_variable_and_row_reads_back(tmp_path):
    problem = mixed_problem()
    problem = replace(
        problem,
        var_names=["y1", "y2_with_a_long_name", "z1", "z2", "w"],
        var_types=np.array(["B", "I", "I", "I", "C"]),  # y2 a general integer in [0, 1]
        lower=np.array([0.0, 0.0, -np.inf, -2.0, -np.inf]),
        upper=np.array([1.0, 1.0, 4.0, np.inf, 10.0]),
        objective_offset=1.5,
        row_lower=np.array([-np.inf, 3.0, -1.0, 0.0]),
        row_upper=np.array([2.5, 7.0, 1.0, 0.0]),  # <=, ranged, ranged, =
    )
    back = written_and_read(problem, tmp_path, "mixed.mps")
    assert list(back.var_names) == list(problem.var_names)
    assert_same_problem(back, problem)
    assert_same_problem(by_scip(tmp_path / "mixed.mps"), problem)


def test_the_objective_row_takes_a_name_no_row_has(tmp_path):
    problem = replace(mixed_problem(), row_names=["Obj", "r1", "OBJ", "r3"])
    back = written_and_read(problem, tmp_path, "named.mps")
    assert " N  obj_row\n" in (tmp_path / "named.mps").read_text()
    assert list(back.row_names) == list(problem.row_names)
    assert_same_problem(back, problem)


def test_or_tools_reads_the_problem_written(tmp_path):
    from ortools.linear_solver.python import model_builder

    problem = replace(
        mixed_problem(),
        lower=np.array([0.0, 0.0, 0.0, -2.0, -np.inf]),
        row_lower=np.array([-np.inf, 3.0, -np.inf, 0.0]),
    )
    path = problem.write(tmp_path / "mixed.mps")
    model = model_builder.Model()
    assert model.import_from_mps_file(str(path))
    variables = {v.name: v for v in model.get_variables()}
    for j, name in enumerate(problem.var_names):
        v = variables[name]
        assert (v.lower_bound, v.upper_bound) == (problem.lower[j], problem.upper[j]), name
        assert v.is_integral == (problem.var_types[j] != "C"), name
        assert v.objective_coefficient == problem.objective[j], name
    rows = {c.name: c for c in model.get_linear_constraints()}
    for i, name in enumerate(problem.row_names):
        sides = (rows[name].lower_bound, rows[name].upper_bound)
        assert sides == (problem.row_lower[i], problem.row_upper[i]), name


def test_what_the_layout_cannot_carry_is_written_by_scip(tmp_path):
    problem = replace(mixed_problem(), var_names=["y 1", "y2", "z1", "z2", "w"])
    path = problem.write(tmp_path / "blank.mps")
    assert path.read_text().startswith("* SCIP STATISTICS")
