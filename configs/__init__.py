"""Hydra configuration files of the command-line apps (``lns-solve`` and the others).

Importing this package also registers the configs generated from the code
(:mod:`configs.generated`).
"""

from pathlib import Path

CONFIG_DIR = Path(__file__).parent

from configs.generated import register_configs  # noqa: E402

register_configs()
