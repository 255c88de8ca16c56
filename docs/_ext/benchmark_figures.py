"""Pages and plots of the checked-in benchmark results, drawn when the documentation is built.

Every folder of ``benchmarks/results/`` with a ``runs.csv`` (one row per run, written by
``lns-report``) becomes a page under ``results/`` (a folder of the build, not checked in): the
shifted geometric mean primal integral per method as a bar chart and a table, and the report's
gap-over-time and survival plots, all computed from the runs by :mod:`lns.report`, as
``lns-report`` computes them. No figure is typed by hand.
"""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

import numpy as np

#: Results folders, relative to the repository root.
RESULTS = Path("benchmarks") / "results"
#: Pages and images written into the source folder, relative to it.
FOLDER = "results"
#: The survival plots' gap threshold (``lns-report``'s default).
THRESHOLD = 0.01

csv.field_size_limit(sys.maxsize)


def _number(text: str, kind=float):
    return kind(float(text)) if text not in ("", "nan") else None


def read_runs(path: Path) -> list:
    """The runs of a ``runs.csv`` as :class:`lns.bench_store.RunRecord` objects."""
    from lns.bench_store import RunRecord

    records = []
    with path.open(newline="") as file:
        for row in csv.DictReader(file):
            records.append(
                RunRecord(
                    instance_set=row["instance_set"],
                    instance=row["instance"],
                    instance_path=row["instance_path"],
                    method=row["method"],
                    seed=int(row["seed"]),
                    time_limit=float(row["time_limit"]),
                    status=row["status"],
                    stop_reason=row["stop_reason"] or None,
                    objective=_number(row["objective"]),
                    sense=row["sense"] or None,
                    known_optimum=_number(row["known_optimum"]),
                    runtime=float(row["runtime"] or 0),
                    iterations=_number(row["iterations"], int) or 0,
                    trajectory=json.loads(row["trajectory"] or "[]"),
                    error=row["error"] or None,
                )
            )
    return records


def sgm_integrals(group) -> list[float]:
    """Shifted geometric mean (shift 1) of each method's primal integrals over its instances."""
    from lns.report import shifted_geometric_mean

    return [shifted_geometric_mean(row) for row in group.integrals]


def plot_sgm(group, path: Path) -> None:
    """A bar chart of :func:`sgm_integrals`, lowest bar highlighted."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    values = sgm_integrals(group)
    figure, axes = plt.subplots(figsize=(7, 0.45 * len(values) + 1.2))
    colours = ["tab:green" if v == np.nanmin(values) else "tab:blue" for v in values]
    axes.barh(group.methods, values, color=colours)
    axes.invert_yaxis()
    for y, value in enumerate(values):
        axes.annotate(
            f"{value:.2f}", (value, y), xytext=(3, 0), textcoords="offset points", va="center"
        )
    axes.set(
        xlabel="shifted geometric mean primal integral (s), lower is better",
        title=f"{group.instance_set}, {len(group.instances)} instances, T = {group.time_limit:g} s",
    )
    axes.margins(x=0.15)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _row(group, m: int, sgm: float) -> str:
    integrals = group.integrals[m]
    cells = [
        group.methods[m],
        f"{int((~np.isnan(integrals)).sum())}/{len(group.instances)}",
        str(group.runs[m]),
        f"{sgm:.2f}",
        f"{np.nanmean(integrals):.2f}",
        f"{np.nanmedian(integrals):.2f}",
        f"{np.nanmean(group.gaps[m, :, -1]):.4f}",
        f"{group.survival(THRESHOLD)[m, -1]:.3f}",
        f"{np.nanmean(group.iterations[m]):.0f}",
    ]
    return "| " + " | ".join(cells) + " |"


def group_section(group, out_dir: Path) -> list[str]:
    """The Markdown of one (instance set, time limit) group, its plots written to ``out_dir``."""
    from lns.report import plot_group

    gap_plot, survival_plot = plot_group(group, out_dir, THRESHOLD)
    sgm_plot = gap_plot.with_name(gap_plot.name.replace("_gap.png", "_sgm.png"))
    plot_sgm(group, sgm_plot)
    sgms = sgm_integrals(group)
    return [
        f"## {group.instance_set}, T = {group.time_limit:g} s",
        "",
        f"![shifted geometric mean primal integral per method]({out_dir.name}/{sgm_plot.name})",
        "",
        "| method | instances | runs | sgm primal integral (s) | mean | median "
        f"| mean gap at T | survival at T (gap ≤ {THRESHOLD:g}) | iterations (mean) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        *(_row(group, m, sgm) for m, sgm in enumerate(sgms)),
        "",
        f"![mean primal gap over time]({out_dir.name}/{gap_plot.name})",
        f"![survival rate over time]({out_dir.name}/{survival_plot.name})",
        "",
    ]


def folder_page(folder: Path, out_dir: Path) -> tuple[str, list[tuple]]:
    """The page of one results folder, its images written to ``out_dir``, and per group
    ``(set, T, best method, its sgm)``."""
    from lns.report import group_metrics

    out_dir.mkdir()
    records = read_runs(folder / "runs.csv")
    lines = [
        f"# `{folder.name}`",
        "",
        f"Drawn from `{RESULTS.as_posix()}/{folder.name}/runs.csv` ({len(records)} runs) when "
        "these pages were built. Primal integrals against the reference of `lns-report` "
        "(the `.solu` value or the best objective any run of the folder found), seeds averaged "
        f"per instance; `report.md` in the folder has the per-instance tables.",
        "",
    ]
    summary = []
    for group in group_metrics(records):
        lines += group_section(group, out_dir)
        sgms = sgm_integrals(group)
        best = int(np.nanargmin(sgms))
        summary.append((group.instance_set, group.time_limit, group.methods[best], sgms[best]))
    return "\n".join(lines), summary


def index_page(summaries: dict[str, list[tuple]]) -> str:
    """The start page of the results: one row per folder and group, and the folders' pages."""
    lines = [
        "# Results by folder",
        "",
        "One page per folder of `benchmarks/results/`, generated from its `runs.csv` when these",
        "pages were built.",
        "",
        "| folder | instance set | T (s) | lowest sgm primal integral |",
        "|---|---|---:|---|",
    ]
    for name, groups in summaries.items():
        for instance_set, time_limit, method, sgm in groups:
            best = f"{method} ({sgm:.2f} s)"
            lines.append(f"| [{name}]({name}.md) | {instance_set} | {time_limit:g} | {best} |")
    lines += ["", "```{toctree}", ":hidden:", "", *summaries, "```", ""]
    return "\n".join(lines)


def write_pages(app) -> None:
    """Replace ``results/`` in the source folder with a page per results folder and an index."""
    root = Path(app.srcdir).parent / RESULTS
    out_dir = Path(app.srcdir) / FOLDER
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir()
    summaries = {}
    for folder in sorted(p.parent for p in root.glob("*/runs.csv")):
        page, summaries[folder.name] = folder_page(folder, out_dir / folder.name)
        (out_dir / f"{folder.name}.md").write_text(page)
    (out_dir / "index.md").write_text(index_page(summaries))


def setup(app):
    app.connect("builder-inited", write_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
