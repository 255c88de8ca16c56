"""Every config group of lns-solve composes, and every selector config builds its registered class."""
import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate

from configs import CONFIG_DIR
from lns.registry import SELECTORS, selector_class
from lns.core.config import LNSConfig

SELECTOR_CONFIGS = sorted(path.stem for path in (CONFIG_DIR / "selector").glob("*.yaml"))


def test_every_registered_selector_has_a_config():
    assert SELECTOR_CONFIGS == sorted(SELECTORS)


@pytest.mark.parametrize("name", SELECTOR_CONFIGS)
def test_selector_config_instantiates_its_registered_class(name):
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(config_name="solve", overrides=[f"selector={name}"])
    selector = instantiate(cfg.selector)
    assert type(selector) is selector_class(name)
    assert selector.name == name


def test_lns_options_are_exactly_the_loop_config():
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(config_name="solve")
    assert set(cfg.lns) == set(LNSConfig.__dataclass_fields__)
    LNSConfig(**cfg.lns)


def test_variant_override_reaches_the_selector():
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(config_name="solve", overrides=["selector=lb_relax", "selector.variant=topk"])
    assert instantiate(cfg.selector).variant == "topk"
