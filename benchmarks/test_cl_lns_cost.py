"""What CL-LNS costs: its start-up part by part, its calls, and the run to its first neighborhood.

``CL-LNS parts``: on generated independent-set and vertex-cover instances and a set cover of
twice the paper's size (``sc-large``), each with its class's shipped model, each part of the
selector's start-up and of one call, timed alone in this process (BLAS limited to one thread, as
the selector runs): the checkpoint read
(numpy, no torch), the root LP and static features (once per problem), the graph cache (once per
problem), the dynamic features and the numpy inference (per call), a whole selector call that
scores anew and one whose scores are reused (after an iteration without improvement), a sampled
draw at the size cap from reused scores (``draw="sample"``: the draw a run at its cap repeats),
and one sub-solve of a CL-LNS neighborhood of 20 % of the integer variables at the loop's 5 s limit;
then (full mode) the torch path the numpy one replaced: the checkpoint load and the torch model's
inference.
Reading the file and the problem's arrays are timed by ``test_problem_io.py``.

``CL-LNS imports``: a fresh Python process importing ``lns.api``, then also the selector's
module, or (full mode) torch and torch-geometric: the differences are what the imports cost.

``CL-LNS to its first neighborhood``: a fresh process that runs ``solve()`` with the selector for
one iteration; ``extra_info`` has the seconds from ``import learning.selector`` to its first
neighborhood and to the first solution, measured inside.

``static features on each root LP``: the root LP and static features with each HiGHS setting of
``test_root_lp.py``, and in ``extra_info`` the share of the model's top 20 % (at an all-zero
incumbent) that it has in common with the default setting's (another optimal LP point gives
other features than those the models were trained on).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import subprocess
import sys
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from test_root_lp import HIGHS, SettingLP
from threadpoolctl import ThreadpoolController

import lns
from learning.checkpoint_file import read_checkpoint
from learning.features import FeatureExtractor
from learning.inference import NumpyPolicy
from learning.prefetch import graph_cache
from learning.selector import CLLNS, PRETRAINED_DIR
from lns.core.problem.mip import Problem
from lns.core.search.selection import SearchState
from lns.core.solvers.scip.subsolver import ScipSubSolver

#: The source tree whose library this process imports: the fresh processes import the same.
TREE = Path(lns.__file__).resolve().parent.parent
INSTANCES = [
    "mis-300",
    pytest.param("mis-1500", marks=pytest.mark.full),
    pytest.param("mis-6000", marks=pytest.mark.full),
    pytest.param("mvc-500", marks=pytest.mark.full),
    pytest.param("mvc-1000", marks=pytest.mark.full),
    pytest.param("sc-large", marks=pytest.mark.full),
]


def shipped(name: str) -> str:
    """The shipped model of instance ``name``'s class (``mis-6000``: ``mis``)."""
    return name.partition("-")[0]


class Parts:
    """What the parts of one instance start from: its problem, incumbent, model and features.

    Parameters
    ----------
    problem : Problem
    start : numpy.ndarray
        An incumbent.
    checkpoint : str
        A shipped model's name.
    """

    def __init__(self, problem: Problem, start: np.ndarray, checkpoint: str):
        self.problem, self.start = problem, start
        self.path = PRETRAINED_DIR / f"{checkpoint}.pt"
        contents = read_checkpoint(self.path)
        self.policy = NumpyPolicy(contents["state_dict"], contents["model_config"])
        self.extractor = FeatureExtractor(problem)
        self.cache = graph_cache(self.policy, self.extractor.edges)
        self.observation = self.extractor.observe(start, [start, start])
        self.selector = CLLNS(checkpoint)
        self.selector.setup(problem)
        self.size = int(0.2 * len(problem.integer_indices))
        # Two states with other histories, called in turn, so that every call scores anew.
        self.states = [
            SearchState(problem, start, problem.objective_value(start), history)
            for history in ([start], [start, start])
        ]
        self.calls = 0
        self.free = self.call(self.states[0]).free
        self.solver = ScipSubSolver(problem)

    def call(self, state: SearchState):
        """One selector call on ``state``."""
        return self.selector(state, self.size, np.random.default_rng(0))

    @functools.cached_property
    def sampler(self) -> CLLNS:
        """A selector of the same model that always samples, made (and its features prepared)
        only for the part that times it."""
        sampler = CLLNS(self.path, draw="sample")
        sampler.setup(self.problem)
        return sampler

    def sample_at_cap(self):
        """One sampled draw at the size cap (scores reused after the first call)."""
        at_cap = dataclasses.replace(self.states[0], at_cap=True)
        return self.sampler(at_cap, self.size, np.random.default_rng(0))

    def call_anew(self):
        """A selector call on the other state than the last call's: it scores anew."""
        self.calls += 1
        return self.call(self.states[self.calls % 2])

    def sub_solve(self):
        """One sub-solve of a CL-LNS neighborhood at the loop's 5 s limit."""
        return self.solver.solve(time_limit=5.0, seed=0, free=self.free, start=self.start)

    def torch_model(self):
        """The checkpoint's torch model (imports torch)."""
        from learning.checkpoint import load_checkpoint

        return load_checkpoint(self.path)[0]

    def torch_inference(self, model):
        """``model``'s scores of the observation, its graph built in the call."""
        import torch

        from learning.bipartite_graph import observation_graph

        with torch.no_grad():
            return torch.sigmoid(model(observation_graph(self.observation))).numpy()


#: Each part: (the timed call of a :class:`Parts`, an untimed call before each timed one whose
#: value the timed one takes, or None).
PARTS = {
    "checkpoint read (no torch)": (lambda p: read_checkpoint(p.path), None),
    "root LP and static features": (lambda p: FeatureExtractor(p.problem), None),
    "graph cache": (lambda p: graph_cache(p.policy, p.extractor.edges), None),
    "dynamic features": (lambda p: p.extractor.observe(p.start, [p.start, p.start]), None),
    "inference, numpy": (
        lambda p: p.policy.scores(
            p.observation.variable_features, p.observation.constraint_features, p.cache
        ),
        None,
    ),
    "selector call": (Parts.call_anew, None),
    "selector call, scores reused": (
        lambda p, _: p.call(p.states[0]),
        lambda p: p.call(p.states[0]),
    ),
    "sampled draw at the cap, scores reused": (
        lambda p, _: p.sample_at_cap(),
        lambda p: p.sample_at_cap(),
    ),
    "sub-solve, 20 % free, 5 s limit": (Parts.sub_solve, None),
}
#: The torch path the numpy one replaced (full mode only: importing torch takes seconds).
TORCH_PARTS = {
    "checkpoint load (torch)": (Parts.torch_model, None),
    "inference, torch": (Parts.torch_inference, Parts.torch_model),
}


@pytest.fixture(scope="module")
def parts(problem_of):
    """``parts(name)``: the :class:`Parts` of instance ``name``, with its class's model, at
    SCIP's first solution."""

    @functools.cache
    def of(name: str) -> Parts:
        problem = problem_of(name)
        solver = ScipSubSolver(problem)
        first = solver.solve(time_limit=60, seed=0, solution_limit=1).found[-1].x
        solver.close()
        return Parts(problem, first, shipped(name))

    return of


@contextlib.contextmanager
def one_thread():
    """BLAS (and torch, when imported) limited to one thread, as the selector runs."""
    torch = sys.modules.get("torch")
    threads = torch.get_num_threads() if torch is not None else None
    if torch is not None:
        torch.set_num_threads(1)
    try:
        with ThreadpoolController().limit(limits=1, user_api="blas"):
            yield
    finally:
        if torch is not None:
            torch.set_num_threads(threads)


@pytest.mark.parametrize("name", INSTANCES)
@pytest.mark.parametrize(
    "part", [*PARTS, *(pytest.param(part, marks=pytest.mark.full) for part in TORCH_PARTS)]
)
def test_parts(benchmark, measure, parts, name, part):
    benchmark.group = f"CL-LNS parts: {name}"
    of = parts(name)
    timed, before = {**PARTS, **TORCH_PARTS}[part]

    def setup():
        return (of,) if before is None else (of, before(of)), {}

    with one_thread():
        assert measure(timed, setup) is not None


IMPORTS = {
    "lns.api": "import lns.api",
    "lns.api, learning.selector": "import lns.api, learning.selector",
    "lns.api, torch, torch_geometric.nn": "import lns.api, torch, torch_geometric.nn",
}


@pytest.mark.parametrize(
    "modules",
    [*list(IMPORTS)[:2], pytest.param(list(IMPORTS)[2], marks=pytest.mark.full)],
)
def test_imports(benchmark, measure, modules):
    benchmark.group = "CL-LNS imports, fresh process"
    command = [sys.executable, "-c", IMPORTS[modules]]
    measure(lambda: subprocess.run(command, cwd=TREE, check=True))


#: A run that notes when ``import learning.selector`` began, the first neighborhood (the model's:
#: the selector waits for its features) and the first solution (argv: instance, checkpoint, LNS
#: start).
FIRST_NEIGHBORHOOD = r"""
import json, sys, time
from lns import SolveParams, StartParams, SubSolveParams, solve
from lns.core.search.stop import budget
began = time.perf_counter()
from learning.selector import CLLNS
first = []

class Timed(CLLNS):
    def __call__(self, state, size, rng):
        neighborhood = super().__call__(state, size, rng)
        first.append(time.perf_counter() - began)
        return neighborhood

start, sub_solve = StartParams(strategy=sys.argv[3]), SubSolveParams(node_limit=100)
params = SolveParams(start=start, sub_solve=sub_solve)
selector = Timed(sys.argv[2], until_ready="wait")  # the first call is the model's
result = solve(sys.argv[1], selector, budget(60, 1), seed=0, params=params)
print(json.dumps({"first neighborhood (s)": first[0],
                  "first solution (s)": result.trajectory[0][0]}))
"""


@pytest.mark.parametrize("name", INSTANCES)
@pytest.mark.parametrize("start", ["first", pytest.param("feasibility", marks=pytest.mark.full)])
def test_first_neighborhood(benchmark, measure, path_of, name, start):
    benchmark.group = f"CL-LNS to its first neighborhood, fresh process: {name}"
    path = str(path_of(name))
    command = [sys.executable, "-c", FIRST_NEIGHBORHOOD, path, shipped(name), start]

    def run():
        out = subprocess.run(command, cwd=TREE, check=True, capture_output=True, text=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    benchmark.extra_info.update(measure(run))


def top_scores(problem: Problem, policy: NumpyPolicy, extractor: FeatureExtractor) -> set:
    """The 20 % of the variables ``policy`` scores highest at an all-zero incumbent."""
    zero = np.zeros(problem.n_vars)
    observation = extractor.observe(zero, [zero, zero])
    cache = graph_cache(policy, extractor.edges)
    scores = policy.scores(observation.variable_features, observation.constraint_features, cache)
    return set(np.argsort(-scores, kind="stable")[: max(1, int(0.2 * problem.n_vars))].tolist())


@pytest.mark.parametrize("name", INSTANCES)
@pytest.mark.parametrize("solver", list(HIGHS))
def test_static_features_on_each_root_lp(benchmark, measure, parts, name, solver):
    benchmark.group = f"static features on each root LP: {name}"
    of = parts(name)
    setting = functools.partial(SettingLP, options=HIGHS[solver])
    with mock.patch("lns.core.solvers.lp.WarmLP", setting):
        extractor = measure(lambda: FeatureExtractor(of.problem))
    top = top_scores(of.problem, of.policy, extractor)
    shared = len(top & top_scores(of.problem, of.policy, of.extractor)) / len(top)
    benchmark.extra_info["top 20 % shared with the default's"] = shared
    if solver == "highs (used)":
        assert shared == 1.0
