"""The generated configs: every selector group composes and builds its class with the class's
defaults, the groups of SolveParams are typed configs, every method holds its own options, and a
bad override gets one line naming the close names."""

import dataclasses
import re
import subprocess
import sys

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate
from omegaconf import OmegaConf

from configs import CONFIG_DIR
from lns.cli.common import override_problem, solve_params
from lns.core.errors import InvalidArgumentError
from lns.core.search.stop import budget
from lns.params import GROUPS, PortfolioParams, SolveParams, SubSolveParams
from lns.registry import SELECTORS, selector_class, selector_defaults


def _compose(*overrides, config="solve"):
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        return compose(config_name=config, overrides=list(overrides))


def test_no_hand_written_copies_are_left():
    assert not (CONFIG_DIR / "selector").exists()
    solve_yaml = (CONFIG_DIR / "solve.yaml").read_text()
    assert not re.search(r"^\s*initial_fraction\s*:", solve_yaml, re.MULTILINE)  # no copied field


@pytest.mark.parametrize("name", sorted(SELECTORS))
def test_every_selector_config_instantiates_its_class_with_the_class_defaults(name):
    cfg = _compose(f"selector={name}")
    settings = OmegaConf.to_container(cfg.selector)
    # options, extra_arms: adaptive's arm settings by name and arms added to the default ones
    hydra_keys = {"_target_", "_convert_", "options", "extra_arms"}
    assert {key: value for key, value in settings.items() if key not in hydra_keys} == (
        selector_defaults(name)
    )
    selector = instantiate(cfg.selector)
    assert type(selector) is selector_class(name)
    assert selector.name == name


def test_defaults_are_read_from_the_constructor():
    assert selector_defaults("lb_relax") == {
        "variant": "positive",
        "epsilon": 0.05,
        "complete": True,
        "warm_start": True,
        "lp_method": "highs",
    }
    assert selector_defaults("random") == {}


def test_setting_override_reaches_the_selector():
    cfg = _compose("selector=lb_relax", "selector.variant=topk")
    assert instantiate(cfg.selector).variant == "topk"


def test_adaptive_arms_by_name_with_options_and_as_target_configs():
    selector = instantiate(
        _compose(
            "selector=adaptive",
            "selector.selectors=[random,lb_relax]",
            "selector.options={lb_relax: {variant: topk}}",
        ).selector
    )
    assert selector.arm_names == ["random", "lb_relax"] and selector.arms[1].variant == "topk"
    selector = instantiate(
        _compose(
            "selector=adaptive",
            "selector.selectors=[random,{_target_: heuristics.rins.RINS, lp_method: highs-ds}]",
        ).selector
    )
    assert selector.arms[1].lp_method == "highs-ds"


def test_a_selector_class_as_a_target_config():
    cfg = _compose(
        "++selector={_target_: heuristics.local_branching.LocalBranching, time_limit: 2.0}"
    )
    assert instantiate(cfg.selector).time_limit == 2.0


def test_the_parameter_groups_are_typed_configs_of_solve_params():
    cfg = _compose(
        "size.growth=1.5",
        "sub_solve.scip_params={limits/nodes: 50}",
        "sub_solve.solver=cpsat",
        "portfolio.deterministic=true",
        "portfolio.complete_worker=false",
    )
    for group, cls in GROUPS.items():
        assert set(cfg[group]) == {f.name for f in dataclasses.fields(cls)}
    params = solve_params(cfg)
    assert (params.size.growth, params.sub_solve.scip_params) == (1.5, {"limits/nodes": 50})
    assert params.sub_solve.solver == "cpsat" and params.portfolio.deterministic
    mixed = solve_params(_compose("portfolio.mix={lns: 1, cpsat: 1}", "portfolio.workers=2"))
    assert mixed.portfolio.mix == {"lns": 1, "cpsat": 1} and mixed.portfolio.workers == 2
    complete = solve_params(_compose("portfolio.complete_worker=true", "portfolio.mix=lns"))
    assert complete.portfolio == PortfolioParams(workers="all", mix="lns", complete_worker=True)
    with pytest.raises(InvalidArgumentError, match="portfolio.mix=lns"):
        solve_params(_compose("portfolio.complete_worker=true"))  # the default mix is auto
    assert params.portfolio.workers == "all"  # lns-solve's default; the API's is 1
    defaults = SolveParams(sub_solve=SubSolveParams(scip_params={}))
    bench = _compose(config="bench")
    assert solve_params(bench) == defaults
    assert solve_params(_compose()) == dataclasses.replace(
        defaults, portfolio=PortfolioParams(workers="all", mix="auto")
    )


@pytest.mark.parametrize("name", ["lns", "scip", "cpsat", "localmip"])
def test_every_method_config_holds_its_own_options(name):
    cfg = OmegaConf.to_container(_compose(f"method={name}").method)
    expected = {
        "lns": {"name": "lns"},
        "scip": {"name": "scip", "scip_params": {}},
        "cpsat": {"name": "cpsat", "num_workers": 2, "max_scale_exponent": 6},
        "localmip": {"name": "localmip"},
    }
    assert cfg == expected[name]


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["timelimit=5"], "unknown option 'timelimit'; did you mean 'time_limit'?"),
        (["size.grwth=1"], "unknown option 'size.grwth'; did you mean 'size.growth'?"),
        (
            ["selector=lb_relax", "selector.varant=topk"],
            "unknown option 'selector.varant'; did you mean 'selector.variant'?",
        ),
        (["selector=rnadom"], "unknown selector 'rnadom'; did you mean 'random'?"),
        (
            ["size.growth=fast"],
            "size.growth: Value 'fast' of type 'str' could not be converted to Float",
        ),
        (["-m", "sed=1,2"], "unknown option 'sed'; did you mean 'seed'?"),
        (["hydra.run.dri=x"], "unknown option 'hydra.run.dri'; did you mean 'hydra.run.dir'?"),
        (["sise.growth=1"], "unknown option 'sise.growth'; did you mean 'size'?"),
        (["time_limit=5", "selector=rins"], None),
    ],
)
def test_bad_overrides_are_one_line_naming_the_close_options(overrides, message):
    assert override_problem("solve", overrides) == message


def test_a_typo_on_the_command_line_exits_2_with_one_line(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "lns.cli.solve", "timelimit=5"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert run.stderr.strip() == (
        "lns-solve: error: unknown option 'timelimit'; did you mean 'time_limit'?"
    )


def test_naming_a_classical_selector_imports_no_torch():
    code = (
        "import sys, lns.cli.common; from hydra.utils import instantiate; "
        "from lns.registry import make_selector; "
        "make_selector('adaptive', selectors=['random', 'rins']); "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_a_further_stop_rule_is_a_target_config():
    cfg = _compose("stop={_target_: lns.stop.NoImprovement, seconds: 20}")
    rule = budget(cfg.time_limit, cfg.iteration_limit) | instantiate(cfg.stop)
    assert [type(r).__name__ for r in rule.rules] == ["MaxRuntime", "NoImprovement"]
    assert _compose().stop is None
