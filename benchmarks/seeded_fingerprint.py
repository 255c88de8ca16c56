"""Fingerprints of seeded runs that repeat, to show that a change of structure left the search as
it was.

Each run is :func:`lns.solve` with a seed, an iteration limit, a node limit per sub-solve and an
iteration time limit far above what a sub-solve takes, so that no sub-solve ends by the clock. Its
fingerprint is the best objective, a hash of the best solution, the objectives of the trajectory
and per iteration the selector, the neighborhood and target sizes, the status, the objectives
before and after and whether it improved. The runs cover classical selectors whose choices read no
clock (``local_branching`` does not qualify: its own MIP solve has a time limit), the adaptive
selector without its per-second weighting, and a deterministic portfolio of two workers.

Usage, the first line on the checkout before the change (with its own copy of this script, which
follows the API of its time), the second on the one after::

    cd /path/to/before && PYTHONPATH=. python benchmarks/seeded_fingerprint.py --out /tmp/a.json
    PYTHONPATH=$PWD python benchmarks/seeded_fingerprint.py --compare /tmp/a.json

A run's key names its instance, selector, the selector's options and the portfolio's settings, as
earlier copies of this script wrote them.

``--compare`` prints ``IDENTICAL`` or ``DIFFERENT`` per run and exits with status 1 on a difference.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys

from lns import PortfolioParams, SolveParams, SubSolveParams, make_selector, solve
from lns.core.search.stop import MaxIterations

#: (instance, selector, the selector's options, fields of ``PortfolioParams``).
RUNS: tuple[tuple[str, str, dict, dict], ...] = (
    ("air05", "random", {}, {}),
    ("air05", "adaptive", {"per_second": False}, {}),
    ("p0201", "rins", {}, {}),
    ("p0201", "lb_relax", {}, {}),
    ("p0201", "adaptive", {"per_second": False}, {}),
    ("neos5", "random", {}, {}),
    ("neos5", "graph", {}, {}),
    ("air05", "random", {}, {"workers": 2, "deterministic": True}),
)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="write the fingerprints to this JSON file")
    parser.add_argument("--compare", help="compare with the fingerprints in this JSON file")
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--nodes", type=int, default=100, help="node limit per sub-solve")
    parser.add_argument("--seed", type=int, default=3)
    return parser.parse_args(argv)


def run_key(instance: str, selector: str, options: dict, portfolio: dict) -> str:
    """``"air05 adaptive {"selector_options": {"per_second": false}}"``: what names a run."""
    extra = {**({"selector_options": options} if options else {}), **portfolio}
    return f"{instance} {selector} {json.dumps(extra, sort_keys=True)}"


def fingerprint(instance: str, selector: str, options: dict, portfolio: dict, args) -> dict:
    """The fingerprint of one run (see the module's docstring)."""
    params = SolveParams(
        sub_solve=SubSolveParams(time_limit=600.0, node_limit=args.nodes),
        portfolio=PortfolioParams(**portfolio),
    )
    result = solve(
        instance,
        make_selector(selector, **options),
        MaxIterations(args.iterations),
        seed=args.seed,
        params=params,
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
    for run in RUNS:
        key = run_key(*run)
        prints[key] = fingerprint(*run, args)
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
