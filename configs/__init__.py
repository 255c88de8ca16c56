"""Hydra configuration files of the command-line apps (``lns-solve`` and the others)."""
from pathlib import Path

CONFIG_DIR = Path(__file__).parent
