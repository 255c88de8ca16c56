"""Sphinx configuration: MyST pages, the API reference from the numpydoc docstrings, and the
benchmark figures drawn from the checked-in results (``_ext/``) at build time."""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path[:0] = [str(DOCS.parent), str(DOCS / "_ext")]

project = "learned-lns"
author = "learned-lns contributors"
copyright = "learned-lns contributors"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "api_pages",
    "benchmark_figures",
    "selector_options",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
root_doc = "index"

# MyST: anchors for the headings, so that pages link to sections (page.md#a-heading).
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath", "deflist"]

# autodoc: the documented members of each module, in source order.
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "none"

# numpydoc renders the sections; the members are documented by autodoc, not listed again.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

html_theme = "furo"
html_title = "learned-lns"
