"""The anytime benchmark: a matrix of instances x methods x seeds, run and stored run by run.

A *method* is ``"scip"`` (plain SCIP on the whole problem), ``"cpsat"`` (OR-Tools CP-SAT
on the whole problem), ``"localmip"`` (Local-MIP, one thread) or the registry name of a
neighborhood selector (LNS with that selector, see :data:`lns.registry.SELECTORS`), which a
suffix ``@N`` runs as a parallel portfolio of ``N`` worker processes (``random@2``:
``PortfolioParams(workers=2)``); ``"auto@N"`` (``"auto_stay@N"``, ``"auto_rate@N"``) is the
portfolio of worker kinds on ``N`` cores (``PortfolioParams(workers=N, mix="auto")``, random
LNS; :mod:`lns.core.parallel.allocation`). ``"all"`` names every configured method but the
``auto`` portfolios. A *variant* (:class:`Variant`, the ``variants`` of an experiment file) is
a named method with its own options and parameters (any field of
:class:`lns.params.SolveParams`), so that two settings of one selector sit side by side in one
matrix and one report. Every run gets the same wall-clock budget, reading the problem included;
its incumbent trajectory is stored (:mod:`lns.bench_store`), and where its time went (iterations,
improving ones, selection and sub-solver seconds, :func:`run_statistics`; the arms of the adaptive
selector or the draws of cl_lns, :class:`ArmCounter`; a portfolio's workers).

Runs are independent: :func:`run_matrix` skips the runs whose record exists (resume) and
the runs another live process is running (their lock is held, :meth:`BenchStore.claim`),
records a run that raises as a failure and goes on, and by default runs each run in a
forked child process, so that a crash inside SCIP or CP-SAT (a segmentation fault, a hang
past the time limit) costs that run only. The child dies with its parent (Linux's
``PR_SET_PDEATHSIG``), so a killed benchmark leaves no orphan running its cell beside the
run that resumes it.
"""

from __future__ import annotations

import datetime
import glob
import importlib
import logging
import multiprocessing
import os
import signal
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from instances.bundled import resolve_instance
from lns.bench_store import ERROR, SKIPPED, BenchStore, RunRecord
from lns.core.child_process import die_with_parent
from lns.core.errors import LNSError, ProblemReadError, UnknownNameError, UnsupportedProblemError
from lns.core.problem.mip import instance_name
from lns.core.problem.solu_file import known_objective
from lns.core.search.result import Callback, Result
from lns.core.search.stop import budget
from lns.core.solvers.protocol import SolveStatus
from lns.params import GROUPS, SolveParams
from lns.registry import SELECTORS, make_selector

log = logging.getLogger("lns")

WHOLE_PROBLEM_METHODS = ("scip", "cpsat", "localmip")
#: Methods that run the portfolio of worker kinds (``PortfolioParams.mix``), with random LNS.
PORTFOLIO_METHODS = ("auto", "auto_stay", "auto_rate")
#: Learned selectors run only with a trained model: the option that names it.
REQUIRED_OPTIONS = {"cl_lns": "checkpoint"}
#: Modules a method's runs import, imported once before the runs (forked workers inherit them),
#: so that no run pays their import (torch's takes seconds) inside its budget.
PRELOAD = {"cl_lns": ("learning.checkpoint", "learning.features", "learning.bipartite_graph")}
ALL = "all"


#: What a variant may set under ``solve``: the iteration limit of its budget (beside the matrix's
#: time limit) and keywords of :func:`lns.api.solve` and the baselines.
VARIANT_SOLVE_KEYWORDS = ("iteration_limit", "initial_solution", "optimum")


@dataclass(frozen=True)
class Variant:
    """A named method: a base method and the options and parameters it runs with.

    Declared in an experiment file under ``variants``, and named in ``methods`` like any
    method; its runs are stored and reported under its name::

        methods: [scip, random_whole, random_auto]
        variants:
          random_whole: {method: random, sub_solve: {sub_problem: whole}}
          random_auto: {method: random, sub_solve: {sub_problem: auto}}
          random_cpsat:
            {method: random@2, sub_solve: {solver: cpsat}, portfolio: {deterministic: true}}

    Attributes
    ----------
    name : str
        The name its runs are stored under.
    method : str
        The base method: ``"scip"``, ``"cpsat"``, ``"localmip"``, a selector name or a kinds
        portfolio, with an optional ``@N`` (worker processes).
    options : dict
        Constructor arguments of the selector, or a baseline's own keywords
        (:func:`lns.api.solve_cpsat`'s ``num_workers``, :func:`lns.api.solve_scip`'s
        ``scip_params``), instead of the matrix's ``method_options`` for the base method.
    params : dict
        Groups of :class:`lns.params.SolveParams` (``size``, ``start``, ``sub_solve``,
        ``loop``, ``portfolio``), each a mapping of the fields that differ from the matrix's.
    solve : dict
        Further settings (:data:`VARIANT_SOLVE_KEYWORDS`).
    """

    name: str
    method: str
    options: dict = field(default_factory=dict, hash=False)
    params: dict = field(default_factory=dict, hash=False)
    solve: dict = field(default_factory=dict, hash=False)

    @classmethod
    def from_config(cls, name: str, entry: dict) -> Variant:
        """The variant ``name`` of an experiment file's ``variants`` mapping.

        Raises
        ------
        LNSError
            A key that is not ``method``, ``options``, ``solve`` or a parameter group, a missing
            or unknown base method, a name that shadows a method, a ``solve`` key that is not one
            of :data:`VARIANT_SOLVE_KEYWORDS`, or a parameter that
            :meth:`lns.params.SolveParams.from_dict` refuses (named with the variant).
        """
        entry = dict(entry or {})
        allowed = ("method", "options", "solve", *GROUPS)
        unknown = set(entry) - set(allowed)
        if unknown:
            raise LNSError(
                f"variant '{name}': unknown keys {sorted(unknown)} (allowed: {', '.join(allowed)})"
            )
        if "method" not in entry:
            raise LNSError(f"variant '{name}': 'method' (the base method) is missing")
        if split_method(name)[0] in method_names():
            raise LNSError(f"variant '{name}': the name is a method's; give the variant its own")
        method = str(entry["method"])
        if split_method(method)[0] not in method_names():
            raise UnknownNameError(f"variant '{name}': method", method, method_names())
        solve = dict(entry.get("solve") or {})
        bad = set(solve) - set(VARIANT_SOLVE_KEYWORDS)
        if bad:
            raise LNSError(
                f"variant '{name}': solve keys {sorted(bad)} cannot be set per variant "
                f"(allowed: {', '.join(VARIANT_SOLVE_KEYWORDS)})"
            )
        params = {group: dict(entry[group] or {}) for group in GROUPS if group in entry}
        with_workers = _merged(params, {"portfolio": _method_portfolio(method)})
        SolveParams.from_dict(with_workers, source=f"variant '{name}'")  # refuse a bad one now
        return cls(name, method, dict(entry.get("options") or {}), params, solve)


def parse_variants(variants: dict | None) -> dict[str, Variant]:
    """The :class:`Variant` of each entry of an experiment file's ``variants`` mapping."""
    return {name: Variant.from_config(name, entry) for name, entry in (variants or {}).items()}


@dataclass(frozen=True)
class RunSpec:
    """One cell of the matrix.

    Attributes
    ----------
    instance_set : str
    instance_path : pathlib.Path
    method : str
    seed : int
    time_limit : float
    method_options : dict
        For a selector: its constructor arguments; for a baseline: its own keywords
        (:func:`lns.api.solve_cpsat`'s ``num_workers`` and ``max_scale_exponent``,
        :func:`lns.api.solve_scip`'s ``scip_params``).
    params : dict
        Groups of :class:`lns.params.SolveParams`, each a mapping of fields, for LNS runs.
    base : str
        The method run: ``method`` itself, or a variant's base method.
    solve_options : dict
        A variant's further settings (:data:`VARIANT_SOLVE_KEYWORDS`).
    """

    instance_set: str
    instance_path: Path
    method: str
    seed: int
    time_limit: float
    method_options: dict = field(default_factory=dict, hash=False)
    params: dict = field(default_factory=dict, hash=False)
    base: str = ""
    solve_options: dict = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if not self.base:
            object.__setattr__(self, "base", self.method)

    @property
    def instance(self) -> str:
        return instance_name(self.instance_path)

    @property
    def selector(self) -> str:
        """The base method without its ``@N`` workers suffix."""
        return split_method(self.base)[0]

    @property
    def workers(self) -> int:
        """LNS worker processes: the ``N`` of a base method ``name@N``, else 1."""
        return split_method(self.base)[1]

    def __str__(self) -> str:
        return f"{self.instance} {self.method} seed {self.seed} ({self.time_limit:g}s)"


def split_method(method: str) -> tuple[str, int]:
    """``("random", 2)`` for ``"random@2"``, ``(method, 1)`` for a name without a suffix.

    Raises
    ------
    LNSError
        A suffix that is not an integer >= 1, or one on a whole-problem method.
    """
    name, at, count = method.partition("@")
    if not at:
        return name, 1
    if not count.isdigit() or int(count) < 1 or name in WHOLE_PROBLEM_METHODS:
        raise LNSError(
            f"method '{method}': the suffix @N (N >= 1 worker processes) follows a selector name"
        )
    return name, int(count)


def method_names() -> tuple[str, ...]:
    """Every valid method name: plain SCIP, CP-SAT, Local-MIP, the kinds portfolios and every
    registered selector."""
    return (*WHOLE_PROBLEM_METHODS, *PORTFOLIO_METHODS, *SELECTORS)


def expand_instances(instances) -> list[Path]:
    """Paths of ``instances``: files, globs (``data/mis_small/test/*.mps.gz``) or bundled names.

    Raises
    ------
    ProblemReadError
        A name that is no file and no bundled instance, a pattern that matches nothing, or two
        files with the same instance name (their records would collide).
    """
    paths: list[Path] = []
    for entry in _as_list(instances):
        entry = str(entry)
        if glob.has_magic(entry):
            matches = sorted(Path(p) for p in glob.glob(entry) if Path(p).is_file())
            if not matches:
                raise ProblemReadError(f"instances: pattern '{entry}' matches no file")
            paths.extend(matches)
        else:
            path = resolve_instance(entry)
            if not path.is_file():
                raise ProblemReadError(
                    f"instance '{entry}': no such file and no bundled instance of that name"
                )
            paths.append(path)
    seen: dict[str, Path] = {}
    for path in map(_relative_to_cwd, paths):
        name = instance_name(path)
        if name in seen and seen[name].resolve() != path.resolve():
            raise ProblemReadError(
                f"instances: {seen[name]} and {path} have the same instance name '{name}'"
            )
        seen[name] = path
    return list(seen.values())


def variant_of(method: str, method_options: dict | None, variants: dict[str, Variant]) -> Variant:
    """The :class:`Variant` a name of ``methods`` runs: a declared one, or the method itself with
    its ``method_options`` (under its full name, or its name without ``@N``)."""
    if method in variants:
        return variants[method]
    options = method_options or {}
    found = options.get(method) or options.get(split_method(method)[0]) or {}
    return Variant(method, method, dict(found))


def expand_methods(
    methods, method_options: dict | None = None, variants: dict[str, Variant] | None = None
) -> list[str]:
    """Method names of ``methods`` (a name, a list of names, or ``"all"``), validated.

    ``"all"`` is every name of :func:`method_names`, less the learned selectors whose
    required option (:data:`REQUIRED_OPTIONS`, e.g. ``cl_lns``'s ``checkpoint``) is not set.
    A name of ``variants`` is a method too.

    Raises
    ------
    UnknownNameError
        A name that is no method; the error lists the valid ones.
    LNSError
        A learned selector named explicitly without its required option.
    """
    method_options = method_options or {}
    names = _as_list(methods)
    if ALL in names and len(names) > 1:
        raise LNSError(f"methods: '{ALL}' cannot be combined with other names, got {names}")
    if names == [ALL]:
        return [
            m
            for m in method_names()
            if m not in PORTFOLIO_METHODS
            and (
                m not in REQUIRED_OPTIONS or (method_options.get(m) or {}).get(REQUIRED_OPTIONS[m])
            )
        ]
    variants = variants or {}
    for method in names:
        variant = variant_of(method, method_options, variants)
        options, method = variant.options, variant.method
        name = split_method(method)[0]
        if name not in method_names():
            raise UnknownNameError("method", name, (*method_names(), *variants, ALL))
        option = REQUIRED_OPTIONS.get(name)
        if option and not (options or {}).get(option):
            raise LNSError(
                f"method '{name}' needs method_options.{name}.{option} (a trained model)"
            )
    return list(dict.fromkeys(names))


def compose_matrix(
    instances,
    methods,
    seeds,
    time_limit: float,
    *,
    instance_set: str,
    method_options: dict | None = None,
    params: dict | None = None,
    variants: dict | None = None,
) -> list[RunSpec]:
    """The runs of ``instances x methods x seeds``, instance-major.

    ``instances``, ``methods`` and ``seeds`` are each a single value or a list, so that a
    Hydra sweep over any of them (``--multirun methods=scip,random``) yields one run per job.
    ``params`` (groups of :class:`lns.params.SolveParams`, each a mapping of fields) apply to
    every LNS run; ``variants`` (name -> ``{method, options, solve, <group>: {...}}``, see
    :class:`Variant`) declares named methods that ``methods`` may list, whose groups go over
    ``params``.

    Raises
    ------
    LNSError
        An empty list (named), a bad time limit, a missing instance or an unknown method.
    """
    for key, value in (("instances", instances), ("methods", methods), ("seeds", seeds)):
        if not _as_list(value):
            raise LNSError(f"empty matrix: '{key}' is empty")
    if time_limit is None or not time_limit > 0:
        raise LNSError(f"time_limit must be a positive number of seconds, got {time_limit}")
    paths = expand_instances(instances)
    declared = parse_variants(variants)
    names = expand_methods(methods, method_options, declared)
    if not names:
        raise LNSError(f"empty matrix: methods={methods} leaves no method to run")
    seed_list = [int(seed) for seed in _as_list(seeds)]
    return [
        RunSpec(
            instance_set,
            path,
            method,
            seed,
            float(time_limit),
            dict(variant.options),
            _merged(params or {}, variant.params),
            variant.method,
            dict(variant.solve),
        )
        for path in paths
        for method, variant in ((n, variant_of(n, method_options, declared)) for n in names)
        for seed in seed_list
    ]


def shard(specs: list[RunSpec], index: int, count: int) -> list[RunSpec]:
    """Every ``count``-th run from ``index`` on: the part of the matrix one parallel job runs."""
    if count < 1 or not 0 <= index < count:
        raise LNSError(
            f"shard must be in [0, shards) with shards >= 1, got shard={index} shards={count}"
        )
    return specs[index::count]


def execute(spec: RunSpec) -> RunRecord:
    """Run one cell in this process and return its record; an exception becomes a failed record.

    ``KeyboardInterrupt`` is not recorded: the run did not finish, and a rerun runs it.
    """
    base: dict[str, Any] = dict(
        instance_set=spec.instance_set,
        instance=spec.instance,
        instance_path=str(spec.instance_path),
        method=spec.method,
        seed=spec.seed,
        time_limit=spec.time_limit,
        known_optimum=known_objective(spec.instance_path),
    )
    began = time.perf_counter()
    arms = ArmCounter()
    try:
        result = _solve(spec, [arms])
    except UnsupportedProblemError as error:
        return RunRecord(
            **base,
            status=SKIPPED,
            runtime=time.perf_counter() - began,
            error=str(error),
            finished_at=_now(),
        )
    except Exception as error:  # any failure of one run is recorded, and the matrix goes on
        log.exception("%s failed", spec)
        return RunRecord(
            **base,
            status=ERROR,
            runtime=time.perf_counter() - began,
            error=f"{type(error).__name__}: {error}",
            finished_at=_now(),
        )
    if result.stop_reason == "interrupted":
        raise KeyboardInterrupt
    return RunRecord(
        **base,
        status=result.status,
        stop_reason=result.stop_reason,
        objective=result.objective,
        sense=result.problem.sense if result.problem is not None else None,
        runtime=result.runtime,
        trajectory=[[float(t), float(v)] for t, v in result.trajectory],
        finished_at=_now(),
        found_by=result.found_by,
        arms=dict(arms.counts),
        **run_statistics(result),
    )


class ArmCounter(Callback):
    """Counts the iterations of each arm a selector names (``info["arm"]``: the adaptive
    selector's arms, cl_lns's draws)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def on_selection(self, state, size: int, neighborhood) -> None:
        arm = neighborhood.info.get("arm")
        if arm is not None:
            self.counts[str(arm)] += 1


def run_statistics(result: Result) -> dict:
    """Where a run's iterations went: the :class:`lns.bench_store.RunRecord` fields
    ``iterations``, ``improving``, ``timeouts``, ``freed``, ``select_time``, ``solver_time``
    and ``workers`` of ``result``."""
    records = result.iterations
    return dict(
        iterations=len(records),
        improving=sum(bool(r.improved) for r in records),
        timeouts=sum(SolveStatus(r.status).out_of_time for r in records),
        freed=float(np.median([r.neighborhood_size for r in records])) if records else None,
        select_time=float(sum(r.select_time for r in records)),
        solver_time=float(result.solver_time),
        workers=[asdict(worker) for worker in result.workers],
    )


def _solve(spec: RunSpec, callbacks: list[Callback]) -> Result:
    """One cell: a baseline (:data:`lns.api.BASELINES`) with its options, or :func:`lns.api.solve`
    with the selector (random LNS for a kinds portfolio) and the cell's parameters; ``callbacks``
    see the run."""
    from lns.api import BASELINES, solve

    options = dict(spec.solve_options, callbacks=callbacks)
    stop = budget(spec.time_limit, options.pop("iteration_limit", None))
    if spec.base in BASELINES:
        run = BASELINES[spec.base]
        return run(spec.instance_path, stop, seed=spec.seed, **spec.method_options, **options)
    params = SolveParams.from_dict(
        _merged(spec.params, {"portfolio": _method_portfolio(spec.base)})
    )
    if spec.selector in PORTFOLIO_METHODS:
        selector = make_selector("random")
    else:
        selector = make_selector(spec.selector, **spec.method_options)
    return solve(spec.instance_path, selector, stop, seed=spec.seed, params=params, **options)


def _method_portfolio(method: str) -> dict:
    """The portfolio fields a method sets: ``workers`` from its ``@N``, ``mix`` from a kinds
    portfolio's name (``auto@4``); an ``N`` of 1 (no suffix) leaves the parameters as they are."""
    name, workers = split_method(method)
    fields: dict[str, Any] = {"workers": workers} if workers > 1 else {}
    if name in PORTFOLIO_METHODS:
        fields["mix"] = name
    return fields


def _merged(params: dict, over: dict) -> dict:
    """The parameter groups of ``params`` with the fields of ``over``'s groups over them."""
    groups = set(params) | set(over)
    return {group: {**(params.get(group) or {}), **(over.get(group) or {})} for group in groups}


def _execute_and_store(spec: RunSpec, results_dir: str, parent: int) -> None:
    die_with_parent(parent)
    BenchStore(results_dir).write(execute(spec))


def run_isolated(spec: RunSpec, store: BenchStore, kill_grace: float) -> RunRecord:
    """Run one cell in a forked child process; a child that dies or overruns is a failure.

    The child is killed ``kill_grace`` seconds after the run's time limit.
    """
    child = multiprocessing.get_context("fork").Process(
        target=_execute_and_store,
        args=(spec, str(store.root), os.getpid()),
        name=f"lns-bench {spec}",
    )
    store.path(spec.instance, spec.method, spec.seed, spec.time_limit).unlink(missing_ok=True)
    began = time.perf_counter()
    child.start()
    overran = False
    try:
        child.join(spec.time_limit + kill_grace)
    finally:
        if child.is_alive():
            overran = True
            child.kill()
            child.join()
    record = store.get(spec.instance, spec.method, spec.seed, spec.time_limit)
    if record is not None:
        return record
    if overran:
        reason = f"killed {kill_grace:g}s after its time limit of {spec.time_limit:g}s"
    elif child.exitcode is not None and child.exitcode < 0:
        reason = f"worker process died with signal {signal.Signals(-child.exitcode).name}"
    else:
        reason = f"worker process exited with code {child.exitcode} without a record"
    record = RunRecord(
        spec.instance_set,
        spec.instance,
        str(spec.instance_path),
        spec.method,
        spec.seed,
        spec.time_limit,
        ERROR,
        runtime=time.perf_counter() - began,
        error=reason,
        known_optimum=known_objective(spec.instance_path),
        finished_at=_now(),
    )
    store.write(record)
    return record


@dataclass
class MatrixSummary:
    """How a call of :func:`run_matrix` went: runs done now, found done already, failed and skipped
    now, and left to another live process running them (``busy``)."""

    ran: int = 0
    resumed: int = 0
    failed: int = 0
    skipped: int = 0
    busy: int = 0


def run_matrix(
    specs: list[RunSpec],
    store: BenchStore,
    *,
    isolate: bool = True,
    retry_failed: bool = True,
    kill_grace: float = 120.0,
) -> MatrixSummary:
    """Run each cell of ``specs`` that has no record in ``store`` and no live runner, in turn.

    Parameters
    ----------
    specs : list of RunSpec
    store : BenchStore
    isolate : bool
        Run each cell in a forked child process (see :func:`run_isolated`).
    retry_failed : bool
        Rerun cells whose record is a failure (``status == "error"``); skipped cells
        (method not applicable) are never rerun.
    kill_grace : float
        Seconds past its time limit after which an isolated run is killed.
    """
    for module in sorted({module for spec in specs for module in PRELOAD.get(spec.selector, ())}):
        importlib.import_module(module)
    summary = MatrixSummary()
    for number, spec in enumerate(specs, 1):
        with store.claim(spec.instance, spec.method, spec.seed, spec.time_limit) as claimed:
            if not claimed:
                log.info(
                    "[%d/%d] %s: running in another process, left to it", number, len(specs), spec
                )
                summary.busy += 1
                continue
            done = store.get(spec.instance, spec.method, spec.seed, spec.time_limit)
            if done is not None and not (retry_failed and done.failed):
                summary.resumed += 1
                continue
            log.info("[%d/%d] %s", number, len(specs), spec)
            if isolate:
                record = run_isolated(spec, store, kill_grace)
            else:
                record = execute(spec)
                store.write(record)
        summary.ran += 1
        summary.failed += record.status == ERROR
        summary.skipped += record.status == SKIPPED
        log.info(
            "[%d/%d] %s: %s, objective %s, %.1fs%s",
            number,
            len(specs),
            spec,
            record.status,
            record.objective,
            record.runtime,
            f" ({record.error})" if record.error else "",
        )
    return summary


def _relative_to_cwd(path: Path) -> Path:
    """``path`` relative to the working directory if below it, so records name files portably."""
    absolute = path.resolve()
    return absolute.relative_to(Path.cwd()) if absolute.is_relative_to(Path.cwd()) else path


def _as_list(value) -> list:
    if value is None:
        return []
    if isinstance(value, (str, int, float, Path)):
        return [value]
    return list(value)


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
