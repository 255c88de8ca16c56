"""One registry of neighborhood selectors, by name.

Entries are import paths, so that naming a classical selector never imports
torch: the learned selector's module is imported only when it is asked for.
"""
from __future__ import annotations

import importlib

from lns.core.selection import Selector
from lns.core.errors import UnknownNameError

SELECTORS = {
    "random": "heuristics.random_selector:RandomSelector",
    "local_branching": "heuristics.local_branching:LocalBranching",
    "lb_relax": "heuristics.lb_relax:LBRelax",
    "graph": "heuristics.graph:GraphInduced",
    "rins": "heuristics.rins:RINS",
    "cl_lns": "learning.selector:CLLNS",
    "adaptive": "heuristics.adaptive:AdaptiveSelector",
}


def selector_class(name: str) -> type:
    """The class registered as ``name``; :class:`UnknownNameError` lists the valid names."""
    if name not in SELECTORS:
        raise UnknownNameError("selector", name, SELECTORS)
    module, _, attribute = SELECTORS[name].partition(":")
    return getattr(importlib.import_module(module), attribute)


def make_selector(name: str, **options) -> Selector:
    """Build the selector registered as ``name`` with ``options`` as constructor arguments."""
    cls = selector_class(name)
    try:
        return cls(**options)
    except TypeError as error:
        raise ValueError(f"selector '{name}': {error}") from None
