"""Configs generated from the code through Hydra's ConfigStore, so that none repeats it by hand.

- ``selector/<name>``: one per registered selector (:data:`lns.registry.SELECTORS`), its settings
  and defaults read from the class's constructor (:func:`lns.registry.selector_defaults`).
- ``size``, ``start``, ``sub_solve``, ``loop``, ``portfolio`` (option ``default``): the groups of
  :class:`lns.params.SolveParams` as structured configs, so that a value of the wrong type is
  refused with its key (``size.growth=fast``).
- ``method/<name>``: ``lns`` (:func:`lns.api.solve`) and each baseline of
  :data:`lns.api.BASELINES` with its own keywords and their defaults
  (``method=cpsat method.num_workers=4``).

Importing :mod:`configs` registers them, so that the command-line apps and a test that
composes a config with Hydra's compose API see the same groups.
"""

from __future__ import annotations

import inspect

from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

from lns.api import BASELINES
from lns.params import GROUPS
from lns.registry import SELECTORS, selector_defaults

#: Keywords every method takes from the command line's own keys, not from ``method.<key>``.
RUN_KEYWORDS = ("seed", "initial_solution", "callbacks", "out", "optimum")


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


def method_config(name: str) -> DictConfig:
    """The Hydra config of method ``name``: ``{"name": name}`` and, for a baseline, its own
    keywords with their defaults; a dict parameter (``scip_params``) is an open ``{}``, so that
    ``method.scip_params={limits/nodes: 50}`` merges into it."""
    node = OmegaConf.create({"name": name})
    if name in BASELINES:
        for parameter in inspect.signature(BASELINES[name]).parameters.values():
            if parameter.kind is parameter.KEYWORD_ONLY and parameter.name not in RUN_KEYWORDS:
                opened = "dict" in str(parameter.annotation)
                node[parameter.name] = {} if opened else parameter.default
                if opened:
                    OmegaConf.set_struct(node[parameter.name], False)
    return node


def register_configs(store: ConfigStore | None = None) -> None:
    """Config groups ``selector`` (one per registered selector), ``method`` (``lns`` and the
    baselines) and one per group of :class:`lns.params.SolveParams` (``default``)."""
    store = store or ConfigStore.instance()
    for name in SELECTORS:
        store.store(group="selector", name=name, node=selector_config(name))
    for name in ("lns", *BASELINES):
        store.store(group="method", name=name, node=method_config(name))
    for group in GROUPS:
        store.store(group=group, name="default", node=params_node(group))


def params_node(group: str) -> DictConfig:
    """The group ``group`` of :class:`lns.params.SolveParams` as a typed config, writable (the
    frozen dataclass makes it read-only); ``scip_params`` an open dict (``{}``, not ``None``),
    so that ``sub_solve.scip_params={limits/nodes: 50}`` merges into it (no new-key error)."""
    cls = GROUPS[group]
    node = OmegaConf.structured(cls(scip_params={}) if group == "sub_solve" else cls())
    OmegaConf.set_readonly(node, None)
    if group == "sub_solve":
        OmegaConf.set_struct(node.scip_params, False)
    return node
