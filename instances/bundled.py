"""The MIPLIB instances shipped with the package (see ``SOURCES.md`` in ``instances/miplib``
and ``instances/miplib2017``)."""

from __future__ import annotations

from pathlib import Path

BUNDLED_DIR = Path(__file__).parent / "miplib"
MIPLIB2017_DIR = Path(__file__).parent / "miplib2017"


def resolve_instance(name: str | Path) -> Path:
    """An existing path as it is; else the bundled instance with that file name or stem.

    ``"air05"``, ``"air05.mps.gz"`` and ``"instances/miplib/air05.mps.gz"`` all name the same
    file; the MIPLIB 2017 set is searched after the older one (``"50v-10"``). A name that
    matches nothing is returned unchanged, so that reading it reports the missing file.
    """
    path = Path(name)
    if path.exists():
        return path
    for folder in (BUNDLED_DIR, MIPLIB2017_DIR):
        for candidate in (folder / path.name, *sorted(folder.glob(f"{path.name}.*"))):
            if candidate.is_file() and candidate.suffix not in (".solu", ".md"):
                return candidate
    return path
