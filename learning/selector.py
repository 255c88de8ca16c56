"""CL-LNS: neighborhoods chosen by a graph attention network trained by contrastive learning.

Huang, Ferber, Tian, Dilkina, Steiner, "Searching Large Neighborhoods for Integer Linear
Programs with Contrastive Learning", ICML 2023. The network (:mod:`learning.model`) scores
every variable of the bipartite graph at the incumbent (:mod:`learning.features`); the
selector frees the ``k`` integer variables with the highest scores (the paper's), or draws
``k`` of them by their scores (:func:`learning.sampling.sample_by_scores`), whichever has
improved more in the run so far; once ``k`` has reached its cap without improvement it samples.

Start-up: the checkpoint is read and checked when the selector is built (before the problem is
read); the model's class is matched against the problem's in :meth:`CLLNS.check` (before the first
solve). A thread (:class:`learning.prefetch.FeaturesPrefetch`) imports what the first call needs
and computes the static features, root LP included (HiGHS runs without Python's lock): started by
:meth:`CLLNS.check`, beside SCIP's search for the first solution, when the calls wait for it, else
by :meth:`CLLNS.setup`, once that solution is there, and the calls draw at random until it is done.
The scores are computed with numpy (:mod:`learning.inference`), so a run never imports torch. The
first selector call with scores waits for that thread within the run's deadline (and cancels its LP
when the deadline passes first), then builds the graph and runs the inference; their time counts in
the LNS budget.
``benchmarks/test_cl_lns_cost.py`` measures each part.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from pathlib import Path

import numpy as np
from threadpoolctl import ThreadpoolController

from learning.checkpoint_file import CheckpointError, read_checkpoint
from learning.draw_record import MODEL_DRAWS, DrawRecord
from learning.features import (
    BASE_VARIABLE_COLUMNS,
    FeatureExtractor,
    Observation,
    uses_lb_lp,
)
from learning.inference import GraphCache, NumpyPolicy
from learning.prefetch import FeaturesPrefetch, graph_cache
from learning.problem_class import GENERAL, DetectedClass, detect_class
from learning.sampling import sample_by_scores, sampling_probabilities
from lns.core.errors import UnknownNameError
from lns.core.interrupt import active_guard
from lns.core.problem.mip import Problem
from lns.core.problem.validation import check_integer, check_real
from lns.core.search.selection import Neighborhood, SearchState, Selector

log = logging.getLogger("lns")

PRETRAINED_DIR = Path(__file__).resolve().parent / "pretrained"
#: The draws of :class:`CLLNS` after a neighborhood that did not improve (``after_failure``).
AFTER_FAILURE = ("sample", "greedy", "random")
#: How :class:`CLLNS` draws the neighborhood of a new incumbent (``draw``).
DRAWS = ("auto", "greedy", "sample")
#: What :class:`CLLNS` does before its features are ready (``until_ready``).
UNTIL_READY = ("random", "wait")
#: Seconds a join may wait at most (``threading`` refuses an infinite or huge timeout).
_LONGEST_WAIT = 1e6


def shipped_models() -> dict[str, Path]:
    """The checkpoints shipped with the package, by name (``{"mis": .../mis.pt, ...}``)."""
    return {path.stem: path for path in sorted(PRETRAINED_DIR.glob("*.pt"))}


def resolve_checkpoint(checkpoint: str | Path) -> Path:
    """The file of a checkpoint argument.

    A string that names a shipped model (``"mvc"`` or ``"mvc.pt"``) is that model, whatever the
    working directory holds (a local folder ``mis`` does not shadow it: write ``./mis`` for a
    local file); anything else is a path.
    """
    if isinstance(checkpoint, str) and ("/" not in checkpoint and "\\" not in checkpoint):
        name = checkpoint[:-3] if checkpoint.endswith(".pt") else checkpoint
        if name in shipped_models():
            return PRETRAINED_DIR / f"{name}.pt"
    return Path(checkpoint)


def _logged(extractor: FeatureExtractor, limit: float) -> FeatureExtractor:
    """``extractor``, after saying if its root LP was not solved within ``limit`` seconds."""
    if not extractor.lp.ok:
        log.info(
            "%s: root LP not solved within %.2fs; its feature columns are zero",
            extractor.problem.name,
            limit,
        )
    return extractor


def _check_numbers(score_share, probe_time_limit, features_nice, lp_time_limit, threads) -> None:
    """Raise :class:`~lns.core.errors.InvalidArgumentError` naming the first numeric option of
    :class:`CLLNS` out of its range (NaN and booleans are never numbers here)."""
    check_real(
        "cl_lns: score_share",
        score_share,
        "expected a share in (0, 1], or None",
        low=0,
        low_open=True,
        high=1,
        none_ok=True,
    )
    check_real(
        "cl_lns: probe_time_limit",
        probe_time_limit,
        "expected seconds > 0, or None",
        low=0,
        low_open=True,
        none_ok=True,
    )
    check_integer(
        "cl_lns: features_nice", features_nice, "expected an integer from 0 to 19", low=0, high=19
    )
    check_real("cl_lns: lp_time_limit", lp_time_limit, "expected seconds > 0", low=0, low_open=True)
    check_integer(
        "cl_lns: threads", threads, "expected an integer >= 1, or None", low=1, none_ok=True
    )


class CLLNS(Selector):
    """Free the integer variables a trained CL-LNS network scores highest.

    Parameters
    ----------
    checkpoint : str, pathlib.Path or None
        A checkpoint written by ``lns-train`` (:func:`learning.checkpoint.save_checkpoint`), or the
        name of a shipped one in ``learning/pretrained`` (``"mis"``, ``"mvc"``, ``"sc"``,
        ``"ca"``, ``"general"``). ``None``: the shipped model of the class the problem looks like
        (:func:`learning.problem_class.detect_class`), else the shipped ``general`` model
        (trained on a mixture, for any problem), chosen in :meth:`check`; a
        :class:`CheckpointError` says when neither is shipped.
    lp_time_limit : float
        Seconds for the root LP of the features (once per problem), clipped to the time left.
    threads : int or None
        BLAS threads for inference (``None``: the library's setting). One is the fastest on a
        shared machine: BLAS threads that wait for a busy core cost more than they compute
        (the inference of a 6000-node independent set took 0.09-0.14 s with one thread and
        0.28-0.29 s with two on this 2-core machine under load).
    draw : {"auto", "greedy", "sample"}
        The neighborhood of a new incumbent: ``"greedy"`` (the paper's) frees the top-scored
        variables; ``"sample"`` draws by the scores (:func:`sample_by_scores`), so that variables
        scored high are likely freed, not certain; ``"auto"`` (the default) tries the
        top-scored, then the sampled, then chooses by the objective each has gained per second
        of sub-solving and scoring (the first scores excepted) in this run so far, as Thompson
        sampling draws it (:meth:`learning.draw_record.DrawRecord.best`; the draws after a
        failure count for ``"sample"``). The top ``k`` of a model holds variables that
        interact, and on some classes that makes a sub-problem far harder than a draw of the
        same size, seldom solved within its limit; on others the top ``k`` is where the
        improvements are (docs/cl_lns.md, "The draw at a new incumbent").
    after_failure : {"sample", "greedy", "random"}
        The draw when the incumbent is the one of the previous call, whose neighborhood did not
        improve it. ``"sample"`` (the default): the cap's sampling rule (:func:`sample_by_scores`)
        at once, a neighborhood drawn around the same scores; ``"greedy"`` (the paper's): the
        top-scored variables again, the same scores and 2% more of them (the size rule's
        growth), so nearly the neighborhood that just failed, until the size cap switches to
        sampling; ``"random"``: a uniformly random neighborhood, as random LNS draws it, until a
        new incumbent. On a new incumbent, ``draw`` decides. Not used by ``draw="auto"`` with
        ``random_arm`` (the default), which chooses after a failure too.
    until_ready : {"random", "wait"}
        The calls of a run with a deadline while :meth:`check`'s thread still computes the
        static features and the graph: ``"random"`` (the default) draws a uniformly random
        neighborhood at once, so that the search goes on meanwhile (on a large problem the root
        LP and the graph can take much of a short budget); ``"wait"`` (the paper's) waits for
        them. A run without a deadline (an iteration limit) always waits, so that it repeats
        exactly.
    score_share : float or None
        The largest share of the time since :meth:`setup` that computing scores (the dynamic
        features and the inference of each call after the first, which takes the static ones)
        may take: a call past it that would score anew reuses the last scores instead, drawn by
        the sampling rule (:func:`sample_by_scores`; ``info["stale"]``). ``None`` (the default,
        the paper's): every new incumbent is scored.
    random_arm : bool
        With ``draw="auto"`` (the other draws ignore it), ``True`` (the default) makes a
        uniformly random neighborhood (as random LNS draws it, with no scores computed) a third
        draw beside the top-scored and the sampled ones, chosen by the same rule at every call:
        at a new incumbent among the three, after a failure or at the size cap between the
        sampled and the random (``after_failure`` is then not used). Where the model's
        neighborhoods gain less per second than random ones, the run draws mostly at random;
        where they gain more, mostly from the model (docs/cl_lns.md, "A random arm beside the
        model's draws"). ``False``: the model's draws only.
    probe_time_limit : float or None
        With ``draw="auto"``, the seconds a neighborhood of the top-scored or the sampled draw
        may take to sub-solve (:attr:`Neighborhood.time_limit`) until that draw has improved
        the incumbent once in the run: a draw earns the loop's full limit by improving. The
        top ``k`` of a model can make a sub-problem far harder than a random one of the same
        size, and its first try, which the auto rule makes before any other choice, then ran
        into the loop's whole limit on set cover, auctions and vertex cover (docs/cl_lns.md,
        "Probing the model's draws"). ``None``: the loop's limit from the first try.
    features_nice : int
        From 0 to 19: how much nicer than the search the thread that computes the static
        features runs (the operating system's niceness, on Linux, which schedules each
        thread apart; ignored elsewhere). Where the cores are all busy, as in a benchmark with a
        run per core, the features' thread takes its share from the search while it runs,
        and the search draws at random meanwhile (``until_ready="random"``); a nicer thread
        leaves the search more and is ready later (docs/cl_lns.md, "The features' thread at
        a lower priority"). 10 (the default) leaves the search about nine tenths of a core it
        shares with the thread; 0: as nice as the search.

    Raises
    ------
    CheckpointError
        The checkpoint is missing, unreadable, or computed for another feature schema or model
        (raised here, before any problem is read or solved).

    Notes
    -----
    ``Neighborhood.info`` holds ``"sampled"`` (whether the sampling rule chose: at the cap,
    after a failure with ``after_failure="sample"``, or at a new incumbent by ``draw``),
    ``"feature_time"``, ``"inference_time"`` (seconds of this call; the first call's features
    include the root LP), ``"cached"``,
    ``"random"`` (drawn uniformly at random: while the features were not ready, ``until_ready``,
    after a failure, ``after_failure="random"``, or by ``random_arm``),
    ``"stale"`` (drawn from the last scores, scoring past its ``score_share``), on a
    neighborhood of the model's, ``"probe"`` (its sub-solve limited to ``probe_time_limit``),
    and ``"arm"``, the draw that made it: ``"greedy"``, ``"sample"``, ``"random"`` or
    ``"until_ready"`` (the random ones before the features are ready), so that the loop's
    progress lines name the draw of each improvement and a benchmark counts the draws of a run
    (the report's arms table).
    ``draw_record`` (a :class:`learning.draw_record.DrawRecord`) adds up, over the current run,
    what its top-scored, its sampled and (``random_arm``) its random neighborhoods gave.
    The network's input depends only on the problem, the incumbent and the incumbent history,
    so after an iteration that did not improve, the scores are those of the previous call:
    they are reused (``"cached"``: True) instead of being computed again. A checkpoint's
    variable columns (``features`` of the file) are those computed: with the Local Branching LP
    columns (:data:`learning.features.LB_LP_COLUMNS`), the input also depends on the
    neighborhood size, that LP's radius, so a call at another size solves the LP again
    (hot-started) and scores again. When the deadline passes (or Ctrl-C arrives) before the
    scores are ready, the call returns an empty neighborhood with
    ``info["stopped"]`` set; the loop then stops.
    """

    name = "cl_lns"
    #: Modules the first call needs, imported in a thread from :meth:`check` on, while SCIP finds
    #: the first solution (``lns.core.solvers.lp`` imports highspy). Started after the problem is
    #: read,
    #: not before: the read holds Python's lock and would only be slowed down.
    background_imports: tuple = ("lns.core.solvers.lp",)

    def __init__(
        self,
        checkpoint: str | Path | None = None,
        lp_time_limit: float = 60.0,
        threads: int | None = 1,
        draw: str = "auto",
        after_failure: str = "sample",
        until_ready: str = "random",
        score_share: float | None = None,
        random_arm: bool = True,
        probe_time_limit: float | None = 1.0,
        features_nice: int = 10,
    ):
        if draw not in DRAWS:
            raise UnknownNameError("cl_lns draw", draw, DRAWS)
        self.draw, self.random_arm = draw, bool(random_arm) and draw == "auto"
        if after_failure not in AFTER_FAILURE:
            raise UnknownNameError("cl_lns after_failure rule", after_failure, AFTER_FAILURE)
        if until_ready not in UNTIL_READY:
            raise UnknownNameError("cl_lns until_ready rule", until_ready, UNTIL_READY)
        self.after_failure, self.until_ready = after_failure, until_ready
        _check_numbers(score_share, probe_time_limit, features_nice, lp_time_limit, threads)
        self.score_share, self.probe_time_limit = score_share, probe_time_limit
        self.features_nice, self.lp_time_limit = features_nice, float(lp_time_limit)
        self.prefetch: FeaturesPrefetch | None = None
        self.requested = checkpoint
        self.threads = threads
        self._blas = ThreadpoolController() if threads is not None else None
        self.checkpoint: Path | None = None
        self._policy: NumpyPolicy | None = None
        self._trained_on: dict = {}
        self._columns: tuple = BASE_VARIABLE_COLUMNS
        if checkpoint is not None:
            self._load(resolve_checkpoint(checkpoint))
        self._problem: Problem | None = None
        self._checked: Problem | None = None
        self._extractor: FeatureExtractor | None = None
        self._graph: GraphCache | None = None
        self._cache: tuple[list[np.ndarray], int | None, np.ndarray] | None = None
        self._probabilities: tuple | None = None  # the cache, the size, their draw probabilities
        self._scored_at = -1  # the iteration of the last call that returned a neighborhood
        self._random_calls = 0  # since the last call with scores
        self._started = 0.0  # when setup() ran
        self._scoring_seconds = 0.0  # since setup(), the first call with scores excepted
        self._last = {"feature_time": 0.0, "inference_time": 0.0, "cached": False}
        self._drawn: str | None = None  # the draw of the last call that the record counts
        self._call_scoring = 0.0  # seconds the last call scored, the first scores excepted
        self.draw_record = self._new_record()  # of the current problem's run

    def _new_record(self) -> DrawRecord:
        return DrawRecord((*MODEL_DRAWS, "random") if self.random_arm else MODEL_DRAWS)

    def __getstate__(self) -> dict:
        """Pickled into a worker process without its thread and BLAS controller (the worker's
        :meth:`setup` checks the problem again and starts its own prefetch)."""
        state = self.__dict__.copy()
        state.update(prefetch=None, _blas=None, _checked=None, _problem=None, _extractor=None)
        state.update(_graph=None, _cache=None, _probabilities=None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._blas = ThreadpoolController() if self.threads is not None else None

    def _load(self, path: Path) -> None:
        checkpoint = read_checkpoint(path)
        self.checkpoint = path
        self._policy = NumpyPolicy(checkpoint["state_dict"], checkpoint["model_config"])
        self._trained_on = dict(checkpoint.get("problem") or {})
        self._columns = tuple(checkpoint["features"]["variable"])

    def check(self, problem: Problem) -> None:
        """Match the model to ``problem`` before solving: pick a shipped one, or warn on a mismatch.

        Then, with ``until_ready="wait"``, starts the thread that computes the static features of
        the model's columns beside the search for a first solution; with ``"random"``,
        :meth:`setup` starts it once a first solution is there, so that the thread does not take
        a core from that search (the calls draw at random until it is done).

        Raises
        ------
        CheckpointError
            No checkpoint was given, no shipped model is for the class ``problem`` looks like,
            and no general model is shipped.
        """
        self._checked = problem
        if self.prefetch is not None:
            self.prefetch.cancel.set()  # an earlier problem's
        detected = detect_class(problem)
        if self.requested is None:
            self._use_shipped_model(problem, detected)
        else:
            self._warn_if_other_class(problem, detected)
        self.prefetch = FeaturesPrefetch(
            problem,
            self.background_imports,
            self.lp_time_limit,
            self._columns,
            self._policy,
            self.features_nice,
        )
        if self.until_ready == "wait":
            self.prefetch.start()

    def _use_shipped_model(self, problem: Problem, detected: DetectedClass) -> None:
        """Load the shipped model of the ``detected`` class, else the shipped general model.

        Raises
        ------
        CheckpointError
            Neither is shipped.
        """
        models = shipped_models()
        looks_like = detected.name or "none of the CL-LNS classes"
        name = detected.name if detected.name in models else GENERAL
        if name not in models:
            raise CheckpointError(
                f"cl_lns: no shipped model fits {problem.name}: it looks like {looks_like} "
                f"({detected.reason}); shipped models are for {sorted(models)}, and no "
                f"{GENERAL} model is shipped ({PRETRAINED_DIR / GENERAL}.pt); train one "
                "(lns-collect, lns-train) and pass it: selector.checkpoint=PATH, or for an arm of "
                "adaptive options={'cl_lns': {'checkpoint': PATH}}"
            )
        if self.checkpoint != models[name]:
            self._load(models[name])
        why = detected.reason
        if name == GENERAL:
            why = (
                f"it looks like {detected.name} ({detected.reason}), for which no model is shipped"
                if detected.name
                else f"it is none of the CL-LNS classes: {detected.reason}"
            )
        log.info("%s: cl_lns uses the shipped %s model (%s)", problem.name, name, why)

    def _warn_if_other_class(self, problem: Problem, detected: DetectedClass) -> None:
        """Warn when the checkpoint records no class, or another than ``detected``.

        A checkpoint of the ``general`` class is meant for any problem: no warning.
        """
        trained = self._trained_on.get("class")
        if trained is None:
            log.warning(
                "%s: checkpoint %s records no problem class; cannot check that it fits",
                problem.name,
                self.checkpoint,
            )
        elif trained not in (GENERAL, detected.name):
            log.warning(
                "%s: checkpoint %s was trained on %s, but the problem looks like %s (%s)",
                problem.name,
                self.checkpoint,
                trained,
                detected.name or "none of the CL-LNS classes",
                detected.reason,
            )

    def setup(self, problem: Problem) -> None:
        """Check ``problem`` (unless :meth:`check` did) and forget the previous problem's features.

        The static features come from :meth:`check`'s thread, started here unless it runs; the
        first call waits for them within the run's deadline (or, with ``until_ready="random"``,
        draws at random until they are ready), and builds the graph.
        """
        if self._checked is not problem:
            self.check(problem)
        assert self.prefetch is not None, "check() builds the prefetch"
        if self.prefetch.ident is None:
            self.prefetch.start()
        self._problem = problem
        self._extractor = self._graph = self._cache = None
        self._started, self._scoring_seconds = time.perf_counter(), 0.0
        self._drawn, self.draw_record = None, self._new_record()

    def update(self, record) -> None:
        """Count the last neighborhood's improvement, sub-solve and scoring seconds for its draw."""
        if self._drawn is not None:
            self.draw_record.add(self._drawn, record, self._call_scoring)
        self._drawn = None

    def _blas_threads(self):
        """A context in which BLAS uses ``threads`` threads."""
        if self._blas is None:
            return contextlib.nullcontext()
        return self._blas.limit(limits=self.threads, user_api="blas")

    def _stopped(self, state: SearchState) -> str | None:
        guard = active_guard()
        if guard is not None and guard.requested:
            return "interrupted"
        return "time_limit" if state.time_left() <= 0 else None

    def _lp_limit(self, state: SearchState) -> float:
        """Seconds for an LP of the features: ``lp_time_limit``, clipped to the time left."""
        return max(0.01, min(self.lp_time_limit, state.time_left()))

    def _static_features(self, state: SearchState) -> FeatureExtractor | None:
        """The static features: the prefetch's, or computed with the root LP limited to the time
        left. ``None`` when the deadline passed or Ctrl-C arrived while waiting for them."""
        prefetch = self.prefetch
        assert prefetch is not None, "check() starts the prefetch"
        if prefetch.problem is state.problem and prefetch.is_alive():
            with self._blas_threads():
                prefetch.build_graph()  # while the root LP is solved
        prefetch.join(timeout=min(max(0.0, state.time_left()), _LONGEST_WAIT))
        if self._stopped(state):
            prefetch.cancel.set()
            return None
        if prefetch.problem is state.problem and prefetch.extractor is not None:
            return _logged(prefetch.extractor, self.lp_time_limit)
        limit = self._lp_limit(state)
        extractor = FeatureExtractor(
            state.problem, lp_time_limit=limit, variable_columns=self._columns
        )
        return _logged(extractor, limit)

    def scores(self, state: SearchState, size: int | None = None) -> np.ndarray | None:
        """Scores in (0, 1) of every variable of ``state.problem`` at the incumbent, shape (n,).

        ``size``, the call's neighborhood size, is the radius of the Local Branching LP when the
        checkpoint reads its columns (:meth:`FeatureExtractor.observe`; ignored otherwise).
        ``None`` when the deadline passed or Ctrl-C arrived before they were ready.
        """
        if self._problem is not state.problem:
            self.setup(state.problem)
        inputs = [state.incumbent, *state.history]
        radius = size if uses_lb_lp(self._columns) else None
        cached = self._cached_scores(inputs, radius)
        self._last = {"feature_time": 0.0, "inference_time": 0.0, "cached": cached is not None}
        if cached is not None:
            return cached
        began = time.perf_counter()
        if self._extractor is None:
            self._extractor = self._static_features(state)
            if self._extractor is None:
                return None
        observation = self._extractor.observe(
            state.incumbent, state.history, radius, time_limit=self._lp_limit(state)
        )
        self._last["feature_time"] = time.perf_counter() - began
        if self._stopped(state):
            return None
        began = time.perf_counter()
        scores = self._infer(self._extractor, observation)
        self._last["inference_time"] = time.perf_counter() - began
        self._cache = ([np.array(a, copy=True) for a in inputs], radius, scores)
        return scores.copy()

    def _cached_scores(self, inputs: list[np.ndarray], radius: int | None) -> np.ndarray | None:
        """A copy of the last scores if they were computed at the same ``inputs`` and Local
        Branching ``radius``, else ``None``."""
        if self._cache is None:
            return None
        previous, previous_radius, scores = self._cache
        if (
            previous_radius != radius
            or len(previous) != len(inputs)
            or not all(np.array_equal(a, b) for a, b in zip(previous, inputs, strict=True))
        ):
            return None
        return scores.copy()

    def _failed(self, state: SearchState) -> bool:
        """Whether an earlier iteration left ``state``'s incumbent unchanged: the previous call
        had the same incumbent (the one its scores were cached at) at a lower iteration (a call
        repeated at one iteration draws as the first did). Asked before :meth:`scores` caches
        this call's inputs."""
        return (
            self._cache is not None
            and self._problem is state.problem
            and self._scored_at < state.iteration
            and np.array_equal(self._cache[0][0], state.incumbent)
        )

    def _infer(self, extractor: FeatureExtractor, observation: Observation) -> np.ndarray:
        """The policy's scores of ``observation``; the graph is built once per problem."""
        assert self._policy is not None, "check() loads a model"
        with self._blas_threads():
            if self._graph is None:
                prefetched = self.prefetch
                if (
                    prefetched is not None
                    and prefetched.extractor is extractor
                    and prefetched.graph is not None
                ):
                    self._graph = prefetched.graph
                else:
                    self._graph = graph_cache(self._policy, extractor.edges)
            return self._policy.scores(
                observation.variable_features, observation.constraint_features, self._graph
            )

    def _stale_scores(self, state: SearchState) -> np.ndarray | None:
        """A copy of the last scores of ``state.problem`` if scoring has taken more than
        ``score_share`` of the time since :meth:`setup`, else ``None``."""
        if self.score_share is None or self._cache is None or self._problem is not state.problem:
            return None
        elapsed = time.perf_counter() - self._started
        if self._scoring_seconds <= self.score_share * elapsed:
            return None
        return self._cache[2].copy()

    def _features_pending(self, state: SearchState) -> bool:
        """Whether this call draws at random: ``until_ready="random"``, a deadline, and the
        static features and graph of ``state.problem`` still computed by :meth:`check`'s thread."""
        prefetch = self.prefetch
        return (
            self.until_ready == "random"
            and math.isfinite(state.deadline)
            and prefetch is not None
            and prefetch.problem is state.problem
            and prefetch.is_alive()
        )

    def _uniform(
        self, candidates: np.ndarray, size: int, rng: np.random.Generator, arm: str
    ) -> Neighborhood:
        """``size`` of ``candidates`` drawn uniformly at random (``info["random"]``), the draw
        ``arm`` (``info["arm"]``)."""
        chosen = rng.choice(candidates, size=min(size, len(candidates)), replace=False)
        info = {"sampled": False, "random": True, "arm": arm, **self._last}
        return Neighborhood(np.sort(chosen), info=info)

    def __call__(self, state: SearchState, size: int, rng: np.random.Generator) -> Neighborhood:
        self._last = {"feature_time": 0.0, "inference_time": 0.0, "cached": False}
        self._drawn, self._call_scoring = None, 0.0
        candidates = state.problem.integer_indices
        if self._features_pending(state):
            self._random_calls += 1
            return self._uniform(candidates, size, rng, "until_ready")
        if self._random_calls:
            log.info(
                "%s: cl_lns's features ready after %d random neighborhoods",
                state.problem.name,
                self._random_calls,
            )
            self._random_calls = 0
        failed = self._failed(state)
        timed = math.isfinite(state.deadline)
        armed = None  # the random arm's choice
        if self.random_arm:
            repeats = failed or state.at_cap  # the top k would be the last one or is replaced
            among = ("sample", "random") if repeats else self.draw_record.draws
            armed = self.draw_record.best(timed, rng, among)
            if armed == "random":
                self._drawn = "random"
                return self._uniform(candidates, size, rng, "random")
        elif failed and self.after_failure == "random":
            return self._uniform(candidates, size, rng, "random")
        scores = None if failed else self._stale_scores(state)
        stale = scores is not None
        if not stale:
            first_scores = self._extractor is None  # its features may have waited for the root LP
            scores = None if self._stopped(state) else self.scores(state, size)
            if not first_scores:
                self._call_scoring = self._last["feature_time"] + self._last["inference_time"]
                self._scoring_seconds += self._call_scoring
        info: dict[str, object] = {"sampled": False, "random": False, "stale": stale, **self._last}
        if scores is None:
            return Neighborhood(
                np.zeros(0, dtype=np.int64), info={**info, "stopped": self._stopped(state)}
            )
        self._scored_at = state.iteration
        scores = scores[candidates]
        size = min(size, len(candidates))
        if state.at_cap or stale:
            sampled = True
        elif armed is not None:
            sampled = armed == "sample"
        elif failed:
            sampled = self.after_failure == "sample"
        else:
            drawn = self.draw if self.draw != "auto" else self.draw_record.best(timed, rng)
            sampled = drawn == "sample"
        self._drawn = "sample" if sampled else "greedy"
        if sampled:
            chosen = sample_by_scores(scores, size, rng, probabilities=self._sampling(scores, size))
        else:
            chosen = np.argsort(-scores, kind="stable")[:size]
        info["sampled"], info["arm"] = bool(sampled), self._drawn
        limit = self._probe_limit(self._drawn)
        info["probe"] = limit is not None
        return Neighborhood(np.sort(candidates[chosen]), info=info, time_limit=limit)

    def _sampling(self, scores: np.ndarray, size: int) -> np.ndarray | None:
        """The draw probabilities of ``scores`` (the candidates' among the cached scores) at
        ``size``: computed once per cached scores and size (``None`` at the whole problem)."""
        kept = self._probabilities
        if kept is None or kept[0] is not self._cache or kept[1] != size:
            probabilities = None if size >= len(scores) else sampling_probabilities(scores, size)
            kept = self._probabilities = (self._cache, size, probabilities)
        return kept[2]

    def _probe_limit(self, drawn: str) -> float | None:
        """The sub-solve limit of a neighborhood of the model's draw ``drawn``: the probe's
        while that draw has not improved in this run (``draw="auto"``), else none."""
        if self.draw != "auto" or self.draw_record.improving[drawn]:
            return None
        return self.probe_time_limit
