"""The documentation has a page for every registered selector, and its pages name no module
path of the core (those move; the API reference is generated, ``docs/_ext/api_pages.py``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lns.registry import SELECTORS

DOCS = Path(__file__).resolve().parent.parent / "docs"


@pytest.mark.parametrize("name", sorted(SELECTORS))
def test_every_selector_has_a_page_with_its_settings(name):
    page = DOCS / "selectors" / f"{name}.md"
    assert page.is_file(), f"no page docs/selectors/{name}.md for the selector '{name}'"
    assert f"```{{selector-options}} {name}\n```" in page.read_text()


def test_the_written_pages_name_no_core_module_path():
    pages = [p for p in DOCS.rglob("*.md") if not p.is_relative_to(DOCS / "_build")]
    pages = [p for p in pages if p.parent.name not in ("api", "results")]
    found = [(p.name, m) for p in pages for m in re.findall(r"lns\.core\.\w+", p.read_text())]
    assert not found, found
