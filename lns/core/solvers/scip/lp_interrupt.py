"""Stop the LP that SCIP is solving, from another thread.

SCIP heeds ``interruptSolve`` between its steps, not inside an LP: on a large problem the root
LP can run for the rest of a solve's time limit after a stop request (a whole minute on an
auction of the CL-LNS paper's size). SCIP's C function ``SCIPinterruptLP`` sets the LP
solver's own interrupt flag, which SoPlex checks as it iterates, and SCIP's user interrupt:
the LP ends at once and the solve after it. PySCIPOpt does not wrap that function; it is called
here through :mod:`ctypes` on the SCIP library that PySCIPOpt's extension module links.

Only while SCIP is in its solving stage: its LP is created with the transformed problem and
freed with it (``freeTransform``), and the caller must make sure that no free happens while
this runs (:class:`lns.core.solvers.scip.subsolver.ScipSubSolver` holds a lock around both).
The flag stays set on that LP, which is freed before the model's next solve, or cleared
(:func:`resume_lp`) before a solve that continues the search.
"""

from __future__ import annotations

import ctypes
import functools
import logging

import pyscipopt.scip
from pyscipopt import SCIP_STAGE

log = logging.getLogger("lns")

#: Python's ``PyCapsule_GetPointer``: the ``SCIP*`` in the capsule of ``Model.to_ptr``.
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)


@functools.cache
def _scip_function():
    """``SCIPinterruptLP`` of the SCIP library loaded by PySCIPOpt, or ``None`` where that
    library lacks it (SCIP before 8)."""
    try:
        function = ctypes.CDLL(pyscipopt.scip.__file__).SCIPinterruptLP
    except (OSError, AttributeError):
        log.info("SCIPinterruptLP not found: a stop request waits for the end of SCIP's LP")
        return None
    function.argtypes = [ctypes.c_void_p, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


def interrupt_lp(model) -> bool:
    """Ask SCIP (a ``pyscipopt.Model`` in its solving stage) to end the LP it solves, and the
    solve after it; whether the request was made."""
    return _set_lp_interrupt(model, True)


def resume_lp(model) -> None:
    """Clear the LP's interrupt flag of :func:`interrupt_lp` (a ``pyscipopt.Model`` in its
    solving stage whose search goes on). SCIP 10 with SoPlex was seen to go on without it; no
    documentation says that every LP interface clears the flag itself."""
    _set_lp_interrupt(model, False)


def _set_lp_interrupt(model, interrupt: bool) -> bool:
    """``SCIPinterruptLP(scip, interrupt)`` in SCIP's solving stage; whether it was called and
    returned ``SCIP_OKAY``."""
    function = _scip_function()
    if function is None or model.getStage() != SCIP_STAGE.SOLVING:
        return False
    pointer = _capsule_pointer(model.to_ptr(False), b"scip")
    return function(pointer, int(interrupt)) == 1  # SCIP_OKAY
