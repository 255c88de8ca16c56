"""The MIPLIB instances shipped with the package (see ``instances/miplib/SOURCES.md``)."""

from __future__ import annotations

from pathlib import Path

BUNDLED_DIR = Path(__file__).parent / "miplib"
DEFAULT_INSTANCE = BUNDLED_DIR / "air05.mps.gz"


def resolve_instance(name: str | Path) -> Path:
    """An existing path as it is; else the bundled instance with that file name or stem.

    ``"air05"``, ``"air05.mps.gz"`` and ``"instances/miplib/air05.mps.gz"`` all name the same file.
    A name that matches nothing is returned unchanged, so that reading it reports the missing file.
    """
    path = Path(name)
    if path.exists():
        return path
    for candidate in (BUNDLED_DIR / path.name, *sorted(BUNDLED_DIR.glob(f"{path.name}.*"))):
        if candidate.is_file() and candidate.suffix != ".solu":
            return candidate
    return path
