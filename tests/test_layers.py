"""The layers point one way: core <- selectors and instances <- learning <- apps.

Every import of a project module is read from the source (imports inside functions too,
since a lazy import is still a dependency), and an import of a higher layer, or of a
sibling package of the same layer, fails the test with the file and line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Layers from the bottom up; a module may import its own package and the layers below.
LAYERS = (
    ("lns.core",),
    ("heuristics", "instances"),
    ("learning",),
    (
        "lns",
        "configs",
    ),  # the apps (lns.api, lns.registry, lns.cli, ...), which may import each other
)
PACKAGES = ("lns", "heuristics", "instances", "learning", "configs")


def layer_of(module: str) -> tuple[int, str]:
    """The layer index and the layer's package that ``module`` belongs to (longest prefix wins)."""
    best = None
    for index, packages in enumerate(LAYERS):
        for package in packages:
            if module == package or module.startswith(package + "."):
                if best is None or len(package) > len(best[1]):
                    best = (index, package)
    if best is None:
        raise ValueError(f"{module} is in no layer")
    return best


def imported_modules(source: str, module: str) -> list[tuple[int, str]]:
    """``(line, module)`` of each import of a project module in ``source`` (relatives resolved)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = module.split(".")[: -node.level]
                base = ".".join(parent + ([base] if base else []))
            found.append((node.lineno, base))
    return [(line, name) for line, name in found if name.split(".")[0] in PACKAGES]


def violations(source: str, module: str) -> list[str]:
    """The imports of ``module`` (given as its ``source``) that point up or sideways."""
    own_layer, own_package = layer_of(module)
    wrong = []
    for line, name in imported_modules(source, module):
        layer, package = layer_of(name)
        sideways = layer == own_layer and package != own_package and layer < len(LAYERS) - 1
        if layer > own_layer or sideways:
            wrong.append(f"{module}:{line} imports {name}")
    return wrong


def project_modules() -> list[tuple[str, Path]]:
    modules = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            modules.append((".".join(parts[:-1] if parts[-1] == "__init__" else parts), path))
    return modules


def test_every_import_points_down():
    wrong = [v for module, path in project_modules() for v in violations(path.read_text(), module)]
    assert not wrong, "imports against the layering:\n" + "\n".join(wrong)


@pytest.mark.parametrize(
    "module, source",
    [
        (
            "lns.core.search.loop",
            "def f():\n    from heuristics.random_selector import RandomSelector\n",
        ),
        ("heuristics.rins", "import learning.model\n"),
        ("heuristics.rins", "from instances.generators import mis\n"),
        ("learning.selector", "from lns.registry import make_selector\n"),
        ("lns.core.problem.mip", "from lns.api import solve\n"),
        ("lns.core.solvers.lp", "from .. import api\n"),
    ],
)
def test_an_upward_or_sideways_import_is_reported(module, source):
    assert len(violations(source, module)) == 1


def test_imports_down_and_within_a_package_are_allowed():
    assert (
        violations("from lns.core.problem.mip import Problem\nimport numpy\n", "heuristics.rins")
        == []
    )
    assert violations("from heuristics.sizing import fit_to_size\n", "heuristics.rins") == []
    assert (
        violations(
            "from heuristics.rins import RINS\nfrom lns.core.solvers import lp\n",
            "learning.collect",
        )
        == []
    )
    assert violations("from learning.selector import CLLNS\n", "lns.registry") == []
