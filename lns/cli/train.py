"""``lns-train``: train the CL-LNS policy on collected samples.

Keeps the best checkpoint by validation loss.
"""

from __future__ import annotations

from typing import cast

import hydra
from omegaconf import DictConfig, OmegaConf

from lns.cli.common import CONFIG_PATH, exit_on_error


@hydra.main(version_base="1.3", config_path=CONFIG_PATH, config_name="train")
@exit_on_error("lns-train")
def main(cfg: DictConfig) -> None:
    import torch

    from learning.train import TrainConfig, train

    torch.set_num_threads(cfg.threads)
    data = [cfg.data] if isinstance(cfg.data, str) else list(cfg.data)
    config = TrainConfig(
        epochs=cfg.epochs,
        batch_size=cfg.batch_size,
        pass_edges=cfg.pass_edges,
        lr=cfg.lr,
        weight_decay=cfg.weight_decay,
        max_grad_norm=cfg.max_grad_norm,
        loss=cfg.loss,
        temperature=cfg.temperature,
        validation_fraction=cfg.validation_fraction,
        select_by=cfg.select_by,
        problem_class=cfg.problem_class,
        features=cfg.features if isinstance(cfg.features, str) else list(cfg.features),
        seed=cfg.seed,
        samples_per_instance=cfg.samples_per_instance,
        init=cfg.init,
        model=cast(dict, OmegaConf.to_container(cfg.model, resolve=True)),  # a mapping node
    )
    result = train(
        data, cfg.checkpoint, config, log_csv=cfg.curves, tensorboard_dir=cfg.tensorboard
    )
    print(
        f"lns-train: {result['train_samples']} training / "
        f"{result['validation_samples']} validation samples, "
        f"best epoch {result['best_epoch']} (validation loss {result['best_validation_loss']:.4f}, "
        f"recall {result['best_validation_recall']:.3f}) in "
        f"{result['train_time']:.1f}s -> {cfg.checkpoint}"
    )


if __name__ == "__main__":
    main()
