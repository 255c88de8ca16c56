"""The layers point one way: core <- selectors and instances <- learning <- apps, and inside
the core: its root modules <- problem <- solvers <- their SCIP and CP-SAT parts <- search <-
parallel portfolio and baselines. No module imports itself through others.

Every import of a project module is read from the source (imports inside functions too,
since a lazy import is still a dependency), and an import of a higher layer, or of a
sibling package of the same layer, fails the test with the file and line. The imports
between modules make a graph; a cycle in it (its strongly connected components, found with
Tarjan's algorithm) fails the test with the cycle's files and lines.
"""

from __future__ import annotations

import ast
import collections
import itertools
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
#: The layers inside the core, from the bottom up: ``"lns.core"`` stands for its root modules
#: (errors, stop signals, child processes).
CORE_LAYERS = (
    ("lns.core",),
    ("lns.core.problem",),
    ("lns.core.solvers",),
    ("lns.core.solvers.scip", "lns.core.solvers.cpsat"),
    ("lns.core.search",),
    ("lns.core.parallel", "lns.core.baselines"),
)


def layer_of(module: str, layers: tuple = LAYERS) -> tuple[int, str]:
    """The layer index and the layer's package that ``module`` belongs to (longest prefix wins)."""
    best = None
    for index, packages in enumerate(layers):
        for package in packages:
            if module == package or module.startswith(package + "."):
                if best is None or len(package) > len(best[1]):
                    best = (index, package)
    if best is None:
        raise ValueError(f"{module} is in no layer")
    return best


def import_statements(source: str, module: str) -> list[tuple[int, str, list[str]]]:
    """``(line, module, names)`` of each import of a project module in ``source``: ``names`` are
    those of ``from module import names`` (empty for ``import module``); relatives resolved."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = module.split(".")[: -node.level]
                base = ".".join(parent + ([base] if base else []))
            found.append((node.lineno, base, [alias.name for alias in node.names]))
    return [(line, name, names) for line, name, names in found if name.split(".")[0] in PACKAGES]


def imported_modules(source: str, module: str) -> list[tuple[int, str]]:
    """``(line, module)`` of each import of a project module in ``source`` (relatives resolved)."""
    return [(line, name) for line, name, _ in import_statements(source, module)]


def _in_core(module: str) -> bool:
    return module == "lns.core" or module.startswith("lns.core.")


def violations(source: str, module: str) -> list[str]:
    """The imports of ``module`` (given as its ``source``) that point up or sideways: between
    the layers of :data:`LAYERS` (the apps on top may import each other) and, from one module
    of the core to another, between those of :data:`CORE_LAYERS`."""
    own_layer, own_package = layer_of(module)
    wrong = []
    for line, name in imported_modules(source, module):
        layer, package = layer_of(name)
        sideways = layer == own_layer and package != own_package and layer < len(LAYERS) - 1
        if layer > own_layer or sideways or (_in_core(module) and _against_core(module, name)):
            wrong.append(f"{module}:{line} imports {name}")
    return wrong


def _against_core(module: str, name: str) -> bool:
    """Whether the import of ``name`` by ``module`` (both in the core) points up or sideways."""
    if not _in_core(name):
        return False
    own_layer, own_package = layer_of(module, CORE_LAYERS)
    layer, package = layer_of(name, CORE_LAYERS)
    return layer > own_layer or (layer == own_layer and package != own_package)


def project_modules() -> list[tuple[str, Path]]:
    modules = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            modules.append((".".join(parts[:-1] if parts[-1] == "__init__" else parts), path))
    return modules


def import_graph(sources: dict[str, str]) -> dict[str, dict[str, int]]:
    """``{module: {imported module: line}}`` between the modules of ``sources`` (``{module:
    source}``); ``from package import name`` counts as an import of ``package.name`` where that
    is a module, else of ``package``."""
    graph: dict[str, dict[str, int]] = {}
    for module, source in sources.items():
        edges = graph.setdefault(module, {})
        for line, name, names in import_statements(source, module):
            targets = [f"{name}.{n}" for n in names if f"{name}.{n}" in sources]
            if len(targets) < len(names) or not names:
                targets.append(name)
            for target in targets:
                if target in sources and target != module:
                    edges.setdefault(target, line)
    return graph


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def a_cycle(graph: dict[str, dict[str, int]], component: list[str]) -> str:
    """A shortest cycle through the first module of ``component``, as ``module:line -> ...``."""
    members, start = set(component), component[0]
    came_from: dict[str, str | None] = {start: None}
    queue = collections.deque([start])
    while queue:
        node = queue.popleft()
        if start in graph[node]:
            break
        for target in sorted(graph[node]):
            if target in members and target not in came_from:
                came_from[target] = node
                queue.append(target)
    path = [node]
    while (before := came_from[path[-1]]) is not None:
        path.append(before)
    ring = path[::-1] + [start]
    return " -> ".join(f"{a}:{graph[a][b]}" for a, b in itertools.pairwise(ring)) + f" -> {start}"


def import_cycles(sources: dict[str, str]) -> list[str]:
    """A cycle of imports (lazy ones included) for each strongly connected group of modules."""
    graph = import_graph(sources)
    return [a_cycle(graph, component) for component in strongly_connected(graph)]


def test_every_import_points_down():
    wrong = [v for module, path in project_modules() for v in violations(path.read_text(), module)]
    assert not wrong, "imports against the layering:\n" + "\n".join(wrong)


def test_no_module_imports_itself_through_others():
    cycles = import_cycles({module: path.read_text() for module, path in project_modules()})
    assert not cycles, "import cycles (module:line of each import):\n" + "\n".join(cycles)


def test_an_import_cycle_is_reported_with_its_lines():
    sources = {
        "lns.core.search.params": "import numpy\nfrom lns.core.search.start import make_start\n",
        "lns.core.search.start": "def make():\n    from lns.core.solvers.cpsat import racer\n",
        "lns.core.solvers.cpsat": "",
        "lns.core.solvers.cpsat.racer": "from lns.core.search import params\n",
        "lns.core.search": "",
        "lns.core.problem.mip": "from lns.core.errors import LNSError\n",
        "lns.core.errors": "",
    }
    assert import_cycles(sources) == [
        "lns.core.search.params:2 -> lns.core.search.start:2 -> "
        "lns.core.solvers.cpsat.racer:1 -> lns.core.search.params"
    ]
    del sources["lns.core.solvers.cpsat.racer"]
    assert import_cycles(sources) == []


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
        ("lns.core.solvers.lp", "from ... import api\n"),
        ("lns.core.problem.mip", "from lns.core.solvers.protocol import SolveStatus\n"),
        ("lns.core.solvers.cpsat.racer", "from lns.core.parallel.worker import detach\n"),
        ("lns.core.solvers.scip.subsolver", "from lns.core.solvers.cpsat import model\n"),
        ("lns.core.parallel.portfolio", "from lns.core.baselines.cpsat import run_cpsat\n"),
        ("lns.core.errors", "def f():\n    from lns.core.search.stop import StopReason\n"),
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
    assert (
        violations(
            "from lns.core.errors import LNSError\nfrom lns.core.solvers import lp\n"
            "from lns.core.search.params import SizeParams\n",
            "lns.core.parallel.worker",
        )
        == []
    )
    assert (
        violations("from lns.core.solvers.protocol import SolveStatus\n", "lns.core.solvers.lp")
        == []
    )
