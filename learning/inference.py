"""The forward pass of :class:`learning.model.GATPolicy` in numpy, for the selector.

Same computation and the same state dict as the torch model (a test compares the scores of the
shipped checkpoints on a tiny graph), without importing torch or torch-geometric, which take
longer to import than everything else the selector does before its first neighborhood
(``benchmarks/test_cl_lns_cost.py``). Training keeps the torch model.

GATv2 attention (Brody, Alon, Yahav, ICLR 2022) as :class:`torch_geometric.nn.GATv2Conv` computes
it, with source ``j`` and target ``i`` of each edge and ``H`` heads of ``C`` channels:

.. math::

    e_{ij} = a^\\top \\operatorname{LeakyReLU}(W_l h_j + W_r h_i + W_e f_{ij}), \\quad
    \\alpha_{ij} = \\operatorname{softmax}_{j \\to i}(e_{ij}), \\quad
    h'_i = \\Big\\Vert_{heads} \\sum_j \\alpha_{ij} W_l h_j + b,

per head; a target without edges gets ``b``. :class:`GraphCache` keeps what depends only on the
problem (edge order, edge embeddings and their attention projections) between calls.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


def _linear(x: np.ndarray, state: dict, name: str) -> np.ndarray:
    out = x @ state[f"{name}.weight"].T
    bias = state.get(f"{name}.bias")
    if bias is not None:
        out += bias
    return out


def _mlp(x: np.ndarray, state: dict, name: str, final_activation: bool) -> np.ndarray:
    """The :func:`learning.model._mlp` stacks: linear layers at even indices, ReLU between."""
    index = 0
    while f"{name}.{index}.weight" in state:
        x = _linear(x, state, f"{name}.{index}")
        if f"{name}.{index + 2}.weight" in state or final_activation:
            np.maximum(x, 0.0, out=x)
        index += 2
    return x


@dataclass
class _Direction:
    """The edges of one message-passing direction, sorted by target.

    Attributes
    ----------
    source, target : numpy.ndarray of int, shape (E,)
        Endpoints of the sorted edges.
    order : numpy.ndarray of int, shape (E,)
        Position of each sorted edge in the graph's edge list.
    starts : numpy.ndarray of int
        First sorted edge of each target that has edges (the segments of the softmax).
    segment : numpy.ndarray of int, shape (E,)
        Segment of each sorted edge.
    gather : scipy.sparse.csr_matrix, shape (targets, E)
        Sums the rows of an edge array into their targets.
    """

    source: np.ndarray
    target: np.ndarray
    order: np.ndarray
    starts: np.ndarray
    segment: np.ndarray
    gather: sp.csr_matrix

    @classmethod
    def of(cls, source: np.ndarray, target: np.ndarray, n_targets: int) -> _Direction:
        order = np.argsort(target, kind="stable")
        source, target = source[order], target[order]
        first = np.r_[True, target[1:] != target[:-1]] if len(target) else np.zeros(0, dtype=bool)
        gather = sp.csr_matrix(
            (np.ones(len(target), dtype=np.float32), (target, np.arange(len(target)))),
            shape=(n_targets, len(target)),
        )
        return cls(source, target, order, np.flatnonzero(first), np.cumsum(first) - 1, gather)


@dataclass
class GraphCache:
    """The static part of a graph: edges per direction and their projected embeddings.

    Attributes
    ----------
    to_constraints, to_variables : _Direction
    edge_terms : dict
        ``W_e f`` of every edge in the direction's order, shape (E, H * C), per attention pass.
    """

    to_constraints: _Direction
    to_variables: _Direction
    edge_terms: dict


class NumpyPolicy:
    """Logits of a checkpoint's :class:`~learning.model.GATPolicy`, computed with numpy.

    Parameters
    ----------
    state_dict : dict of str to numpy.ndarray
        The model's state dict (as :func:`learning.checkpoint_file.read_checkpoint` returns it).
    config : dict
        The model's constructor arguments (``heads``, ``head_channels``, ``negative_slope``).
    """

    PASSES = ("variable_to_constraint", "constraint_to_variable")

    def __init__(self, state_dict: dict, config: dict):
        self.state = {key: np.asarray(value, dtype=np.float32) for key, value in state_dict.items()}
        self.heads, self.channels = int(config["heads"]), int(config["head_channels"])
        self.negative_slope = float(config["negative_slope"])
        # (z * att) summed per head is one product with the block-diagonal (H * C, H) matrix of att.
        eye = np.eye(self.heads, dtype=np.float32)[:, None, :]
        self.head_sums = {
            name: (
                eye * self.state[f"{name}.conv.att"].reshape(self.heads, self.channels, 1)
            ).reshape(-1, self.heads)
            for name in self.PASSES
        }

    def _standardize(self, x: np.ndarray, block: str) -> np.ndarray:
        mean, std = self.state[f"{block}_norm.mean"], self.state[f"{block}_norm.std"]
        return (np.asarray(x, dtype=np.float32) - mean) / std

    def graph_cache(
        self,
        edge_index: np.ndarray,
        edge_features: np.ndarray,
        n_variables: int,
        n_constraints: int,
    ) -> GraphCache:
        """What :meth:`logits` reuses for every observation of one graph.

        ``edge_index`` row 0 holds the constraint node of each edge, row 1 its variable.
        """
        edges = self._standardize(edge_features, "edge")
        constraint, variable = np.asarray(edge_index[0]), np.asarray(edge_index[1])
        to_constraints = _Direction.of(variable, constraint, n_constraints)
        to_variables = _Direction.of(constraint, variable, n_variables)
        # The edge embedding is linear: W_e (W x + b) = (W_e W) x + W_e b, over F columns, not 64.
        weight, bias = self.state["edge_embedding.weight"], self.state["edge_embedding.bias"]
        terms = {}
        for name, direction in zip(self.PASSES, (to_constraints, to_variables), strict=True):
            projection = self.state[f"{name}.conv.lin_edge.weight"]
            terms[name] = edges[direction.order] @ (projection @ weight).T + projection @ bias
        return GraphCache(to_constraints, to_variables, terms)

    def _attention(
        self,
        name: str,
        source: np.ndarray,
        target: np.ndarray,
        direction: _Direction,
        edge_term: np.ndarray,
    ) -> np.ndarray:
        """One :class:`learning.model._AttentionPass`: GATv2 aggregate, then the update MLP."""
        s = self.state
        left = _linear(source, s, f"{name}.conv.lin_l")
        right = _linear(target, s, f"{name}.conv.lin_r")
        aggregate = np.zeros_like(right)
        if len(direction.source):
            left_j = np.take(left, direction.source, axis=0)
            z = np.take(right, direction.target, axis=0)
            z += left_j
            z += edge_term
            leaky_relu = np.maximum if self.negative_slope <= 1 else np.minimum
            leaky_relu(z, self.negative_slope * z, out=z)
            energy = z @ self.head_sums[name]
            energy = np.exp(
                energy - np.maximum.reduceat(energy, direction.starts)[direction.segment]
            )
            alpha = energy / (direction.gather @ energy)[direction.target]
            aggregate = direction.gather @ (left_j * np.repeat(alpha, self.channels, axis=1))
        aggregate = aggregate + s[f"{name}.conv.bias"]
        return _mlp(
            np.concatenate([aggregate, target], axis=1), s, f"{name}.update", final_activation=True
        )

    def logits(
        self, variable_features: np.ndarray, constraint_features: np.ndarray, cache: GraphCache
    ) -> np.ndarray:
        """One logit per variable, shape (n,), as ``GATPolicy.forward`` on the same graph."""
        s = self.state
        variables = _mlp(
            self._standardize(variable_features, "variable"), s, "variable_embedding", True
        )
        constraints = _mlp(
            self._standardize(constraint_features, "constraint"), s, "constraint_embedding", True
        )
        constraints = self._attention(
            "variable_to_constraint",
            variables,
            constraints,
            cache.to_constraints,
            cache.edge_terms["variable_to_constraint"],
        )
        variables = self._attention(
            "constraint_to_variable",
            constraints,
            variables,
            cache.to_variables,
            cache.edge_terms["constraint_to_variable"],
        )
        return _mlp(variables, s, "output", final_activation=False)[:, 0]

    def scores(
        self, variable_features: np.ndarray, constraint_features: np.ndarray, cache: GraphCache
    ) -> np.ndarray:
        """``sigmoid(logits)``, in (0, 1), as float64."""
        logits = self.logits(variable_features, constraint_features, cache).astype(np.float64)
        return 0.5 * (1.0 + np.tanh(0.5 * logits))
