"""The bipartite graph as a torch-geometric ``Data`` object that batches correctly.

Two node types share one ``Data``: ``edge_index[0]`` indexes constraint nodes and
``edge_index[1]`` variables, so batching must shift each row by its own node count
(the ``__inc__`` recipe of the PyG docs, "Advanced Mini-Batching", bipartite graphs).
``num_nodes`` is the number of variables, so that ``batch`` and ``ptr`` of a
:class:`torch_geometric.data.Batch` follow the variables, whose scores the loss needs.
"""

from __future__ import annotations

import numpy as np
import torch
from torch_geometric.data import Data


class BipartiteGraph(Data):
    """A constraint-variable bipartite graph that PyG batches correctly.

    Attributes: ``constraint_features`` (m, C), ``variable_features`` (n, V), ``edge_index``
    (2, E) with row 0 the constraint and row 1 the variable, ``edge_features`` (E, F).
    """

    def __inc__(self, key, value, *args, **kwargs):
        if key == "edge_index":
            return torch.tensor(
                [[self.constraint_features.size(0)], [self.variable_features.size(0)]]
            )
        return super().__inc__(key, value, *args, **kwargs)


def make_graph(variable_features, constraint_features, edge_index, edge_features) -> BipartiteGraph:
    """A :class:`BipartiteGraph` from numpy arrays or tensors (copied to float32 / int64)."""
    variables = torch.as_tensor(np.asarray(variable_features, dtype=np.float32))
    return BipartiteGraph(
        variable_features=variables,
        constraint_features=torch.as_tensor(np.asarray(constraint_features, dtype=np.float32)),
        edge_index=torch.as_tensor(np.asarray(edge_index, dtype=np.int64)),
        edge_features=torch.as_tensor(np.asarray(edge_features, dtype=np.float32)),
        num_nodes=variables.size(0),
    )


def observation_graph(observation) -> BipartiteGraph:
    """The graph of a :class:`learning.features.Observation`."""
    return make_graph(
        observation.variable_features,
        observation.constraint_features,
        observation.edge_index,
        observation.edge_features,
    )
