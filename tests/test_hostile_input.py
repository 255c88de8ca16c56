"""Hostile input: numbers SCIP would misread, non-finite problem data, invalid arguments.

Each file case is a 2-variable MPS (or LP) problem, x, y integer in [0, 10],
minimise a*x - y s.t. b*x + y <= c (a = -1, b = 2, c = 12: optimum -11 at x = 1,
y = 10) with one number replaced. SCIP never sees a NaN objective here: it would loop
without end.
"""

import gzip
import math

import numpy as np
import pytest
import scipy.sparse as sp

from helpers import knapsack, miplib
from lns import solve_scip
from lns.api import solve
from lns.core.errors import InvalidArgumentError, ProblemReadError
from lns.core.parallel.params import PortfolioParams
from lns.core.problem.mip import Problem, problem_from_scip, read_problem
from lns.core.search.params import LoopParams, SizeParams, StartParams, SubSolveParams
from lns.core.search.stop import MaxIterations, budget
from lns.params import GROUPS, SolveParams

MPS = """NAME tiny
ROWS
 N obj
 L c1
COLUMNS
 MARKER 'MARKER' 'INTORG'
 x obj {a} c1 {b}
 y obj -1 c1 1
 MARKER 'MARKER' 'INTEND'
RHS
 rhs c1 {c}
BOUNDS
 UP bnd x {ux}
 LO bnd y {ly}
 UP bnd y 10
ENDATA
"""
LP = """\\ a comment: nan here is harmless
Minimize
 obj: {a} x - y
Subject To
 c1: {b} x + y <= {c}
Bounds
 0 <= x <= {ux}
 {ly} <= y <= 10
Generals
 x y
End
"""
DEFAULTS = dict(a=-1, b=2, c=12, ux=10, ly=0)


def write(tmp_path, template=MPS, suffix=".mps", **numbers):
    """The tiny problem with ``numbers`` replaced, in ``tiny{suffix}`` (gzipped for ``.gz``)."""
    text = template.format(**{**DEFAULTS, **numbers})
    path = tmp_path / f"tiny{suffix}"
    path.write_bytes(gzip.compress(text.encode()) if suffix.endswith(".gz") else text.encode())
    return path


@pytest.mark.parametrize("suffix", [".mps", ".mps.gz"])
def test_the_untouched_file_reads_and_solves_to_its_optimum(tmp_path, suffix):
    result = solve_scip(write(tmp_path, suffix=suffix), stop=10)
    assert result.objective == pytest.approx(-11)


# Each of these SCIP reads without complaint as another problem (checked on SCIP 10.0):
# a non-numeric entry is 0, "1.5abc" is 1.5, "0x10" is 16, "1d1" is 1, a missing bound value 0.
@pytest.mark.parametrize("suffix", [".mps", ".mps.gz"])
@pytest.mark.parametrize(
    "field, value, line, what",
    [
        ("a", "notanumber", 7, "coefficient of column x in row obj is 'notanumber'"),
        ("b", "notanumber", 7, "coefficient of column x in row c1 is 'notanumber'"),
        ("c", "notanumber", 11, "RHS value of row c1 is 'notanumber'"),
        ("ux", "notanumber", 13, "UP bound of column x is 'notanumber'"),
        ("ly", "1d1", 14, "LO bound of column y is '1d1'"),
        ("a", "1.5abc", 7, "'1.5abc'"),
        ("b", "0x10", 7, "'0x10'"),
        ("ux", "", 13, "UP bound of column x has no value"),
        ("a", "nan", 7, "coefficient of column x in row obj is 'nan'"),  # SCIP would loop forever
        ("b", "NaN", 7, "'NaN'"),
        ("c", "nan", 11, "RHS value of row c1 is 'nan'"),
        ("ux", "nan", 13, "'nan'"),
    ],
)
def test_a_number_scip_would_misread_is_refused_with_its_line(
    tmp_path, suffix, field, value, line, what
):
    path = write(tmp_path, suffix=suffix, **{field: value})
    with pytest.raises(ProblemReadError, match=rf"^{path}: line {line}: .*{what}"):
        read_problem(path)


@pytest.mark.parametrize(
    "field, value, what",
    [
        ("a", "inf", "coefficient of column x in row obj is 'inf'; it must be finite"),
        ("b", "1e30", "coefficient of column x in row c1 is '1e30'; it must be finite"),
        ("a", "1e400", "'1e400'; it must be finite"),
        ("ly", "Infinity", "LO bound of column y is 'Infinity'; a lower bound must be below"),
        ("ux", "-1e+30", "UP bound of column x is '-1e\\+30'; an upper bound must be above"),
        (
            "ux",
            "inf",
            "integer column x binary",
        ),  # SCIP: binary with bound 1e+20, then "error in input data"
    ],
)
def test_an_infinity_where_it_makes_no_sense_is_refused(tmp_path, field, value, what):
    with pytest.raises(ProblemReadError, match=f"line [0-9]+: .*{what}"):
        read_problem(write(tmp_path, **{field: value}))


@pytest.mark.parametrize(
    "field, value, upper_x, upper_y, row_upper",
    [
        ("ux", "1e+30", math.inf, 10, 12),
        ("ux", "1e20", math.inf, 10, 12),
        ("ly", "-inf", 10, 10, 12),
        ("ly", "-Infinity", 10, 10, 12),
        ("c", "inf", 10, 10, math.inf),
        ("c", "1.5e1", 10, 10, 15),
    ],
)
def test_infinity_words_and_big_numbers_scip_reads_right_are_accepted(
    tmp_path, field, value, upper_x, upper_y, row_upper
):
    problem = read_problem(write(tmp_path, **{field: value}))
    assert list(problem.upper) == [upper_x, upper_y] and list(problem.row_upper) == [row_upper]


def test_an_objective_offset_must_be_finite(tmp_path):
    path = write(tmp_path, template=MPS.replace(" rhs c1 {c}", " rhs c1 {c} obj inf"))
    with pytest.raises(ProblemReadError, match="line 11: objective offset .* is 'inf'"):
        read_problem(path)


@pytest.mark.parametrize(
    "spell", [lambda t: t.replace(" ", "\t"), lambda t: t.replace("\n", "\r\n")]
)
def test_tabs_and_crlf_line_ends_are_checked_too(tmp_path, spell):
    good, bad = tmp_path / "good.mps", tmp_path / "bad.mps"
    good.write_text(spell(MPS.format(**DEFAULTS)))
    bad.write_text(spell(MPS.format(**{**DEFAULTS, "b": "two"})))
    assert read_problem(good).matrix[0, 0] == 2
    with pytest.raises(ProblemReadError, match="line 7: coefficient of column x in row c1 is 'tw"):
        read_problem(bad)


@pytest.mark.parametrize("objsense, line", [("OBJSENSE\n    MAX\n", 16), ("OBJSENSE MAX\n", 15)])
def test_objsense_ranges_and_comments_are_read_around(tmp_path, objsense, line):
    text = (
        MPS.format(**DEFAULTS)
        .replace("ROWS", objsense + "* a comment: nan\nROWS")
        .replace("BOUNDS", "RANGES\n rng c1 {range}\nBOUNDS")
    )
    path = tmp_path / "ranged.mps"
    path.write_text(text.replace("{range}", "4 $ nan in a comment"))
    problem = read_problem(path)
    assert problem.sense == "maximize" and (problem.row_lower[0], problem.row_upper[0]) == (8, 12)
    path.write_text(text.replace("{range}", "nan"))
    with pytest.raises(ProblemReadError, match=f"line {line}: RANGES value of row c1 is 'nan'"):
        read_problem(path)


def test_scip_itself_refuses_a_word_where_an_lp_file_needs_a_number(tmp_path):
    with pytest.raises(ProblemReadError, match="Syntax error in line 5 \\('abc'\\)"):
        read_problem(write(tmp_path, template=LP, suffix=".lp", c="abc"))


def test_fixed_format_names_with_blanks_are_read_as_scip_reads_them(tmp_path):
    columns = [
        "    x 1       obj       -1             c1        2",
        "    y         obj       -1             c1        1",
    ]
    text = MPS.replace(" x obj {a} c1 {b}\n y obj -1 c1 1", "\n".join(columns)).replace(
        "bnd x", "bnd x_1"
    )
    path = tmp_path / "fixed.mps"
    path.write_text(
        text.format(**DEFAULTS)
        .replace(" MARKER 'MARKER' 'INTORG'\n", "")
        .replace(" MARKER 'MARKER' 'INTEND'\n", "")
    )
    problem = read_problem(path)
    assert problem.var_names == ("x_1", "y") and list(problem.objective) == [-1, -1]


@pytest.mark.parametrize(
    "field, value, what",
    [
        ("a", "nan", "line 3: 'nan' is not a number"),
        ("b", "-NaN", "line 5: '-NaN'"),
        ("c", "nan", "line 5: 'nan'"),
        ("ux", "nan", "line 7: 'nan'"),
    ],
)
def test_nan_in_an_lp_file_is_refused_with_its_line(tmp_path, field, value, what):
    with pytest.raises(ProblemReadError, match=what):
        read_problem(write(tmp_path, template=LP, suffix=".lp", **{field: value}))


def test_an_lp_file_with_nan_only_in_a_comment_reads(tmp_path):
    assert read_problem(write(tmp_path, template=LP, suffix=".lp")).n_vars == 2


@pytest.mark.parametrize(
    "field, value, what",
    [
        ("ly", "inf", r"lower\[1\] \(y\) is inf"),
        ("c", "-inf", r"row_upper\[0\] \(c1\) is -inf"),
    ],
)
def test_lp_infinities_are_refused_after_reading(tmp_path, field, value, what):
    with pytest.raises(ProblemReadError, match=f"tiny.lp: {what}"):
        read_problem(write(tmp_path, template=LP, suffix=".lp", **{field: value}))


def _knapsack_with(field, index, value):
    base = knapsack("minimize")
    arrays = {
        name: np.array(getattr(base, name), dtype=float)
        for name in ("objective", "lower", "upper", "row_lower", "row_upper")
    }
    matrix = base.matrix.copy()
    if field == "matrix":
        matrix.data[index] = value
    else:
        arrays[field][index] = value
    return dict(
        name="k",
        var_names=base.var_names,
        var_types=base.var_types,
        objective_offset=0.0,
        sense="minimize",
        matrix=sp.csr_matrix(matrix),
        row_names=base.row_names,
        **arrays,
    )


@pytest.mark.parametrize(
    "field, index, value, message",
    [
        ("objective", 2, np.nan, r"objective\[2\] \(c\) is nan"),
        ("objective", 0, np.inf, r"objective\[0\] \(a\) is inf"),
        ("matrix", 1, np.nan, r"matrix\[0, 1\] \(row capacity, column b\) is nan"),
        ("matrix", 3, -np.inf, r"matrix\[0, 3\] .* is -inf"),
        ("lower", 1, np.nan, r"lower\[1\] \(b\) is nan"),
        ("lower", 1, np.inf, r"lower\[1\] \(b\) is inf"),
        ("upper", 0, -np.inf, r"upper\[0\] \(a\) is -inf"),
        ("upper", 3, 5.0, r"binary variable 3 \(d\) has bounds \[0.0, 5.0\]"),
        ("row_upper", 0, np.nan, r"row_upper\[0\] \(capacity\) is nan"),
        ("row_lower", 0, np.inf, r"row_lower\[0\] \(capacity\) is inf"),
    ],
)
def test_a_problem_built_with_non_finite_data_names_the_field_and_index(
    field, index, value, message
):
    with pytest.raises(ValueError, match=message):
        Problem(**_knapsack_with(field, index, value))


def test_a_nan_objective_offset_is_refused():
    with pytest.raises(ValueError, match="objective_offset is nan"):
        Problem(**{**_knapsack_with("objective", 0, -10.0), "objective_offset": np.nan})


# What SCIP does with each NaN (measured on SCIP 10.0): a NaN objective coefficient loops past its
# time limit, a NaN right-hand side drops the row (optimum -20), a NaN upper bound ends in "error in
# input data", a NaN coefficient ends at once without a solution. A SCIP model holding one never
# reaches a solve.
@pytest.mark.parametrize(
    "change, message",
    [
        (lambda m, x, c: m.chgRhs(c, math.nan), r"row_upper\[0\] \(c1\) is nan"),
        (lambda m, x, c: m.chgVarUb(x, math.nan), r"upper\[0\] \(x\) is nan"),
        (
            lambda m, x, c: m.chgCoefLinear(c, x, math.nan),
            r"matrix\[0, 0\] \(row c1, column x\) is nan",
        ),
        (lambda m, x, c: m.setObjective(math.nan * x), r"objective\[0\] \(x\) is nan"),
    ],
)
def test_a_scip_model_holding_nan_is_refused_before_any_solve(tmp_path, change, message):
    from pyscipopt import Model

    model = Model()
    model.hideOutput()
    model.readProblem(str(write(tmp_path)))
    x = model.getVars()[0]
    change(model, x, model.getConss()[0])
    with pytest.raises(ProblemReadError, match=f"tiny: {message}"):
        problem_from_scip(model, "tiny")


@pytest.mark.parametrize("template, suffix", [(MPS, ".mps.gz"), (LP, ".lp")])
def test_the_nan_objective_that_hangs_scip_is_refused_when_read(tmp_path, template, suffix):
    # Read unchecked, SCIP would loop on it until the time limit and raise nothing.
    with pytest.raises(ProblemReadError, match="'nan'"):
        solve(write(tmp_path, template=template, suffix=suffix, a="nan"), stop=5)


def test_the_bundled_instances_pass_the_checks():
    for name in ("p0201", "bell5", "dano3mip", "timtab1"):
        assert read_problem(miplib(name)).n_vars > 0


@pytest.mark.parametrize(
    "argument, value, allowed",
    [
        ("stop", 0, "seconds > 0"),
        ("stop", -5, "seconds > 0"),
        ("stop", math.nan, "seconds > 0"),
        ("stop", "60", "seconds > 0"),
        ("stop", True, "seconds > 0"),
        ("seed", -1, "integer >= 0"),
        ("seed", 1.5, "integer >= 0"),
        ("seed", None, "integer >= 0"),
        ("seed", "0", "integer >= 0"),
        ("optimum", math.inf, "finite number"),
    ],
)
def test_an_invalid_run_argument_is_refused_before_the_file_is_read(
    tmp_path, argument, value, allowed
):
    missing = tmp_path / "not_there.mps"  # reading it would raise ProblemReadError instead
    with pytest.raises(
        InvalidArgumentError, match=rf"^{argument}={value!r} is invalid: expected .*{allowed}"
    ):
        solve(missing, **{argument: value})


@pytest.mark.parametrize(
    "time_limit, iteration_limit, message",
    [
        (0, None, "time_limit=0 is invalid"),
        (-5, None, "time_limit=-5 is invalid"),
        (60, -3, "iteration_limit=-3 is invalid"),
        (60, 2.0, "iteration_limit=2.0 is invalid"),
    ],
)
def test_an_invalid_budget_is_refused(time_limit, iteration_limit, message):
    with pytest.raises(InvalidArgumentError, match=rf"^{message}: expected"):
        budget(time_limit, iteration_limit)


@pytest.mark.parametrize("stop", [budget(None, 1), budget(math.inf, 1), MaxIterations(1)])
def test_no_time_limit_is_none_or_inf(tmp_path, stop):
    result = solve(write(tmp_path), stop=stop, seed=np.int64(3))
    assert result.time_limit is None and result.feasibility.feasible


@pytest.mark.parametrize(
    "group, field, value",
    [
        (SizeParams, "initial_fraction", 0),
        (SizeParams, "initial_fraction", 1.5),
        (SizeParams, "growth", 0.9),
        (SizeParams, "max_fraction", -0.1),
        (SizeParams, "shrink", 0.0),
        (SizeParams, "min_size", 0),
        (SizeParams, "min_size", 2.5),
        (SubSolveParams, "time_limit", -1.0),
        (SubSolveParams, "time_limit", math.inf),
        (SubSolveParams, "node_limit", 0),
        (StartParams, "time_limit", 0),
        (StartParams, "solution_limit", 0),
        (StartParams, "stall_floor", -1.0),
        (StartParams, "stall_factor", math.inf),
        (StartParams, "max_share", 0),
        (LoopParams, "history_length", -1),
        (LoopParams, "max_failures", 0),
        (LoopParams, "improvement_tol", math.nan),
        (SizeParams, "growth", "fast"),
        (SubSolveParams, "scip_params", ["limits/nodes", 5]),
        (PortfolioParams, "workers", 0),
        (PortfolioParams, "deterministic", "yes"),
    ],
)
def test_an_invalid_setting_is_refused_on_creation(group, field, value):
    with pytest.raises(InvalidArgumentError, match=rf"^{field}=.* is invalid: expected"):
        group(**{field: value})
    name = next(name for name, cls in GROUPS.items() if cls is group)
    with pytest.raises(InvalidArgumentError, match=rf"^{name}\.{field}=.* is invalid"):
        SolveParams.from_dict({f"{name}.{field}": value})


def test_valid_settings_at_their_limits_are_accepted():
    SolveParams(
        size=SizeParams(initial_fraction=1, growth=1, max_fraction=1, shrink=None, min_size=1),
        start=StartParams(time_limit=None, solution_limit=-1),
        sub_solve=SubSolveParams(node_limit=-1, scip_params={}),
        loop=LoopParams(history_length=0, max_failures=1, improvement_tol=0),
        portfolio=PortfolioParams(workers="all"),
    )
