"""The test run itself: a hanging test fails alone (pytest-timeout), and markers are registered."""

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_a_hanging_test_fails_alone_and_the_run_goes_on(tmp_path):
    (tmp_path / "test_hang.py").write_text(
        textwrap.dedent("""
        import threading

        def test_hangs():
            threading.Event().wait()

        def test_after_the_hang():
            assert True
    """)
    )
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-c",
            str(ROOT / "pyproject.toml"),
            "--rootdir",
            str(tmp_path),
            "-o",
            "timeout=2",
            str(tmp_path / "test_hang.py"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "1 failed, 1 passed" in run.stdout and "Timeout" in run.stdout, run.stdout


def test_the_default_timeout_and_the_slow_marker_are_configured(pytestconfig):
    assert float(pytestconfig.getini("timeout")) == 120
    assert any(marker.startswith("slow:") for marker in pytestconfig.getini("markers"))
