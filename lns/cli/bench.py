"""``lns-bench``: run a matrix of instances x methods x seeds and store one record per run.

Sequential by default; ``--multirun`` runs the shards of the matrix (``shard`` in
``range(shards)``, 2 by default) as Hydra jobs, in parallel with the joblib launcher
(``hydra/launcher=joblib``, the default for multiruns) or on a cluster with
``hydra/launcher=slurm``. Sweeping ``instances``, ``methods`` or ``seeds`` instead gives one
job per value. Finished runs are skipped, and so are runs another live process is running, so
any of these can be rerun to resume, even beside a run still going.
"""

from __future__ import annotations

import logging
from typing import cast

from omegaconf import DictConfig, OmegaConf

from lns.bench import compose_matrix, run_matrix, shard
from lns.bench_store import BenchStore
from lns.cli.common import hydra_app
from lns.params import GROUPS

log = logging.getLogger("lns")


@hydra_app("lns-bench", "bench")
def main(cfg: DictConfig) -> None:
    container = cast(dict, OmegaConf.to_container(cfg, resolve=True))  # the root is a mapping
    specs = compose_matrix(
        container["instances"],
        container["methods"],
        container["seeds"],
        cfg.time_limit,
        instance_set=cfg.name,
        method_options=container["method_options"],
        params={group: container[group] for group in GROUPS},
        variants=container.get("variants"),
    )
    part = shard(specs, cfg.shard, cfg.shards)
    store = BenchStore(cfg.results_dir)
    log.info(
        "%s: %d runs in the matrix, %d in shard %d/%d, results in %s",
        cfg.name,
        len(specs),
        len(part),
        cfg.shard,
        cfg.shards,
        store.root,
    )
    summary = run_matrix(
        part, store, isolate=cfg.isolate, retry_failed=cfg.retry_failed, kill_grace=cfg.kill_grace
    )
    print(
        f"lns-bench: {cfg.name} shard {cfg.shard}/{cfg.shards}: {summary.ran} runs done "
        f"({summary.failed} failed, {summary.skipped} skipped), {summary.resumed} found done, "
        f"{summary.busy} running elsewhere; report: lns-report results_dir={store.root}"
    )


if __name__ == "__main__":
    main()
