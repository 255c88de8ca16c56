"""The problem classes by name, with their parameter types and presets."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from instances.generators import ca, cfl, mis, mvc, sc
from lns.core.errors import UnknownNameError
from lns.core.problem.mip import Problem


@dataclass(frozen=True)
class ProblemClass:
    """A generated problem distribution.

    Attributes
    ----------
    name : str
        Registry name (``"mvc"``, ``"mis"``, ...).
    description : str
        One line for listings.
    params_type : type
        Frozen dataclass of the parameters, validated on construction.
    generate : callable
        ``generate(params, rng, name) -> Problem``, pure given ``rng``.
    presets : mapping of str to params_type
        Named parameter sets (``"small"``, ``"large"``).
    """

    name: str
    description: str
    params_type: type[Any]
    generate: Callable[[Any, np.random.Generator, str], Problem]
    presets: Mapping[str, Any]

    def params(self, size: str = "small", **overrides) -> Any:
        """The preset ``size`` with some fields replaced.

        Unknown sizes and fields raise :class:`UnknownNameError`.
        """
        if size not in self.presets:
            raise UnknownNameError(f"{self.name} size", size, self.presets)
        fields = {field.name for field in dataclasses.fields(self.params_type)}
        for key in overrides:
            if key not in fields:
                raise UnknownNameError(f"{self.name} parameter", key, fields)
        return dataclasses.replace(self.presets[size], **overrides)


CLASSES = {
    c.name: c
    for c in (
        ProblemClass(
            "mvc",
            "minimum weighted vertex cover, Barabási–Albert graphs",
            mvc.MVCParams,
            mvc.generate,
            mvc.PRESETS,
        ),
        ProblemClass(
            "mis",
            "maximum independent set, Erdős–Rényi or Barabási–Albert graphs",
            mis.MISParams,
            mis.generate,
            mis.PRESETS,
        ),
        ProblemClass("sc", "set cover (Balas & Ho 1980)", sc.SCParams, sc.generate, sc.PRESETS),
        ProblemClass(
            "ca",
            "combinatorial auction, arbitrary relationships (Leyton-Brown et al. 2000)",
            ca.CAParams,
            ca.generate,
            ca.PRESETS,
        ),
        ProblemClass(
            "cfl",
            "capacitated facility location (Cornuéjols et al. 1991)",
            cfl.CFLParams,
            cfl.generate,
            cfl.PRESETS,
        ),
    )
}


def problem_class(name: str) -> ProblemClass:
    """The class registered as ``name``; :class:`UnknownNameError` lists the valid names."""
    if name not in CLASSES:
        raise UnknownNameError("problem class", name, CLASSES)
    return CLASSES[name]
