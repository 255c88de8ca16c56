"""Maximum (weighted) independent set on random graphs.

The MIS benchmark of Gasse et al. (2019) and CL-LNS::

    max  sum_v w_v x_v   s.t.  sum_{v in C} x_v <= 1 for every row C,   x binary,

where the rows are either the edges (``formulation="edge"``: ``x_u + x_v <= 1``, as in the CL-LNS
files) or a greedy partition of the nodes into cliques plus the edges no clique holds
(``formulation="clique"``, Gasse et al. 2019): the same integer points, a tighter LP relaxation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from instances.generators.binary import binary_problem, names
from instances.generators.random_graphs import (
    GRAPH_MODELS,
    WEIGHTINGS,
    greedy_clique_partition,
    make_graph,
    node_weights,
)
from instances.generators.validation import check_choice, check_count, check_range
from lns.core.errors import InvalidArgumentError
from lns.core.problem.mip import Problem

FORMULATIONS = ("edge", "clique")


@dataclass(frozen=True)
class MISParams:
    """Parameters of the independent set generator.

    Attributes
    ----------
    n_nodes : int
        Number of nodes (= variables).
    graph : {"erdos_renyi", "barabasi_albert"}
        Graph model.
    affinity : float
        Edges per node: Erdős–Rényi edge probability ``2 affinity / (n - 1)`` (about
        ``affinity * n`` edges, mean degree ``2 affinity``), or the Barabási–Albert attachment
        (an integer). CL-LNS: Erdős–Rényi, 6000 nodes, affinity 4 (their files: 23,841 edges).
    formulation : {"edge", "clique"}
        One row per edge, or clique-partition rows plus the remaining edges.
    weights : {"unit", "uniform"}
        Node weights all 1 (CL-LNS, Gasse et al.) or U(0, 1).
    """

    n_nodes: int = 6000
    graph: str = "erdos_renyi"
    affinity: float = 4.0
    formulation: str = "edge"
    weights: str = "unit"

    def __post_init__(self):
        check_count("mis", "n_nodes", self.n_nodes, 2)
        check_choice("mis", "graph", self.graph, GRAPH_MODELS)
        # Erdős–Rényi needs an edge probability 2 affinity / (n - 1) <= 1; Barabási–Albert
        # fewer earlier nodes
        most = (self.n_nodes - 1) / 2 if self.graph == "erdos_renyi" else self.n_nodes - 1
        check_range("mis", "affinity", self.affinity, 0.0, most, low_open=True)
        check_choice("mis", "formulation", self.formulation, FORMULATIONS)
        check_choice("mis", "weights", self.weights, WEIGHTINGS)
        if self.graph == "barabasi_albert" and float(self.affinity) != int(self.affinity):
            raise InvalidArgumentError(
                f"mis: affinity must be an integer for barabasi_albert, got {self.affinity!r}"
            )


PRESETS = {
    # CL-LNS: Erdős–Rényi, 6000 nodes, affinity 4, edge formulation, unit weights (matches their
    # released INDSET_ER_6000 files). Large: twice the nodes, our choice following the "double" rule
    # used elsewhere.
    "small": MISParams(n_nodes=6000, graph="erdos_renyi", affinity=4.0),
    "large": MISParams(n_nodes=12000, graph="erdos_renyi", affinity=4.0),
}


def generate(params: MISParams, rng: np.random.Generator, name: str = "mis") -> Problem:
    """One independent set instance: a binary variable per node, set-packing rows (see above).

    Parameters
    ----------
    params : MISParams
    rng : numpy.random.Generator
        The only source of randomness.
    name : str
        Name of the problem.
    """
    n = params.n_nodes
    edges = make_graph(params.graph, n, params.affinity, rng)
    weights = node_weights(params.weights, n, rng)
    rows, cols = _packing_rows(n, edges, params.formulation)
    m = int(rows.max()) + 1 if rows.size else 0
    matrix = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(m, n))
    prefix = "e" if params.formulation == "edge" else "c"
    return binary_problem(
        name, weights, "maximize", matrix, np.full(m, -np.inf), np.ones(m), names(prefix, m)
    )


def _packing_rows(
    n_nodes: int, edges: np.ndarray, formulation: str
) -> tuple[np.ndarray, np.ndarray]:
    """Row and column of every nonzero: edges, or cliques (two nodes or more), uncovered edges."""
    edge_rows = np.repeat(np.arange(len(edges)), 2)
    if formulation == "edge":
        return edge_rows, edges.ravel()
    clique_of = greedy_clique_partition(n_nodes, edges)
    size = np.bincount(clique_of)
    in_clique = size[clique_of] >= 2
    clique_nodes = np.flatnonzero(in_clique)
    clique_nodes = clique_nodes[np.argsort(clique_of[clique_nodes], kind="stable")]
    clique_row = np.cumsum(size >= 2) - 1
    loose = edges[clique_of[edges[:, 0]] != clique_of[edges[:, 1]]]
    n_cliques = int((size >= 2).sum())
    rows = np.concatenate(
        [clique_row[clique_of[clique_nodes]], n_cliques + np.repeat(np.arange(len(loose)), 2)]
    )
    return rows, np.concatenate([clique_nodes, loose.ravel()])
