"""Training the CL-LNS policy on collected samples (Huang et al., ICML 2023, Section 4.4).

AdamW (lr 1e-3, weight decay 5e-5, amsgrad), batches of graphs, the InfoNCE loss
(or the BCE imitation ablation), 12.5% of the instances held out for validation, the
checkpoint with the lowest validation loss (or the highest validation top-k recall) kept, one
CSV line per epoch (and TensorBoard scalars when the ``tensorboard`` package is installed).
"""

from __future__ import annotations

import csv
import logging
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch_geometric.data import Batch

from learning.checkpoint import load_checkpoint, problem_metadata, save_checkpoint
from learning.checkpoint_file import CheckpointError
from learning.dataset import (
    instance_files,
    instance_names,
    load_samples,
    normalization_stats,
    split_files,
)
from learning.features import ConsFeature, EdgeFeature, feature_spec, resolve_columns
from learning.loss import loss_function
from learning.model import GATPolicy
from learning.problem_class import TRAINED_CLASSES
from learning.selector import resolve_checkpoint
from lns.core.errors import InvalidArgumentError, UnknownNameError

log = logging.getLogger("lns.train")


@dataclass
class TrainConfig:
    """Training settings (the paper's defaults).

    Attributes
    ----------
    epochs : int
    batch_size : int
        Graphs per optimiser step (32).
    pass_edges : int or None
        The most edges of one forward pass: a batch whose graphs hold more goes through the
        model in groups of graphs (:func:`edge_groups`), their gradients added up before the
        step, which is that of the whole batch. A pass keeps activations for every edge, so this
        bounds the memory of a step on large graphs (2,000,000; ``None``: one pass per batch).
    lr, weight_decay : float
        AdamW with ``amsgrad=True`` (1e-3, 5e-5).
    max_grad_norm : float or None
        Clip each step's gradient to this norm (``torch.nn.utils.clip_grad_norm_``); ``None``,
        the default, does not clip. On small sets the InfoNCE loss of a batch can jump by
        orders of magnitude, and an unclipped step may leave every ReLU of a layer dead: the
        scores are then constant and the loss stays at ``log(1 + negatives)``.
    loss : {"infonce", "bce"}
    temperature : float
        InfoNCE temperature (0.07).
    validation_fraction : float
        Share of the instances held out (0.125).
    select_by : {"loss", "recall"}
        The checkpoint kept: lowest validation loss (the paper) or highest validation top-k recall
        (:func:`top_k_recall`). The InfoNCE loss of a small validation set is often ~0 after a few
        epochs, which leaves the choice to noise; the recall measures the ranking the selector uses.
        Without validation instances the training loss decides.
    seed : int
    model : dict
        :class:`learning.model.GATPolicy` keyword arguments (the input widths are set from the
        features).
    problem_class : str or None
        The class of the training instances (:data:`learning.problem_class.CLASSES`), or
        ``"general"`` for a mixture of classes and general MIPs
        (:data:`learning.problem_class.GENERAL`), recorded in the checkpoint with the sizes of
        the training graphs; ``cl_lns`` picks shipped models by it and warns when a problem does
        not look like it (never for ``"general"``). ``None``: not recorded.
    features : str or list of str
        The variable columns the model reads, among those collected
        (:func:`learning.features.resolve_columns`: ``"base"``, ``"all"`` or names, in order);
        recorded in the checkpoint, whose selector then computes exactly these.
    samples_per_instance : int or None
        Train and validate on at most this many samples of each instance, evenly spaced along
        its trajectory (:func:`learning.dataset.evenly_spaced`); ``None``, the default: all.
        A step costs a pass over each sample's graph, and the samples of one instance share
        their graph: on large graphs more instances with fewer samples each buy more variety
        per second of training.
    init : str or None
        Start from this checkpoint (a path or a shipped model's name) instead of new weights:
        its model, weights and input normalisation, trained further (expert iteration's next
        round). Its held-out instances are held out again (:func:`learning.dataset.split_files`),
        and the features must be those it reads; ``model`` is then not used.
    """

    epochs: int = 30
    batch_size: int = 32
    pass_edges: int | None = 2_000_000
    lr: float = 1e-3
    weight_decay: float = 5e-5
    max_grad_norm: float | None = None
    loss: str = "infonce"
    temperature: float = 0.07
    validation_fraction: float = 0.125
    select_by: str = "loss"
    seed: int = 0
    model: dict = field(default_factory=dict)
    problem_class: str | None = None
    features: str | list = "base"
    samples_per_instance: int | None = None
    init: str | None = None

    def __post_init__(self):
        if self.problem_class is not None and self.problem_class not in TRAINED_CLASSES:
            raise UnknownNameError("problem class", self.problem_class, TRAINED_CLASSES)
        resolve_columns(self.features)
        per_instance = self.samples_per_instance
        if per_instance is not None and not (isinstance(per_instance, int) and per_instance >= 1):
            raise InvalidArgumentError(
                f"samples_per_instance must be a positive integer or null, got {per_instance!r}"
            )
        if self.pass_edges is not None and not (
            isinstance(self.pass_edges, int) and self.pass_edges >= 1
        ):
            raise InvalidArgumentError(
                f"pass_edges must be a positive integer or null, got {self.pass_edges!r}"
            )
        if self.max_grad_norm is not None and not self.max_grad_norm > 0:
            raise InvalidArgumentError(
                f"max_grad_norm must be positive or null, got {self.max_grad_norm}"
            )


def seed_everything(seed: int) -> None:
    """Seed torch and Python's ``random`` (numpy draws use explicit generators)."""
    random.seed(seed)
    torch.manual_seed(seed)


def graph_logits(model: GATPolicy, samples: list) -> list[torch.Tensor]:
    """The logits of the integer variables of each graph of ``samples``, in order.

    The graphs, of any sizes, are scored in one batched forward pass; each graph's logits are
    then cut out of it and restricted to ``Sample.integer``, the variables the selector frees
    (and that the neighborhoods of :class:`learning.dataset.Sample` cover).
    """
    batch = Batch.from_data_list([s.graph for s in samples])
    logits = model(batch)
    return [logits[batch.ptr[i] : batch.ptr[i + 1]][s.integer] for i, s in enumerate(samples)]


def batch_loss(model: GATPolicy, samples: list, loss, temperature: float) -> torch.Tensor:
    """Mean loss over the graphs of ``samples``."""
    return torch.stack(
        [
            loss(logits, s.positives, s.negatives, temperature)
            for s, logits in zip(samples, graph_logits(model, samples), strict=True)
        ]
    ).mean()


def edge_groups(samples: list, pass_edges: int | None) -> list[list]:
    """``samples`` in order, cut into groups of at most ``pass_edges`` edges in all (a graph
    with more alone); one group without a bound."""
    if pass_edges is None:
        return [samples]
    groups: list[list] = []
    edges = 0
    for sample in samples:
        size = sample.graph.edge_index.size(1)
        if not groups or edges + size > pass_edges:
            groups.append([])
            edges = 0
        groups[-1].append(sample)
        edges += size
    return groups


def top_k_recall(logits: torch.Tensor, positives: torch.Tensor) -> float:
    """Share of the expert's neighborhood among the ``k`` top-scored variables.

    The expert's neighborhood is the first positive, of ``k`` variables. The recall is 1 when the
    greedy selector with the expert's size would free exactly the expert's neighborhood.
    ``logits`` and ``positives`` cover the same variables: the integer ones of a graph
    (:func:`graph_logits`), among which the selector chooses.
    """
    expert = positives[0] > 0.5
    top = torch.topk(logits, int(expert.sum())).indices
    return float(expert[top].float().mean())


def evaluate(model: GATPolicy, samples: list, config: TrainConfig) -> tuple[float, float]:
    """Mean loss and mean :func:`top_k_recall` over ``samples``, without gradients.

    Both are NaN when there are no samples.
    """
    if not samples:
        return float("nan"), float("nan")
    loss = loss_function(config.loss)
    model.eval()
    total, recall = 0.0, 0.0
    with torch.no_grad():
        for start in range(0, len(samples), config.batch_size):
            chunk = samples[start : start + config.batch_size]
            for group in edge_groups(chunk, config.pass_edges):
                for s, logits in zip(group, graph_logits(model, group), strict=True):
                    total += float(loss(logits, s.positives, s.negatives, config.temperature))
                    recall += top_k_recall(logits, s.positives)
    return total / len(samples), recall / len(samples)


def train(
    data_dirs: list,
    checkpoint: str | Path,
    config: TrainConfig,
    log_csv: str | Path | None = None,
    tensorboard_dir: str | Path | None = None,
) -> dict:
    """Train on the sample files of ``data_dirs``; write the best checkpoint and the curves.

    The curves go to ``log_csv`` and, when TensorBoard is installed, to ``tensorboard_dir``
    (either ``None``: not written).

    Returns
    -------
    dict
        ``best_epoch``, ``best_validation_loss``, ``best_validation_recall``, ``train_samples``,
        ``validation_samples``, ``history`` (one dict per epoch), ``train_time``.
    """
    if config.select_by not in ("loss", "recall"):
        raise UnknownNameError("checkpoint selection", config.select_by, ("loss", "recall"))
    began = time.perf_counter()
    seed_everything(config.seed)
    rng = np.random.default_rng(config.seed)
    start = _initial_checkpoint(config.init, resolve_columns(config.features))
    split = _load_split(
        data_dirs, config, rng, start[1]["training"]["validation_files"] if start else None
    )
    model = start[0] if start else _new_model(split, config)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=config.lr, weight_decay=config.weight_decay, amsgrad=True
    )
    loss = loss_function(config.loss)
    history: list[dict] = []
    best = (float("inf"), -1)
    writer = _CurveWriter(log_csv, tensorboard_dir)
    for epoch in range(config.epochs):
        train_loss = _train_epoch(model, optimizer, loss, split.train, rng, config)
        validation_loss, validation_recall = evaluate(model, split.validation, config)
        row = {
            "epoch": epoch,
            "train_loss": train_loss,
            "validation_loss": validation_loss,
            "validation_recall": validation_recall,
            "time": time.perf_counter() - began,
        }
        history.append(row)
        writer.write(row)
        log.info(
            "epoch %d: train %.4f, validation %.4f (recall %.3f)",
            epoch,
            train_loss,
            validation_loss,
            validation_recall,
        )
        criterion = _criterion(row, config, validated=bool(split.validation))
        if criterion < best[0]:
            best = (criterion, epoch)
            _save_best(checkpoint, model, config, row, split)
    writer.close()
    best_row = history[best[1]] if best[1] >= 0 else {}
    return {
        "best_epoch": best[1],
        "best_validation_loss": best_row.get("validation_loss", float("nan")),
        "best_validation_recall": best_row.get("validation_recall", float("nan")),
        "train_samples": len(split.train),
        "validation_samples": len(split.validation),
        "history": history,
        "train_time": time.perf_counter() - began,
    }


@dataclass
class _Split:
    """The training and validation instance files, the samples read from each, and their
    variable columns."""

    train_files: list
    validation_files: list
    train: list
    validation: list
    columns: tuple


def _new_model(split: _Split, config: TrainConfig) -> GATPolicy:
    """New weights for the columns of ``split``, inputs normalised by its training samples."""
    model = GATPolicy(len(split.columns), len(ConsFeature), len(EdgeFeature), **config.model)
    model.set_normalization(normalization_stats(split.train))
    return model


def _initial_checkpoint(init: str | None, columns: tuple) -> tuple[GATPolicy, dict] | None:
    """The model and checkpoint that ``init`` names, or ``None`` without one.

    Raises
    ------
    CheckpointError
        The checkpoint cannot be read, or reads other variable columns than ``columns``.
    """
    if init is None:
        return None
    path = resolve_checkpoint(init)
    model, checkpoint = load_checkpoint(path)
    trained_on = tuple(checkpoint["features"]["variable"])
    if trained_on != tuple(columns):
        raise CheckpointError(
            f"{path}: reads the variable columns {list(trained_on)}, not the features "
            f"asked for ({list(columns)}); train it further with the features it was trained on"
        )
    return model, checkpoint


def _load_split(
    data_dirs: list,
    config: TrainConfig,
    rng: np.random.Generator,
    held_out: list | None = None,
) -> _Split:
    """The sample files of ``data_dirs`` split by instance (:func:`split_files`; the instances
    named in ``held_out`` validate, when given), then read.

    InfoNCE needs negatives: with it, samples without any are left out.

    Raises
    ------
    ValueError
        No usable training sample.
    """
    files = [f for d in data_dirs for f in instance_files(d)]
    train_files, validation_files = split_files(files, config.validation_fraction, rng, held_out)
    minimum = 1 if config.loss == "infonce" else 0
    columns = resolve_columns(config.features)
    split = _Split(
        train_files,
        validation_files,
        load_samples(train_files, minimum, columns, config.samples_per_instance),
        load_samples(validation_files, minimum, columns, config.samples_per_instance),
        columns,
    )
    if not split.train:
        raise InvalidArgumentError(
            f"no usable training samples in {[str(d) for d in data_dirs]} "
            f"({len(train_files)} instance files; InfoNCE needs samples with negatives)"
        )
    return split


def _train_epoch(
    model: GATPolicy,
    optimizer: torch.optim.Optimizer,
    loss,
    samples: list,
    rng: np.random.Generator,
    config: TrainConfig,
) -> float:
    """One pass over ``samples`` in a random order, a step per batch; the mean training loss."""
    model.train()
    order = rng.permutation(len(samples))
    total = 0.0
    for start in range(0, len(order), config.batch_size):
        chunk = [samples[i] for i in order[start : start + config.batch_size]]
        optimizer.zero_grad()
        for group in edge_groups(chunk, config.pass_edges):
            value = batch_loss(model, group, loss, config.temperature) * (len(group) / len(chunk))
            value.backward()
            total += float(value.detach()) * len(chunk)
        if config.max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
        optimizer.step()
    return total / len(samples)


def _criterion(row: dict, config: TrainConfig, validated: bool) -> float:
    """What the kept checkpoint minimises, from an epoch's ``row`` of the curve.

    The validation loss or minus the validation recall (``config.select_by``); the training
    loss when there are no validation samples (``validated`` false).
    """
    if not validated:
        return row["train_loss"]
    return row["validation_loss"] if config.select_by == "loss" else -row["validation_recall"]


def _save_best(
    checkpoint: str | Path, model: GATPolicy, config: TrainConfig, row: dict, split: _Split
) -> None:
    """Write ``model`` to ``checkpoint`` with the epoch's ``row`` and what it was trained on."""
    info = {
        "config": asdict(config),
        "epoch": row["epoch"],
        "train_loss": row["train_loss"],
        "validation_loss": row["validation_loss"],
        "validation_recall": row["validation_recall"],
        "train_files": instance_names(split.train_files),
        "validation_files": instance_names(split.validation_files),
        "train_samples": len(split.train),
        "validation_samples": len(split.validation),
    }
    save_checkpoint(
        checkpoint,
        model,
        training=info,
        problem=_problem(config, split.train),
        features=feature_spec(split.columns),
    )


def _problem(config: TrainConfig, samples: list) -> dict:
    """The checkpoint's ``problem`` entry: the configured class and the training graphs' sizes."""
    return problem_metadata(
        config.problem_class,
        [s.graph.variable_features.shape[0] for s in samples],
        [s.graph.constraint_features.shape[0] for s in samples],
    )


class _CurveWriter:
    """The training curve: one CSV row per epoch, and TensorBoard scalars.

    Each CSV row is flushed, so that the curve can be watched while training; the same losses go
    to TensorBoard when ``tensorboard`` is installed.
    """

    def __init__(self, path: str | Path | None, tensorboard_dir: str | Path | None = None):
        self.path = Path(path) if path is not None else None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("")
        self.board = None
        if tensorboard_dir is not None:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError:
                log.info("tensorboard is not installed: the curves go to the CSV file only")
            else:
                self.board = SummaryWriter(log_dir=str(tensorboard_dir))

    def write(self, row: dict) -> None:
        if self.path is not None:
            with self.path.open("a", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(row))
                if handle.tell() == 0:
                    writer.writeheader()
                writer.writerow(row)
        if self.board is not None:
            for tag, key in (
                ("loss/train", "train_loss"),
                ("loss/validation", "validation_loss"),
                ("recall/validation", "validation_recall"),
            ):
                if np.isfinite(row[key]):
                    self.board.add_scalar(tag, row[key], row["epoch"])
            self.board.flush()

    def close(self) -> None:
        if self.board is not None:
            self.board.close()
