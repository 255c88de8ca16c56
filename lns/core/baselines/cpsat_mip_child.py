"""The child process of :mod:`lns.core.baselines.cpsat_mip`: CP-SAT on an MPS file through OR-Tools'
``model_builder``. It imports OR-Tools and numpy only, so that it starts quickly.

Usage: ``python -m lns.core.baselines.cpsat_mip_child MODEL.mps SOLUTION.npz DEADLINE SEED
WORKERS``.
"""

from __future__ import annotations

import sys
import threading
import time

import numpy as np

#: How the child prints its solve's status (a ``model_builder.SolveStatus`` name) at the end.
STATUS_PREFIX = "LNS-STATUS "


def main(argv: list[str]) -> None:
    """The child: solve the MPS file ``argv[0]`` with CP-SAT, its log on standard output,
    until the ``time.time()`` ``argv[2]`` or until standard input closes; save the names and
    values of the best solution's variables to ``argv[1]`` (``numpy.savez``), then print the
    status."""
    from ortools.linear_solver.python import model_builder

    model_path, solution_path, deadline, seed, num_workers = argv
    model = model_builder.Model()
    if not model.import_from_mps_file(model_path):
        raise SystemExit(f"{model_path}: OR-Tools could not read the MPS file")
    solver = model_builder.Solver("sat")
    solver.enable_output(True)
    if float(deadline) < float("inf"):
        solver.set_time_limit_in_seconds(max(0.0, float(deadline) - time.time()))
    solver.set_solver_specific_parameters(
        f"num_workers:{int(num_workers)},random_seed:{int(seed)},log_search_progress:true"
    )
    threading.Thread(target=_stop_at_end_of_input, args=(solver,), daemon=True).start()
    status = solver.solve(model)
    if status in (model_builder.SolveStatus.OPTIMAL, model_builder.SolveStatus.FEASIBLE):
        variables = model.get_variables()
        values = solver.values(variables).to_numpy(dtype=float)
        np.savez(solution_path, names=np.array([v.name for v in variables]), values=values)
    sys.stdout.flush()
    print(f"{STATUS_PREFIX}{status.name}", flush=True)


def _stop_at_end_of_input(solver) -> None:
    sys.stdin.read()
    solver.stop_search()


if __name__ == "__main__":
    main(sys.argv[1:])
