"""The kinds of search a portfolio worker runs, one module each, behind one protocol
(:mod:`lns.core.parallel.kinds.protocol`).

:data:`KINDS` names them: ``lns`` (the LNS loop, any selector and sub-solver), ``scip`` (SCIP's
tree search on the whole problem), ``cpsat`` (CP-SAT on the whole problem) and
``local_search`` (Local-MIP). A new kind is a module with a :class:`KindWorker` subclass and a
line here; the contract test (``tests/test_kinds.py``) runs every kind.
"""

from __future__ import annotations

import importlib

from lns.core.errors import UnknownNameError

#: Kind name -> ``module:class`` of its worker (imported in the worker process only).
KINDS = {
    "lns": "lns.core.parallel.kinds.lns:LnsWorker",
    "scip": "lns.core.parallel.kinds.scip:ScipWorker",
    "cpsat": "lns.core.parallel.kinds.cpsat:CpSatWorker",
    "local_search": "lns.core.parallel.kinds.local_search:LocalSearchWorker",
}


def worker_class(kind) -> type:
    """The worker class of ``kind``: a name of :data:`KINDS`, or a class, returned as it is."""
    if not isinstance(kind, str):
        return kind
    if kind not in KINDS:
        raise UnknownNameError("kind", kind, tuple(KINDS))
    module, _, name = KINDS[kind].partition(":")
    return getattr(importlib.import_module(module), name)


def missing(kind: str) -> str | None:
    """Why ``kind`` cannot run in this environment (one line), or ``None``. Cheap: the
    problem-specific reasons (a model OR-Tools cannot read) come from the worker."""
    if kind == "local_search":
        from lns.core.parallel.kinds.local_search import missing as local_search_missing

        return local_search_missing()
    return None
