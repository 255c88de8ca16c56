"""What the benchmark tests share: quick or full mode, timed calls, problems and incumbents.

The benchmark tests time parts of the library with pytest-benchmark: side-by-side variants are
parametrized benchmarks of one ``group``, so that pytest-benchmark's table compares them, and
figures that are not times (an RSS, a share, an improvement) go into ``benchmark.extra_info``,
which the saved runs keep. A benchmark asserts that its variants give the same result, never a
time.

Two modes:

- **quick** (the default, what ``python -m pytest`` and CI run): the smallest instance of each
  benchmark, one round, short limits; every benchmark runs, in well under two minutes in all;
- **full** (``--full``): the instances and sizes of the figures in the documentation, several
  rounds, and the cases marked ``full`` (deselected in quick mode). pytest-timeout's limit is
  lifted for them.

``docs/benchmarks.md`` has the commands, and how to save a run and compare another with it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from instances.bundled import resolve_instance
from instances.generators import CLASSES, ProblemClass, instance_rng, problem_class
from lns.core.problem.mip import Problem, read_problem
from lns.core.solvers.scip.subsolver import ScipSubSolver

HERE = Path(__file__).resolve().parent


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--full",
        action="store_true",
        help="benchmarks/: run the benchmark tests at full size (the figures), not in quick mode",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Quick mode deselects the benchmark cases marked ``full``; full mode lifts the timeout."""
    full = config.getoption("full")
    ours = [item for item in items if item.path.is_relative_to(HERE)]
    if full:
        for item in ours:
            item.add_marker(pytest.mark.timeout(0))
        return
    dropped = {item for item in ours if item.get_closest_marker("full") is not None}
    if dropped:
        config.hook.pytest_deselected(items=list(dropped))
        items[:] = [item for item in items if item not in dropped]


@dataclass(frozen=True)
class Mode:
    """Quick or full, and the number of timed rounds of each benchmark.

    Attributes
    ----------
    full : bool
        ``--full`` was given.
    """

    full: bool

    def pick(self, quick, full):
        """``full`` in full mode, ``quick`` otherwise."""
        return full if self.full else quick

    @property
    def rounds(self) -> int:
        """Timed rounds of a benchmark: 1 quick, 5 full."""
        return self.pick(1, 5)


@pytest.fixture(scope="session")
def mode(pytestconfig: pytest.Config) -> Mode:
    return Mode(bool(pytestconfig.getoption("full")))


@pytest.fixture
def measure(benchmark, mode: Mode) -> Callable:
    """``measure(function, setup=None, rounds=None)``: time ``function`` for the mode's rounds.

    ``benchmark.pedantic`` without warm-up rounds, one call per round; ``setup`` (untimed)
    returns ``(args, kwargs)`` for each round's call. Returns the last call's value.
    """

    def run(function: Callable, setup: Callable | None = None, rounds: int | None = None):
        return benchmark.pedantic(
            function, setup=setup, rounds=rounds or mode.rounds, iterations=1, warmup_rounds=0
        )

    return run


def generated(name: str) -> tuple[ProblemClass, object] | None:
    """The generator class and parameters of a generated instance's name, or ``None`` for another
    name: ``mis-6000`` (a graph class and its number of nodes, the ``small`` preset otherwise) or
    ``sc-large`` (a class and one of its presets)."""
    kind, _, size = name.partition("-")
    if kind in ("mis", "mvc") and size.isdigit():
        cls = problem_class(kind)
        return cls, cls.params("small", n_nodes=int(size))
    if kind in CLASSES and size in ("small", "large"):
        cls = problem_class(kind)
        return cls, cls.params(size)
    return None


@pytest.fixture(scope="session")
def problem_of() -> Callable[[str], Problem]:
    """``problem_of(name)``: an instance, made once per session.

    ``name`` is a bundled instance (``air05``, ``roll3000``) or a generated one (:func:`generated`:
    ``mis-6000``, ``sc-large``), instance 0 (seed 0) of its class with those parameters.
    """

    @functools.cache
    def of(name: str) -> Problem:
        made = generated(name)
        if made is None:
            return read_problem(resolve_instance(name))
        cls, params = made
        return cls.generate(params, instance_rng(0, 0), name)

    return of


@pytest.fixture(scope="session")
def path_of(problem_of, tmp_path_factory) -> Callable[[str], Path]:
    """``path_of(name)``: the file of the instance ``name`` of :func:`problem_of`; a generated
    one written once per session as ``.mps.gz``."""
    folder = tmp_path_factory.mktemp("instances")

    @functools.cache
    def of(name: str) -> Path:
        if generated(name) is None:
            return resolve_instance(name)
        return problem_of(name).write(folder / f"{name}.mps.gz")

    return of


def incumbent_sequence(problem: Problem, count: int, free: float = 0.5) -> list[np.ndarray]:
    """``count`` improving solutions of ``problem``, the same on every run.

    SCIP's solutions within 20 nodes, then the improving ones of sub-MIPs (a random ``free``
    share of the integer variables free, 20 nodes each) from the last, until there are
    ``count``; the last ``count`` of them (SCIP's very first solutions are so poor that every
    neighborhood improves them alike). Node limits, not time limits, make them repeat.
    """
    solver = ScipSubSolver(problem)
    try:
        outcome = solver.solve(time_limit=60, seed=0, node_limit=20)
        xs = [found.x for found in outcome.found]
        assert xs, f"{problem.name}: no solution within 20 nodes ({outcome.status})"
        rng = np.random.default_rng(0)
        integers = problem.integer_indices
        for seed in range(40):
            if len(xs) >= count:
                break
            fixed = rng.choice(integers, round((1 - free) * len(integers)), replace=False)
            outcome = solver.solve(
                time_limit=10,
                seed=seed,
                free=np.setdiff1d(integers, fixed),
                start=xs[-1],
                node_limit=20,
            )
            xs.extend(found.x for found in outcome.found)
    finally:
        solver.close()
    return xs[-count:]


@pytest.fixture(scope="session")
def incumbents(problem_of) -> Callable[[str, int], list[np.ndarray]]:
    """``incumbents(name, count)``: :func:`incumbent_sequence` of the instance ``name``,
    computed once per session."""
    return functools.cache(lambda name, count: incumbent_sequence(problem_of(name), count))
