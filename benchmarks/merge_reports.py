"""One report over the runs of several ``lns-bench`` results folders on the same instances.

Each folder's runs are relabelled ``method [LABEL]`` and put in one instance set, so that the
primal integrals share one reference per instance (the best any of them found, or the
``.solu`` value) and sit in one table: e.g. two checkpoints of ``cl_lns``, each run in its own
folder, beside the methods of an earlier full run on the same instances.

Example (the set-cover rows of docs/cl_lns.md, "Generalisation")::

    python benchmarks/merge_reports.py --name sc_models \\
        --out benchmarks/results/cl_lns_generalisation_sc_models_60s \\
        full=benchmarks/results/cl_lns_generalisation_sc_60s \\
        rerun=benchmarks/results/cl_lns_generalisation_sc_here_60s \\
        retrained=benchmarks/results/cl_lns_generalisation_sc_retrained_60s
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import sys

from lns.bench_store import BenchStore
from lns.report import write_records_report


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", metavar="LABEL=DIR", help="a results folder")
    parser.add_argument("--name", required=True, help="the instance set of the merged runs")
    parser.add_argument("--out", required=True, help="where report.md and runs.csv go")
    args = parser.parse_args(argv)
    records = []
    for spec in args.folders:
        label, equals, folder = spec.partition("=")
        if not equals or not label or not folder:
            parser.error(f"'{spec}' is not LABEL=DIR")
        records += [
            dataclasses.replace(r, instance_set=args.name, method=f"{r.method} [{label}]")
            for r in BenchStore(folder).load()
        ]
    command = shlex.join(["python", "benchmarks/merge_reports.py", *argv])
    print(write_records_report(records, args.out, args.name, command))


if __name__ == "__main__":
    main()
