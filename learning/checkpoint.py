"""Checkpoints that load with ``torch.load(path, weights_only=True)``.

A checkpoint is a dict of plain values: the model's class name and constructor
arguments, the feature schema it was trained on (:func:`learning.features.feature_spec`:
version and column names), the problem class and sizes it was trained on (``problem``), the
state dict (plain tensors; it holds the input standardisation statistics as buffers), the same
statistics as lists for readers, and a free-form ``training`` dict of numbers and strings.
Nothing is pickled, so loading a file cannot run code. The selector reads the same files
without torch (:func:`learning.checkpoint_file.read_checkpoint`); both apply
:func:`learning.checkpoint_file.validate_checkpoint`.
"""

from __future__ import annotations

from pathlib import Path

import torch

from learning.checkpoint_file import CHECKPOINT_FORMAT, CheckpointError, validate_checkpoint
from learning.features import feature_spec
from learning.model import GATPolicy

MODEL_CLASSES = {"GATPolicy": GATPolicy}
__all__ = ["CheckpointError", "load_checkpoint", "problem_metadata", "save_checkpoint"]


def problem_metadata(problem_class: str | None, n_variables: list, n_constraints: list) -> dict:
    """The ``problem`` entry of a checkpoint: class name (or ``None``) and training-set size ranges.

    Parameters
    ----------
    problem_class : str or None
        One of :data:`learning.problem_class.TRAINED_CLASSES` (a class, or ``"general"`` for a
        mixture), or ``None`` when unknown.
    n_variables, n_constraints : list of int
        Variables and constraint nodes (two-sided rows split) of the training graphs.
    """
    return {
        "class": problem_class,
        "n_variables": [int(min(n_variables)), int(max(n_variables))] if len(n_variables) else [],
        "n_constraints": [int(min(n_constraints)), int(max(n_constraints))]
        if len(n_constraints)
        else [],
    }


def save_checkpoint(
    path: str | Path,
    model: GATPolicy,
    training: dict | None = None,
    problem: dict | None = None,
    features: dict | None = None,
) -> Path:
    """Write ``model``, its configuration and ``problem`` (:func:`problem_metadata`) to ``path``.

    ``features``: the :func:`learning.features.feature_spec` of the columns the model reads
    (default: the base columns).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    normalization = {
        block: {
            "mean": getattr(model, f"{block}_norm").mean.tolist(),
            "std": getattr(model, f"{block}_norm").std.tolist(),
        }
        for block in ("variable", "constraint", "edge")
    }
    torch.save(
        {
            "format": CHECKPOINT_FORMAT,
            "model_class": type(model).__name__,
            "model_config": dict(model.config),
            "features": features or feature_spec(),
            "problem": dict(problem or problem_metadata(None, [], [])),
            "normalization": normalization,
            "state_dict": state,
            "training": dict(training or {}),
        },
        path,
    )
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
    validate_checkpoint(checkpoint, path)
    name = checkpoint["model_class"]
    model = MODEL_CLASSES[name](**checkpoint["model_config"])
    try:
        model.load_state_dict(checkpoint["state_dict"])
    except RuntimeError as error:
        raise CheckpointError(
            f"{path}: weights do not fit {name}({checkpoint['model_config']}): {error}"
        ) from None
    model.eval()
    return model, checkpoint
