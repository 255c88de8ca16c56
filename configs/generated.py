"""Configs generated from the code through Hydra's ConfigStore, so that none repeats it by hand.

- ``selector/<name>``: one per registered selector (:data:`lns.registry.SELECTORS`), its settings
  and defaults read from the class's constructor (:func:`lns.registry.selector_defaults`).
- ``lns/default``: :class:`lns.core.search.config.LNSConfig` as a structured config, so that a
value of
  the wrong type is refused with its key (``lns.growth=fast``).

Importing :mod:`configs` registers them, so that the command-line apps and a test that
composes a config with Hydra's compose API see the same groups.
"""

from __future__ import annotations

from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

from lns.core.search.config import LNSConfig
from lns.registry import SELECTORS, selector_defaults


def selector_config(name: str) -> dict:
    """The Hydra config of selector ``name``: ``_target_`` and every setting with its default.

    ``adaptive`` is built through :func:`lns.registry.adaptive_selector`, which also takes arm
    names (``selector.selectors=[random,rins]``), per-name arm settings (``options``) and arms
    added to the default ones (``selector.extra_arms=[cl_lns]``).
    """
    module, _, attribute = SELECTORS[name].partition(":")
    node = {"_target_": f"{module}.{attribute}", "_convert_": "all", **selector_defaults(name)}
    if name == "adaptive":
        node.update(
            {"_target_": "lns.registry.adaptive_selector", "options": None, "extra_arms": []}
        )
    return node


def register_configs(store: ConfigStore | None = None) -> None:
    """Config groups ``selector`` (one per registered selector) and ``lns`` (``default``)."""
    store = store or ConfigStore.instance()
    for name in SELECTORS:
        store.store(group="selector", name=name, node=selector_config(name))
    store.store(group="lns", name="default", node=lns_config_node())


def lns_config_node() -> DictConfig:
    """:class:`LNSConfig` as a typed config; ``scip_params`` an open dict (``{}``, not ``None``),
    so that ``lns.scip_params={limits/nodes: 50}`` merges into it (no new-key error)."""
    node = OmegaConf.structured(LNSConfig(scip_params={}))
    OmegaConf.set_struct(node.scip_params, False)
    return node
