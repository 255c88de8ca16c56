"""What every command-line app shares: the config folder (with its generated configs, see
:mod:`configs.generated`) and one-line errors, for a failing task and for a bad override."""

from __future__ import annotations

import difflib
import functools
import sys

import hydra
from hydra import compose, initialize_config_dir
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException, MissingConfigException
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from configs import CONFIG_DIR
from lns.core.errors import LNSError
from lns.params import GROUPS, SolveParams

CONFIG_PATH = str(CONFIG_DIR)
_ABSENT = object()


def exit_on_error(app: str):
    """Decorate a Hydra task so that a project error prints ``app: error: ...`` and exits with 2."""

    def decorate(task):
        @functools.wraps(task)
        def wrapper(*args, **kwargs):
            try:
                return task(*args, **kwargs)
            except (LNSError, ValueError, TypeError) as error:
                _fail(app, str(error))

        return wrapper

    return decorate


def solve_params(cfg: DictConfig) -> SolveParams:
    """The :class:`lns.params.SolveParams` of a composed config's groups (``size``, ``start``,
    ``sub_solve``, ``loop``, ``portfolio``)."""
    groups = {group: OmegaConf.to_container(cfg[group], resolve=True) for group in GROUPS}
    return SolveParams.from_dict(groups)


def hydra_app(app: str, config_name: str):
    """``hydra.main`` for the config ``config_name`` with one-line errors, also for bad overrides.

    Before Hydra runs, the command line's overrides are composed once here: an unknown key,
    group option or a value of the wrong type ends the program with ``app: error: ...`` on one
    line (the close names suggested) and exit code 2, instead of Hydra's multi-line report.
    """

    def decorate(task):
        main = hydra.main(version_base="1.3", config_path=CONFIG_PATH, config_name=config_name)
        hydra_main = main(exit_on_error(app)(task))

        @functools.wraps(task)
        def entry():
            problem = override_problem(config_name, sys.argv[1:])
            if problem:
                _fail(app, problem)
            return hydra_main()

        return entry

    return decorate


def override_problem(config_name: str, args: list[str]) -> str | None:
    """What is wrong with the overrides in ``args`` for config ``config_name`` (one line), or None.

    Flags other than ``--multirun``/``-m`` leave the check to Hydra. A sweep (``a=1,2``) is
    checked for its key only.
    """
    overrides = [arg for arg in args if arg not in ("-m", "--multirun")]
    if any(arg.startswith("-") for arg in overrides):
        return None
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except HydraException as error:
        return _first_line(error)
    single = [
        text
        for text, override in zip(overrides, parsed, strict=True)
        if not override.is_sweep_override()
    ]
    try:
        cfg = _compose(config_name, single)
    except (HydraException, OmegaConfBaseException) as error:
        return _explain(config_name, single, error)
    for override in parsed:
        key = override.key_or_group
        if override.is_sweep_override() and "/" not in key and not key.startswith("hydra."):
            if not _has(cfg, key):
                return _unknown_option(cfg, key)
    return None


def _compose(config_name: str, overrides: list[str]) -> DictConfig:
    with initialize_config_dir(config_dir=CONFIG_PATH, version_base="1.3"):
        return compose(config_name=config_name, overrides=overrides, return_hydra_config=True)


def _explain(config_name: str, overrides: list[str], error: Exception) -> str:
    if isinstance(error, MissingConfigException) and error.missing_cfg_file:
        group, _, choice = error.missing_cfg_file.rpartition("/")
        return _did_you_mean(f"unknown {group or 'config'} '{choice}'", choice, error.options or [])
    for text in overrides:
        key = text.lstrip("+~").split("=", 1)[0]
        if f"Could not override '{key}'." in str(error):
            rest = [other for other in overrides if other != text]
            try:
                return _unknown_option(_compose(config_name, rest), key) or _first_line(error)
            except (HydraException, OmegaConfBaseException) as other:
                return _explain(config_name, rest, other)
    return _first_line(error)


def _has(cfg: DictConfig, key: str) -> bool:
    found = OmegaConf.select(cfg, key, default=_ABSENT, throw_on_resolution_failure=False)
    return found is not _ABSENT


def _unknown_option(cfg: DictConfig, key: str) -> str | None:
    if _has(cfg, key):
        return None
    parts = key.split(".")
    depth = next(i for i in range(len(parts)) if not _has(cfg, ".".join(parts[: i + 1])))
    parent, leaf = ".".join(parts[:depth]), parts[depth]
    node = OmegaConf.select(cfg, parent, throw_on_resolution_failure=False) if parent else cfg
    names = [str(name) for name in node] if isinstance(node, DictConfig) else []
    names = [name for name in names if not name.startswith("_")]
    prefix = f"{parent}." if parent else ""
    return _did_you_mean(f"unknown option '{key}'", leaf, names, prefix=prefix)


def _did_you_mean(message: str, name: str, choices, prefix: str = "") -> str:
    choices = sorted(str(choice) for choice in choices)
    close = difflib.get_close_matches(name, choices, n=3, cutoff=0.6)
    if close:
        return f"{message}; did you mean {' or '.join(repr(prefix + c) for c in close)}?"
    return f"{message}; valid: {', '.join(prefix + c for c in choices)}" if choices else message


def _first_line(error: BaseException) -> str:
    """The first line of ``error`` (or of its cause); for an OmegaConf error, with its key."""
    error = error.__cause__ or error
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    key = getattr(error, "full_key", None)
    return f"{key}: {text}" if key and key not in text else text


def _fail(app: str, message: str):
    print(f"{app}: error: {message}", file=sys.stderr)
    sys.exit(2)
