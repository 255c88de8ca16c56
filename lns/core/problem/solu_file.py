"""Known optimal (or best known) objective values from ``.solu`` files.

The format is SCIP's and MIPLIB's: lines ``=opt=  name  value``, ``=best=  name
value``, ``=inf=  name`` or ``=unkn=  name``.
"""

from __future__ import annotations

from pathlib import Path

from lns.core.problem.mip import instance_name


def read_solu(path: str | Path) -> dict:
    """Map instance name -> ``(kind, value)``, kind ``"opt"``, ``"best"``, ``"inf"`` or ``"unkn"``.

    ``value`` is ``None`` for ``inf`` and ``unkn`` entries.
    """
    entries = {}
    for line in Path(path).read_text().splitlines():
        parts = line.split()
        if len(parts) < 2 or not parts[0].startswith("="):
            continue
        kind = parts[0].strip("=")
        value = float(parts[2]) if kind in ("opt", "best") and len(parts) > 2 else None
        entries[parts[1]] = (kind, value)
    return entries


def known_objective(instance: str | Path) -> float | None:
    """The optimal or best known value of ``instance`` from a ``.solu`` file in its folder."""
    instance = Path(instance)
    for solu in sorted(instance.parent.glob("*.solu")):
        kind, value = read_solu(solu).get(instance_name(instance), (None, None))
        if value is not None:
            return value
    return None
