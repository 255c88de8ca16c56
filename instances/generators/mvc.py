"""Minimum weighted vertex cover on Barabási–Albert graphs.

The MVC benchmark of Song et al. (2020) and CL-LNS:

min  sum_v w_v x_v   s.t.  x_u + x_v >= 1 for every edge (u, v),   x binary.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from instances.generators.binary import binary_problem, names
from instances.generators.random_graphs import GRAPH_MODELS, WEIGHTINGS, make_graph, node_weights
from instances.generators.validation import check_choice, check_count
from lns.core.errors import InvalidArgumentError
from lns.core.problem.mip import Problem


@dataclass(frozen=True)
class MVCParams:
    """Parameters of the vertex cover generator.

    Attributes
    ----------
    n_nodes : int
        Number of nodes (= variables).
    affinity : int
        Barabási–Albert attachment: each new node joins this many earlier nodes, so there are
        about ``affinity * n_nodes`` edges (= constraints). CL-LNS's "average degree 70" is this 70.
    graph : {"barabasi_albert", "erdos_renyi"}
        Graph model; for Erdős–Rényi the edge probability is ``2 affinity / (n - 1)`` (same edge
        count).
    weights : {"uniform", "unit"}
        Node weights U(0, 1) (as in the LB-RELAX/CL-LNS notes, ``shared/PAPERS.md``) or all 1.
    """

    n_nodes: int = 1000
    affinity: int = 70
    graph: str = "barabasi_albert"
    weights: str = "uniform"

    def __post_init__(self):
        check_count("mvc", "n_nodes", self.n_nodes, 2)
        check_choice("mvc", "graph", self.graph, GRAPH_MODELS)
        check_choice("mvc", "weights", self.weights, WEIGHTINGS)
        check_count("mvc", "affinity", self.affinity)
        # Erdős–Rényi needs an edge probability 2 affinity / (n - 1) <= 1; Barabási–Albert
        # fewer earlier nodes
        most = (self.n_nodes - 1) / 2 if self.graph == "erdos_renyi" else self.n_nodes - 1
        if self.affinity > most:
            raise InvalidArgumentError(
                f"mvc: affinity must be at most {most:g} for {self.n_nodes} nodes and graph "
                f"'{self.graph}', got {self.affinity}"
            )


PRESETS = {
    # CL-LNS / Song et al. (2020): 1000 nodes, affinity 70 (small) and 2000 nodes (large, as
    # PAPERS.md says; the large size is unverified against the paper text).
    "small": MVCParams(n_nodes=1000, affinity=70),
    "large": MVCParams(n_nodes=2000, affinity=70),
}


def generate(params: MVCParams, rng: np.random.Generator, name: str = "mvc") -> Problem:
    """One vertex cover instance: a binary variable per node, a covering row per edge.

    Parameters
    ----------
    params : MVCParams
    rng : numpy.random.Generator
        The only source of randomness.
    name : str
        Name of the problem.
    """
    edges = make_graph(params.graph, params.n_nodes, params.affinity, rng)
    weights = node_weights(params.weights, params.n_nodes, rng)
    n, m = params.n_nodes, len(edges)
    matrix = sp.csr_matrix(
        (np.ones(2 * m), edges.ravel(), np.arange(0, 2 * m + 1, 2)), shape=(m, n)
    )
    return binary_problem(
        name, weights, "minimize", matrix, np.ones(m), np.full(m, np.inf), names("e", m)
    )
