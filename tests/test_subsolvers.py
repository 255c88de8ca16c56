"""One contract battery for every sub-solver (SCIP, CP-SAT), and the watchdog."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pyscipopt
import pytest
import scipy.sparse as sp

from helpers import knapsack, miplib, mixed_problem
from instances.generators import ca
from lns.core.errors import InvalidArgumentError, UnsupportedProblemError
from lns.core.interrupt import InterruptGuard
from lns.core.problem.mip import Problem, read_problem, read_problem_and_model
from lns.core.solvers.cpsat.subsolver import CpSatSubSolver
from lns.core.solvers.protocol import SolveStatus, SubSolverAbandonedError
from lns.core.solvers.scip.lp_interrupt import interrupt_lp
from lns.core.solvers.scip.subsolver import SCIP_STATUS, ScipSubSolver, scip_status

SUB_SOLVERS = {
    "scip": ScipSubSolver,
    "scip_reduced": functools.partial(ScipSubSolver, sub_problem="reduced"),
    "cpsat": CpSatSubSolver,
}
P0201_OPTIMUM = 7615.0


def general_integers() -> Problem:
    """max 5a + 4b + 3c s.t. 2a + 3b + c <= 5, 4a + b + 2c <= 11, 3a + 4b + 2c <= 8; a, b, c <= 5.

    Optimum 13 at (2, 0, 1) (the classic LP example of Chvátal, integral at its LP optimum).
    """
    A = np.array([[2.0, 3.0, 1.0], [4.0, 1.0, 2.0], [3.0, 4.0, 2.0]])
    return Problem(
        name="general",
        var_names=("a", "b", "c"),
        var_types=np.array(["I"] * 3),
        lower=np.zeros(3),
        upper=np.full(3, 5.0),
        objective=np.array([5.0, 4.0, 3.0]),
        objective_offset=0.0,
        sense="maximize",
        matrix=sp.csr_matrix(A),
        row_lower=np.full(3, -np.inf),
        row_upper=np.array([5.0, 11.0, 8.0]),
        row_names=("r1", "r2", "r3"),
    )


@pytest.fixture(scope="module")
def p0201():
    return read_problem(miplib("p0201"))


@pytest.fixture(scope="module")
def p0201_start(p0201):
    """A poor first solution of p0201 (SCIP's first)."""
    return ScipSubSolver(p0201).solve(time_limit=10, seed=0, solution_limit=1).best.x


@pytest.fixture(params=sorted(SUB_SOLVERS))
def make(request):
    return SUB_SOLVERS[request.param]


@pytest.mark.parametrize(
    "build, optimum",
    [(knapsack, 23.0), (lambda: knapsack("minimize"), -23.0), (general_integers, 13.0)],
)
def test_whole_problem_solves_to_its_optimum(make, build, optimum):
    problem = build()
    outcome = make(problem).solve(time_limit=10, seed=0)
    assert outcome.status is SolveStatus.OPTIMAL
    assert outcome.best.objective == pytest.approx(optimum)
    assert problem.check(outcome.best.x).feasible
    assert outcome.dual_bound == pytest.approx(optimum)


def test_p0201_solves_to_its_optimum(make, p0201):
    outcome = make(p0201).solve(time_limit=60, seed=0)
    assert outcome.status is SolveStatus.OPTIMAL
    assert outcome.best.objective == pytest.approx(P0201_OPTIMUM)


def test_everything_fixed_at_a_start_reports_nothing_and_is_proven(make, p0201, p0201_start):
    reported = []
    outcome = make(p0201).solve(
        time_limit=10,
        seed=0,
        free=np.array([], dtype=int),
        start=p0201_start,
        on_found=reported.append,
    )
    assert outcome.found == [] and reported == []
    assert outcome.status is SolveStatus.OPTIMAL and outcome.status.proven


def test_only_strictly_better_solutions_are_reported(make, p0201, p0201_start):
    reported = []
    start_objective = p0201.objective_value(p0201_start)
    outcome = make(p0201).solve(time_limit=60, seed=0, start=p0201_start, on_found=reported.append)
    assert reported and reported == outcome.found
    objectives = [start_objective] + [found.objective for found in reported]
    assert all(later < earlier for earlier, later in itertools.pairwise(objectives))  # a minimum
    assert all(p0201.check(found.x).feasible for found in reported)
    assert outcome.best.objective == pytest.approx(P0201_OPTIMUM)


def test_an_optimal_start_leaves_nothing_to_report(make):
    outcome = make(knapsack()).solve(time_limit=10, seed=0, start=np.array([1.0, 1.0, 0.0, 0.0]))
    assert outcome.found == [] and outcome.status is SolveStatus.OPTIMAL
    assert outcome.dual_bound == pytest.approx(23.0)


def test_fixings_hint_and_cutoff_are_undone_after_solve_and_session(make):
    """Knapsack: with a and b fixed at 0 the best is 15; a whole solve after it must reach 23 again,
    also after a solve whose cutoff (an optimal start) left nothing feasible."""
    solver = make(knapsack())
    empty, optimum = np.zeros(4), np.array([1.0, 1.0, 0.0, 0.0])

    def whole():
        return solver.solve(time_limit=10, seed=0).best.objective

    assert solver.solve(time_limit=10, seed=0, free=[2, 3], start=empty).best.objective == 15.0
    assert whole() == 23.0
    solver.solve(time_limit=10, seed=0, start=optimum)
    assert whole() == 23.0
    with solver.session():
        assert solver.solve(time_limit=10, seed=0, free=[2, 3], start=empty).best.objective == 15.0
        assert solver.solve(time_limit=10, seed=0, free=[0, 1], start=empty).best.objective == 23.0
        solver.solve(time_limit=10, seed=0, free=[2, 3], start=empty)
        assert whole() == 23.0  # within a session the next solve changes what differs: all of it
        solver.solve(time_limit=10, seed=0, free=[2, 3], start=empty)
    assert whole() == 23.0


def test_a_solution_limit_stops_after_that_many_solutions(make, p0201):
    outcome = make(p0201).solve(time_limit=60, seed=0, solution_limit=1)
    assert outcome.status is SolveStatus.SOLUTION_LIMIT and len(outcome.found) == 1


def test_same_seed_and_node_limit_repeat_exactly(make, p0201, p0201_start):
    rng = np.random.default_rng(1)
    fixed = rng.choice(p0201.integer_indices, 100, replace=False)
    free = np.setdiff1d(p0201.integer_indices, fixed)
    runs = [
        make(p0201).solve(time_limit=60, seed=7, free=free, start=p0201_start, node_limit=20)
        for _ in range(2)
    ]
    assert runs[0].status == runs[1].status
    assert [f.objective for f in runs[0].found] == [f.objective for f in runs[1].found]
    assert all(np.array_equal(a.x, b.x) for a, b in zip(runs[0].found, runs[1].found, strict=True))


def test_stop_from_another_thread_ends_a_long_solve(make):
    solver = make(read_problem(miplib("stein45")))  # open for longer than the test runs
    solver.stop()  # idle: no effect on the next solve
    found = threading.Event()
    stopping = threading.Thread(target=lambda: found.wait(60) and solver.stop())
    stopping.start()
    outcome = solver.solve(time_limit=60, seed=0, on_found=lambda solution: found.set())
    stopping.join()
    assert outcome.status is SolveStatus.INTERRUPTED and outcome.found
    assert solver.solve(time_limit=0.5, seed=0).status is SolveStatus.TIME_LIMIT  # still usable


def test_a_stop_ends_scip_inside_its_first_lp():
    """An auction of the CL-LNS paper's size without presolving: SCIP's root LP runs for more
    than the 60 s limit here. A stop 3 s in ends it, and the solve, within 2 s (a stop
    request alone waits for the LP's end: the watchdog abandoned the solve)."""
    problem = ca.generate(ca.CAParams(n_items=2000, n_bids=4000), np.random.default_rng(0), "ca")
    solver = ScipSubSolver(problem, {"presolving/maxrounds": 0})
    first_lp: list = []
    stop_sent: list = []
    stopping = threading.Timer(3.0, lambda: stop_sent.append(time.perf_counter()) or solver.stop())
    stopping.start()
    outcome = solver.solve(time_limit=60, seed=0, on_first_lp=first_lp.append)
    stopped_after = time.perf_counter() - stop_sent[0]
    assert not first_lp, "the root LP ended before the stop: the test needs a harder LP"
    assert outcome.status is SolveStatus.INTERRUPTED and stopped_after < 2.0
    assert solver.solve(time_limit=0.5, seed=0).status is SolveStatus.TIME_LIMIT  # flag gone


def test_a_resumed_search_goes_on_inside_the_lp_a_stop_ended():
    """As above, with ``resume``: the next solve continues the root LP (SCIP's LP iterations go
    on from where the stop left them, and its interrupt flag is cleared, or the solve would end
    at once)."""
    problem = ca.generate(ca.CAParams(n_items=2000, n_bids=4000), np.random.default_rng(0), "ca")
    solver = ScipSubSolver(problem, {"presolving/maxrounds": 0}, resume=True)
    threading.Timer(2.0, solver.stop).start()
    assert solver.solve(time_limit=60, seed=0).status is SolveStatus.INTERRUPTED
    iterations, first = solver.model.getNLPIterations(), solver.model.getSolvingTime()
    assert iterations > 0 and solver.model.getStage() == pyscipopt.SCIP_STAGE.SOLVING
    assert solver.solve(time_limit=1.0, seed=0).status is SolveStatus.TIME_LIMIT
    assert solver.model.getNLPIterations() > iterations
    # SCIP's clock counts both solves (the first ran for a second or more before the stop)
    assert first > 1.0 and solver.model.getSolvingTime() > first + 0.5


def test_a_resumed_search_keeps_its_clock_and_takes_a_better_start():
    problem = read_problem(miplib("air05"))
    start = ScipSubSolver(problem).solve(time_limit=60, seed=0, solution_limit=1).best
    assert start is not None
    solver = ScipSubSolver(problem, resume=True)
    assert solver.solve(time_limit=0.3, seed=0).status is SolveStatus.TIME_LIMIT
    solver.model.setHeuristics(pyscipopt.SCIP_PARAMSETTING.OFF)  # SCIP finds nothing itself
    outcome = solver.solve(time_limit=0.3, seed=0, start=start.x)
    assert outcome.status is SolveStatus.TIME_LIMIT
    assert 0.55 < solver.model.getSolvingTime() < 2.0  # one search of two parts, not two
    assert solver.model.getPrimalbound() <= start.objective + 1e-6
    fixed = solver.solve(time_limit=5, seed=0, free=np.arange(10), start=start.x)
    assert fixed.status.proven and solver.model.getSolvingTime() < 0.55  # a new search


def test_an_lp_interrupt_is_asked_only_while_scip_solves():
    model = pyscipopt.Model()
    model.hideOutput()
    model.readProblem(str(miplib("p0201")))
    assert interrupt_lp(model) is False  # not transformed: no LP yet
    model.optimize()
    assert interrupt_lp(model) is False  # solved


class InterruptAtFirst:
    """An ``on_found`` callback that sends this process SIGINT at the first solution."""

    def __init__(self):
        self.sent = False

    def __call__(self, solution):
        if not self.sent:
            self.sent = True
            os.kill(os.getpid(), signal.SIGINT)


def test_ctrl_c_under_the_guard_stops_the_solve(make):
    solver = make(read_problem(miplib("stein45")))
    with InterruptGuard() as guard:
        outcome = solver.solve(time_limit=60, seed=0, on_found=InterruptAtFirst())
    assert guard.requested and outcome.status is SolveStatus.INTERRUPTED


def test_keyboard_interrupt_while_waiting_stops_the_solve_and_propagates(make):
    solver = make(read_problem(miplib("stein45")))
    with pytest.raises(KeyboardInterrupt):
        solver.solve(time_limit=60, seed=0, on_found=InterruptAtFirst())
    assert solver.solve(time_limit=0.5, seed=0).status is SolveStatus.TIME_LIMIT  # it did stop


def test_a_solve_that_never_returns_is_abandoned(make):
    """``on_found`` blocks inside the solver for 30 s: the watchdog stops, then abandons the
    solve (without it the solve would end normally after those 30 s).

    On a knapsack, whose first solution each solver finds at once, also on a loaded machine.
    """
    release = threading.Event()
    problem = knapsack()
    solver = make(problem, grace=0.2)
    outcome = solver.solve(time_limit=0.5, seed=0, on_found=lambda found: release.wait(30))
    release.set()  # let the worker thread finish: no thread is left busy
    assert outcome.status is SolveStatus.ABANDONED and not outcome.status.usable_after
    assert len(outcome.found) == 1 and problem.check(outcome.best.x).feasible  # found stays
    with pytest.raises(SubSolverAbandonedError, match="abandoned"):
        solver.solve(time_limit=1, seed=0)


NAN_OBJECTIVE = """
import numpy as np, scipy.sparse as sp
from lns.core.problem.mip import Problem
from lns.core.solvers.scip.subsolver import ScipSubSolver
problem = Problem(name="nan", var_names=("x", "y"), var_types=np.array(["I", "I"]),
                  lower=np.zeros(2), upper=np.full(2, 10.0), objective=np.array([1.0, -1.0]),
                  objective_offset=0.0, sense="minimize", matrix=sp.csr_matrix(np.ones((1, 2))),
                  row_lower=np.array([-np.inf]), row_upper=np.array([5.0]), row_names=("c",))
model = problem.to_scip()  # a Problem refuses NaN data: the NaN goes into SCIP's model directly
x, y = model.getVars()
model.setObjective(float("nan") * x - y)
outcome = ScipSubSolver(problem, model=model, grace=0.3).solve(time_limit=1.0, seed=0)
print(outcome.status)
"""


def test_the_nan_objective_hang_of_scip_ends_at_the_time_limit():
    """SCIP loops forever on a NaN objective coefficient (issue 13); run in a child process, so
    that the abandoned thread, which burns a core, ends with it."""
    run = subprocess.run(
        [sys.executable, "-c", NAN_OBJECTIVE], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["abandoned"]


def test_every_scip_status_word_has_a_member():
    assert scip_status("gaplimit") is SolveStatus.GAP_LIMIT
    assert scip_status("stallnodelimit") is SolveStatus.NODE_LIMIT
    assert scip_status("memlimit") is SolveStatus.MEMORY_LIMIT
    assert scip_status("something new") is SolveStatus.OTHER
    assert set(SCIP_STATUS.values()) <= set(SolveStatus)


def test_cpsat_refuses_a_problem_with_continuous_variables():
    with pytest.raises(UnsupportedProblemError, match="continuous"):
        CpSatSubSolver(mixed_problem())


def test_cpsat_names_a_parameter_it_does_not_know():
    with pytest.raises(ValueError, match="no_such_parameter"):
        CpSatSubSolver(knapsack(), params={"no_such_parameter": 1})


def test_cpsat_solves_a_problem_with_a_fractional_objective_again_and_again():
    """A fractional objective stays CP-SAT's floating-point objective: reading or clearing the
    integral objective's fields must not create a second objective (CP-SAT refuses the model)."""
    problem = Problem(
        name="frac",
        var_names=("a", "b", "c"),
        var_types=np.array(["B"] * 3),
        lower=np.zeros(3),
        upper=np.ones(3),
        objective=np.array([1 / 3, 0.7, 1.1]),
        objective_offset=0.0,
        sense="minimize",
        matrix=sp.csr_matrix(np.ones((1, 3))),
        row_lower=np.array([1.0]),
        row_upper=np.array([np.inf]),
        row_names=("r",),
    )
    solver = CpSatSubSolver(problem)
    first = solver.solve(time_limit=5, seed=0)
    assert first.status is SolveStatus.OPTIMAL and first.best.objective == pytest.approx(1 / 3)
    fixed = solver.solve(time_limit=5, seed=0, free=np.array([1, 2]), start=np.array([0.0, 1, 0]))
    assert fixed.status is SolveStatus.OPTIMAL and not fixed.found  # b alone is best with a = 0
    again = solver.solve(time_limit=5, seed=0)
    assert again.status is SolveStatus.OPTIMAL and again.best.objective == pytest.approx(1 / 3)


def test_sub_mip_settings_reach_the_lns_sub_solver_under_scip_params():
    from lns.api import named_sub_solver
    from lns.core.errors import UnknownNameError
    from lns.core.search.params import SubSolveParams

    problem = knapsack()
    sub_solve = SubSolveParams(sub_mip="fast", scip_params={"presolving/maxrestarts": 3})
    model = named_sub_solver(problem, sub_solve).model
    assert model.getParam("constraints/linear/presolpairwise") is False  # from the preset
    assert model.getParam("heuristics/rins/freq") == -1
    assert model.getParam("presolving/maxrestarts") == 3  # scip_params go over the preset
    default = named_sub_solver(problem, SubSolveParams(sub_mip="default")).model
    assert default.getParam("heuristics/rins/freq") != -1
    with pytest.raises(UnknownNameError, match="sub_mip"):
        SubSolveParams(sub_mip="fastest")


def test_a_model_scip_reads_later_is_matched_to_the_problem_by_name(tmp_path):
    """The continuous variable first in the file: SCIP lists it last, the problem first."""
    mixed, order = mixed_problem(), [4, 2, 0, 3, 1]
    problem = dataclasses.replace(
        mixed,
        var_names=[mixed.var_names[j] for j in order],
        var_types=mixed.var_types[order],
        lower=mixed.lower[order],
        upper=mixed.upper[order],
        objective=mixed.objective[order],
        matrix=mixed.matrix[:, order],
    )
    read, read_model = read_problem_and_model(problem.write(tmp_path / "mixed.mps"))
    assert list(read.var_names) == list(problem.var_names) and callable(read_model)
    outcome = ScipSubSolver(read, model=read_model).solve(time_limit=10, seed=0)
    assert outcome.status is SolveStatus.OPTIMAL
    assert outcome.best.objective == pytest.approx(-14.25)
    assert read.check(outcome.best.x).feasible
    with pytest.raises(InvalidArgumentError, match="does not hold the problem's variables"):
        ScipSubSolver(knapsack(), model=read_model).solve(time_limit=1, seed=0)
