"""What expert data costs, and how well a model ranks another expert's neighborhoods.

``cost``: a row per ``lns-collect`` output folder: its expert, instances, samples, usable samples
(at least one positive and one negative, what InfoNCE trains on), the collection seconds the
files record (wall clock, summed over instances) and seconds per usable sample; with
``--cores`` (the processes each folder's collection used, in its order) also core-seconds per
usable sample.

``proposals``: for the sampled expert's folders, per proposal, how many samples' best candidate
it drew, and how many positives and negatives.

``recall``: the mean top-k recall (:func:`learning.train.top_k_recall`: the share of a sample's
first positive among the ``k`` top-scored variables) of each checkpoint on the samples of each
folder.

Example (the figures of learning/README.md, "The sampled expert")::

    python benchmarks/expert_cost.py cost /tmp/expert_measure/lb /tmp/expert_measure/sampled \\
        --cores 1 2
    python benchmarks/expert_cost.py proposals /tmp/expert_measure/sampled
    python benchmarks/expert_cost.py recall --models lb.pt sampled.pt \\
        --data /tmp/expert_measure/lb /tmp/expert_measure/sampled
"""

from __future__ import annotations

import argparse

import numpy as np


def cost(folders: list, cores: list | None) -> None:
    """Print the cost table of ``folders``."""
    from learning.collect import load_instance_file
    from learning.dataset import instance_files

    print(
        "| folder | expert | instances | samples | usable | collection s | s per usable sample "
        "| core-s per usable sample |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for position, folder in enumerate(folders):
        files = [load_instance_file(path) for path in instance_files(folder)]
        samples = [s for data in files for s in data["samples"]]
        usable = sum(len(s["positives"]) > 0 and len(s["negatives"]) > 0 for s in samples)
        seconds = sum(float(data["collect_time"]) for data in files)
        per_sample = seconds / usable if usable else float("inf")
        core_seconds = per_sample * cores[position] if cores else float("nan")
        experts = sorted({str(data.get("expert", "lb")) for data in files})
        print(
            f"| {folder} | {', '.join(experts)} | {len(files)} | {len(samples)} | {usable} "
            f"| {seconds:.1f} | {per_sample:.1f} | {core_seconds:.1f} |"
        )


def proposals(folders: list) -> None:
    """Print, per folder and proposal, the best candidates, positives and negatives it drew."""
    from collections import Counter

    from learning.collect import load_instance_file
    from learning.dataset import instance_files

    print("| folder | proposal | best candidate of a sample | positives | negatives |")
    print("|---|---|---:|---:|---:|")
    for folder in folders:
        samples = [s for p in instance_files(folder) for s in load_instance_file(p)["samples"]]
        best = Counter(s["positive_proposals"][0] for s in samples if s.get("positive_proposals"))
        positive = Counter(name for s in samples for name in s.get("positive_proposals", []))
        negative = Counter(name for s in samples for name in s.get("negative_proposals", []))
        for name in sorted(set(positive) | set(negative)):
            print(f"| {folder} | {name} | {best[name]} | {positive[name]} | {negative[name]} |")


def recall(models: list, folders: list) -> None:
    """Print the mean top-k recall of each checkpoint of ``models`` on each folder's samples."""
    import torch

    from learning.checkpoint import load_checkpoint
    from learning.dataset import instance_files, load_samples
    from learning.train import graph_logits, top_k_recall

    print("| model | " + " | ".join(folders) + " |")
    print("|---|" + "---:|" * len(folders))
    for path in models:
        model, checkpoint = load_checkpoint(path)
        columns = checkpoint["features"]["variable"]
        cells = []
        for folder in folders:
            samples = load_samples(instance_files(folder), 0, columns)
            with torch.no_grad():
                values = [top_k_recall(graph_logits(model, [s])[0], s.positives) for s in samples]
            cells.append(f"{np.mean(values):.3f} ({len(values)})" if values else "-")
        print(f"| {path} | " + " | ".join(cells) + " |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    cost_parser = commands.add_parser("cost")
    cost_parser.add_argument("folders", nargs="+")
    cost_parser.add_argument("--cores", nargs="+", type=int)
    proposals_parser = commands.add_parser("proposals")
    proposals_parser.add_argument("folders", nargs="+")
    recall_parser = commands.add_parser("recall")
    recall_parser.add_argument("--models", nargs="+", required=True)
    recall_parser.add_argument("--data", nargs="+", required=True)
    args = parser.parse_args(argv)
    if args.command == "cost":
        if args.cores and len(args.cores) != len(args.folders):
            parser.error("--cores needs one number per folder")
        cost(args.folders, args.cores)
    elif args.command == "proposals":
        proposals(args.folders)
    else:
        recall(args.models, args.data)


if __name__ == "__main__":
    main()
