"""The graph attention network of CL-LNS (Huang et al., ICML 2023, Section 4.3).

Architecture (shapes for one graph with ``n`` variables, ``m`` constraint nodes, ``E`` edges;
a batch is one big disconnected graph):

1. Standardisation: each input block is mapped to ``(x - mean) / std`` with the statistics of
   the training set (buffers set by :meth:`GATPolicy.set_normalization`; identity until then).
   The paper keeps running statistics per block (a PreNorm layer); fixed statistics computed
   once over the training set do the same job and keep inference deterministic.
2. Embeddings to ``emb_size`` (64): two-layer MLPs with ReLU for variables ``(n, V) -> (n, 64)``
   and constraints ``(m, C) -> (m, 64)``, a linear map for edges ``(E, F) -> (E, 64)``.
3. Variable -> constraint pass: :class:`torch_geometric.nn.GATv2Conv` on the bipartite
   input ``(variables, constraints)``, ``heads`` x ``head_channels`` (8 x 8, concatenated
   to 64), LeakyReLU slope 0.2, edge features in the attention, no self loops; then an MLP
   over ``[aggregate || constraint embedding]`` ``(m, 128) -> (m, 64)``.
4. Constraint -> variable pass: the same with the roles swapped, ``(n, 128) -> (n, 64)``.
5. Output MLP ``64 -> 64 -> 1``: one logit per variable, shape ``(n,)``.
   ``sigmoid(logit)`` is the score the selector ranks by and the loss compares.

With the defaults and this project's 25 / 10 / 3 input columns it has about 62k parameters,
as in the paper.
"""

from __future__ import annotations

from itertools import pairwise

import torch
from torch import nn
from torch_geometric.nn import GATv2Conv


def _mlp(sizes: list[int], final_activation: bool) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(pairwise(sizes)):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2 or final_activation:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class _Standardize(nn.Module):
    """``(x - mean) / std`` with fixed statistics held as buffers, so they travel in the state."""

    mean: torch.Tensor
    std: torch.Tensor

    def __init__(self, width: int):
        super().__init__()
        self.register_buffer("mean", torch.zeros(width))
        self.register_buffer("std", torch.ones(width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.mean) / self.std


class _AttentionPass(nn.Module):
    """One directed half of the bipartite message passing.

    An attention aggregate of the neighbours, then an MLP over ``[aggregate || self]``.
    """

    def __init__(
        self, emb_size: int, heads: int, head_channels: int, negative_slope: float, dropout: float
    ):
        super().__init__()
        self.conv = GATv2Conv(
            (emb_size, emb_size),
            head_channels,
            heads=heads,
            concat=True,
            negative_slope=negative_slope,
            dropout=dropout,
            add_self_loops=False,
            edge_dim=emb_size,
        )
        self.update = _mlp(
            [heads * head_channels + emb_size, emb_size, emb_size], final_activation=True
        )

    def forward(self, source, target, edge_index, edge_embedding):
        aggregate = self.conv((source, target), edge_index, edge_embedding)
        return self.update(torch.cat([aggregate, target], dim=-1))


class GATPolicy(nn.Module):
    """Scores every variable of a bipartite graph (logits; ``sigmoid`` gives scores in (0, 1)).

    Parameters
    ----------
    n_variable_features, n_constraint_features, n_edge_features : int
        Input widths ``V``, ``C``, ``F`` (``len(VarFeature)`` etc.).
    emb_size : int
        Width of every embedding (64 in the paper).
    heads, head_channels : int
        Attention heads and channels per head (8 x 8); concatenated they give the aggregate width.
    negative_slope : float
        LeakyReLU slope inside the GATv2 attention (0.2).
    dropout : float
        Dropout on the attention coefficients (0 in the paper).
    """

    def __init__(
        self,
        n_variable_features: int,
        n_constraint_features: int,
        n_edge_features: int,
        emb_size: int = 64,
        heads: int = 8,
        head_channels: int = 8,
        negative_slope: float = 0.2,
        dropout: float = 0.0,
    ):
        super().__init__()
        self.config = dict(
            n_variable_features=n_variable_features,
            n_constraint_features=n_constraint_features,
            n_edge_features=n_edge_features,
            emb_size=emb_size,
            heads=heads,
            head_channels=head_channels,
            negative_slope=negative_slope,
            dropout=dropout,
        )
        self.variable_norm = _Standardize(n_variable_features)
        self.constraint_norm = _Standardize(n_constraint_features)
        self.edge_norm = _Standardize(n_edge_features)
        self.variable_embedding = _mlp(
            [n_variable_features, emb_size, emb_size], final_activation=True
        )
        self.constraint_embedding = _mlp(
            [n_constraint_features, emb_size, emb_size], final_activation=True
        )
        self.edge_embedding = nn.Linear(n_edge_features, emb_size)
        self.variable_to_constraint = _AttentionPass(
            emb_size, heads, head_channels, negative_slope, dropout
        )
        self.constraint_to_variable = _AttentionPass(
            emb_size, heads, head_channels, negative_slope, dropout
        )
        self.output = _mlp([emb_size, emb_size, 1], final_activation=False)

    def set_normalization(self, stats: dict) -> None:
        """Set the input statistics: ``stats[block] = (mean, std)``.

        ``block`` is each of ``"variable"``, ``"constraint"`` and ``"edge"``.
        """
        for block, layer in (
            ("variable", self.variable_norm),
            ("constraint", self.constraint_norm),
            ("edge", self.edge_norm),
        ):
            mean, std = stats[block]
            layer.mean.copy_(torch.as_tensor(mean, dtype=torch.float32))
            layer.std.copy_(torch.as_tensor(std, dtype=torch.float32).clamp_min(1e-6))

    def forward(self, graph) -> torch.Tensor:
        """Logits of the variables of ``graph``.

        ``graph`` is a :class:`learning.bipartite_graph.BipartiteGraph` or a batch of them.

        Returns
        -------
        torch.Tensor, shape (n,)
            One logit per variable (all graphs of a batch, in order).
        """
        variables = self.variable_embedding(self.variable_norm(graph.variable_features))
        constraints = self.constraint_embedding(self.constraint_norm(graph.constraint_features))
        edges = self.edge_embedding(self.edge_norm(graph.edge_features))
        constraint_to_variable = graph.edge_index
        variable_to_constraint = constraint_to_variable.flip(0)
        constraints = self.variable_to_constraint(
            variables, constraints, variable_to_constraint, edges
        )
        variables = self.constraint_to_variable(
            constraints, variables, constraint_to_variable, edges
        )
        return self.output(variables).squeeze(-1)
