"""Tables and plots of benchmark results folders (what ``lns-report`` writes).

The runs of one or several folders (:mod:`lns.bench_store`) are grouped by instance set and
time limit ``T``; each group gets a summary table (mean, shifted geometric mean and median
primal integral, its ratio to a baseline method, wins, survival and best-performing rates, times
to the first solution and to within 1%, iterations), two plots, per-instance tables (gap at
``T``, primal integral, ratio to the baseline, times to the first solution and to within 1%,
iterations, with their mean, shifted geometric mean and median), the pairwise win counts of the
methods (on how many instances one has a lower primal integral than another), where the runs'
time went (iterations, improving ones, selection and sub-solver seconds, the loop's overhead,
stop reasons), and, where the runs have them, the arms the adaptive selector played (or the draws
of cl_lns) and what the workers of a portfolio did.

Per run, the primal gap is the step function of its trajectory
(:mod:`lns.core.search.metrics`); seeds are averaged per instance and method before instances
are aggregated, so every instance weighs the same. A run that failed or was skipped (a method
that does not apply, such as CP-SAT on a problem with continuous variables) has no solution:
gap 1 throughout, primal integral ``T``.

The reference p* of an instance is the best of its ``.solu`` value (optimal or best
known) and the best objective any run of the report found, in the problem's sense; the
report says which one it is (``solu`` or ``best_found``). A report over several folders
(:func:`load_results`) thus compares their runs against one p* per instance.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lns.bench import method_names
from lns.bench_store import ERROR, SKIPPED, BenchStore, RunRecord, write_table
from lns.core.errors import InvalidArgumentError, LNSError, UnknownNameError
from lns.core.search.metrics import (
    best_found,
    best_performing_rate,
    first_improvement_time,
    first_solution_time,
    gap_at,
    gap_curves,
    primal_integral,
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
    first_improvement : numpy.ndarray, shape (methods, instances)
        Seed-averaged seconds to the first improvement of the first solution (``T`` without
        one); NaN where no run.
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
    first_improvement: np.ndarray
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

    def lowest(self, tol: float = 1e-9) -> np.ndarray:
        """Per method: complete instances on which its primal integral is the lowest (within
        ``tol`` seconds; a tie counts for each tied method)."""
        integrals = self.integrals[:, self.complete_instances()]
        if not integrals.size:
            return np.zeros(len(self.methods), dtype=int)
        return (integrals <= integrals.min(axis=0) + tol).sum(axis=1)

    def ratios(self, baseline: str) -> np.ndarray:
        """Primal integral of each method over ``baseline``'s, per instance, shape (methods,
        instances); NaN where either has no run or the baseline's integral is 0."""
        base = self.integrals[self.methods.index(baseline)]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(base > 0, self.integrals / base, np.nan)

    def survival(self, threshold: float) -> np.ndarray:
        """Survival rate over time, shape (methods, n_times), over the method's instances."""
        return np.array([survival_rate(g[~np.isnan(g[:, 0])], threshold) for g in self.gaps])


#: Per-run measures that :func:`group_metrics` averages over the seeds of an instance and a
#: method: name (a :class:`GroupMetrics` attribute) -> ``(record, reference, T) -> float``.
RUN_MEASURES: dict[str, Callable[[RunRecord, float | None, float], float]] = {
    "integrals": lambda r, reference, T: primal_integral(r.trajectory, reference, T),
    "first_solution": lambda r, reference, T: first_solution_time(r.trajectory, T),
    "first_improvement": lambda r, reference, T: first_improvement_time(r.trajectory, T),
    "within_1pct": lambda r, reference, T: time_to_gap(r.trajectory, reference, 0.01, T),
    "iterations": lambda r, reference, T: float(r.iterations),
}


def group_metrics(records: list[RunRecord], n_times: int = 201) -> list[GroupMetrics]:
    """Metrics of every (instance set, time limit) group of ``records``, sorted by set and limit."""
    refs = references(records)
    groups = defaultdict(list)
    for record in records:
        groups[(record.instance_set, record.time_limit)].append(record)
    return [
        _group(instance_set, time_limit, runs, refs, n_times)
        for (instance_set, time_limit), runs in sorted(groups.items())
    ]


def _group(
    instance_set: str, time_limit: float, runs: list[RunRecord], refs: dict, n_times: int
) -> GroupMetrics:
    """The :class:`GroupMetrics` of the runs of one instance set at one time limit."""
    order = {name: i for i, name in enumerate(method_names())}
    methods = sorted({r.method for r in runs}, key=lambda m: (order.get(m, len(order)), m))
    instances = sorted({r.instance for r in runs})
    times = np.linspace(0.0, time_limit, n_times)
    gaps = np.full((len(methods), len(instances), n_times), np.nan)
    measures = {name: np.full((len(methods), len(instances)), np.nan) for name in RUN_MEASURES}
    cells = defaultdict(list)
    for r in runs:
        cells[(methods.index(r.method), instances.index(r.instance))].append(r)
    for (m, i), cell in cells.items():
        reference = refs[(instance_set, cell[0].instance)].value
        gaps[m, i] = gap_curves([r.trajectory for r in cell], [reference] * len(cell), times).mean(
            axis=0
        )
        for name, measure in RUN_MEASURES.items():
            measures[name][m, i] = np.mean([measure(r, reference, time_limit) for r in cell])
    per_method = [[r for r in runs if r.method == m] for m in methods]
    return GroupMetrics(
        instance_set,
        time_limit,
        methods,
        instances,
        times,
        gaps,
        **measures,
        seeds=np.array([len({r.seed for r in method_runs}) for method_runs in per_method]),
        runs=np.array([len(method_runs) for method_runs in per_method]),
        failed=np.array(
            [sum(r.status == ERROR for r in method_runs) for method_runs in per_method]
        ),
        skipped=np.array(
            [sum(r.status == SKIPPED for r in method_runs) for method_runs in per_method]
        ),
    )


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


def _mean(values: list) -> float:
    return _over_values(np.mean, np.array(values, dtype=float))


def _baseline(group: GroupMetrics, baseline: str | None) -> str | None:
    """The method the group's ratios divide by: ``baseline``, or the group's first method if
    ``baseline`` is ``None``; ``None`` when the group has no runs of ``baseline``."""
    if baseline is None:
        return group.methods[0]
    return baseline if baseline in group.methods else None


def group_markdown(
    group: GroupMetrics,
    runs: list[RunRecord],
    refs: dict,
    threshold: float,
    plots: tuple[Path, Path],
    out_dir: Path,
    baseline: str | None = None,
) -> str:
    """The markdown section of one group (``runs``: its records): summary table, plots,
    per-instance tables, pairwise wins, where the time went, the arms and the portfolio workers
    (where the runs have them), references, failures.

    ``baseline`` is the method of the primal integral ratios (default: the group's first).
    """
    base = _baseline(group, baseline)
    lines = [
        f"## {group.instance_set}, T = {group.time_limit:g} s",
        "",
        *_summary_table(group, threshold, base),
        "",
        *(f"![{p.stem}]({p.relative_to(out_dir).as_posix()})" for p in plots),
        "",
    ]
    for title, values, digits in _instance_tables(group, base):
        lines += [f"{title}:", "", *_instance_table(group, values, digits), ""]
    lines += [*_wins_table(group), "", *_time_table(group, runs), ""]
    lines += [*_arms_table(group, runs), *_workers_table(group, runs)]
    lines += [*_references_table(group, refs), *_problems(runs)]
    return "\n".join(lines) + "\n"


def _summary_table(group: GroupMetrics, threshold: float, baseline: str | None) -> list[str]:
    survival = group.survival(threshold)[:, -1]
    best, lowest = group.best_rate(), group.lowest()
    complete = int(group.complete_instances().sum())
    ratios = group.ratios(baseline) if baseline is not None else None
    lines = [
        f"Gap and rates at T; primal integral over [0, T] in seconds (T = no solution all "
        f"along), mean, shifted geometric mean (shift 1) and median over instances; seconds to "
        f"the first solution and to a gap of at most 1% (T without), median over instances. "
        f"Survival: share of instances with gap ≤ {threshold:g}. Best-performing rate and wins "
        f"(the lowest primal integral) over the {complete} instances every method ran; ties "
        "count for each. Iterations: LNS iterations per run, mean over instances."
        + (
            f" Ratio: primal integral over {baseline}'s, median over instances."
            if ratios is not None
            else ""
        ),
        "",
        "| method | instances | seeds | runs | failed | skipped | mean gap at T "
        "| mean primal integral (s) | sgm primal integral (s) | median primal integral (s) "
        "| first solution (s) | within 1% (s) | survival at T | best-performing at T "
        "| iterations | wins |" + (f" ratio to {baseline} |" if ratios is not None else ""),
        "|---|" + "---:|" * (15 + (ratios is not None)),
    ]
    for m, method in enumerate(group.methods):
        cells = [
            method,
            f"{int((~np.isnan(group.integrals[m])).sum())}/{len(group.instances)}",
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
            lowest[m],
        ]
        if ratios is not None:
            cells.append(_fmt(_median(ratios[m]), 2))
        lines.append("| " + " | ".join(map(str, cells)) + " |")
    return lines


def _over_values(reduce: Callable, values: np.ndarray) -> float:
    """``reduce`` of the values that are not NaN (NaN if none)."""
    values = values[~np.isnan(values)]
    return float(reduce(values)) if values.size else float("nan")


def _median(values: np.ndarray) -> float:
    return _over_values(np.median, values)


def _instance_tables(
    group: GroupMetrics, baseline: str | None
) -> list[tuple[str, np.ndarray, int]]:
    """``(title, values of shape (methods, instances), digits)`` of each per-instance table."""
    tables = [
        ("Mean primal gap at T per instance (over seeds)", group.gaps[:, :, -1], 4),
        ("Primal integral per instance (s, mean over seeds)", group.integrals, 2),
    ]
    if baseline is not None:
        tables.append(
            (f"Primal integral over {baseline}'s per instance", group.ratios(baseline), 2)
        )
    return tables + [
        (
            "Seconds to the first solution per instance (T without, mean over seeds)",
            group.first_solution,
            2,
        ),
        (
            "Seconds to a gap of at most 1% per instance (T if never, mean over seeds)",
            group.within_1pct,
            2,
        ),
        ("LNS iterations per instance (mean over seeds)", group.iterations, 0),
    ]


def _instance_table(group: GroupMetrics, values: np.ndarray, digits: int) -> list[str]:
    """A row per instance of ``values`` (shape (methods, instances)), then mean, shifted
    geometric mean and median rows."""
    lines = [
        "| instance | " + " | ".join(group.methods) + " |",
        "|---|" + "---:|" * len(group.methods),
    ]
    rows = [(instance, values[:, i]) for i, instance in enumerate(group.instances)]
    rows += [
        (f"**{name}**", np.array([_over_values(reduce, row) for row in values]))
        for name, reduce in (
            ("mean", np.mean),
            ("sgm (shift 1)", shifted_geometric_mean),
            ("median", np.median),
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


#: The run statistics the time table averages over runs: record field, digits shown.
RUN_STATISTICS = (
    ("iterations", 1),
    ("improving", 1),
    ("timeouts", 1),
    ("select_time", 2),
    ("solver_time", 2),
)


def _time_table(group: GroupMetrics, runs: list[RunRecord]) -> list[str]:
    """Per method, where its runs' time went (the run statistics of :mod:`lns.bench_store`)."""
    lines = [
        "Where the time went, mean per run over the runs that solved: LNS iterations, those "
        "that improved the incumbent, sub-solves that ran into their time limit, seconds spent "
        "selecting neighborhoods and inside the sub-solver (its first solution included; in a "
        "portfolio, the main process's); the median of the runs' median variables freed per "
        "iteration; the loop's overhead, 1 - sub-solver seconds / runtime (reading, selection, "
        "fixing bounds, warm starts, checks), median and max over the runs with a sub-solver in "
        "one process; the median over instances of "
        "the seconds to the first improvement (T without); why the runs stopped.",
        "",
        "| method | iterations | improving | time-outs | selection (s) | sub-solver (s) "
        "| freed | overhead (median) | overhead (max) | first improvement (s) | stop reasons |",
        "|---|" + "---:|" * 9 + "---|",
    ]
    for m, method in enumerate(group.methods):
        ran = [r for r in runs if r.method == method]
        solved = [r for r in ran if r.status not in (ERROR, SKIPPED)]
        overhead = np.array(
            [1 - r.solver_time / r.runtime for r in solved if _one_process(r) and r.runtime > 0]
        )
        freed = np.array([r.freed for r in solved if r.freed is not None], dtype=float)
        reasons = Counter(r.stop_reason or r.status for r in ran)
        cells = [
            method,
            *(
                _fmt(_mean([getattr(r, name) for r in solved]), digits)
                for name, digits in RUN_STATISTICS
            ),
            _fmt(_median(freed), 0),
            _fmt(_median(overhead), 3),
            _fmt(_over_values(np.max, overhead), 3),
            _fmt(_median(group.first_improvement[m]), 2),
            _counts(reasons),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _one_process(record: RunRecord) -> bool:
    """Whether the run's sub-solver seconds are all of its solving: a sub-solver ran, in the
    main process only (no portfolio workers)."""
    return record.solver_time > 0 and not record.workers


def _arms_table(group: GroupMetrics, runs: list[RunRecord]) -> list[str]:
    """The share of each arm in the iterations of the methods whose runs record arms (the
    adaptive selector's, cl_lns's draws), over all their runs; nothing if no run does."""
    counts: dict[str, Counter] = {method: Counter() for method in group.methods}
    for r in runs:
        counts[r.method].update(r.arms)
    played = [method for method in group.methods if counts[method]]
    if not played:
        return []
    arms = sorted(set().union(*(counts[method] for method in played)))
    lines = [
        "Arms played (the adaptive selector's, cl_lns's draws): share of each method's "
        "iterations, over all runs.",
        "",
        "| method | " + " | ".join(arms) + " |",
        "|---|" + "---:|" * len(arms),
    ]
    for method in played:
        total = sum(counts[method].values())
        shares = (_fmt(counts[method][arm] / total, 3) for arm in arms)
        lines.append(f"| {method} | " + " | ".join(shares) + " |")
    return lines + [""]


@dataclass
class _WorkerRow:
    """The workers of one kind in one method's portfolio runs, summed over the runs."""

    workers: int = 0
    iterations: int = 0
    improvements: int = 0
    reasons: Counter = dataclasses.field(default_factory=Counter)


def _worker_kind(worker: dict) -> str:
    """A worker's kind as ``found_by`` names it: ``"lns/random"``, ``"scip"``, ``"cpsat"``."""
    return f"lns/{worker['selector']}" if worker["kind"] == "lns" else worker["kind"]


def _workers_table(group: GroupMetrics, runs: list[RunRecord]) -> list[str]:
    """Per method and worker kind of the portfolio runs: workers, iterations and improvements of
    the shared incumbent per run, the runs whose final incumbent it found, stop reasons."""
    rows: dict[tuple[str, str], _WorkerRow] = defaultdict(_WorkerRow)
    portfolio_runs: Counter[str] = Counter()
    found: Counter[tuple[str, str | None]] = Counter()
    for r in (r for r in runs if r.workers):
        portfolio_runs[r.method] += 1
        found[(r.method, r.found_by)] += 1
        for worker in r.workers:
            row = rows[(r.method, _worker_kind(worker))]
            row.workers += 1
            row.iterations += worker["iterations"]
            row.improvements += worker["improvements"]
            row.reasons[worker["stop_reason"]] += 1
    if not rows:
        return []
    lines = [
        "Portfolio workers, by kind: workers, their iterations (or whole-problem solves) and "
        "improvements of the shared incumbent, mean per run; the runs whose final incumbent a "
        "worker of the kind found; how the workers ended.",
        "",
        "| method | kind | workers | iterations | improvements | found the final incumbent "
        "| stop reasons |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for method, kind in sorted(rows, key=lambda key: (group.methods.index(key[0]), key[1])):
        row, n = rows[(method, kind)], portfolio_runs[method]
        lines.append(
            f"| {method} | {kind} | {row.workers / n:.1f} | {row.iterations / n:.1f} "
            f"| {row.improvements / n:.2f} | {found[(method, kind)]}/{n} "
            f"| {_counts(row.reasons)} |"
        )
    return lines + [""]


def _counts(counter: Counter) -> str:
    """``"optimal 1, time_limit 3"``: each key of ``counter`` with its count, sorted by key."""
    return ", ".join(f"{key} {count}" for key, count in sorted(counter.items()))


def _references_table(group: GroupMetrics, refs: dict) -> list[str]:
    lines = ["References p*:", "", "| instance | sense | p* | source |", "|---|---|---:|---|"]
    for instance in group.instances:
        ref = refs[(group.instance_set, instance)]
        lines.append(
            f"| {instance} | {ref.sense or '?'} "
            f"| {'–' if ref.value is None else f'{ref.value:.10g}'} "
            f"| {ref.source or 'none'} |"
        )
    return lines


def _problems(runs: list[RunRecord]) -> list[str]:
    """The failed and skipped runs of a group, one line each (nothing if none)."""
    problems = sorted(
        {
            (r.instance, r.method, r.status, (r.error or "").splitlines()[0][:200])
            for r in runs
            if r.status in (ERROR, SKIPPED)
        }
    )
    if not problems:
        return []
    return [
        "",
        "Failed and skipped runs:",
        "",
        *(
            f"- {instance} · {method} · {status}: {error}"
            for instance, method, status, error in problems
        ),
    ]


def _run_metrics(record: RunRecord, refs: dict) -> dict:
    """The columns the report adds to a run's row in ``runs.csv``."""
    ref = refs[(record.instance_set, record.instance)]
    return {
        "reference": ref.value,
        "reference_source": ref.source,
        "gap_at_time_limit": gap_at(record.trajectory, ref.value, record.time_limit),
        "primal_integral": primal_integral(record.trajectory, ref.value, record.time_limit),
    }


def results_folders(results_dir) -> list[tuple[str | None, Path]]:
    """``(label, folder)`` of each results folder of ``results_dir``: a path, a list of paths or
    a ``{label: path}`` mapping (label ``None`` for the first two).

    Raises
    ------
    LNSError
        No folder given.
    """
    if isinstance(results_dir, (str, Path)):
        folders: list[tuple[str | None, Path]] = [(None, Path(results_dir))]
    elif isinstance(results_dir, dict):
        folders = [(str(label), Path(path)) for label, path in results_dir.items()]
    else:
        folders = [(None, Path(path)) for path in results_dir]
    if not folders:
        raise LNSError("results_dir: no results folder given")
    return folders


def load_results(results_dir, instance_set: str | None = None) -> list[RunRecord]:
    """The runs of one or several results folders, for one report.

    Parameters
    ----------
    results_dir : path, list of paths or dict
        Folders written by ``lns-bench``. With a ``{label: path}`` mapping each folder's
        methods are renamed ``"method [label]"``, so that the same method run in two folders
        (e.g. ``cl_lns`` with two checkpoints) gets two columns.
    instance_set : str, optional
        Put every run in this instance set: the runs of folders with different set names
        share one table per time limit and one p* per instance.

    Raises
    ------
    LNSError
        A folder without records, or two folders with the same run (the same set, instance,
        method, seed and time limit; labels keep them apart).
    """
    records: list[RunRecord] = []
    seen: dict[tuple, Path] = {}
    for label, folder in results_folders(results_dir):
        for record in BenchStore(folder).load():
            record = dataclasses.replace(
                record,
                method=f"{record.method} [{label}]" if label else record.method,
                instance_set=instance_set or record.instance_set,
            )
            run = (record.instance_set, record.instance, record.method, record.seed)
            key = (*run, record.time_limit)
            if key in seen:
                raise LNSError(
                    f"{seen[key]} and {folder} both hold the run {run} at "
                    f"{record.time_limit:g} s: give the folders labels, "
                    "results_dir={label: folder, ...}"
                )
            seen[key] = folder
            records.append(record)
    return records


def report_command(
    results_dir, out_dir=None, baseline: str | None = None, instance_set: str | None = None
) -> str:
    """The ``lns-report`` command line of these arguments, as a shell takes it."""
    folders = results_folders(results_dir)
    if isinstance(results_dir, dict):
        value = "{" + ", ".join(f"{label}: {path.as_posix()}" for label, path in folders) + "}"
    elif isinstance(results_dir, (str, Path)):
        value = folders[0][1].as_posix()
    else:
        value = "[" + ",".join(path.as_posix() for _, path in folders) + "]"
    target = Path(out_dir).as_posix() if out_dir is not None else None
    options = {"out_dir": target, "baseline": baseline, "instance_set": instance_set}
    arguments = [f"{key}={given}" for key, given in options.items() if given is not None]
    return shlex.join(["lns-report", f"results_dir={value}", *arguments])


def write_report(
    results_dir,
    out_dir: str | Path | None = None,
    threshold: float = 0.01,
    n_times: int = 201,
    baseline: str | None = None,
    instance_set: str | None = None,
) -> Path:
    """Read results folders; write ``report.md``, the PNG plots and ``runs.csv`` into ``out_dir``.

    ``runs.csv`` has one row per run: the record's fields, then ``reference`` (p*),
    ``reference_source`` (``"solu"`` or ``"best_found"``), ``gap_at_time_limit`` and
    ``primal_integral``.

    Parameters
    ----------
    results_dir : path, list of paths or dict
        A folder written by ``lns-bench`` (records in ``records/``), or several, as
        :func:`load_results` takes them.
    out_dir : path, optional
        Where to write (default: ``results_dir``; required with several folders).
    threshold : float
        Gap threshold of the survival rate (0.01: 1%).
    n_times : int
        Points of the time grid of the curves.
    baseline : str, optional
        The method the primal integral ratios divide by (default: each group's first method).
    instance_set : str, optional
        One instance set for every run (see :func:`load_results`).

    Returns
    -------
    pathlib.Path
        The path of ``report.md``.

    Raises
    ------
    LNSError
        Several folders and no ``out_dir``, a ``baseline`` no run has, a threshold outside
        ``[0, 1]``, or what :func:`load_results` raises.
    """
    folders = results_folders(results_dir)
    if out_dir is None and len(folders) > 1:
        raise LNSError("out_dir: a report over several results folders needs a folder of its own")
    target = Path(out_dir if out_dir is not None else folders[0][1])
    records = load_results(results_dir, instance_set)
    if baseline is not None and baseline not in {r.method for r in records}:
        raise UnknownNameError("baseline", baseline, {r.method for r in records})
    if not 0 <= threshold <= 1:
        raise InvalidArgumentError(f"threshold must be in [0, 1], got {threshold}")
    target.mkdir(parents=True, exist_ok=True)
    refs = references(records)
    sections = []
    for group in group_metrics(records, n_times):
        plots = plot_group(group, target, threshold)
        runs = [r for r in records if r.instance_set == group.instance_set]
        runs = [r for r in runs if r.time_limit == group.time_limit]
        sections.append(group_markdown(group, runs, refs, threshold, plots, target, baseline))
    write_table(records, target / "runs.csv", [_run_metrics(record, refs) for record in records])
    title = ", ".join(path.as_posix() for _, path in folders)
    command = report_command(results_dir, out_dir, baseline, instance_set)
    report = target / "report.md"
    report.write_text(
        f"# Benchmark report: {title}\n\n"
        f"{len(records)} runs; one row per run in `runs.csv`. Regenerate this file with "
        f"`{command}`.\n\n" + "\n".join(sections)
    )
    return report
