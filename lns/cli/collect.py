"""``lns-collect``: CL-LNS expert data (Local Branching or sampled neighborhoods), a file per
instance, resumable."""

from __future__ import annotations

import glob
import logging
from pathlib import Path
from typing import cast

import hydra
from omegaconf import DictConfig, OmegaConf

from lns.cli.common import CONFIG_PATH, exit_on_error
from lns.core.errors import InvalidArgumentError, UnknownNameError
from lns.core.problem.mip import is_problem_file

log = logging.getLogger("lns.collect")
EXPERTS = ("lb", "sampled")


def instance_paths(pattern: str) -> list[Path]:
    """Files named by a glob pattern, a folder (its problem files: not a generator's
    ``manifest.json``) or one path, sorted."""
    path = Path(pattern)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and is_problem_file(p))
    elif path.is_file():
        files = [path]
    else:
        files = sorted(Path(p) for p in glob.glob(pattern))
    if not files:
        raise InvalidArgumentError(f"instances={pattern!r}: no files match")
    return files


def make_expert(cfg: DictConfig):
    """The expert of ``cfg.expert`` (``lb`` or ``sampled``, with ``cfg.sampled`` and
    ``cfg.checkpoint``).

    Raises
    ------
    lns.core.errors.UnknownNameError
        Another expert name.
    ValueError
        A checkpoint with the LB expert, which has no use for it.
    """
    from learning.collect import LocalBranchingExpert
    from learning.sampled_expert import SampledConfig, SampledExpert

    if cfg.expert not in EXPERTS:
        raise UnknownNameError("expert", cfg.expert, EXPERTS)
    checkpoint = cfg.get("checkpoint")
    if cfg.expert == "lb":
        if checkpoint is not None:
            raise InvalidArgumentError(
                "checkpoint= is a proposal of expert=sampled; expert=lb uses none"
            )
        return LocalBranchingExpert()
    settings = cast(dict, OmegaConf.to_container(cfg.sampled, resolve=True))
    return SampledExpert(SampledConfig(**settings, checkpoint=checkpoint))


@hydra.main(version_base="1.3", config_path=CONFIG_PATH, config_name="collect")
@exit_on_error("lns-collect")
def main(cfg: DictConfig) -> None:
    import torch

    from learning.collect import CollectConfig, collect_files

    torch.set_num_threads(1)
    if not 0 <= cfg.shard < cfg.shards:
        raise InvalidArgumentError(f"shard must be in [0, shards={cfg.shards}), got {cfg.shard}")
    expert = make_expert(cfg)
    files = instance_paths(cfg.instances)[cfg.shard :: cfg.shards]
    limits = cast(dict, OmegaConf.to_container(cfg.collect_limits, resolve=True))  # a mapping node
    config = CollectConfig(**limits)
    features = cfg.features if isinstance(cfg.features, str) else list(cfg.features)
    written = collect_files(files, cfg.out_dir, config, cfg.seed, features, expert)
    print(
        f"lns-collect: {len(written)} new instance files in {cfg.out_dir} "
        f"({len(files) - len(written)} already there)"
    )


if __name__ == "__main__":
    main()
