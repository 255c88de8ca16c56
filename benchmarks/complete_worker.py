"""Does the complete worker earn its core? Two LNS workers against one LNS worker and plain SCIP.

For each instance and seed, ``solve(workers=2)`` runs twice side by side in one process, one run
after the other: two random-LNS workers, then one random-LNS worker and the complete worker
(``complete_worker=True``: plain SCIP restarted from the shared incumbent). Printed per run: the
status, the final objective, the runtime and per worker its improvements and stop reason.
Example (as reported)::

    python benchmarks/complete_worker.py --instances p0201 stein45 air05 --time-limit 20
"""

from __future__ import annotations

import argparse

from lns.api import solve


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", nargs="+", default=["p0201", "stein45", "air05"])
    parser.add_argument("--time-limit", type=float, default=20.0)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    return parser.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    print("instance  seed  workers           status    objective  runtime  per worker")
    for instance in args.instances:
        for seed in args.seeds:
            for complete in (False, True):
                result = solve(
                    instance,
                    workers=2,
                    complete_worker=complete,
                    time_limit=args.time_limit,
                    seed=seed,
                )
                workers = ", ".join(
                    f"{w.selector}: {w.improvements} ({w.stop_reason})" for w in result.workers
                )
                kind = "lns + complete" if complete else "2 lns"
                print(
                    f"{instance:8s}  {seed:4d}  {kind:16s}  {result.status:8s}  "
                    f"{result.objective:9g}  {result.runtime:6.1f}s  {workers}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
