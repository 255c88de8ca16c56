"""SolveParams: frozen groups with working defaults, built in code, from a mapping (nested or
dotted) or from a TOML or YAML file; an unknown key or a bad value is named, with the file."""

import dataclasses
import math

import pytest

from lns import (
    InvalidArgumentError,
    LoopParams,
    PortfolioParams,
    SizeParams,
    SolveParams,
    StartParams,
    SubSolveParams,
    UnknownNameError,
)
from lns.core.search.stop import (
    DEADLINE_MARGIN,
    MaxIterations,
    MaxRuntime,
    NoImprovement,
    StopState,
    budget,
    time_limit_of,
)

EXPECTED = SolveParams(
    size=SizeParams(initial_fraction=0.3),
    sub_solve=SubSolveParams(node_limit=100, sub_problem="whole"),
    portfolio=PortfolioParams(workers=2, deterministic=True),
)
TOML = """
[size]
initial_fraction = 0.3

[sub_solve]
node_limit = 100
sub_problem = "whole"

[portfolio]
workers = 2
deterministic = true
"""
YAML = """
size: {initial_fraction: 0.3}
sub_solve:
  node_limit: 100
  sub_problem: whole
portfolio: {workers: 2, deterministic: true}
"""


def test_the_groups_are_frozen_and_have_working_defaults():
    params = SolveParams()
    assert params.size == SizeParams() and params.portfolio.workers == 1
    assert params.start.strategy == "feasibility" and params.sub_solve.solver == "scip"
    with pytest.raises(dataclasses.FrozenInstanceError):
        params.size.growth = 2.0  # type: ignore[misc]
    assert dataclasses.replace(params.size, growth=2.0).growth == 2.0


def test_from_dict_takes_nested_groups_dotted_keys_and_group_objects():
    nested = {
        "size": {"initial_fraction": 0.3},
        "sub_solve": {"node_limit": 100, "sub_problem": "whole"},
        "portfolio": {"workers": 2, "deterministic": True},
    }
    dotted = {
        "size.initial_fraction": 0.3,
        "sub_solve.node_limit": 100,
        "sub_solve": {"sub_problem": "whole"},
        "portfolio": PortfolioParams(workers=2, deterministic=True),
    }
    assert SolveParams.from_dict(nested) == EXPECTED == SolveParams.from_dict(dotted)
    assert SolveParams.from_dict({}) == SolveParams()


@pytest.mark.parametrize("suffix, text", [(".toml", TOML), (".yaml", YAML), (".yml", YAML)])
def test_from_file_reads_toml_and_yaml(tmp_path, suffix, text):
    path = tmp_path / f"params{suffix}"
    path.write_text(text)
    assert SolveParams.from_file(path) == EXPECTED


@pytest.mark.parametrize(
    "data, error, message",
    [
        ({"sizes": {}}, UnknownNameError, r"parameter group 'sizes' among choices \['loop'"),
        ({"size.growht": 2}, UnknownNameError, r"size parameter 'growht' among choices \["),
        ({"start": {"strategy": "fastest"}}, UnknownNameError, r"start\.strategy 'fastest'"),
        ({"size.growth": 0.5}, InvalidArgumentError, r"^size\.growth=0\.5 is invalid"),
        ({"loop": 3}, InvalidArgumentError, r"^loop=3 is invalid: expected a mapping"),
        ([1, 2], InvalidArgumentError, "expected a mapping of parameter groups"),
    ],
)
def test_a_bad_key_or_value_is_named(data, error, message):
    with pytest.raises(error, match=message):
        SolveParams.from_dict(data)


def test_errors_of_a_file_name_it(tmp_path):
    path = tmp_path / "params.toml"
    path.write_text("[sub_solve]\nnode_limt = 100\n")
    with pytest.raises(UnknownNameError, match=r"params\.toml: sub_solve parameter 'node_limt'"):
        SolveParams.from_file(path)
    path.write_text("[portfolio]\nworkers = 0\n")
    with pytest.raises(InvalidArgumentError, match=r"params\.toml: portfolio\.workers=0"):
        SolveParams.from_file(path)
    path.write_text("[size\n")
    with pytest.raises(InvalidArgumentError, match=r"params\.toml: cannot read solve parameters"):
        SolveParams.from_file(path)
    with pytest.raises(InvalidArgumentError, match=r"missing\.yaml: cannot read"):
        SolveParams.from_file(tmp_path / "missing.yaml")
    with pytest.raises(InvalidArgumentError, match=r"params\.json: expected a \.toml"):
        SolveParams.from_file(tmp_path / "params.json")


def test_a_group_of_the_wrong_type_is_refused():
    with pytest.raises(InvalidArgumentError, match="size=.* is invalid: expected a SizeParams"):
        SolveParams(size=StartParams())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "portfolio",
    [
        dict(workers=2, complete_worker=True),
        dict(workers="all", complete_worker=True),
        dict(workers=2, mix="auto"),
        dict(mix={"lns": 2, "cpsat": 1}),
        dict(workers=3, deterministic=True),
    ],
)
def test_portfolio_settings_that_go_together(portfolio):
    assert PortfolioParams(**portfolio).workers == portfolio.get("workers", 1)


def test_the_loop_params_keep_their_checks():
    with pytest.raises(InvalidArgumentError, match="max_failures=0"):
        LoopParams(max_failures=0)


def test_a_budget_keeps_its_margin_and_reports_its_time_limit():
    rule = budget(60, 12)
    assert [type(r) for r in rule.rules] == [MaxIterations, MaxRuntime]
    assert rule.rules[1].deadline == 60 - DEADLINE_MARGIN and time_limit_of(rule) == 60.0
    assert rule.fired(StopState(59.96, 0, None)) is not None
    assert rule.fired(StopState(1.0, 12, None)) is not None
    assert budget().rules == () and time_limit_of(budget(math.inf, 3)) is None
    assert time_limit_of(NoImprovement(seconds=5) | MaxRuntime(30) | MaxRuntime(20)) == 20.0
    assert repr(MaxRuntime(60, margin=0.05)) == "MaxRuntime(60, margin=0.05)"
