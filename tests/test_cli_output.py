"""Where ``lns-solve`` writes (summary: stdout, logs: stderr, files: only if asked); its help."""

import dataclasses
import re
import subprocess
import sys

from omegaconf import OmegaConf

from configs import CONFIG_DIR
from lns.params import GROUPS
from lns.registry import SELECTORS

SUMMARY_KEYS = ["instance", "method", "status", "objective", "primal gap", "time", "feasible"]


def lns_solve(*arguments, cwd):
    return subprocess.run(
        [sys.executable, "-m", "lns.cli.solve", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_summary_on_stdout_logs_on_stderr_and_no_files(tmp_path):
    run = lns_solve("instance=p0201", "iteration_limit=2", "progress=none", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert [line.split("  ")[0].strip() for line in run.stdout.splitlines()] == SUMMARY_KEYS
    assert "[lns][INFO]" in run.stderr and "(initial)" in run.stderr
    assert list(tmp_path.iterdir()) == []  # no outputs/, .hydra/ or log file


def test_files_are_written_only_where_asked(tmp_path):
    run = lns_solve(
        "instance=p0201",
        "iteration_limit=1",
        "out=best.sol",
        "hydra.run.dir=run",
        "hydra.output_subdir=.hydra",
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best.sol", "run"]
    assert (tmp_path / "run" / ".hydra" / "config.yaml").is_file()


def test_help_has_a_line_for_every_option_and_selector(tmp_path):
    run = lns_solve("--help", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    options = set(OmegaConf.load(CONFIG_DIR / "solve.yaml")) - {"defaults", "hydra", *GROUPS}
    for option in options:
        assert re.search(rf"^\s+{option}=\S+\s+\S", run.stdout, re.MULTILINE), option
    for group, cls in GROUPS.items():  # a line per group of SolveParams, naming every field
        line = re.search(rf"^\s+{group}\.\*\s+(.*(\n\s{{20,}}\S.*)*)", run.stdout, re.MULTILINE)
        assert line, group
        for field in dataclasses.fields(cls):
            assert re.search(rf"\b{field.name}\b", line.group(1)), (group, field.name)
    for name in SELECTORS:
        assert re.search(rf"\b{name}\b", run.stdout), name
    assert list(tmp_path.iterdir()) == []
