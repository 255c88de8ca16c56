"""Releasing SCIP's unused memory between solves frees memory and changes no result."""

import pytest

from lns.core.problem.mip import read_scip_model
from lns.core.solvers.scip.memory import MemoryRelease, collect_memory_garbage
from tests.helpers import miplib


def solved_twice(release: MemoryRelease | None) -> list:
    """Objective, nodes and LP iterations of two solves of p0201, released in between or not."""
    model = read_scip_model(miplib("p0201"))
    model.setBoolParam("misc/transsolsorig", False)
    results = []
    for seed in (1, 2):
        model.setIntParam("randomization/randomseedshift", seed)
        model.optimize()
        results.append((model.getObjVal(), model.getNNodes(), model.getNLPIterations()))
        model.freeTransform()
        if release is not None:
            release.after_free_transform(model)
    return results


def test_collection_frees_the_block_memory_a_solve_left_unused():
    model = read_scip_model(miplib("p0201"))
    model.optimize()
    model.freeTransform()
    allocated = model.getMemTotal()
    assert collect_memory_garbage(model)
    assert model.getMemTotal() < allocated


def test_release_between_solves_leaves_the_results_unchanged():
    release = MemoryRelease(every=1)
    assert solved_twice(release) == solved_twice(None)
    assert release.solves == 2


def test_release_period_must_be_positive():
    with pytest.raises(ValueError, match="every must be at least 1, got 0"):
        MemoryRelease(every=0)
