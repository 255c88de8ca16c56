"""One registry of neighborhood selectors, by name: the single source of their defaults.

Entries are import paths, so that naming a classical selector never imports torch: the
learned selector's module is imported only when it is asked for (and it imports torch only
when set up). A selector's settings and their defaults are its constructor's signature;
:func:`selector_defaults` reads them there, and the command line's Hydra configs are built
from them (:mod:`configs.generated`), so no second copy exists.

``"adaptive"`` is built by :func:`adaptive_selector`, which turns arm names into selector
objects here, so that :class:`heuristics.adaptive.AdaptiveSelector` itself takes objects and
needs no registry.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Sequence
from pathlib import Path

from lns.core.errors import InvalidArgumentError, InvalidArgumentTypeError, UnknownNameError
from lns.core.problem.validation import check_arguments
from lns.core.search.selection import Selector

SELECTORS = {
    "random": "heuristics.random_selector:RandomSelector",
    "local_branching": "heuristics.local_branching:LocalBranching",
    "lb_relax": "heuristics.lb_relax:LBRelax",
    "graph": "heuristics.graph_induced:GraphInduced",
    "rins": "heuristics.rins:RINS",
    "dins": "heuristics.dins:DINS",
    "crossover": "heuristics.crossover:Crossover",
    "proximity": "heuristics.proximity:Proximity",
    "cl_lns": "learning.selector:CLLNS",
    "adaptive": "heuristics.adaptive:AdaptiveSelector",
}


def selector_class(name: str) -> type:
    """The class registered as ``name``; :class:`UnknownNameError` lists the valid names."""
    if name not in SELECTORS:
        raise UnknownNameError("selector", name, SELECTORS)
    module, _, attribute = SELECTORS[name].partition(":")
    return getattr(importlib.import_module(module), attribute)


def selector_defaults(name: str) -> dict:
    """The settings of selector ``name`` and their defaults, read from its constructor.

    Values are given as configuration files hold them: a path as a string, a tuple as a list.

    Raises
    ------
    TypeError
        A constructor argument without a default (every selector must be buildable by name).
    """
    defaults = {}
    for parameter in inspect.signature(selector_class(name)).parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if parameter.default is parameter.empty:
            raise InvalidArgumentTypeError(
                f"selector '{name}': argument '{parameter.name}' has no default"
            )
        defaults[parameter.name] = _plain(parameter.default)
    return defaults


def make_selector(name: str, **options) -> Selector:
    """Build the selector registered as ``name`` with ``options`` as constructor arguments.

    Raises
    ------
    UnknownNameError
        ``name`` is not registered.
    InvalidArgumentError
        An option the selector does not take (or a missing one); the message names the selector.
    ValueError
        A value the selector refuses.
    """
    if name == "adaptive":
        return adaptive_selector(**options)
    cls = selector_class(name)
    check_arguments(f"selector '{name}'", cls, **options)
    return cls(**options)


def adaptive_selector(
    selectors: Sequence[str | Selector] | None = None,
    options: dict | None = None,
    extra_arms: Sequence[str | Selector] = (),
    **settings,
) -> Selector:
    """An :class:`~heuristics.adaptive.AdaptiveSelector` whose arms may be given by name.

    Parameters
    ----------
    selectors : sequence of str or Selector, optional
        The arms: registry names (built with ``options``) or selector objects; ``None``: the
        class's default arms (:func:`heuristics.adaptive.default_arms`).
    options : dict, optional
        Constructor arguments per arm name, e.g. ``{"lb_relax": {"variant": "topk"}}``.
    extra_arms : sequence of str or Selector
        Arms added to those of ``selectors`` (the default ones when it is ``None``), one each at
        the loop's size: ``extra_arms=["cl_lns"]`` is the default portfolio with CL-LNS.
    **settings
        The other arguments of :class:`~heuristics.adaptive.AdaptiveSelector` (``policy``, ...).
    """
    adaptive = selector_class("adaptive")
    options = dict(options or {})
    names = [arm for arm in [*(selectors or ()), *extra_arms] if isinstance(arm, str)]
    unknown = sorted(set(options) - set(names))
    if unknown:
        raise InvalidArgumentError(
            f"selector 'adaptive': options given for {unknown}, "
            f"which are not among the arms {names}"
        )
    if "adaptive" in names:
        raise InvalidArgumentError("selector 'adaptive' cannot be one of its own arms")

    def build(arm):
        return make_selector(arm, **options.get(arm, {})) if isinstance(arm, str) else arm

    arms = None if selectors is None else [build(arm) for arm in selectors]
    if extra_arms:
        from heuristics.adaptive import default_arms

        # (selector, multiplier) pairs are one arm each; plain selectors get one per size
        arms = (default_arms() if arms is None else arms) + [(build(a), 1.0) for a in extra_arms]
    check_arguments("selector 'adaptive'", adaptive, arms, **settings)
    return adaptive(arms, **settings)


def _plain(value):
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value
