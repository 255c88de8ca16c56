"""``lns-report``: tables (markdown) and plots (PNG) of a benchmark results folder."""
from __future__ import annotations

import hydra
from omegaconf import DictConfig

from lns.cli.common import CONFIG_PATH, exit_on_error
from lns.report import write_report


@hydra.main(version_base="1.3", config_path=CONFIG_PATH, config_name="report")
@exit_on_error("lns-report")
def main(cfg: DictConfig) -> None:
    report = write_report(cfg.results_dir, cfg.out_dir, threshold=cfg.threshold, n_times=cfg.n_times)
    print(f"lns-report: wrote {report}")


if __name__ == "__main__":
    main()
