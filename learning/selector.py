"""CL-LNS: neighborhoods chosen by a graph attention network trained by contrastive learning.

Huang, Ferber, Tian, Dilkina, Steiner, "Searching Large Neighborhoods for Integer Linear
Programs with Contrastive Learning", ICML 2023. The network (:mod:`learning.model`) scores
every variable of the bipartite graph at the incumbent (:mod:`learning.features`); the
selector frees the ``k`` integer variables with the highest scores, and once ``k`` has
reached its cap without improvement it samples instead (:func:`sample_by_scores`).

torch is imported only when a :class:`CLLNS` is set up, so naming a classical selector,
or importing this module's registry entry, never loads it. Feature extraction and
inference happen inside the selector call, so their time counts in the LNS budget.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from lns.core.selection import Neighborhood, SearchState, Selector
from lns.core.problem import Problem

PRETRAINED_DIR = Path(__file__).resolve().parent / "pretrained"
DEFAULT_CHECKPOINT = PRETRAINED_DIR / "mis.pt"


def resolve_checkpoint(checkpoint: str | Path) -> Path:
    """An existing path as it is; a bare name is a shipped model (``"mvc"``, ``"mvc.pt"`` -> ``learning/pretrained/mvc.pt``)."""
    path = Path(checkpoint)
    if path.exists() or len(path.parts) != 1:
        return path
    return PRETRAINED_DIR / (path.name if path.suffix == ".pt" else f"{path.name}.pt")


def sample_by_scores(scores: np.ndarray, size: int, rng: np.random.Generator, iterations: int = 60) -> np.ndarray:
    """Indices drawn independently with probability ``scores_i ** m``, ``m`` such that ``sum_i scores_i ** m ≈ size``.

    The sampling rule of CL-LNS at the size cap: ``f(m) = sum_i s_i^m`` decreases from ``n``
    (``m -> 0``) to 0 (``m -> inf``) for scores in (0, 1), so ``m`` is found by bisection on
    ``log m``; the expected number of draws is then ``size``. At least one index is returned.

    Parameters
    ----------
    scores : numpy.ndarray, shape (n,)
        Scores in (0, 1) (sigmoid outputs).
    size : int
        Expected number of indices.
    rng : numpy.random.Generator
    iterations : int
        Bisection steps.
    """
    scores = np.clip(np.asarray(scores, dtype=float), 1e-12, 1.0 - 1e-12)
    if size >= len(scores):
        return np.arange(len(scores))
    log_scores = np.log(scores)
    low, high = -30.0, 30.0  # log m
    for _ in range(iterations):
        middle = 0.5 * (low + high)
        if np.exp(np.exp(middle) * log_scores).sum() > size:
            low = middle
        else:
            high = middle
    probabilities = np.exp(np.exp(0.5 * (low + high)) * log_scores)
    chosen = np.flatnonzero(rng.random(len(scores)) < probabilities)
    return chosen if len(chosen) else np.array([int(np.argmax(scores))])


class CLLNS(Selector):
    """Free the integer variables a trained CL-LNS network scores highest.

    Parameters
    ----------
    checkpoint : str or pathlib.Path
        A checkpoint written by ``lns-train`` (:func:`learning.checkpoint.save_checkpoint`), or the
        name of a shipped one in ``learning/pretrained`` (``"mis"``, ``"mvc"``).
    lp_time_limit : float
        Seconds for the root LP of the features (computed once per problem in :meth:`setup`).
    threads : int or None
        ``torch.set_num_threads`` for inference (``None``: leave torch's setting).

    Notes
    -----
    ``Neighborhood.info`` holds ``"sampled"`` (whether the at-cap sampling rule chose),
    ``"feature_time"``, ``"inference_time"`` (seconds of this call) and ``"cached"``.
    The network's input depends only on the problem, the incumbent and the incumbent history, so
    after an iteration that did not improve the scores are those of the previous call: they are
    reused (``"cached"``: True, no feature or inference time) instead of being computed again.
    """

    name = "cl_lns"

    def __init__(self, checkpoint: str | Path = DEFAULT_CHECKPOINT, lp_time_limit: float = 60.0,
                 threads: int | None = 1):
        self.checkpoint = resolve_checkpoint(checkpoint)
        self.lp_time_limit = lp_time_limit
        self.threads = threads
        self._model = None
        self._extractor = None
        self._cache: tuple[list[np.ndarray], np.ndarray] | None = None
        self._last_feature_time = self._last_inference_time = 0.0
        self._last_cached = False

    def setup(self, problem: Problem) -> None:
        import torch

        from learning.checkpoint import load_checkpoint
        from learning.features import FeatureExtractor

        if self.threads is not None:
            torch.set_num_threads(self.threads)
        if self._model is None:
            self._model, _ = load_checkpoint(self.checkpoint)
        self._extractor = FeatureExtractor(problem, lp_time_limit=self.lp_time_limit)
        self._cache = None

    def scores(self, state: SearchState) -> np.ndarray:
        """Scores in (0, 1) of every variable of ``state.problem`` at the incumbent, shape (n,)."""
        import time

        import torch

        from learning.graph import observation_graph

        if self._extractor is None or self._extractor.problem is not state.problem:
            self.setup(state.problem)
        inputs = [state.incumbent, *state.history]
        self._last_cached = self._cache is not None and len(self._cache[0]) == len(inputs) and all(
            np.array_equal(a, b) for a, b in zip(self._cache[0], inputs))
        if self._last_cached:
            self._last_feature_time = self._last_inference_time = 0.0
            return self._cache[1].copy()
        began = time.perf_counter()
        observation = self._extractor.observe(state.incumbent, state.history)
        graph = observation_graph(observation)
        self._last_feature_time = time.perf_counter() - began
        with torch.no_grad():
            scores = torch.sigmoid(self._model(graph)).numpy().astype(float)
        self._last_inference_time = time.perf_counter() - began - self._last_feature_time
        self._cache = ([np.array(a, copy=True) for a in inputs], scores)
        return scores.copy()

    def __call__(self, state: SearchState, size: int, rng: np.random.Generator) -> Neighborhood:
        candidates = state.problem.integer_indices
        scores = self.scores(state)[candidates]
        size = min(size, len(candidates))
        if state.at_cap:
            chosen = sample_by_scores(scores, size, rng)
        else:
            chosen = np.argsort(-scores, kind="stable")[:size]
        info = {"sampled": bool(state.at_cap), "feature_time": self._last_feature_time,
                "inference_time": self._last_inference_time, "cached": self._last_cached}
        return Neighborhood(np.sort(candidates[chosen]), info=info)
