"""Collected samples as graphs with their positive and negative neighborhoods; split by instance."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from learning.bipartite_graph import make_graph
from learning.checkpoint_file import CheckpointError
from learning.collect import load_instance_file
from learning.features import BASE_VARIABLE_COLUMNS


@dataclass
class Sample:
    """One LB iteration: the graph and its neighborhoods.

    The graph holds every variable, continuous ones included (they pass messages); the
    neighborhoods cover only the ``n_integer`` integer variables, the only ones a selector frees.

    Attributes
    ----------
    graph : learning.bipartite_graph.BipartiteGraph
    positives : torch.Tensor, shape (P, n_integer), float32 0/1
    negatives : torch.Tensor, shape (N, n_integer), float32 0/1
    instance : str
    integer : torch.Tensor, shape (n,), bool
        The integer variables of the graph (:func:`integer_mask`).
    """

    graph: object
    positives: torch.Tensor
    negatives: torch.Tensor
    instance: str
    integer: torch.Tensor


def instance_files(data_dir: str | Path) -> list[Path]:
    """The sample files of a collection folder, sorted by name."""
    files = sorted(Path(data_dir).glob("*.pt"))
    if not files:
        raise FileNotFoundError(f"{data_dir}: no sample files (*.pt); run lns-collect first")
    return files


def load_samples(
    files: list,
    min_negatives: int = 1,
    variable_columns: Sequence[str] = BASE_VARIABLE_COLUMNS,
    per_instance: int | None = None,
) -> list[Sample]:
    """All samples of ``files`` with at least ``min_negatives`` negatives (InfoNCE needs one).

    Their graphs hold the ``variable_columns`` of the collected ones, in that order, so that a
    model can be trained on a subset of the collected columns. With ``per_instance``, at most
    that many of each file's usable samples, evenly spaced along its trajectory (first and
    last included): on large graphs a training step costs a graph pass per sample, and the
    samples of one trajectory share their graph.

    Raises
    ------
    learning.checkpoint_file.CheckpointError
        A file was collected without one of ``variable_columns``.
    """
    samples = []
    for path in files:
        data = load_instance_file(path)
        collected = list(data["features"]["variable"])
        missing = [name for name in variable_columns if name not in collected]
        if missing:
            raise CheckpointError(
                f"{path}: collected without the variable column {missing[0]}; collect with "
                "features=all (or train on the columns it has)"
            )
        index = [collected.index(name) for name in variable_columns]
        usable = [
            s
            for s in data["samples"]
            if len(s["negatives"]) >= min_negatives and len(s["positives"]) > 0
        ]
        for s in evenly_spaced(usable, per_instance):
            graph = make_graph(
                s["variable_features"][:, index],
                s["constraint_features"],
                data["edge_index"],
                data["edge_features"],
            )
            integer = integer_mask(data, s)
            samples.append(
                Sample(
                    graph,
                    s["positives"][:, integer].float(),
                    s["negatives"][:, integer].float(),
                    data["instance"],
                    integer,
                )
            )
    return samples


def evenly_spaced(items: list, count: int | None) -> list:
    """``count`` of ``items`` at evenly spaced positions, the first and last among them; all of
    them when ``count`` is ``None`` or not smaller."""
    if count is None or count >= len(items):
        return items
    positions = np.unique(np.round(np.linspace(0, len(items) - 1, count)).astype(int))
    return [items[i] for i in positions]


def integer_mask(data: dict, sample: dict) -> torch.Tensor:
    """The integer variables of a sample of ``data`` (:func:`learning.collect.load_instance_file`).

    Read from the file's ``integer_mask``; files collected before it was recorded give it by
    their ``IS_CONTINUOUS`` column, or, collected without that column, count every variable as
    integer (the classes of the shipped models are pure binary).
    """
    if "integer_mask" in data:
        return data["integer_mask"].bool()
    collected = list(data["features"]["variable"])
    if "IS_CONTINUOUS" in collected:
        return sample["variable_features"][:, collected.index("IS_CONTINUOUS")] == 0
    return torch.ones(len(sample["variable_features"]), dtype=torch.bool)


def instance_names(files: list) -> list[str]:
    """The instances of sample ``files`` (their file names), each once, in order."""
    return list(dict.fromkeys(Path(f).name for f in files))


def split_files(
    files: list,
    validation_fraction: float,
    rng: np.random.Generator,
    held_out: Sequence[str] | None = None,
) -> tuple[list, list]:
    """Hold out ``validation_fraction`` of the instances (at least one when there are two+).

    An instance is a file name: the files of one instance in several collection folders (the
    rounds of expert iteration) go to the same side. The instances named in ``held_out`` that
    ``files`` holds validate, if any, instead of a random share (a model trained further keeps
    its predecessor's held-out instances, so that their recalls compare).
    """
    files = [Path(f) for f in files]
    names = instance_names(files)
    validating = set(held_out or ()) & set(names)
    if not validating:
        order = rng.permutation(len(names))
        n_val = int(round(validation_fraction * len(names)))
        n_val = min(max(n_val, 1), len(names) - 1) if len(names) >= 2 else 0
        validating = {names[i] for i in order[:n_val]}
    validation = [f for f in files if f.name in validating]
    training = [f for f in files if f.name not in validating]
    return training, validation


def normalization_stats(samples: list[Sample]) -> dict:
    """Per-column mean and std of each input block over ``samples`` (std 1 where constant).

    Accumulated sample by sample (Chan et al.'s pairwise update of the mean and the sum of
    squared deviations, in float64): the blocks of all samples stacked at once would take
    several times the data's memory, as the edges of a large graph repeat in each of its samples.
    """
    stats = {}
    for block, key in (
        ("variable", "variable_features"),
        ("constraint", "constraint_features"),
        ("edge", "edge_features"),
    ):
        count, mean, squares = 0, None, None
        for sample in samples:
            rows = getattr(sample.graph, key).double()
            n = rows.size(0)
            if n == 0:
                continue
            rows_mean = rows.mean(dim=0)
            rows_squares = ((rows - rows_mean) ** 2).sum(dim=0)
            if mean is None:
                count, mean, squares = n, rows_mean, rows_squares
                continue
            delta, total = rows_mean - mean, count + n
            mean = mean + delta * (n / total)
            squares = squares + rows_squares + delta**2 * (count * n / total)
            count = total
        assert mean is not None and squares is not None, f"no {block} rows in the samples"
        std = (squares / count).sqrt()
        stats[block] = (
            mean.float(),
            torch.where(std > 1e-8, std, torch.ones_like(std)).float(),
        )
    return stats
