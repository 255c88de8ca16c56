"""Where benchmark runs are kept: one JSON file per run, and one CSV row per run for tables.

A results folder holds ``records/<instance>__<method>__s<seed>__t<time limit>.json``, and
``locks/`` one lock file per run that has started: a process running a run holds an exclusive
``flock`` on it (:meth:`BenchStore.claim`), which the kernel releases when the last process
holding it ends, however it ends, so a lock never outlives its run.
One file per run lets parallel jobs (Hydra's joblib or submitit launchers) write
without sharing a file, and makes resuming a matrix a matter of looking for the file.
Files are written to a temporary name and renamed, so a run that is killed leaves
no half-written record. :func:`write_table` gathers the records into ``runs.csv`` (the
trajectory, the arms and the workers JSON-encoded in their columns) for pandas or a spreadsheet.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path

from lns.core.errors import LNSError

RECORDS = "records"
LOCKS = "locks"

#: Statuses of a run that did not solve: ``error`` (it raised or its process died) and
#: ``skipped`` (the method does not apply to the problem, e.g. CP-SAT on a MIP).
ERROR, SKIPPED = "error", "skipped"


@dataclass
class RunRecord:
    """One run of the matrix, as stored.

    Attributes
    ----------
    instance_set : str
        Name of the instance set (the benchmark's ``name``), one report table each.
    instance : str
        Instance name (file name without extensions).
    instance_path : str
    method : str
        ``"scip"``, ``"cpsat"`` or a selector's registry name (LNS with that selector).
    seed : int
    time_limit : float
    status : str
        ``"optimal"``, ``"feasible"``, ``"no_solution"``, ``"skipped"`` or ``"error"``.
    stop_reason : str or None
    objective : float or None
        Best objective, in the problem's own sense.
    sense : str or None
        ``"minimize"`` or ``"maximize"``; ``None`` if the problem could not be read.
    known_optimum : float or None
        Optimal or best known value from a ``.solu`` file beside the instance, if any.
    runtime : float
    iterations : int
        LNS iterations (0 for plain SCIP and CP-SAT).
    trajectory : list of [float, float]
        ``(seconds, objective)`` per new incumbent.
    error : str or None
        Why the run failed or was skipped.
    finished_at : str
        ISO time stamp.
    found_by : str or None
        What found the final incumbent: ``"initial"``, or in a portfolio the kind of the worker
        (``"lns/random"``, ``"cpsat"``, ``"local_search"``, ``"scip"``).
    improving : int
        LNS iterations that improved the incumbent.
    timeouts : int
        LNS iterations whose sub-solve ran into its time limit (or past it and was left).
    freed : float or None
        Median number of variables an LNS iteration freed (``None`` without iterations).
    select_time : float
        Seconds spent choosing neighborhoods, over all iterations.
    solver_time : float
        Seconds inside the sub-solver, its first solution included (with SCIP: and the freeing
        after each solve); ``runtime - solver_time`` is the loop's own overhead (reading the
        problem, selection, fixing bounds, warm starts, checks). 0 for whole-problem methods.
    arms : dict
        ``{arm: iterations}`` of the adaptive selector, or of cl_lns's draws (``"greedy"``,
        ``"sample"``, ``"random"``, ``"until_ready"``); empty for the other selectors and in a
        portfolio, whose workers' selections the main process does not see.
    workers : list of dict
        Per worker of a portfolio, its :class:`lns.core.search.result.WorkerStats` as a dict.
    """

    instance_set: str
    instance: str
    instance_path: str
    method: str
    seed: int
    time_limit: float
    status: str
    stop_reason: str | None = None
    objective: float | None = None
    sense: str | None = None
    known_optimum: float | None = None
    runtime: float = 0.0
    iterations: int = 0
    trajectory: list = field(default_factory=list)
    error: str | None = None
    finished_at: str = ""
    found_by: str | None = None
    improving: int = 0
    timeouts: int = 0
    freed: float | None = None
    select_time: float = 0.0
    solver_time: float = 0.0
    arms: dict = field(default_factory=dict)
    workers: list = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.status == ERROR


def record_name(instance: str, method: str, seed: int, time_limit: float) -> str:
    """File name of a run's record (``air05__random__s0__t60.json``)."""
    return f"{instance}__{method}__s{seed}__t{time_limit:g}.json"


class BenchStore:
    """The records of one results folder."""

    def __init__(self, results_dir: str | Path):
        self.root = Path(results_dir)
        self.records_dir = self.root / RECORDS

    def path(self, instance: str, method: str, seed: int, time_limit: float) -> Path:
        return self.records_dir / record_name(instance, method, seed, time_limit)

    def get(self, instance: str, method: str, seed: int, time_limit: float) -> RunRecord | None:
        """The record of that run, or ``None`` if it has not run (or its file is unreadable)."""
        path = self.path(instance, method, seed, time_limit)
        try:
            return _parse(path)
        except (FileNotFoundError, LNSError):
            return None

    @contextlib.contextmanager
    def claim(self, instance: str, method: str, seed: int, time_limit: float) -> Iterator[bool]:
        """Hold the lock of a run while the ``with`` block runs; ``False`` if a live process has it.

        The lock is an exclusive, non-blocking ``flock`` on ``locks/<run>.lock``; a forked child
        shares it, so the run stays claimed until both the runner and its worker have ended.
        """
        name = record_name(instance, method, seed, time_limit).replace(".json", ".lock")
        path = self.root / LOCKS / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            yield True

    def write(self, record: RunRecord) -> Path:
        """Store ``record``, replacing an earlier one of the same run, atomically."""
        path = self.path(record.instance, record.method, record.seed, record.time_limit)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps(record.__dict__) + "\n")
        os.replace(temporary, path)
        return path

    def load(self) -> list[RunRecord]:
        """Every record in the folder, sorted by file name.

        Raises
        ------
        LNSError
            The folder has no records, or a record is malformed (its path is named).
        """
        paths = sorted(self.records_dir.glob("*.json"))
        if not paths:
            raise LNSError(
                f"{self.records_dir}: no run records "
                f"(run lns-bench with results_dir={self.root} first)"
            )
        return [_parse(path) for path in paths]


def _parse(path: Path) -> RunRecord:
    try:
        data = json.loads(path.read_text())
        return RunRecord(**data)
    except FileNotFoundError:
        raise
    except (json.JSONDecodeError, TypeError) as error:
        raise LNSError(f"{path}: not a run record ({error})") from None


def write_table(
    records: list[RunRecord], path: str | Path, extra: list[dict] | None = None
) -> Path:
    """Write ``records`` as CSV, one row per run, its lists and dicts (the trajectory, the arms,
    the workers) JSON-encoded.

    ``extra`` holds one dict of further columns per record (the report adds each run's
    reference p*, its source and the run's metrics).
    """
    import pandas as pd

    extra = extra or [{} for _ in records]
    rows = [
        {
            **{
                name: json.dumps(value) if isinstance(value, (list, dict)) else value
                for name, value in record.__dict__.items()
            },
            **more,
        }
        for record, more in zip(records, extra, strict=True)
    ]
    columns = [f.name for f in fields(RunRecord)] + list(extra[0] if extra else [])
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows, columns=columns).to_csv(path, index=False)
    return path
