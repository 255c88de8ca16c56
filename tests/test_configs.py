"""The generated configs: every selector group composes and builds its class with the class's
defaults, LNSConfig is a typed config, and a bad override gets one line naming the close names."""

import dataclasses
import re
import subprocess
import sys

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate
from omegaconf import OmegaConf

from configs import CONFIG_DIR
from lns.cli.common import override_problem
from lns.core.search.config import LNSConfig
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


def test_lns_options_are_the_typed_loop_config():
    cfg = _compose("lns.growth=1.5", "lns.scip_params={limits/nodes: 50}")
    assert set(cfg.lns) == {f.name for f in dataclasses.fields(LNSConfig)}
    config = LNSConfig(**OmegaConf.to_container(cfg.lns))
    assert (config.growth, config.scip_params) == (1.5, {"limits/nodes": 50})
    defaults = {**dataclasses.asdict(LNSConfig()), "scip_params": {}}
    assert OmegaConf.to_container(_compose().lns) == defaults
    assert OmegaConf.to_container(_compose(config="bench").lns) == defaults


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["timelimit=5"], "unknown option 'timelimit'; did you mean 'time_limit'?"),
        (["lns.grwth=1"], "unknown option 'lns.grwth'; did you mean 'lns.growth'?"),
        (
            ["selector=lb_relax", "selector.varant=topk"],
            "unknown option 'selector.varant'; did you mean 'selector.variant'?",
        ),
        (["selector=rnadom"], "unknown selector 'rnadom'; did you mean 'random'?"),
        (
            ["lns.growth=fast"],
            "lns.growth: Value 'fast' of type 'str' could not be converted to Float",
        ),
        (["-m", "sed=1,2"], "unknown option 'sed'; did you mean 'seed'?"),
        (["hydra.run.dri=x"], "unknown option 'hydra.run.dri'; did you mean 'hydra.run.dir'?"),
        (["lsn.growth=1"], "unknown option 'lsn.growth'; did you mean 'lns'?"),
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
