"""Write the API reference's pages at build time, one per module, found by walking the packages.

No module path is typed by hand: whatever modules the packages hold when the docs are built
get a page (``automodule`` of its documented members) under ``api/``, a folder of the build
that is not checked in, and ``api/index.rst`` lists them package by package.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import shutil
from pathlib import Path

#: The packages documented, in the order of the layers from the bottom up.
PACKAGES = ("lns", "heuristics", "instances", "learning")
#: Pages written into the source folder, relative to it.
FOLDER = "api"


def module_names(package: str) -> list[str]:
    """``package`` and every module below it, sorted; private modules (``_name``) are left out."""
    root = importlib.import_module(package)
    found = [package]
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            found.append(info.name)
    return sorted(found)


def exported(name: str) -> list[tuple[str, str]]:
    """``(directive, name)`` of each class and function that module ``name`` exports through
    ``__all__`` but loads on first use (PEP 562: ``lns.solve`` is ``lns.api.solve``), which
    ``automodule`` does not see, so that the public name has its own entry."""
    module = importlib.import_module(name)
    found = []
    for attribute in getattr(module, "__all__", ()):
        if attribute in vars(module):
            continue
        value = getattr(module, attribute)
        if inspect.isclass(value):
            found.append(("autoclass", attribute))
        elif inspect.isfunction(value):
            found.append(("autofunction", attribute))
    return found


def module_page(name: str) -> str:
    """The reStructuredText page of module ``name``."""
    title = f"``{name}``"
    page = f"{title}\n{'=' * len(title)}\n\n.. automodule:: {name}\n"
    exports = exported(name)
    if exports:
        page += "\nExported names\n--------------\n\n"
        for directive, attribute in exports:
            page += f".. {directive}:: {name}.{attribute}\n\n"
    return page


def index_page(modules: dict[str, list[str]]) -> str:
    """The reference's start page: one table of contents per package."""
    lines = [
        "API reference",
        "=============",
        "",
        "Generated from the docstrings when the documentation is built: one page per module.",
        "The public entry points are :func:`lns.solve` and the names ``lns`` exports;",
        "selectors are found by name in :data:`lns.registry.SELECTORS`.",
        "",
    ]
    for package, names in modules.items():
        lines += [f".. toctree::\n   :caption: {package}\n   :maxdepth: 1\n"]
        lines += [f"   {name}" for name in names]
        lines.append("")
    return "\n".join(lines)


def write_pages(app) -> None:
    """Replace ``api/`` in the source folder with a page per module and the index."""
    folder = Path(app.srcdir) / FOLDER
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    modules = {package: module_names(package) for package in PACKAGES}
    for name in (name for names in modules.values() for name in names):
        (folder / f"{name}.rst").write_text(module_page(name))
    (folder / "index.rst").write_text(index_page(modules))


def setup(app):
    app.connect("builder-inited", write_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
