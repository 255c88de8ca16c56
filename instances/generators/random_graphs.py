"""Random graphs for the graph problems (vertex cover, independent set) and their clique partition.

A graph is an ``(E, 2)`` array of edges ``(u, v)`` with ``u < v``, sorted, over nodes
``0, ..., n - 1``, following the generators of Gasse et al. (2019) and Ecole.
"""

from __future__ import annotations

import numpy as np

from instances.generators.sampling import distinct_subsets

GRAPH_MODELS = ("erdos_renyi", "barabasi_albert")
WEIGHTINGS = ("unit", "uniform")


def erdos_renyi(n_nodes: int, affinity: float, rng: np.random.Generator) -> np.ndarray:
    """Erdős–Rényi graph G(n, p) with ``p = 2 affinity / (n - 1)``: about ``affinity * n`` edges.

    ``affinity`` counts edges per node, the convention under which CL-LNS calls its independent
    set graphs "average degree 4": their released files have 6000 nodes and 23,841 edges, i.e. a
    mean degree ``2E/n`` close to 8. The number of edges is drawn from its binomial law and the
    edges uniformly among the node pairs, which is exactly G(n, p).
    """
    n_pairs = n_nodes * (n_nodes - 1) // 2
    if n_pairs == 0:
        return np.zeros((0, 2), dtype=np.int64)
    p = min(1.0, 2.0 * affinity / (n_nodes - 1))
    n_edges = int(rng.binomial(n_pairs, p))
    _, pairs = distinct_subsets(np.array([n_edges]), n_pairs, rng)
    return _sorted_edges(*_pair_from_index(pairs))


def barabasi_albert(n_nodes: int, affinity: int, rng: np.random.Generator) -> np.ndarray:
    """Barabási–Albert preferential attachment graph (Albert & Barabási 2002; Gasse et al. 2019).

    Node ``affinity`` joins all nodes before it (a star); every later node joins ``affinity``
    distinct earlier nodes drawn with probability proportional to their degree, which gives
    ``affinity * (n - affinity)`` edges. Drawing a uniform edge end and rejecting the nodes already
    chosen is the same law as numpy's weighted ``choice`` without replacement, in O(affinity).
    """
    m = affinity
    if n_nodes <= m:
        return np.zeros((0, 2), dtype=np.int64)
    n_edges = m * (n_nodes - m)
    sources = np.empty(n_edges, dtype=np.int64)
    targets = np.empty(n_edges, dtype=np.int64)
    ends = np.empty(2 * n_edges, dtype=np.int64)
    sources[:m], targets[:m] = m, np.arange(m)
    ends[:m], ends[m : 2 * m] = np.arange(m), m
    filled = m
    for node in range(m + 1, n_nodes):
        chosen: dict[int, None] = {}
        while len(chosen) < m:
            for end in ends[rng.integers(2 * filled, size=m - len(chosen))]:
                chosen.setdefault(int(end))
                if len(chosen) == m:
                    break
        picked = np.fromiter(chosen, dtype=np.int64, count=m)
        sources[filled : filled + m], targets[filled : filled + m] = node, picked
        ends[2 * filled : 2 * filled + m], ends[2 * filled + m : 2 * filled + 2 * m] = picked, node
        filled += m
    return _sorted_edges(sources, targets)


def make_graph(model: str, n_nodes: int, affinity: float, rng: np.random.Generator) -> np.ndarray:
    """A graph of the named model (one of :data:`GRAPH_MODELS`)."""
    if model == "erdos_renyi":
        return erdos_renyi(n_nodes, affinity, rng)
    return barabasi_albert(n_nodes, int(affinity), rng)


def node_weights(weighting: str, n_nodes: int, rng: np.random.Generator) -> np.ndarray:
    """Objective weights: ``"unit"`` (all 1) or ``"uniform"`` (independent U(0, 1))."""
    if weighting == "unit":
        return np.ones(n_nodes)
    return rng.random(n_nodes)


def greedy_clique_partition(n_nodes: int, edges: np.ndarray) -> np.ndarray:
    """Partition the nodes into cliques greedily, as Gasse et al. (2019) do for the independent set.

    Nodes are taken by decreasing degree (ties by index); an unassigned node opens a clique and
    its unassigned neighbours join it, by decreasing degree, when adjacent to every member.

    Returns
    -------
    numpy.ndarray of int64, shape (n_nodes,)
        Clique index of every node (cliques numbered in order of creation).
    """
    degree = np.bincount(edges.ravel(), minlength=n_nodes)
    neighbours: list[set[int]] = [set() for _ in range(n_nodes)]
    for u, v in edges.tolist():
        neighbours[u].add(v)
        neighbours[v].add(u)
    clique_of = np.full(n_nodes, -1, dtype=np.int64)
    n_cliques = 0
    for centre in np.argsort(-degree, kind="stable").tolist():
        if clique_of[centre] >= 0:
            continue
        members = [centre]
        candidates = [v for v in neighbours[centre] if clique_of[v] < 0]
        for v in sorted(candidates, key=lambda node: (-degree[node], node)):
            if all(v in neighbours[member] for member in members):
                members.append(v)
        clique_of[members] = n_cliques
        n_cliques += 1
    return clique_of


def _pair_from_index(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Invert ``k = i (i - 1) / 2 + j`` (``0 <= j < i``): row-major order of the lower triangle."""
    i = np.floor((1.0 + np.sqrt(1.0 + 8.0 * k.astype(np.float64))) / 2.0).astype(np.int64)
    i -= i * (i - 1) // 2 > k
    i += (i + 1) * i // 2 <= k
    return k - i * (i - 1) // 2, i


def _sorted_edges(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    edges = np.stack([np.minimum(u, v), np.maximum(u, v)], axis=1)
    return edges[np.lexsort((edges[:, 1], edges[:, 0]))]
