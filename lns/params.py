""":class:`SolveParams`: every setting of :func:`lns.solve` in one object of small groups, as
PyVRP's ``SolveParams``, built in code, from a mapping or from a TOML or YAML file.

A file holds one table per group, each with the fields to change (the others keep their
defaults)::

    # params.toml
    [size]
    initial_fraction = 0.3

    [sub_solve]
    node_limit = 100
    sub_problem = "whole"

    [portfolio]
    workers = 4
    deterministic = true

``SolveParams.from_file("params.toml")`` reads it (``.toml``; ``.yaml`` or ``.yml`` hold the same
mapping in YAML); ``lns-solve`` takes the same groups as overrides (``sub_solve.node_limit=100``)
and ``lns-bench`` per variant (:class:`lns.bench.Variant`).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

from lns.core.errors import InvalidArgumentError, UnknownNameError
from lns.core.parallel.params import PortfolioParams
from lns.core.search.params import LoopParams, SizeParams, StartParams, SubSolveParams


@dataclass(frozen=True)
class SolveParams:
    """The settings of :func:`lns.solve`, one frozen group per part of the search.

    Attributes
    ----------
    size : SizeParams
        The adaptive neighborhood size.
    start : StartParams
        How the first solution is found.
    sub_solve : SubSolveParams
        The sub-solver and the limits of each sub-solve.
    loop : LoopParams
        The loop's acceptance tolerance, memory and failure limit.
    portfolio : PortfolioParams
        Worker processes and their kinds.

    Examples
    --------
    >>> from lns import SolveParams, SubSolveParams
    >>> params = SolveParams(sub_solve=SubSolveParams(node_limit=100))
    >>> params.sub_solve.node_limit, params.size.initial_fraction
    (100, 0.2)
    >>> SolveParams.from_dict({"sub_solve.node_limit": 100}) == params
    True
    """

    size: SizeParams = field(default_factory=SizeParams)
    start: StartParams = field(default_factory=StartParams)
    sub_solve: SubSolveParams = field(default_factory=SubSolveParams)
    loop: LoopParams = field(default_factory=LoopParams)
    portfolio: PortfolioParams = field(default_factory=PortfolioParams)

    def __post_init__(self) -> None:
        for name, group in GROUPS.items():
            if not isinstance(getattr(self, name), group):
                raise InvalidArgumentError(
                    f"{name}={getattr(self, name)!r} is invalid: expected a {group.__name__}"
                )

    @classmethod
    def from_dict(cls, data: Mapping, *, source: str | None = None) -> SolveParams:
        """The parameters of a mapping of groups, each a mapping of fields (or a group object),
        or of dotted keys ``"group.field"``, or of both; a field not given keeps its default.

        Parameters
        ----------
        data : mapping
            ``{"size": {"initial_fraction": 0.3}, "sub_solve.node_limit": 100}``.
        source : str, optional
            Where ``data`` comes from (a file name), for the messages.

        Raises
        ------
        UnknownNameError
            An unknown group or field; the message names it, the valid ones and ``source``.
        InvalidArgumentError
            A value out of its range or of the wrong type, named ``group.field``.
        """
        where = f"{source}: " if source else ""
        if not isinstance(data, Mapping):
            raise InvalidArgumentError(
                f"{where}expected a mapping of parameter groups, got {data!r}"
            )
        groups: dict[str, Any] = {}
        for key, value in data.items():
            name, dot, leaf = str(key).partition(".")
            if name not in GROUPS:
                raise UnknownNameError(f"{where}parameter group", name, GROUPS)
            if dot:
                value = {leaf: value}
            elif value is None:  # an empty table of a YAML file
                value = {}
            elif not isinstance(value, (Mapping, GROUPS[name])):
                raise InvalidArgumentError(
                    f"{where}{name}={value!r} is invalid: expected a mapping of its fields"
                )
            if isinstance(value, GROUPS[name]):  # its fields as they are (asdict would copy them)
                value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
            groups[name] = {**groups.get(name, {}), **value}
        return cls(**{name: _group(name, values, where) for name, values in groups.items()})

    @classmethod
    def from_file(cls, path: str | Path) -> SolveParams:
        """The parameters in a TOML (``.toml``) or YAML (``.yaml``, ``.yml``) file of groups (see
        the module's docstring); errors name the file.

        Raises
        ------
        InvalidArgumentError
            A file that cannot be read or parsed, of another suffix, or a bad value in it.
        UnknownNameError
            An unknown group or field in it.
        """
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in (".toml", ".yaml", ".yml"):
            raise InvalidArgumentError(
                f"{path}: expected a .toml, .yaml or .yml file of solve parameters"
            )
        try:
            text = path.read_text()
            data = tomllib.loads(text) if suffix == ".toml" else yaml.safe_load(text)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, yaml.YAMLError) as error:
            raise InvalidArgumentError(f"{path}: cannot read solve parameters: {error}") from error
        return cls.from_dict(data or {}, source=str(path))


#: The groups of :class:`SolveParams`, by field name.
GROUPS: dict[str, Any] = {
    "size": SizeParams,
    "start": StartParams,
    "sub_solve": SubSolveParams,
    "loop": LoopParams,
    "portfolio": PortfolioParams,
}


def _group(name: str, values: Mapping, where: str):
    """The group ``name`` built from ``values``; errors named ``group.field``."""
    group = GROUPS[name]
    fields = [f.name for f in dataclasses.fields(group)]
    for key in values:
        if key not in fields:
            raise UnknownNameError(f"{where}{name} parameter", key, fields)
    try:
        return group(**values)
    except UnknownNameError as error:
        raise UnknownNameError(f"{where}{name}.{error.kind}", error.name, error.choices) from None
    except InvalidArgumentError as error:
        raise InvalidArgumentError(f"{where}{name}.{error}") from None
