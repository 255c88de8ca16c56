"""``lns-report``: tables (markdown) and plots (PNG) of a benchmark results folder."""

from __future__ import annotations

from omegaconf import DictConfig

from lns.cli.common import hydra_app
from lns.report import write_report


@hydra_app("lns-report", "report")
def main(cfg: DictConfig) -> None:
    report = write_report(
        cfg.results_dir, cfg.out_dir, threshold=cfg.threshold, n_times=cfg.n_times
    )
    print(f"lns-report: wrote {report}")


if __name__ == "__main__":
    main()
