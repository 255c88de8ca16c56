"""``lns-prior``: fit the ``auto`` portfolio's prior of the kinds from benchmark records."""

from __future__ import annotations

from typing import cast

from omegaconf import DictConfig, OmegaConf

from lns.cli.common import hydra_app
from lns.kinds_prior import choose_neighbours, fit_prior, kind_records, leave_one_out
from lns.report import load_results


@hydra_app("lns-prior", "prior")
def main(cfg: DictConfig) -> None:
    results_dir = cfg.results_dir
    if OmegaConf.is_config(results_dir):
        results_dir = OmegaConf.to_container(results_dir, resolve=True)
    method_kinds = cast(dict, OmegaConf.to_container(cfg.method_kinds, resolve=True))
    table = kind_records(load_results(results_dir), method_kinds)
    if cfg.neighbours == "auto":
        prior = choose_neighbours(fit_prior(table, neighbours=1))
    else:
        prior = fit_prior(table, neighbours=cfg.neighbours)
    check = leave_one_out(prior)
    for instance, first, best, score in zip(
        check.instances, check.first, check.best, check.scores, strict=True
    ):
        print(f"  {instance:28s} first {first:13s} best {best:13s} order score {score:.3f}")
    print(f"lns-prior: neighbours={prior.neighbours}; {check.summary()}")
    print(
        f"lns-prior: {len(table.instances)} instances, kinds {list(table.kinds)} -> "
        f"{prior.save(cfg.out)}"
    )


if __name__ == "__main__":
    main()
