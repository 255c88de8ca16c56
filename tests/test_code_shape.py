"""The shape of the code: no function of the packages, the benchmarks and the documentation's
extensions is longer than :data:`MAX_LINES`.

A function's length is its lines from ``def`` to its last line, less its docstring's lines;
comments and blank lines inside count. Nested functions count in the function that holds them
and again on their own. The tests in `tests/` are not checked.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PACKAGES = ("lns", "heuristics", "learning", "instances", "configs", "benchmarks", "docs/_ext")

#: The longest a function of the packages may be, in lines without its docstring.
MAX_LINES = 60


def docstring_lines(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """How many lines the docstring of ``function`` spans (0 without one)."""
    first = function.body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        assert first.end_lineno is not None
        return first.end_lineno - first.lineno + 1
    return 0


def function_length(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of ``function`` from ``def`` (decorators excluded) to its end, less the docstring."""
    assert function.end_lineno is not None
    return function.end_lineno - function.lineno + 1 - docstring_lines(function)


def long_functions(source: str, max_lines: int = MAX_LINES) -> list[tuple[str, int, int]]:
    """``(name, line, length)`` of each function in ``source`` longer than ``max_lines``."""
    return [
        (node.name, node.lineno, function_length(node))
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and function_length(node) > max_lines
    ]


def package_files() -> list[Path]:
    """Every Python file of the packages."""
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def test_the_length_counts_the_body_without_the_docstring():
    source = (
        'def f(x):\n    """One.\n\n    Two.\n    """\n' + "    x += 1\n" * 59 + "    return x\n"
    )
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    assert function_length(function) == 61  # the def, 59 increments and the return
    assert long_functions(source) == [("f", 1, 61)]
    assert long_functions(source.replace("    x += 1\n", "", 1)) == []


def test_nested_functions_are_checked_on_their_own():
    inner = "    def g():\n" + "        pass\n" * 61
    assert [name for name, *_ in long_functions(f"def f():\n{inner}")] == ["f", "g"]


def test_no_function_of_the_packages_is_longer_than_the_limit():
    found = [
        f"{path.relative_to(ROOT)}:{line} {name} has {length} lines"
        for path in package_files()
        for name, line, length in long_functions(path.read_text(encoding="utf-8"))
    ]
    assert not found, f"longer than {MAX_LINES} lines:\n" + "\n".join(found)


#: Built-in exceptions the packages do not raise themselves: their errors are ``LNSError``s
#: (:mod:`lns.core.errors`), with ``ValueError`` or ``TypeError`` as a base where callers rely
#: on it.
BARE_ERRORS = {"Exception", "ValueError", "TypeError", "RuntimeError", "KeyError", "OSError"}


def bare_raises(source: str) -> list[tuple[str, int]]:
    """``(name, line)`` of each ``raise Name(...)`` in ``source`` of a built-in error."""
    return [
        (node.exc.func.id, node.lineno)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Raise)
        and isinstance(node.exc, ast.Call)
        and isinstance(node.exc.func, ast.Name)
        and node.exc.func.id in BARE_ERRORS
    ]


def test_a_bare_raise_is_found():
    assert bare_raises("def f():\n    raise ValueError('x')\n") == [("ValueError", 2)]
    assert bare_raises("def f():\n    raise InvalidArgumentError('x')\n") == []


def test_every_deliberate_error_is_an_lns_error():
    found = [
        (str(path.relative_to(ROOT)), name, line)
        for path in package_files()
        for name, line in bare_raises(path.read_text())
    ]
    assert not found, found
