"""Proposals of the sampled expert: ways to draw candidate neighborhoods of a given size.

Each proposal draws ``count`` neighborhoods of exactly ``min(size, #integers)`` integer
variables at the search state's incumbent, from the run's generator:

- ``random``: uniformly without replacement;
- ``lb_relax``: weighted by LB-RELAX's sampling probabilities ``(1 - 2ε) min(Δ_j, 1) + ε``
  (:class:`heuristics.lb_relax.LBRelax`, one LP per incumbent; uniform when the LP fails);
- ``graph``: breadth-first over the variable-constraint graph from a random variable
  (:class:`heuristics.graph_induced.GraphInduced`);
- ``model``: weighted by the CL-LNS sampling probabilities ``s_j^m`` of a trained model's scores
  (:func:`learning.sampling.sampling_probabilities`): expert iteration's proposal.

The weighted ones draw without replacement (``numpy.random.Generator.choice`` with ``p``), so
that every candidate has the same size as the others: a contrastive sample then compares
neighborhoods of one size.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from heuristics.graph_induced import GraphInduced
from heuristics.lb_relax import LBRelax
from lns.core.errors import InvalidArgumentError, UnknownNameError
from lns.core.search.selection import SearchState

#: The proposals that need no model.
CLASSICAL_PROPOSALS = ("random", "lb_relax", "graph")
PROPOSALS = (*CLASSICAL_PROPOSALS, "model")


def weighted_draw(
    candidates: np.ndarray, weights: np.ndarray, size: int, rng: np.random.Generator
) -> np.ndarray:
    """``min(size, len(candidates))`` of ``candidates`` drawn without replacement with
    probabilities proportional to ``weights`` (uniform where every weight is 0), sorted."""
    size = min(size, len(candidates))
    weights = np.clip(np.asarray(weights, dtype=float), 0.0, None)
    positive = int((weights > 0).sum())
    if positive < size:  # choice without replacement needs as many non-zero weights
        weights = weights + (weights.max(initial=0.0) or 1.0) * 1e-9
    p = weights / weights.sum()
    return np.sort(rng.choice(candidates, size=size, replace=False, p=p))


class RandomProposal:
    """Uniformly random neighborhoods."""

    name = "random"

    def draw(self, state: SearchState, size: int, count: int, rng: np.random.Generator) -> list:
        candidates = state.problem.integer_indices
        size = min(size, len(candidates))
        return [np.sort(rng.choice(candidates, size=size, replace=False)) for _ in range(count)]


class LBRelaxProposal:
    """Neighborhoods weighted by LB-RELAX's sampling probabilities (one LP per call).

    Parameters
    ----------
    epsilon : float
        ε of the probabilities (0.05 as in the authors' code).
    """

    name = "lb_relax"

    def __init__(self, epsilon: float = 0.05):
        self.epsilon = epsilon
        self._lb_relax = LBRelax(variant="sample", epsilon=epsilon)

    def draw(self, state: SearchState, size: int, count: int, rng: np.random.Generator) -> list:
        candidates = state.problem.integer_indices
        delta, _ = self._lb_relax.deltas(state, size)
        if delta is None:
            weights = np.ones(len(candidates))
        else:
            weights = (1 - 2 * self.epsilon) * np.clip(delta, 0.0, 1.0) + self.epsilon
        return [weighted_draw(candidates, weights, size, rng) for _ in range(count)]


class GraphProposal:
    """Graph-induced neighborhoods (:class:`heuristics.graph_induced.GraphInduced`)."""

    name = "graph"

    def __init__(self):
        self._graph = GraphInduced()

    def draw(self, state: SearchState, size: int, count: int, rng: np.random.Generator) -> list:
        return [self._graph(state, size, rng).free for _ in range(count)]


class ModelProposal:
    """Neighborhoods weighted by a CL-LNS model's sampling probabilities.

    Parameters
    ----------
    checkpoint : str or pathlib.Path
        A checkpoint of ``lns-train`` or the name of a shipped model
        (:func:`learning.selector.resolve_checkpoint`).
    lp_time_limit : float
        Seconds for the root LP of the model's features.
    """

    name = "model"

    def __init__(self, checkpoint: str | Path, lp_time_limit: float = 60.0):
        from learning.selector import CLLNS

        self._selector = CLLNS(checkpoint, lp_time_limit=lp_time_limit)

    def draw(self, state: SearchState, size: int, count: int, rng: np.random.Generator) -> list:
        from learning.sampling import sampling_probabilities

        candidates = state.problem.integer_indices
        scores = self._selector.scores(state, size)
        if scores is None:  # the run is being stopped
            return []
        weights = sampling_probabilities(scores[candidates], size)
        return [weighted_draw(candidates, weights, size, rng) for _ in range(count)]


def proposal_names(names, checkpoint: str | Path | None = None) -> list[str]:
    """The proposals ``names`` (of :data:`PROPOSALS`), checked, with ``model`` added when a
    ``checkpoint`` is given; duplicates dropped.

    Raises
    ------
    lns.core.errors.UnknownNameError
        A name that is no proposal.
    ValueError
        ``model`` without a checkpoint, or no proposal at all.
    """
    names = list(dict.fromkeys(names))
    for name in names:
        if name not in PROPOSALS:
            raise UnknownNameError("proposal", name, PROPOSALS)
    if checkpoint is not None and "model" not in names:
        names.append("model")
    if "model" in names and checkpoint is None:
        raise InvalidArgumentError(
            "the model proposal needs a checkpoint (lns-collect checkpoint=PATH)"
        )
    if not names:
        raise InvalidArgumentError("the sampled expert needs at least one proposal")
    return names


def make_proposals(
    names, checkpoint: str | Path | None = None, lp_time_limit: float = 60.0
) -> list:
    """The proposal objects of :func:`proposal_names` ``(names, checkpoint)``."""
    made = {"random": RandomProposal, "lb_relax": LBRelaxProposal, "graph": GraphProposal}
    proposals = []
    for name in proposal_names(names, checkpoint):
        if name == "model":
            assert checkpoint is not None, "proposal_names refuses model without one"
            proposals.append(ModelProposal(checkpoint, lp_time_limit))
        else:
            proposals.append(made[name]())
    return proposals
