"""What collected CL-LNS samples cost, and how well a model ranks them: the figures of
``docs/cl_lns.md`` ("The sampled expert") read from ``lns-collect`` folders.

For each folder: its instances, samples and usable samples (at least one positive and one
negative, what InfoNCE trains on), the collection seconds (each file records its wall clock:
start, features, expert) and the seconds and core-seconds per usable sample; for a sampled
collection, per proposal, how many samples' best candidate it drew. With ``--checkpoint``, the
model's mean top-k recall on the folder's samples (:func:`learning.train.top_k_recall`: the share
of a sample's first positive among the ``k`` top-scored variables), ``--validation-of`` restricting
it to the instance files a checkpoint held out in its training::

    python benchmarks/expert_data.py data/cl_lns/lb --cores 1
    python benchmarks/expert_data.py data/cl_lns/mvc1000_sampled --cores 2
    python benchmarks/expert_data.py data/cl_lns/lb_gen --checkpoint runs/mvc_sampled1000.pt
    python benchmarks/expert_data.py data/cl_lns/mvc1000_sampled --checkpoint runs/mvc_lb500.pt \
        --validation-of runs/mvc_sampled1000.pt
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import numpy as np


def cost(files: list, seconds: float, cores: int) -> dict:
    """Samples, usable samples, and seconds and core-seconds per usable sample."""
    samples = [s for data in files for s in data["samples"]]
    usable = sum(len(s["positives"]) > 0 and len(s["negatives"]) > 0 for s in samples)
    per_sample = seconds / usable if usable else float("inf")
    return {
        "samples": len(samples),
        "usable": usable,
        "s per usable sample": per_sample,
        "core-s per usable sample": per_sample * cores,
    }


def proposals(files: list) -> dict:
    """Per proposal: samples whose best candidate it drew, its positives and negatives."""
    samples = [s for data in files for s in data["samples"]]
    best = Counter(s["positive_proposals"][0] for s in samples if s.get("positive_proposals"))
    positive = Counter(name for s in samples for name in s.get("positive_proposals", []))
    negative = Counter(name for s in samples for name in s.get("negative_proposals", []))
    return {
        f"{name}: best, positives, negatives": [best[name], positive[name], negative[name]]
        for name in sorted(set(positive) | set(negative))
    }


def recall(paths: list, checkpoint: str | Path) -> float:
    """The mean top-k recall of ``checkpoint`` (a path or a shipped name) on the samples of
    ``paths``."""
    import torch

    from learning.checkpoint import load_checkpoint
    from learning.dataset import load_samples
    from learning.selector import resolve_checkpoint
    from learning.train import graph_logits, top_k_recall

    model, contents = load_checkpoint(resolve_checkpoint(checkpoint))
    samples = load_samples(paths, 0, contents["features"]["variable"])
    with torch.no_grad():
        values = [top_k_recall(graph_logits(model, [s])[0], s.positives) for s in samples]
    return float(np.mean(values)) if values else float("nan")


def summary(folder: Path, cores: int) -> dict:
    """:func:`cost` and :func:`proposals` of the instance files of ``folder``; the samples'
    graphs are dropped as each file is read, so a large collection fits in memory."""
    from learning.collect import load_instance_file

    files, seconds = [], 0.0
    for path in sorted(folder.glob("*.pt")):
        data = load_instance_file(path)
        seconds += float(data["collect_time"])
        keep = ("positives", "negatives", "positive_proposals", "negative_proposals")
        samples = [{key: s[key] for key in keep if key in s} for s in data["samples"]]
        files.append({"samples": samples})
    return {
        "instances": len(files),
        "seconds": seconds,
        **cost(files, seconds, cores),
        **proposals(files),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="lns-collect output folders")
    parser.add_argument("--cores", type=int, default=1, help="cores the collection used")
    parser.add_argument("--checkpoint", help="a model whose top-k recall to measure")
    parser.add_argument(
        "--validation-of", help="a checkpoint: the recall reads only the files it held out"
    )
    args = parser.parse_args()
    for folder in args.folders:
        row = summary(folder, args.cores)
        if args.checkpoint:
            paths = sorted(folder.glob("*.pt"))
            if args.validation_of:
                from learning.checkpoint_file import read_checkpoint

                training = read_checkpoint(Path(args.validation_of))["training"]
                held_out = set(training["validation_files"])
                paths = [p for p in paths if p.name in held_out]
            row["recall files"] = len(paths)
            row["recall"] = recall(paths, args.checkpoint)
        print(json.dumps({"folder": str(folder), **row}, indent=1))


if __name__ == "__main__":
    main()
