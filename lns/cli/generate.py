"""``lns-generate``: write a set of generated instances and its manifest (options: Hydra overrides).

The presets of :mod:`instances.generators` are registered here as Hydra configs, so the parameter
dataclasses stay the only source of the presets: ``problem=<class>`` and ``size=<preset>`` pick
``params``, and each field can be overridden as ``params.<field>=<value>``.
"""

from __future__ import annotations

import dataclasses
from typing import cast

import hydra
from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

from instances.generators import CLASSES, problem_class, write_set
from lns.cli.common import CONFIG_PATH, exit_on_error


def register_presets(store: ConfigStore) -> None:
    """Config groups ``problem``, ``size`` (top-level keys) and ``params`` (``<class>_<size>``)."""
    sizes = sorted({size for cls in CLASSES.values() for size in cls.presets})
    for name in CLASSES:
        store.store(group="problem", name=name, node={"problem": name}, package="_global_")
    for size in sizes:
        store.store(group="size", name=size, node={"size": size}, package="_global_")
    for cls in CLASSES.values():
        for size, preset in cls.presets.items():
            # A plain dict: the frozen dataclass would make the node read-only
            # (__post_init__ validates).
            store.store(group="params", name=f"{cls.name}_{size}", node=dataclasses.asdict(preset))


register_presets(ConfigStore.instance())


@exit_on_error("lns-generate")
def run(cfg: DictConfig) -> dict:
    """Write the set a composed ``generate`` config describes; returns the manifest."""
    cls = problem_class(cfg.problem)
    overrides = cast(dict, OmegaConf.to_container(cfg.params, resolve=True))  # a mapping node
    params = cls.params(cfg.size, **overrides)
    manifest = write_set(
        cfg.problem,
        params,
        n=cfg.n,
        seed=cfg.seed,
        out_dir=cfg.out_dir,
        prefix=cfg.prefix,
        start=cfg.start,
        size=cfg.size,
        writer=cfg.writer,
    )
    rows = manifest["instances"]
    total = sum(row["bytes"] for row in rows)
    print(
        f"{len(rows)} {cfg.problem} instances ({cfg.size}: {params}) -> {cfg.out_dir} "
        f"[{rows[0]['n_vars']} vars, {rows[0]['n_rows']} rows in the first; {total / 1e6:.1f} MB]"
    )
    return manifest


@hydra.main(version_base="1.3", config_path=CONFIG_PATH, config_name="generate")
def main(cfg: DictConfig) -> None:
    run(cfg)


if __name__ == "__main__":
    main()
