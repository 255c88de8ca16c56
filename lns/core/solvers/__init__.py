"""Solvers of the (sub-)problems: the sub-solver protocol (:mod:`.protocol`), the watchdog that
holds a time limit whatever the solver does (:mod:`.watchdog`), the LP relaxation with HiGHS
(:mod:`.lp`), and the SCIP (:mod:`.scip`) and CP-SAT (:mod:`.cpsat`) sub-solvers."""
