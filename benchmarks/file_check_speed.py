"""Time the number check of problem files against SCIP's own read of the same files.

:func:`lns.core.problem.file_numbers.check_file_numbers` reads every MPS/LP file once more before
SCIP does (decompression included). This script reads the largest files of the given
globs both ways, side by side (best of ``--repeats``, alternating, so that machine load
hits both alike), and prints the ratio per file and in total. Example::

    python benchmarks/file_check_speed.py --files "instances/miplib/*.mps*" \\
        "../shared/instances/miplib2017/*.mps.gz" --largest 10
"""

from __future__ import annotations

import argparse
import glob
import gzip
import os
import time
from pathlib import Path

from lns.core.problem.file_numbers import check_file_numbers


def best_times(path: Path, repeats: int) -> tuple[float, float, float]:
    """Best seconds of SCIP's read, of the check and of the check's decompression alone."""
    from pyscipopt import Model

    best = [float("inf")] * 3
    for _ in range(repeats):
        steps = (
            lambda: _scip_read(Model, path),
            lambda: check_file_numbers(path),
            lambda: _decompress(path),
        )
        for k, step in enumerate(steps):
            started = time.perf_counter()
            step()
            best[k] = min(best[k], time.perf_counter() - started)
    return best[0], best[1], best[2]


def _scip_read(model_class, path: Path) -> None:
    model = model_class()
    model.hideOutput()
    model.readProblem(str(path))


def _decompress(path: Path) -> bytes:
    return gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", nargs="+", required=True, help="globs of problem files")
    parser.add_argument("--largest", type=int, default=10, help="how many of the largest files")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    matches = {Path(p) for pattern in args.files for p in glob.glob(pattern)}
    paths = sorted(matches, key=os.path.getsize)
    totals = [0.0, 0.0, 0.0]
    for path in paths[-args.largest :]:
        times = best_times(path, args.repeats)
        totals = [t + s for t, s in zip(totals, times, strict=True)]
        scip, check, unzip = (1e3 * t for t in times)
        print(
            f"{path.name:30s} SCIP read {scip:7.1f} ms  check {check:7.1f} ms "
            f"(decompression {unzip:5.1f} ms)  ratio {check / scip:.2f}"
        )
    scip, check, unzip = totals
    print(
        f"total: SCIP read {1e3 * scip:.0f} ms, check {1e3 * check:.0f} ms, "
        f"ratio {check / scip:.2f} ({(check - unzip) / scip:.2f} without decompression)"
    )


if __name__ == "__main__":
    main()
