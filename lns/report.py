"""Tables and plots of a benchmark's results folder (what ``lns-report`` writes).

The runs of a folder (:mod:`lns.bench_store`) are grouped by instance set and time limit
``T``; each group gets a summary table (mean and median primal integral, survival and
best-performing rates, iterations), two plots, per-instance tables of the gap at ``T`` and
of the primal integral (with their mean and median), and the pairwise win counts of the
methods (on how many instances one has a lower primal integral than another).

Per run, the primal gap is the step
function of its trajectory (:mod:`lns.core.search.metrics`); seeds are averaged per instance and
method before instances are aggregated, so every instance weighs the same. A run that
failed or was skipped (a method that does not apply, such as CP-SAT on a problem with
continuous variables) has no solution: gap 1 throughout, primal integral ``T``.

The reference p* of an instance is the best of its ``.solu`` value (optimal or best
known) and the best objective any run in the folder found, in the problem's sense; the
report says which one it is (``solu`` or ``best_found``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lns.bench import method_names
from lns.bench_store import ERROR, SKIPPED, BenchStore, RunRecord, write_table
from lns.core.search.metrics import (
    best_found,
    best_performing_rate,
    first_solution_time,
    gap_at,
    gap_curves,
    primal_integral,
    primal_integrals,
    shifted_geometric_mean,
    survival_rate,
    time_to_gap,
)


@dataclass(frozen=True)
class Reference:
    """The p* of one instance: its value (``None`` if unknown), sense and where it comes from."""

    value: float | None
    sense: str | None
    source: str | None


def references(records: list[RunRecord]) -> dict:
    """``{(instance_set, instance): Reference}`` from ``.solu`` values and the best run objectives.

    The best value any run found wins over the ``.solu`` value only if it is strictly
    better (a ``=best=`` entry a run improved on); ties keep ``"solu"``.
    """
    by_instance = defaultdict(list)
    for record in records:
        by_instance[(record.instance_set, record.instance)].append(record)
    result = {}
    for key, runs in by_instance.items():
        sense = next((r.sense for r in runs if r.sense), None)
        known = next((r.known_optimum for r in runs if r.known_optimum is not None), None)
        found = best_found([r.objective for r in runs], sense) if sense else None
        if (
            sense
            and found is not None
            and (known is None or best_found([known, found], sense) != known)
        ):
            result[key] = Reference(found, sense, "best_found")
        else:
            result[key] = Reference(known, sense, "solu" if known is not None else None)
    return result


@dataclass
class GroupMetrics:
    """The metrics of one instance set at one time limit.

    Attributes
    ----------
    instance_set : str
    time_limit : float
    methods : list of str
    instances : list of str
    times : numpy.ndarray, shape (n_times,)
        Grid on ``[0, T]`` of the curves.
    gaps : numpy.ndarray, shape (methods, instances, n_times)
        Seed-averaged primal gap; NaN where a method has no run on an instance.
    integrals : numpy.ndarray, shape (methods, instances)
        Seed-averaged primal integral in seconds; NaN where a method has no run.
    first_solution : numpy.ndarray, shape (methods, instances)
        Seed-averaged seconds to the first solution (``T`` without one); NaN where no run.
    within_1pct : numpy.ndarray, shape (methods, instances)
        Seed-averaged seconds to a gap of at most 1% to the reference (``T`` if never); NaN
        where no run.
    iterations : numpy.ndarray, shape (methods, instances)
        Seed-averaged LNS iterations (0 for plain SCIP and CP-SAT); NaN where a method has no run.
    seeds : numpy.ndarray of int, shape (methods,)
        Distinct seeds per method.
    runs, failed, skipped : numpy.ndarray of int, shape (methods,)
    """

    instance_set: str
    time_limit: float
    methods: list
    instances: list
    times: np.ndarray
    gaps: np.ndarray
    integrals: np.ndarray
    first_solution: np.ndarray
    within_1pct: np.ndarray
    iterations: np.ndarray
    seeds: np.ndarray
    runs: np.ndarray
    failed: np.ndarray
    skipped: np.ndarray

    def complete_instances(self) -> np.ndarray:
        """Mask of the instances on which every method has runs (where methods can be compared)."""
        return ~np.isnan(self.integrals).any(axis=0)

    def best_rate(self, time_index: int = -1) -> np.ndarray:
        """Best-performing rate per method at ``times[time_index]``, over the complete instances."""
        complete = self.complete_instances()
        if not complete.any():
            return np.full(len(self.methods), np.nan)
        return best_performing_rate(self.gaps[:, complete, time_index])

    def wins(self) -> np.ndarray:
        """``wins[a, b]``: complete instances where ``a``'s primal integral is below ``b``'s."""
        integrals = self.integrals[:, self.complete_instances()]
        return (integrals[:, None, :] < integrals[None, :, :]).sum(axis=2)

    def survival(self, threshold: float) -> np.ndarray:
        """Survival rate over time, shape (methods, n_times), over the method's instances."""
        return np.array([survival_rate(g[~np.isnan(g[:, 0])], threshold) for g in self.gaps])


def group_metrics(records: list[RunRecord], n_times: int = 201) -> list[GroupMetrics]:
    """Metrics of every (instance set, time limit) group of ``records``, sorted by set and limit."""
    refs = references(records)
    groups = defaultdict(list)
    for record in records:
        groups[(record.instance_set, record.time_limit)].append(record)
    order = {name: i for i, name in enumerate(method_names())}
    result = []
    for (instance_set, time_limit), runs in sorted(groups.items()):
        methods = sorted({r.method for r in runs}, key=lambda m: (order.get(m, len(order)), m))
        instances = sorted({r.instance for r in runs})
        times = np.linspace(0.0, time_limit, n_times)
        gaps = np.full((len(methods), len(instances), n_times), np.nan)
        integrals = np.full((len(methods), len(instances)), np.nan)
        iterations = np.full((len(methods), len(instances)), np.nan)
        first_solution = np.full((len(methods), len(instances)), np.nan)
        within_1pct = np.full((len(methods), len(instances)), np.nan)
        cells = defaultdict(list)
        for r in runs:
            cells[(methods.index(r.method), instances.index(r.instance))].append(r)
        for (m, i), cell in cells.items():
            trajectories = [r.trajectory for r in cell]
            reference = [refs[(instance_set, cell[0].instance)].value] * len(cell)
            gaps[m, i] = gap_curves(trajectories, reference, times).mean(axis=0)
            integrals[m, i] = primal_integrals(trajectories, reference, time_limit).mean()
            iterations[m, i] = np.mean([r.iterations for r in cell])
            first_solution[m, i] = np.mean(
                [first_solution_time(t, time_limit) for t in trajectories]
            )
            within_1pct[m, i] = np.mean(
                [time_to_gap(t, reference[0], 0.01, time_limit) for t in trajectories]
            )
        per_method = [[r for r in runs if r.method == m] for m in methods]
        result.append(
            GroupMetrics(
                instance_set,
                time_limit,
                methods,
                instances,
                times,
                gaps,
                integrals,
                first_solution,
                within_1pct,
                iterations,
                seeds=np.array([len({r.seed for r in method_runs}) for method_runs in per_method]),
                runs=np.array([len(method_runs) for method_runs in per_method]),
                failed=np.array(
                    [sum(r.status == ERROR for r in method_runs) for method_runs in per_method]
                ),
                skipped=np.array(
                    [sum(r.status == SKIPPED for r in method_runs) for method_runs in per_method]
                ),
            )
        )
    return result


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def plot_group(group: GroupMetrics, out_dir: Path, threshold: float) -> tuple[Path, Path]:
    """Write ``<set>_t<T>_gap.png`` and ``<set>_t<T>_survival.png``.

    The gap plot shows the mean gap over time, with a band of ±1 standard deviation over instances.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stem = f"{_slug(group.instance_set)}_t{group.time_limit:g}"
    paths = (out_dir / f"{stem}_gap.png", out_dir / f"{stem}_survival.png")
    survival = group.survival(threshold)
    figure, axes = plt.subplots(figsize=(7, 4.5))
    for m, method in enumerate(group.methods):
        gaps = group.gaps[m][~np.isnan(group.gaps[m, :, 0])]
        mean, spread = gaps.mean(axis=0), gaps.std(axis=0)
        axes.step(group.times, mean, where="post", label=method)
        axes.fill_between(
            group.times,
            np.clip(mean - spread, 0, 1),
            np.clip(mean + spread, 0, 1),
            step="post",
            alpha=0.15,
        )
    axes.set(
        xlabel="time (s)",
        ylabel="primal gap",
        ylim=(-0.02, 1.02),
        xlim=(0, group.time_limit),
        title=(
            f"{group.instance_set}: mean primal gap over {len(group.instances)} instances "
            "(band: ±1 std)"
        ),
    )
    axes.legend()
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(paths[0], dpi=110)
    plt.close(figure)
    figure, axes = plt.subplots(figsize=(7, 4.5))
    for m, method in enumerate(group.methods):
        axes.step(group.times, survival[m], where="post", label=method)
    axes.set(
        xlabel="time (s)",
        ylabel=f"share of instances with gap ≤ {threshold:g}",
        ylim=(-0.02, 1.02),
        xlim=(0, group.time_limit),
        title=f"{group.instance_set}: survival rate (gap ≤ {100 * threshold:g}%)",
    )
    axes.legend()
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(paths[1], dpi=110)
    plt.close(figure)
    return paths


def _fmt(value: float, digits: int = 4) -> str:
    return "–" if value is None or np.isnan(value) else f"{value:.{digits}f}"


def group_markdown(
    group: GroupMetrics,
    records: list[RunRecord],
    refs: dict,
    threshold: float,
    plots: tuple[Path, Path],
    out_dir: Path,
) -> str:
    """The markdown section of one group: summary table, plots, per-instance gaps and primal
    integrals, pairwise wins, references, failures."""
    T = group.time_limit
    lines = [
        f"## {group.instance_set}, T = {T:g} s",
        "",
        *_summary_table(group, threshold),
        "",
        *(f"![{p.stem}]({p.relative_to(out_dir).as_posix()})" for p in plots),
        "",
        "Mean primal gap at T per instance (over seeds):",
        "",
        *_instance_table(group, group.gaps[:, :, -1], 4),
        "",
        "Primal integral per instance (s, mean over seeds):",
        "",
        *_instance_table(group, group.integrals, 2),
        "",
        *_wins_table(group),
        "",
        "References p*:",
        "",
        "| instance | sense | p* | source |",
        "|---|---|---:|---|",
    ]
    for instance in group.instances:
        ref = refs[(group.instance_set, instance)]
        lines.append(
            f"| {instance} | {ref.sense or '?'} "
            f"| {'–' if ref.value is None else f'{ref.value:.10g}'} "
            f"| {ref.source or 'none'} |"
        )
    problems = sorted(
        {
            (r.instance, r.method, r.status, (r.error or "").splitlines()[0][:200])
            for r in records
            if r.instance_set == group.instance_set
            and r.time_limit == T
            and r.status in (ERROR, SKIPPED)
        }
    )
    if problems:
        lines += ["", "Failed and skipped runs:", ""]
        lines += [
            f"- {instance} · {method} · {status}: {error}"
            for instance, method, status, error in problems
        ]
    return "\n".join(lines) + "\n"


def _summary_table(group: GroupMetrics, threshold: float) -> list[str]:
    survival = group.survival(threshold)[:, -1]
    best = group.best_rate()
    lines = [
        f"Gap and rates at T; primal integral over [0, T] in seconds (T = no solution all "
        f"along), mean, shifted geometric mean (shift 1) and median over instances; seconds to "
        f"the first solution and to a gap of at most 1% (T without), median over instances. "
        f"Survival: share of "
        f"instances with gap ≤ "
        f"{threshold:g}. Best-performing rate over the {int(group.complete_instances().sum())} "
        "instances every method ran; ties count for each. Iterations: LNS iterations per run, "
        "mean over instances.",
        "",
        "| method | instances | seeds | runs | failed | skipped | mean gap at T "
        "| mean primal integral (s) | sgm primal integral (s) | median primal integral (s) "
        "| first solution (s) | within 1% (s) | survival at T | best-performing at T "
        "| iterations |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for m, method in enumerate(group.methods):
        ran = int((~np.isnan(group.integrals[m])).sum())
        cells = [
            method,
            f"{ran}/{len(group.instances)}",
            group.seeds[m],
            group.runs[m],
            group.failed[m],
            group.skipped[m],
            _fmt(np.nanmean(group.gaps[m, :, -1])),
            _fmt(np.nanmean(group.integrals[m]), 2),
            _fmt(shifted_geometric_mean(group.integrals[m]), 2),
            _fmt(np.nanmedian(group.integrals[m]), 2),
            _fmt(np.nanmedian(group.first_solution[m]), 2),
            _fmt(np.nanmedian(group.within_1pct[m]), 2),
            _fmt(survival[m], 3),
            _fmt(best[m], 3),
            _fmt(np.nanmean(group.iterations[m]), 0),
        ]
        lines.append("| " + " | ".join(map(str, cells)) + " |")
    return lines


def _instance_table(group: GroupMetrics, values: np.ndarray, digits: int) -> list[str]:
    """A row per instance of ``values`` (shape (methods, instances)), then mean and median rows."""
    lines = [
        "| instance | " + " | ".join(group.methods) + " |",
        "|---|" + "---:|" * len(group.methods),
    ]
    rows = [(instance, values[:, i]) for i, instance in enumerate(group.instances)]
    rows += [
        (f"**{name}**", reduce(values))
        for name, reduce in (
            ("mean", lambda v: np.nanmean(v, axis=1)),
            ("sgm (shift 1)", lambda v: np.array([shifted_geometric_mean(row) for row in v])),
            ("median", lambda v: np.nanmedian(v, axis=1)),
        )
    ]
    for label, row in rows:
        lines.append(f"| {label} | " + " | ".join(_fmt(value, digits) for value in row) + " |")
    return lines


def _wins_table(group: GroupMetrics) -> list[str]:
    """Pairwise win counts: on how many complete instances the row's method beats the column's."""
    wins, complete = group.wins(), int(group.complete_instances().sum())
    lines = [
        f"Wins: on how many of the {complete} instances every method ran the row's method "
        "has a lower primal integral than the column's.",
        "",
        "| wins | " + " | ".join(group.methods) + " |",
        "|---|" + "---:|" * len(group.methods),
    ]
    for a, method in enumerate(group.methods):
        lines.append(
            f"| {method} | "
            + " | ".join("–" if a == b else str(wins[a, b]) for b in range(len(group.methods)))
            + " |"
        )
    return lines


def _run_metrics(record: RunRecord, refs: dict) -> dict:
    """The columns the report adds to a run's row in ``runs.csv``."""
    ref = refs[(record.instance_set, record.instance)]
    return {
        "reference": ref.value,
        "reference_source": ref.source,
        "gap_at_time_limit": gap_at(record.trajectory, ref.value, record.time_limit),
        "primal_integral": primal_integral(record.trajectory, ref.value, record.time_limit),
    }


def write_report(
    results_dir: str | Path,
    out_dir: str | Path | None = None,
    threshold: float = 0.01,
    n_times: int = 201,
) -> Path:
    """Read a results folder; write ``report.md``, the PNG plots and ``runs.csv`` into ``out_dir``.

    ``runs.csv`` has one row per run: the record's fields, then ``reference`` (p*),
    ``reference_source`` (``"solu"`` or ``"best_found"``), ``gap_at_time_limit`` and
    ``primal_integral``.

    Parameters
    ----------
    results_dir : path
        A folder written by ``lns-bench`` (records in ``records/``).
    out_dir : path, optional
        Where to write (default: ``results_dir``).
    threshold : float
        Gap threshold of the survival rate (0.01: 1%).
    n_times : int
        Points of the time grid of the curves.

    Returns
    -------
    pathlib.Path
        The path of ``report.md``.
    """
    store = BenchStore(results_dir)
    out_dir = Path(out_dir) if out_dir is not None else store.root
    command = f"lns-report results_dir={store.root.as_posix()}"
    return write_records_report(
        store.load(), out_dir, store.root.as_posix(), command, threshold, n_times
    )


def write_records_report(
    records: list[RunRecord],
    out_dir: str | Path,
    title: str,
    command: str,
    threshold: float = 0.01,
    n_times: int = 201,
) -> Path:
    """Write ``report.md``, the PNG plots and ``runs.csv`` of ``records`` into ``out_dir``.

    :func:`write_report` for records from anywhere, e.g. the runs of several results
    folders on the same instances, relabelled (``benchmarks/merge_reports.py``).

    Parameters
    ----------
    records : list of RunRecord
    out_dir : path
    title : str
        The report's heading.
    command : str
        The command that regenerates the report, quoted in it.
    threshold, n_times
        As in :func:`write_report`.
    """
    if not 0 <= threshold <= 1:
        raise ValueError(f"threshold must be in [0, 1], got {threshold}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    refs = references(records)
    sections = []
    for group in group_metrics(records, n_times):
        plots = plot_group(group, out_dir, threshold)
        sections.append(group_markdown(group, records, refs, threshold, plots, out_dir))
    write_table(records, out_dir / "runs.csv", [_run_metrics(record, refs) for record in records])
    report = out_dir / "report.md"
    report.write_text(
        f"# Benchmark report: {title}\n\n"
        f"{len(records)} runs; one row per run in `runs.csv`. Regenerate this file with "
        f"`{command}`.\n\n" + "\n".join(sections)
    )
    return report
