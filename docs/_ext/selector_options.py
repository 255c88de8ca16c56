"""The ``selector-options`` directive: a registered selector's settings and reference, read
from :mod:`lns.registry` when the documentation is built, so that no default is typed twice.

::

    ```{selector-options} rins
    ```

gives the settings with their defaults (the constructor's), how to pass them from Python and
from the command line, and the class's docstring. It writes MyST Markdown: use it in ``.md``
pages.
"""

from __future__ import annotations

import json

from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective


def _override(value) -> str:
    """``value`` as a Hydra override writes it (a plain string bare, else JSON)."""
    return value if isinstance(value, str) else json.dumps(value)


def options_markdown(name: str) -> list[str]:
    """MyST Markdown of selector ``name``'s settings, usage and class documentation."""
    from lns.registry import selector_class, selector_defaults

    cls = selector_class(name)
    defaults = selector_defaults(name)
    target = f"{cls.__module__}.{cls.__qualname__}"
    lines = [f"Registered as `{name}`: {{py:class}}`{target}`.", ""]
    if defaults:
        lines += ["| setting | default |", "|---|---|"]
        lines += [f"| `{setting}` | `{default!r}` |" for setting, default in defaults.items()]
        setting, default = next(iter(defaults.items()))
        python = f"solve('air05', make_selector({name!r}, {setting}={default!r}))"
        shell = f"lns-solve instance=air05 selector={name} selector.{setting}={_override(default)}"
    else:
        lines.append("It has no settings.")
        python = f"solve('air05', {name!r})"
        shell = f"lns-solve instance=air05 selector={name}"
    return [
        *lines,
        "",
        "From Python and from the command line (any setting, here the first):",
        "",
        "```python",
        python,
        "```",
        "",
        "```bash",
        shell,
        "```",
        "",
        "```{eval-rst}",
        f".. autoclass:: {target}",
        "   :no-index:",
        "   :no-members:",
        "```",
        "",
    ]


class SelectorOptions(SphinxDirective):
    """``selector-options NAME``: see the module's docstring."""

    required_arguments = 1

    def run(self):
        from docutils import nodes

        lines = options_markdown(self.arguments[0])
        container = nodes.container()
        source = self.get_source_info()[0]
        self.state.nested_parse(StringList(lines, source=source), self.content_offset, container)
        return container.children


def setup(app):
    app.add_directive("selector-options", SelectorOptions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
