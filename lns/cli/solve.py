"""``lns-solve``: improve one instance under a budget; every option is a Hydra override."""

from __future__ import annotations

import contextlib
import logging
import sys
from typing import cast

from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from instances.bundled import resolve_instance
from lns.api import BASELINES, solve
from lns.cli.common import hydra_app, solve_params
from lns.cli.progress_bar import ProgressBar
from lns.cli.signals import exit_after_stop_signal
from lns.core.problem.solu_file import known_objective
from lns.core.search.metrics import primal_gap
from lns.core.search.result import Result
from lns.core.search.stop import budget

log = logging.getLogger("lns")


@hydra_app("lns-solve", "solve")
@exit_after_stop_signal("lns-solve")
def main(cfg: DictConfig) -> None:
    instance = resolve_instance(cfg.instance)
    optimum = cfg.optimum if cfg.optimum is not None else known_objective(instance)
    show_bar = cfg.progress == "bar" or (cfg.progress == "auto" and sys.stderr.isatty())
    bar = ProgressBar(cfg.time_limit, optimum) if show_bar else None
    with _showing(bar):
        result = _run(cfg, instance, optimum, [bar] if bar else None)
    print(_summary(result, optimum, cfg.out))
    if result.x is None:
        sys.exit(1)


def _run(cfg: DictConfig, instance, optimum, callbacks) -> Result:
    """The method of ``cfg.method`` on ``instance``: :func:`lns.api.solve` with the selector and
    the parameter groups of ``cfg``, or a baseline with its own options; the budget of
    ``time_limit`` and ``iteration_limit`` with the further rule ``cfg.stop``, if any."""
    stop = budget(cfg.time_limit, cfg.iteration_limit)
    if cfg.stop is not None:
        stop = stop | instantiate(cfg.stop)
    common = dict(
        seed=cfg.seed,
        initial_solution=cfg.initial_solution,
        out=cfg.out,
        optimum=optimum,
        callbacks=callbacks,
    )
    options = cast(dict, OmegaConf.to_container(cfg.method, resolve=True))  # a mapping node
    name = options.pop("name")
    if name != "lns":
        return BASELINES[name](instance, stop, **options, **common)
    return solve(instance, instantiate(cfg.selector), stop, params=solve_params(cfg), **common)


@contextlib.contextmanager
def _showing(bar: ProgressBar | None):
    """While ``bar`` shows, each log line wipes it first (a filter on the stream handlers).

    The bar is drawn a last time and closed at the end; ``None``: no bar, nothing to do.
    """
    if bar is None:
        yield
        return
    handlers = [h for h in logging.getLogger().handlers if isinstance(h, logging.StreamHandler)]
    for handler in handlers:
        handler.addFilter(bar)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(bar)
        bar.close()


def _summary(result: Result, optimum: float | None, out: str | None) -> str:
    """The lines printed after a run: what ran, how it ended, the objective and its gap."""
    lines = [
        f"instance     {result.instance}",
        f"method       {result.method}"
        + (f" ({result.selector})" if result.selector else "")
        + (f", {len(result.workers)} workers" if result.workers else "")
        + (f" ({_kinds(result)})" if result.workers else ""),
        f"status       {result.status} ({result.stop_reason})",
        f"objective    {result.objective}",
    ]
    if optimum is not None and result.objective is not None:
        lines.append(
            f"primal gap   {100 * primal_gap(result.objective, optimum):.4f}% (optimum {optimum:g})"
        )
    lines += [
        f"time         {result.runtime:.2f}s, {len(result.iterations)} iterations, "
        f"{len(result.trajectory)} improvements"
    ]
    if result.feasibility is not None:
        lines.append(
            f"feasible     {result.feasibility.feasible} (max row violation "
            f"{result.feasibility.max_row_violation:.2e})"
        )
    if out and result.x is not None:
        lines.append(f"solution     {out}")
    return "\n".join(lines)


def _kinds(result: Result) -> str:
    """``"2 lns, 1 cpsat"``: how many workers of each kind ran."""
    counts: dict = {}
    for worker in result.workers:
        counts[worker.kind] = counts.get(worker.kind, 0) + 1
    return ", ".join(f"{count} {kind}" for kind, count in counts.items())


if __name__ == "__main__":
    main()
