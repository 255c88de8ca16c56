"""A HiGHS LP beside a busy Python thread: interrupt callback at every iteration or on request.

HiGHS solves without Python's lock, but a Python interrupt callback needs it. With the callback
started for the whole solve (what ``lns.core.solvers.lp`` did before), every simplex iteration
waits for
the lock while another thread holds it; started only when a stop is asked for (what it does now),
an uninterrupted solve never calls it. For each instance, the root LP as
:class:`lns.core.solvers.lp.WarmLP` builds it is solved cold ``--repeats`` times per setting,
alternately,
alone and beside a thread that counts in a Python loop (the stand-in for the loop's own work,
or the CL-LNS graph cache built beside the root LP); medians of wall-clock seconds are printed.

Example (the figures in the closing note of this change)::

    lns-generate problem=mis size=small n=1 seed=123 out_dir=/tmp/mis6000
    python benchmarks/lp_beside_python.py /tmp/mis6000/mis_small_0000.mps.gz \\
        data/mvc_gen/mvc_1000_gen_0000.mps.gz roll3000
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import threading
import time

from instances.bundled import resolve_instance
from lns.core.problem.mip import read_problem
from lns.core.solvers.lp import _INTERRUPT_CALLBACKS, WarmLP, _StoppableHighs


class _EveryIterationHighs(_StoppableHighs):
    def run(self):
        for callback_type in _INTERRUPT_CALLBACKS:
            self.startCallback(callback_type)
        return super().run()


class EveryIterationLP(WarmLP):
    """A :class:`WarmLP` whose interrupt callback is started for the whole solve."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._highs.__class__ = _EveryIterationHighs


@contextlib.contextmanager
def _busy_python_thread(busy: bool):
    """For the block, a thread that holds Python's lock as a pure-Python loop does."""
    if not busy:
        yield
        return
    done = threading.Event()

    def count() -> None:
        n = 0
        while not done.is_set():
            n += 1

    thread = threading.Thread(target=count, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


SETTINGS = {"callback at every iteration": EveryIterationLP, "callback on request (used)": WarmLP}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instances", nargs="+", help="paths or bundled names")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print("| instance | callback | alone (s) | beside a Python thread (s) |")
    print("|---|---|---:|---:|")
    for instance in args.instances:
        problem = read_problem(resolve_instance(instance))
        times: dict = {(label, busy): [] for label in SETTINGS for busy in (False, True)}
        for _ in range(args.repeats):
            for (label, busy), seconds in times.items():
                lp = SETTINGS[label](problem)
                with _busy_python_thread(busy):
                    began = time.perf_counter()
                    solution = lp.solve()
                    seconds.append(time.perf_counter() - began)
                assert solution.status == "optimal", (problem.name, label, solution.status)
        for label in SETTINGS:
            alone = statistics.median(times[label, False])
            beside = statistics.median(times[label, True])
            print(f"| {problem.name} | {label} | {alone:.3f} | {beside:.3f} |")


if __name__ == "__main__":
    main()
