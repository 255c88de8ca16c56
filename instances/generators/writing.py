"""Writing a set of generated instances and its manifest, reproducibly."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np

from instances.generators.registry import problem_class
from lns.core.errors import InvalidArgumentError, InvalidArgumentTypeError, UnknownNameError
from lns.core.problem.mip import write_with_scip

MANIFEST = "manifest.json"
#: How the files of a set are written (:func:`write_set`).
WRITERS = ("arrays", "scip")


def instance_rng(seed: int, index: int) -> np.random.Generator:
    """The generator of instance ``index``, set seed ``seed``: ``SeedSequence([seed, index])``.

    Each instance depends on ``(seed, index)`` only, so a set can be extended, or one instance
    regenerated, without producing the others.
    """
    if seed < 0 or index < 0:
        raise InvalidArgumentError(f"seed and index must be >= 0, got seed={seed}, index={index}")
    return np.random.default_rng(np.random.SeedSequence([seed, index]))


def write_set(
    problem: str,
    params,
    n: int,
    seed: int,
    out_dir: str | Path,
    prefix: str,
    start: int = 0,
    size: str | None = None,
    writer: str = "arrays",
) -> dict:
    """Generate instances ``start, ..., start + n - 1`` of a class into ``out_dir`` with a manifest.

    Files are named ``{prefix}_{index:04d}.mps.gz``; the manifest (``manifest.json``) records the
    class, parameters and seed, and per instance its file, index, numbers of variables, rows and
    nonzeros, size in bytes and SHA-256. The same arguments give the same bytes.

    Parameters
    ----------
    problem : str
        Class name (see :data:`instances.generators.CLASSES`).
    params
        The class's parameter dataclass.
    n : int
        Number of instances, at least 1.
    seed : int
        Seed of the set, at least 0; instance ``i`` uses :func:`instance_rng` ``(seed, i)``.
    out_dir : path
        Folder, created if missing.
    prefix : str
        File name prefix, e.g. ``"mvc_small"``.
    start : int
        Index of the first instance.
    size : str, optional
        Preset name the parameters started from, recorded in the manifest.
    writer : str
        ``"arrays"`` (:meth:`lns.core.problem.mip.Problem.write`) or ``"scip"``
        (:func:`lns.core.problem.mip.write_with_scip`, what wrote every set before the arrays'
        writer: the same bytes as theirs), recorded in the manifest.

    Returns
    -------
    dict
        The manifest as written.
    """
    cls = problem_class(problem)
    if not isinstance(params, cls.params_type):
        raise InvalidArgumentTypeError(
            f"params for '{problem}' must be {cls.params_type.__name__}, "
            f"got {type(params).__name__}"
        )
    if n < 1:
        raise InvalidArgumentError(f"n must be >= 1, got {n}")
    if start < 0:
        raise InvalidArgumentError(f"start must be >= 0, got {start}")
    if writer not in WRITERS:
        raise UnknownNameError("writer", writer, WRITERS)
    out_dir = Path(out_dir)
    header = {
        "problem": problem,
        "size": size,
        "seed": seed,
        "params": dataclasses.asdict(params),
        "seeding": "numpy.random.SeedSequence([seed, index])",
        "writer": writer,
    }
    earlier = _earlier_instances(out_dir / MANIFEST, header)
    out_dir.mkdir(parents=True, exist_ok=True)
    instances = []
    for index in range(start, start + n):
        name = f"{prefix}_{index:04d}"
        instance = cls.generate(params, instance_rng(seed, index), name)
        path = out_dir / f"{name}.mps.gz"
        if writer == "arrays":
            instance.write(path)
        else:
            write_with_scip(instance, path)
        entry = {"name": name, "file": path.name, "index": index}
        instances.append({**entry, **_entry(instance, path)})
    written = {entry["file"] for entry in instances}
    instances += [entry for entry in earlier if entry["file"] not in written]
    manifest = {**header, "instances": sorted(instances, key=lambda e: (e["index"], e["file"]))}
    (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def _entry(instance, path: Path) -> dict:
    """The manifest's record of ``instance`` written at ``path``: its sizes, bytes and SHA-256."""
    content = path.read_bytes()
    return {
        "n_vars": instance.n_vars,
        "n_rows": instance.n_rows,
        "n_nonzeros": int(instance.matrix.nnz),
        "bytes": len(content),
        "sha256": hashlib.sha256(content).hexdigest(),
    }


def _earlier_instances(path: Path, header: dict) -> list:
    """The instances a manifest already at ``path`` records, when it is of the same set.

    A set is extended (``start`` > 0) into the folder of its first instances, so the manifest
    keeps their entries.

    Raises
    ------
    ValueError
        The manifest is unreadable, or of another class, preset, seed or parameters: one folder
        holds one set.
    """
    if not path.exists():
        return []
    try:
        manifest = json.loads(path.read_text())
        # A manifest without a writer is of a set written before the arrays' writer: by SCIP.
        recorded = {key: manifest[key] for key in header if key != "writer"}
        recorded["writer"] = manifest.get("writer", "scip")
        instances = list(manifest["instances"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise InvalidArgumentError(
            f"{path}: not a readable manifest of a generated set ({error})"
        ) from None
    different = [key for key in header if recorded[key] != header[key]]
    if different:
        raise InvalidArgumentError(
            f"{path}: the folder holds another set ({', '.join(different)} differ: "
            + "; ".join(f"{key} {recorded[key]!r} there, {header[key]!r} here" for key in different)
            + "); extend a set with its own class, preset, seed and parameters, or write to "
            "another out_dir"
        )
    return instances
