"""Checkpoints that load with ``torch.load(path, weights_only=True)``.

A checkpoint is a dict of plain values: the model's class name and constructor
arguments, the feature specification it was trained on (:func:`learning.features.feature_spec`),
the state dict (plain tensors; it holds the input standardisation statistics as buffers),
the same statistics as lists for readers, and a free-form ``training`` dict of numbers
and strings. Nothing is pickled, so loading a file cannot run code.
"""
from __future__ import annotations

from pathlib import Path

import torch

from learning.features import feature_spec
from learning.model import GATPolicy
from lns.core.errors import LNSError

CHECKPOINT_FORMAT = 1
MODEL_CLASSES = {"GATPolicy": GATPolicy}


class CheckpointError(LNSError):
    """A checkpoint file is missing, unreadable, or does not fit the model code or the features."""


def save_checkpoint(path: str | Path, model: GATPolicy, training: dict | None = None) -> Path:
    """Write ``model`` and its configuration to ``path`` (parent folders are created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    normalization = {block: {"mean": getattr(model, f"{block}_norm").mean.tolist(),
                             "std": getattr(model, f"{block}_norm").std.tolist()}
                     for block in ("variable", "constraint", "edge")}
    torch.save({"format": CHECKPOINT_FORMAT, "model_class": type(model).__name__, "model_config": dict(model.config),
                "features": feature_spec(), "normalization": normalization, "state_dict": state,
                "training": dict(training or {})}, path)
    return path


def load_checkpoint(path: str | Path) -> tuple[GATPolicy, dict]:
    """Read a checkpoint safely and rebuild its model (in eval mode).

    Returns
    -------
    model : GATPolicy
    checkpoint : dict
        The whole file's contents (``training`` holds the training settings and results).

    Raises
    ------
    CheckpointError
        The file is missing or not a checkpoint, or was written for other features or another model.
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: no such checkpoint file")
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises pickle/zip errors of many kinds
        raise CheckpointError(f"{path}: not a readable checkpoint ({error})") from None
    if not isinstance(checkpoint, dict) or checkpoint.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{path}: not a checkpoint of format {CHECKPOINT_FORMAT}")
    expected = feature_spec()
    if checkpoint["features"] != expected:
        got = checkpoint["features"]
        raise CheckpointError(
            f"{path}: trained on features version {got.get('version')} with "
            f"{len(got.get('variable', []))}/{len(got.get('constraint', []))}/{len(got.get('edge', []))} "
            f"variable/constraint/edge columns, but this code computes version {expected['version']} with "
            f"{len(expected['variable'])}/{len(expected['constraint'])}/{len(expected['edge'])}; retrain it")
    name = checkpoint["model_class"]
    if name not in MODEL_CLASSES:
        raise CheckpointError(f"{path}: unknown model class '{name}' (known: {sorted(MODEL_CLASSES)})")
    model = MODEL_CLASSES[name](**checkpoint["model_config"])
    try:
        model.load_state_dict(checkpoint["state_dict"])
    except RuntimeError as error:
        raise CheckpointError(f"{path}: weights do not fit {name}({checkpoint['model_config']}): {error}") from None
    model.eval()
    return model, checkpoint
