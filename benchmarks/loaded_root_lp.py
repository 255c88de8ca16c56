"""The root LP of an instance on an idle and on a loaded machine.

A cold LP solve of the default method (``"highs"``: the simplex first, the interior point method
after :data:`lns.core.solvers.lp.SIMPLEX_FIRST`) as the CL-LNS features and LB-RELAX run it,
timed alone and then beside ``--busy`` processes that each keep a core busy (a pure-Python
loop), ``--repeats`` times each; it prints the wall-clock and CPU seconds of each solve, whether
the interior point method ran, and the median of each setting. Run it in two checkouts to
compare them::

    python benchmarks/loaded_root_lp.py data/sc_large5/sc_large_0000.mps.gz --busy 2
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import time

from lns.core.problem.mip import read_problem
from lns.core.solvers.lp import WarmLP


@contextlib.contextmanager
def busy_processes(count: int):
    """``count`` processes that keep a core busy each, for the block."""
    processes = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for process in processes:
            process.kill()
            process.wait()


def timed_solve(problem) -> dict:
    """Wall-clock and CPU seconds of one cold solve, its status, and whether the IPM ran."""
    began, cpu = time.perf_counter(), time.thread_time()
    lp = WarmLP(problem)
    solution = lp.solve(time_limit=120)
    return {
        "wall": time.perf_counter() - began,
        "cpu": time.thread_time() - cpu,
        "status": solution.status,
        "ipm": lp.interior_point_iterations > 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instances", nargs="+")
    parser.add_argument("--busy", type=int, default=2, help="busy processes of the loaded runs")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for path in args.instances:
        problem = read_problem(path)
        for busy in (0, args.busy):
            with busy_processes(busy):
                runs = [timed_solve(problem) for _ in range(args.repeats)]
            for run in runs:
                print(
                    f"{problem.name} busy={busy}: wall {run['wall']:.2f} s, cpu {run['cpu']:.2f} s,"
                    f" {run['status']}, interior point {run['ipm']}"
                )
            wall = statistics.median(run["wall"] for run in runs)
            print(f"{problem.name} busy={busy}: median wall {wall:.2f} s", flush=True)


if __name__ == "__main__":
    main()
