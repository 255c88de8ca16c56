"""Which of CL-LNS's problem classes a problem looks like, from its structure alone.

The four classes of the paper (Huang et al., ICML 2023) are binary programs with 0/1
coefficients whose rows all have one form:

====  =========  ======================================  ===========================================
name  sense      rows                                    told apart by
====  =========  ======================================  ===========================================
mis   maximise   packing ``sum_{i in R} x_i <= 1``       rows of mean size at most 4 (edges, small
                                                         cliques of a sparse graph)
ca    maximise   packing ``sum_{i in R} x_i <= 1``       larger rows (items shared by many bids)
mvc   minimise   covering ``x_i + x_j >= 1``             every row has two variables (edges)
sc    minimise   covering ``sum_{i in R} x_i >= 1``      some row has more than two
====  =========  ======================================  ===========================================

"Maximise" and "minimise" are read from the objective in the minimisation sense: packing
needs weights ``>= 0`` to be maximised, covering costs ``>= 0`` to be minimised. Anything else
(general integers, continuous variables, other coefficients or sides, mixed rows) is no class.

A checkpoint may also record :data:`GENERAL`: a model trained on a mixture of classes and
general MIPs, meant for any problem, which ``cl_lns`` uses when no model of the problem's class
is shipped (:mod:`learning.selector`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lns.core.problem.mip import Problem

#: Mean row size up to which a packing problem is read as independent set rather than auction.
MIS_MAX_MEAN_ROW = 4.0
CLASSES = ("mis", "mvc", "sc", "ca")
#: The class recorded by a model trained on a mixture of instances, meant for any problem.
GENERAL = "general"
#: The classes a checkpoint may record (``lns-train problem_class=...``).
TRAINED_CLASSES = (*CLASSES, GENERAL)


@dataclass(frozen=True)
class DetectedClass:
    """The class a problem looks like (``name``, ``None`` for none) and why, in words."""

    name: str | None
    reason: str


def _binary(problem: Problem) -> bool:
    integer = problem.integer_mask
    return bool(integer.all() and (problem.lower >= 0).all() and (problem.upper <= 1).all())


def detect_class(problem: Problem) -> DetectedClass:
    """The CL-LNS class ``problem`` has the structure of (see the module docstring)."""
    if not _binary(problem):
        return DetectedClass(None, "not a pure binary program")
    matrix = problem.matrix.tocsr()
    if matrix.nnz == 0 or not np.all(matrix.data == 1.0):
        return DetectedClass(None, "coefficients other than 1")
    sizes = np.diff(matrix.indptr)
    if (sizes == 0).any():
        return DetectedClass(None, "empty rows")
    c = problem.min_objective
    packing = (problem.row_upper == 1) & (problem.row_lower <= 0)
    covering = (problem.row_lower == 1) & (problem.row_upper >= sizes)
    mean = sizes.mean()
    if packing.all() and (c <= 0).all():
        name = "mis" if mean <= MIS_MAX_MEAN_ROW else "ca"
        return DetectedClass(
            name,
            f"set packing (maximise weights >= 0, rows sum x <= 1) with rows of mean "
            f"size {mean:.1f} ({'<=' if name == 'mis' else '>'} {MIS_MAX_MEAN_ROW:g})",
        )
    if covering.all() and (c >= 0).all():
        name = "mvc" if (sizes == 2).all() else "sc"
        return DetectedClass(
            name,
            f"set covering (minimise costs >= 0, rows sum x >= 1) with "
            f"{'two variables in every row' if name == 'mvc' else f'rows of mean size {mean:.1f}'}",
        )
    return DetectedClass(
        None,
        "rows are neither all packing (sum x <= 1, maximise) nor all covering "
        "(sum x >= 1, minimise)",
    )
