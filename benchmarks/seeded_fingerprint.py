"""Fingerprints of seeded runs that repeat, to show that a change of structure left the search as
it was.

Each run is :func:`lns.solve` with a seed, an iteration limit, a node limit per sub-solve and an
iteration time limit far above what a sub-solve takes, so that no sub-solve ends by the clock. Its
fingerprint is the best objective, a hash of the best solution, the objectives of the trajectory
and per iteration the selector, the neighborhood and target sizes, the status, the objectives
before and after and whether it improved. The runs cover classical selectors whose choices read no
clock (``local_branching`` does not qualify: its own MIP solve has a time limit), the adaptive
selector without its per-second weighting, and a deterministic portfolio of two workers.

Usage, the first line on the checkout before the change, the second on the one after (the script
uses :func:`lns.solve` only, so one copy serves both through ``PYTHONPATH``)::

    PYTHONPATH=/path/to/before python benchmarks/seeded_fingerprint.py --out /tmp/before.json
    PYTHONPATH=$PWD python benchmarks/seeded_fingerprint.py --compare /tmp/before.json

``--compare`` prints ``IDENTICAL`` or ``DIFFERENT`` per run and exits with status 1 on a difference.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys

from lns import solve

#: (instance, selector, further arguments of ``solve``).
RUNS: tuple[tuple[str, str, dict], ...] = (
    ("air05", "random", {}),
    ("air05", "adaptive", {"selector_options": {"per_second": False}}),
    ("p0201", "rins", {}),
    ("p0201", "lb_relax", {}),
    ("p0201", "adaptive", {"selector_options": {"per_second": False}}),
    ("neos5", "random", {}),
    ("neos5", "graph", {}),
    ("air05", "random", {"workers": 2, "deterministic": True}),
)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="write the fingerprints to this JSON file")
    parser.add_argument("--compare", help="compare with the fingerprints in this JSON file")
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--nodes", type=int, default=100, help="node limit per sub-solve")
    parser.add_argument("--seed", type=int, default=3)
    return parser.parse_args(argv)


def fingerprint(instance: str, selector: str, extra: dict, args) -> dict:
    """The fingerprint of one run (see the module's docstring)."""
    result = solve(
        instance,
        selector,
        time_limit=None,
        iteration_limit=args.iterations,
        iteration_node_limit=args.nodes,
        iteration_time_limit=600.0,
        seed=args.seed,
        **extra,
    )
    solution = b"" if result.x is None else result.x.round(9).tobytes()
    return {
        "objective": result.objective,
        "status": str(result.status),
        "x": hashlib.sha256(solution).hexdigest()[:16],
        "trajectory": [objective for _, objective in result.trajectory],
        "iterations": [
            [
                *(record.iteration, record.selector, record.neighborhood_size),
                *(record.target_size, record.status, record.objective_before),
                *(record.objective_after, record.improved),
            ]
            for record in result.iterations
        ],
    }


def main(argv=None) -> int:
    args = parse_args(argv)
    prints = {}
    for instance, selector, extra in RUNS:
        key = f"{instance} {selector} {json.dumps(extra, sort_keys=True)}"
        prints[key] = fingerprint(instance, selector, extra, args)
        print(f"{key}: {prints[key]['objective']}", file=sys.stderr)
    if args.out:
        with open(args.out, "w") as file:
            json.dump(prints, file, indent=1, sort_keys=True)
    if not args.compare:
        return 0
    with open(args.compare) as file:
        before = json.load(file)
    same = True
    for key, now in prints.items():
        then = before.get(key)
        verdict = "IDENTICAL" if then == now else "DIFFERENT"
        same &= then == now
        shown = None if then is None else then["objective"]
        print(f"{key}: {shown} -> {now['objective']} {verdict}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
