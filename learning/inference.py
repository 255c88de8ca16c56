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
problem (the edges sorted by target, their standardized features) between calls; the edge
embeddings and everything else with a row per edge are computed block by block of edges.
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


#: Edges per block of :meth:`NumpyPolicy._attention`: its arrays of one row per edge and
#: ``H * C`` columns are of one block (4 MB at 64 columns), not of every edge; whole-graph ones
#: (a gigabyte per array at four million edges) spent more time faulting fresh pages in than
#: computing.
BLOCK_EDGES = 16384


@dataclass
class _Direction:
    """The edges of one message-passing direction, sorted by target, in blocks of whole targets.

    Attributes
    ----------
    source, target : numpy.ndarray of int, shape (E,)
        Endpoints of the sorted edges.
    edge_features : numpy.ndarray of float32, shape (E, F)
        The standardized features of the sorted edges.
    starts : numpy.ndarray of int
        First sorted edge of each target that has edges (the segments of the softmax).
    segment : numpy.ndarray of int, shape (E,)
        Segment of each sorted edge.
    blocks : numpy.ndarray of int
        The first edge of each block, then ``E``: each block holds whole segments, of about
        ``block_edges`` edges (a segment longer than that is a block alone).
    block_segments : numpy.ndarray of int
        The first segment of each block, then the number of segments.
    """

    source: np.ndarray
    target: np.ndarray
    edge_features: np.ndarray
    starts: np.ndarray
    segment: np.ndarray
    blocks: np.ndarray
    block_segments: np.ndarray

    @classmethod
    def of(
        cls,
        source: np.ndarray,
        target: np.ndarray,
        edge_features: np.ndarray,
        block_edges: int,
    ) -> _Direction:
        order = np.argsort(target, kind="stable")
        source, target = source[order], target[order]
        first = np.r_[True, target[1:] != target[:-1]] if len(target) else np.zeros(0, dtype=bool)
        starts = np.flatnonzero(first)
        # The segment start at or before each multiple of block_edges opens a block.
        wanted = np.arange(0, len(target), block_edges)
        opening = np.unique(starts[np.searchsorted(starts, wanted, side="right") - 1])
        blocks = np.r_[opening, len(target)] if len(target) else np.zeros(1, dtype=np.int64)
        return cls(
            source,
            target,
            np.ascontiguousarray(edge_features[order]),
            starts,
            np.cumsum(first) - 1,
            blocks,
            np.searchsorted(starts, blocks),
        )


@dataclass
class GraphCache:
    """The static part of a graph: its edges per direction, sorted and standardized.

    Attributes
    ----------
    to_constraints, to_variables : _Direction
    """

    to_constraints: _Direction
    to_variables: _Direction


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
        # The edge embedding is linear: W_e (W x + b) = (W_e W) x + W_e b, over F columns, not 64.
        weight, bias = self.state["edge_embedding.weight"], self.state["edge_embedding.bias"]
        self.edge_projections = {}
        for name in self.PASSES:
            projection = self.state[f"{name}.conv.lin_edge.weight"]
            self.edge_projections[name] = (
                np.ascontiguousarray((projection @ weight).T),
                projection @ bias,
            )

    def _standardize(self, x: np.ndarray, block: str) -> np.ndarray:
        mean, std = self.state[f"{block}_norm.mean"], self.state[f"{block}_norm.std"]
        return (np.asarray(x, dtype=np.float32) - mean) / std

    def graph_cache(
        self,
        edge_index: np.ndarray,
        edge_features: np.ndarray,
        block_edges: int = BLOCK_EDGES,
    ) -> GraphCache:
        """What :meth:`logits` reuses for every observation of one graph.

        ``edge_index`` row 0 holds the constraint node of each edge, row 1 its variable;
        ``block_edges``: the edges of a block of the attention (:data:`BLOCK_EDGES`).
        """
        edges = self._standardize(edge_features, "edge")
        constraint, variable = np.asarray(edge_index[0]), np.asarray(edge_index[1])
        return GraphCache(
            _Direction.of(variable, constraint, edges, block_edges),
            _Direction.of(constraint, variable, edges, block_edges),
        )

    def _attention(
        self, name: str, source: np.ndarray, target: np.ndarray, direction: _Direction
    ) -> np.ndarray:
        """One :class:`learning.model._AttentionPass`: GATv2 aggregate, then the update MLP.

        Block by block of whole targets (:attr:`_Direction.blocks`), in two buffers of the
        largest block's rows: ``W_l h_j``, and ``z`` then the messages.
        """
        s = self.state
        left = _linear(source, s, f"{name}.conv.lin_l")
        right = _linear(target, s, f"{name}.conv.lin_r")
        aggregate = np.zeros_like(right)
        edge_weight, edge_bias = self.edge_projections[name]
        head_sums = self.head_sums[name]
        leaky_relu = np.maximum if self.negative_slope <= 1 else np.minimum
        blocks, block_segments = direction.blocks, direction.block_segments
        rows = int(np.max(np.diff(blocks), initial=0))
        left_j = np.empty((rows, left.shape[1]), dtype=np.float32)
        z = np.empty_like(left_j)
        for block in range(len(blocks) - 1):
            low, high = blocks[block], blocks[block + 1]
            first, last = block_segments[block], block_segments[block + 1]
            size = high - low
            block_left, block_z = left_j[:size], z[:size]
            np.take(left, direction.source[low:high], axis=0, out=block_left)
            np.matmul(direction.edge_features[low:high], edge_weight, out=block_z)
            block_z += edge_bias
            block_z += right[direction.target[low:high]]
            block_z += block_left
            leaky_relu(block_z, self.negative_slope * block_z, out=block_z)
            energy = block_z @ head_sums
            local_starts = direction.starts[first:last] - low
            local_segment = direction.segment[low:high] - first
            energy -= np.maximum.reduceat(energy, local_starts)[local_segment]
            np.exp(energy, out=energy)
            # Sums over segments as a product with a 0/1 matrix: faster than add.reduceat over
            # many short segments (the two-variable rows of an independent set).
            gather = sp.csr_matrix(
                (np.ones(size, dtype=np.float32), np.arange(size), np.r_[local_starts, size]),
                shape=(last - first, size),
            )
            energy /= (gather @ energy)[local_segment]
            messages = block_z.reshape(size, self.heads, self.channels)
            np.multiply(
                block_left.reshape(size, self.heads, self.channels),
                energy[:, :, None],
                out=messages,
            )
            targets = direction.target[direction.starts[first:last]]
            aggregate[targets] = gather @ block_z
        aggregate += s[f"{name}.conv.bias"]
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
        )
        variables = self._attention(
            "constraint_to_variable",
            constraints,
            variables,
            cache.to_variables,
        )
        return _mlp(variables, s, "output", final_activation=False)[:, 0]

    def scores(
        self, variable_features: np.ndarray, constraint_features: np.ndarray, cache: GraphCache
    ) -> np.ndarray:
        """``sigmoid(logits)``, in (0, 1), as float64."""
        logits = self.logits(variable_features, constraint_features, cache).astype(np.float64)
        return 0.5 * (1.0 + np.tanh(0.5 * logits))
