"""Checkpoint files read without torch, and the checks every loader applies.

A checkpoint (:func:`learning.checkpoint.save_checkpoint`) is a ``torch.save`` zip archive: a
pickle (``<name>/data.pkl``) of plain values whose tensors point at raw little-endian storages
(``<name>/data/<key>``). :func:`read_checkpoint` unpickles it with a whitelist, as
``torch.load(weights_only=True)`` does: only dicts, lists, numbers, strings and tensors are
accepted, any other object is refused, so reading a file cannot run code. Tensors come back as
numpy arrays. This lets the CL-LNS selector start without importing torch (about 2 s here, more
than the rest of its start-up together: ``benchmarks/test_cl_lns_cost.py``).

:func:`validate_checkpoint` holds the checks shared by this reader and
:func:`learning.checkpoint.load_checkpoint` (the torch loader used for training): file format,
feature schema (the column names of :func:`learning.features.feature_spec`; the variable
columns a checkpoint names are those the selector computes for it) and model class.
"""

from __future__ import annotations

import collections
import pickle
import zipfile
from pathlib import Path

import numpy as np

from learning.features import spec_difference
from lns.core.errors import LNSError

CHECKPOINT_FORMAT = 1
MODEL_CLASSES = ("GATPolicy",)
_DTYPES = {
    "FloatStorage": np.float32,
    "DoubleStorage": np.float64,
    "HalfStorage": np.float16,
    "LongStorage": np.int64,
    "IntStorage": np.int32,
    "ShortStorage": np.int16,
    "CharStorage": np.int8,
    "ByteStorage": np.uint8,
    "BoolStorage": np.bool_,
}


class CheckpointError(LNSError):
    """A checkpoint file is missing, unreadable, or does not fit the model code or the features."""


def _rebuild_tensor(storage, offset, size, stride, *_):
    """numpy view of a torch tensor: ``size`` and element ``stride`` over a flat storage."""
    itemsize = storage.dtype.itemsize
    return np.lib.stride_tricks.as_strided(
        storage[offset:], shape=tuple(size), strides=tuple(s * itemsize for s in stride)
    ).copy()


class _StorageType:
    def __init__(self, name: str):
        self.dtype = _DTYPES[name]


class _Unpickler(pickle.Unpickler):
    """Builds only plain values and tensors; storages are read from the archive."""

    def __init__(self, file, archive: zipfile.ZipFile, prefix: str):
        super().__init__(file)
        self.archive, self.prefix = archive, prefix

    def find_class(self, module: str, name: str):
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _rebuild_tensor
        if module == "torch" and name in _DTYPES:
            return _StorageType(name)
        raise pickle.UnpicklingError(f"refused object {module}.{name}")

    def persistent_load(self, pid):
        kind, storage_type, key, _location, numel = pid
        if kind != "storage" or not isinstance(storage_type, _StorageType):
            raise pickle.UnpicklingError(f"refused storage {pid!r}")
        data = self.archive.read(f"{self.prefix}/data/{key}")
        return np.frombuffer(
            data, dtype=np.dtype(storage_type.dtype).newbyteorder("<"), count=numel
        )


def read_checkpoint(path: str | Path) -> dict:
    """The contents of a checkpoint file, tensors as numpy arrays, validated.

    Raises
    ------
    CheckpointError
        The file is missing, is not a ``torch.save`` archive of plain values and tensors, or
        fails :func:`validate_checkpoint`.
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: no such checkpoint file")
    try:
        with zipfile.ZipFile(path) as archive:
            pickles = [name for name in archive.namelist() if name.endswith("/data.pkl")]
            if len(pickles) != 1:
                raise pickle.UnpicklingError("no data.pkl record")
            prefix = pickles[0].rsplit("/", 1)[0]
            if archive.read(f"{prefix}/byteorder").strip() not in (b"little",):
                raise pickle.UnpicklingError("big-endian storages")
            with archive.open(pickles[0]) as file:
                checkpoint = _Unpickler(file, archive, prefix).load()
    except (
        OSError,
        zipfile.BadZipFile,
        KeyError,
        pickle.UnpicklingError,
        ValueError,
        TypeError,
        EOFError,
    ) as error:
        raise CheckpointError(f"{path}: not a readable checkpoint ({error})") from None
    validate_checkpoint(checkpoint, path)
    return checkpoint


def validate_checkpoint(checkpoint, path: str | Path) -> None:
    """Refuse a checkpoint of another format, feature schema or model class.

    The feature schema must be one this code computes (:func:`learning.features.spec_difference`:
    the version, the constraint and edge columns, known variable columns) and name as many
    variable columns as the model reads.

    Raises
    ------
    CheckpointError
        One line naming ``path`` and the first difference.
    """
    if not isinstance(checkpoint, dict) or checkpoint.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{path}: not a checkpoint of format {CHECKPOINT_FORMAT}")
    features = checkpoint.get("features") or {}
    difference = spec_difference(features)
    if difference:
        raise CheckpointError(
            f"{path}: feature schema does not match: trained on {difference}; retrain it"
        )
    width = (checkpoint.get("state_dict") or {}).get("variable_norm.mean")
    if width is not None and len(width) != len(features["variable"]):
        raise CheckpointError(
            f"{path}: feature schema does not match: it names {len(features['variable'])} "
            f"variable columns, its model reads {len(width)}; retrain it"
        )
    if checkpoint.get("model_class") not in MODEL_CLASSES:
        raise CheckpointError(
            f"{path}: unknown model class '{checkpoint.get('model_class')}' "
            f"(known: {list(MODEL_CLASSES)})"
        )
