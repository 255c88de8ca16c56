"""Whole-problem solvers that LNS is compared with: OR-Tools CP-SAT (:mod:`.cpsat`, and
:mod:`.cpsat_mip` with its child process :mod:`.cpsat_mip_child` for problems with continuous
variables)."""
