"""What CL-LNS's expert data costs, and how well the shipped model ranks each expert's choices.

One instance (quick: an independent set of 60 nodes; full: a vertex cover of 1000 nodes, the paper's
size) is collected as
``lns-collect`` does (:func:`learning.collect.collect_files`) by each expert: Local Branching
(the paper's, 10 s per call in full mode) and the sampled expert (16 candidates, 2 processes in
full mode; :mod:`learning.sampled_expert`); the collection is what is timed. ``extra_info``:

- the samples, the usable ones (at least one positive and one negative, what InfoNCE trains
  on), seconds and core-seconds per usable sample;
- for the sampled expert, per proposal: how many samples' best candidate it drew, and how many
  positives and negatives;
- the mean top-k recall of the shipped model of the instance's class on the samples
  (:func:`learning.train.top_k_recall`: the share of a sample's first positive among the ``k``
  top-scored variables).

The same figures of whole collection folders: ``benchmarks/expert_data.py``.
"""

from __future__ import annotations

import pytest
from expert_data import cost, proposals, recall
from test_cl_lns_cost import shipped

from learning.collect import CollectConfig, collect_files, load_instance_file
from learning.sampled_expert import SampledConfig, SampledExpert

#: (instance, collection limits, sampled expert's settings) of each mode.
QUICK = (
    "mis-60",
    CollectConfig(
        iterations=2,
        initial_fraction=0.2,
        expert={"time_limit": 1.0},
        initial_time_limit=2.0,
        negative_time_limit=0.5,
        max_tries=6,
        max_failures=1,
    ),
    SampledConfig(candidates=4, workers=1, time_limit=1.0, node_limit=100),
)
FULL = (
    "mvc-1000",
    CollectConfig(
        iterations=5,
        initial_fraction=0.1,
        expert={"time_limit": 10.0},
        initial_solution_limit=3,
        negative_time_limit=1.0,
    ),
    SampledConfig(candidates=16, workers=2),
)


@pytest.mark.parametrize("expert", ["lb", "sampled"])
def test_expert_cost(benchmark, measure, mode, path_of, tmp_path, expert):
    name, config, sampled = mode.pick(QUICK, FULL)
    benchmark.group = f"expert data: {name}"
    out, instance = tmp_path / "samples", path_of(name)

    def collect():
        chosen = SampledExpert(sampled) if expert == "sampled" else None
        return collect_files([instance], out, config, seed=0, expert=chosen)

    def setup():
        for path in out.glob("*"):
            path.unlink()
        return (), {}

    paths = measure(collect, setup)
    files = [load_instance_file(path) for path in paths]
    seconds = sum(float(data["collect_time"]) for data in files)
    cores = (sampled.workers or 1) if expert == "sampled" else 1
    benchmark.extra_info.update(cost(files, seconds, cores), recall=recall(paths, shipped(name)))
    if expert == "sampled":
        benchmark.extra_info.update(proposals(files))
    assert all(data["expert"] == expert for data in files)
