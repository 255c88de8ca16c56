"""``lns-report``: tables (markdown) and plots (PNG) of benchmark results folders."""

from __future__ import annotations

from omegaconf import DictConfig, OmegaConf

from lns.cli.common import hydra_app
from lns.report import write_report


@hydra_app("lns-report", "report")
def main(cfg: DictConfig) -> None:
    results_dir = cfg.results_dir
    if OmegaConf.is_config(results_dir):
        results_dir = OmegaConf.to_container(results_dir, resolve=True)
    report = write_report(
        results_dir,
        cfg.out_dir,
        threshold=cfg.threshold,
        n_times=cfg.n_times,
        baseline=cfg.baseline,
        instance_set=cfg.instance_set,
    )
    print(f"lns-report: wrote {report}")


if __name__ == "__main__":
    main()
