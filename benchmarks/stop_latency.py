"""How late a run ends after its time limit, and after a Ctrl-C, per selector and method.

The tests check that a run ends at its time limit and ends ``interrupted`` on SIGINT with its
best solution (``tests/test_interrupt_every_selector.py``); how long each takes is timing,
measured here. For each case, one run with ``--time-limit`` (the seconds from the call to the
return, less the limit, reading the file included), and one run of up to 60 s that this process
sends SIGINT once it is under way (after the first LNS iteration, or at the first solution of
plain SCIP and CP-SAT): the seconds from the signal to the return of ``solve()``, the best
solution written to ``out=`` included. Run it alone (``nice``), on an otherwise quiet machine
for absolute figures.

Example::

    python benchmarks/stop_latency.py --instance seymour --time-limit 2
"""

from __future__ import annotations

import argparse
import os
import signal
import tempfile
import time
from pathlib import Path

from lns import solve
from lns.core.search.result import Callback

CASES = [
    ("lns", "random"),
    ("lns", "local_branching"),
    ("lns", "lb_relax"),
    ("lns", "graph"),
    ("lns", "rins"),
    ("lns", "adaptive"),
    ("scip", "random"),
    ("cpsat", "random"),
]


class SignalUnderWay(Callback):
    """Sends SIGINT after the first LNS iteration (or at the first solution of a whole-problem
    method) and notes when."""

    def __init__(self, method: str):
        self.method = method
        self.sent_at: float | None = None

    def send(self) -> None:
        if self.sent_at is None:
            self.sent_at = time.perf_counter()
            os.kill(os.getpid(), signal.SIGINT)

    def on_iteration(self, record) -> None:
        self.send()

    def on_improvement(self, improvement) -> None:
        if self.method != "lns":
            self.send()


def measure(instance: str, method: str, selector: str, time_limit: float, out: Path) -> tuple:
    """``(time-limit overrun, its stop reason, signal latency, its stop reason)`` of one case."""
    began = time.perf_counter()
    result = solve(instance, selector, method=method, time_limit=time_limit, seed=0, out=out)
    overrun = time.perf_counter() - began - time_limit
    interrupt = SignalUnderWay(method)
    signalled = solve(
        instance, selector, method=method, time_limit=60, seed=0, out=out, callbacks=[interrupt]
    )
    returned = time.perf_counter()
    latency = returned - interrupt.sent_at if interrupt.sent_at is not None else float("nan")
    return overrun, result.stop_reason, latency, signalled.stop_reason


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instance", default="seymour", help="a file or a bundled name")
    parser.add_argument("--time-limit", type=float, default=2.0)
    args = parser.parse_args(argv)
    print(f"{'case':<24}{'overrun (s)':>12}  {'reason':<14}{'signal (s)':>11}  reason")
    with tempfile.TemporaryDirectory() as folder:
        for method, selector in CASES:
            case = selector if method == "lns" else f"method={method}"
            overrun, reason, latency, stopped = measure(
                args.instance, method, selector, args.time_limit, Path(folder) / "best.sol"
            )
            print(f"{case:<24}{overrun:>12.3f}  {reason:<14}{latency:>11.3f}  {stopped}")


if __name__ == "__main__":
    main()
