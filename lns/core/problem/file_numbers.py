"""Refuse the numbers of a problem file that SCIP would misread.

SCIP's MPS reader converts every number with C's ``atof``, which never fails: a
coefficient ``notanumber`` becomes 0, ``1.5abc`` becomes 1.5, ``1d3`` becomes 1 and
``nan`` becomes NaN, and an ``UP`` bound without a value becomes 0, so the file
silently describes another problem. SCIP's LP reader reads ``nan`` as a number too.
:func:`check_file_numbers` reads the text once and raises :class:`ProblemReadError`
naming the file, the line, the entry and the value.

The pass is fast: one compiled regular expression per section skips runs of lines that
are certainly read right (names, then decimal numbers of moderate size); only the lines
it leaves are read field by field, the way SCIP's ``mpsinputReadLine`` splits them
(fixed-format name patching included), and judged exactly. On the ten largest MPS files
of ``instances/miplib`` and ``shared/instances/miplib2017`` it takes about half of
SCIP's own read time, decompression included (``benchmarks/test_problem_io.py``).

Covered: MPS (free and fixed, ``.gz`` too): COLUMNS (objective and matrix
coefficients, ``MARKER`` lines skipped), RHS (objective offset included), RANGES and
BOUNDS (``UP LO FX LI UI SC SI`` values, a missing value). LP: ``nan`` wherever it
stands outside a comment; SCIP itself rejects infinite coefficients and non-numeric
right-hand sides or bounds of LP files. Other formats get only the check of the read
problem (:func:`lns.core.problem.validation.problem_data_error`). Not covered: a fixed-format
MPS line whose names hold blanks and that also passes the fast expression.
"""

from __future__ import annotations

import gzip
import math
import re
from pathlib import Path

from lns.core.errors import ProblemReadError
from lns.core.problem.validation import SCIP_INFINITY

_DECIMAL = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_INFINITY_WORD = re.compile(rb"([+-]?)inf(?:inity)?", re.IGNORECASE)

# Expressions of the fast pass: possessive and atomic (Python >= 3.11), so that a line never
# backtracks; names are \S (a \f or \v sends the line to the exact reading; \S runs 2x faster
# than [^ \t\r\n]). _SMALL is below 1e19 in magnitude, _LARGE below 1e110.
_B = rb"[\t ]++"
_N = rb"\S++"
_MANTISSA = rb"(?:\d{1,10}+(?:\.\d*+)?+|\.\d++)"
_SMALL = rb"[+-]?+" + _MANTISSA + rb"(?:[eE](?:-\d++|\+?+(?:0++\d?+|\d)))?+"
_LARGE = _MANTISSA + rb"(?:[eE](?:-\d++|\+?+(?:0++\d{0,2}+|\d{1,2}+)))?+"
_COEFFICIENT = _N + _B + _SMALL
_RHS_ENTRY = _N + _B + rb"[+-]?+" + _LARGE
_BOUND_LINE = _B + _N + _B + _N + _B
_FORMS = {
    "COLUMNS": [
        _B + _N + _B + _COEFFICIENT + rb"(?:" + _B + _COEFFICIENT + rb")?+",
        _B + _N + _B + rb"'MARKER'[^\n]*+",
    ],
    "RHS": [_B + rb"(?:" + _N + _B + rb")?" + _RHS_ENTRY + rb"(?:" + _B + _RHS_ENTRY + rb")?+"],
    "BOUNDS": [
        _B + rb"(?:UP|UI)" + _BOUND_LINE + rb"(?:\+?+" + _LARGE + rb"|" + _SMALL + rb")",
        _B + rb"(?:LO|LI)" + _BOUND_LINE + rb"(?:-" + _LARGE + rb"|" + _SMALL + rb")",
        _B + rb"(?:FX|SC|SI)" + _BOUND_LINE + _SMALL,
        _B + rb"(?:FR|MI|PL|BV)(?:" + _B + _N + rb"){1,3}+",
    ],
}
_FORMS["RANGES"] = _FORMS["RHS"]


def _compile_run(forms: list) -> re.Pattern:
    """An expression matching a run of lines, each of one of ``forms``, a comment or blank."""
    pattern = rb"(?>(?:" + rb"|".join([*forms, rb"\*[^\n]*+", rb""]) + rb")[\t ]*+\r?+\n)*+"
    try:
        return re.compile(pattern)
    except (
        re.error
    ):  # Python 3.10: no atomic groups nor possessive quantifiers (slower, same result)
        for strong, plain in (
            (b"(?>", b"(?:"),
            (b"++", b"+"),
            (b"*+", b"*"),
            (b"?+", b"?"),
            (b"}+", b"}"),
        ):
            pattern = pattern.replace(strong, plain)
        return re.compile(pattern)


_GOOD_RUNS = {section: _compile_run(forms) for section, forms in _FORMS.items()}
_DATA_RUN = _compile_run([rb"[\t ][^\n]*+"])  # the lines of the other sections

# Fixed MPS: positions that must be blank, the value field that must hold a digit, name fields.
_FIXED_BLANKS = (12, 13, 22, 23, 36, 37, 38, 47, 48, 61, 62, 63)
_NAME_FIELDS = ((4, 12), (14, 22), (39, 47))
_VALUE_BOUNDS = {"UP", "LO", "FX", "LI", "UI", "SC", "SI"}

_LP_NAN = re.compile(
    rb"(?:^|(?<=[\s:<>=+\-\[\]*/^]))[+-]?nan(?=$|[\s:<>=+\-\[\]*/^(])", re.IGNORECASE | re.MULTILINE
)


def check_file_numbers(path: Path) -> None:
    """Raise :class:`ProblemReadError` if an MPS or LP file holds a number SCIP would misread.

    Parameters
    ----------
    path : pathlib.Path
        The problem file; ``.mps``, ``.lp`` and their ``.gz`` forms are read, others skipped.
    """
    suffixes = [s.lower() for s in path.suffixes[-2:]]
    gzipped = suffixes[-1:] == [".gz"]
    kind = (suffixes[:-1] if gzipped else suffixes[-1:])[-1:]
    if kind not in ([".mps"], [".lp"]):
        return
    try:
        text = gzip.decompress(path.read_bytes()) if gzipped else path.read_bytes()
    except (OSError, EOFError, gzip.BadGzipFile):
        return  # SCIP's own reader reports what is wrong with the file
    if kind == [".lp"]:
        _check_lp(path, text)
    else:
        _MpsCheck(path, text).run()


def _check_lp(path: Path, text: bytes) -> None:
    for match in _LP_NAN.finditer(text):
        line_start = text.rfind(b"\n", 0, match.start()) + 1
        if b"\\" not in text[line_start : match.start()]:
            line = text.count(b"\n", 0, match.start()) + 1
            raise ProblemReadError(
                f"{path}: line {line}: '{match.group().decode()}' is not a number"
            )


class _MpsCheck:
    """One pass over an MPS text: fast expressions per section, exact reading of the rest."""

    def __init__(self, path: Path, text: bytes):
        self.path, self.text = path, text
        self.sections: list[tuple[str, int, int]] = []  # (name, start, end) of each header line
        self._new_format_line: float | None = None
        self._integer_columns: set[str] | None = None
        self._counted = (0, 1)  # an offset and its line number, so that counting goes on from there

    def run(self) -> None:
        """Skip runs of lines the fast expressions accept; read the others (and headers) exactly."""
        text, position, section = self.text, 0, ""
        while position < len(text):
            # Every run pattern matches the empty string, so match() never returns None.
            position = _GOOD_RUNS.get(section, _DATA_RUN).match(text, position).end()  # type: ignore[union-attr]
            end = _line_end(text, position)
            raw = text[position:end]
            if raw[:1] not in b" \t\r*":  # a header line starts a new section
                section = (raw.split() or [b""])[0].decode(errors="replace")
                self.sections.append((section, position, end))
            else:
                self._check_line(section, position, raw)
            position = end + 1

    def _line_number(self, offset: int) -> int:
        start, line = self._counted if offset >= self._counted[0] else (0, 1)
        line += self.text.count(b"\n", start, offset)
        self._counted = (offset, line)
        return line

    def _check_line(self, section: str, offset: int, raw: bytes) -> None:
        if section not in _GOOD_RUNS or raw[:1] == b"*":
            return
        line = self._line_number(offset)
        fields = _scip_fields(raw, section, new_format=line >= self._first_new_format_line())
        if not fields:
            return
        entries = _bound_entries if section == "BOUNDS" else _row_entries
        for what, token, allowed, column in entries(section, fields, self):
            message = self.judge(what, token, allowed, column)
            if message:
                raise ProblemReadError(f"{self.path}: line {line}: {message}")

    def objective_name(self) -> str | None:
        """The objective row: OBJNAME's entry, else the first ``N`` row."""
        for k, (name, _, end) in enumerate(self.sections):
            if name in ("OBJNAME", "ROWS"):
                pattern = (
                    rb"^[ \t\r]+(\S+)" if name == "OBJNAME" else rb"^[ \t\r]+N\S*[ \t\r]+(\S+)"
                )
                stop = self.sections[k + 1][1] if k + 1 < len(self.sections) else len(self.text)
                found = re.compile(pattern, re.MULTILINE).search(self.text, end, stop)
                if found:
                    return found.group(1).decode(errors="replace")
        return None

    def integer_columns(self) -> set:
        """Names of the columns between ``'INTORG'`` and ``'INTEND'`` markers."""
        if self._integer_columns is None:
            self._integer_columns = set()
            blocks = re.finditer(
                rb"'INTORG'[^\n]*\n(.*?)^[^\n]*'INTEND'", self.text, re.DOTALL | re.MULTILINE
            )
            for block in blocks:
                names = re.findall(rb"(?m)^[ \t]+(\S+)", block.group(1))
                self._integer_columns.update(name.decode(errors="replace") for name in names)
        return self._integer_columns

    def _first_new_format_line(self) -> float:
        """The line from which SCIP stops treating lines as fixed format (``isnewformat``)."""
        if self._new_format_line is None:
            self._new_format_line = math.inf
            section = ""
            for number, raw in enumerate(self.text.split(b"\n"), start=1):
                if raw[:1] not in (b" ", b"\t", b"\r", b"", b"*"):
                    section = (raw.split() or [b""])[0].decode(errors="replace")
                elif raw[:1] != b"*" and _switches_to_new_format(raw, section):
                    self._new_format_line = number
                    break
        return self._new_format_line

    def judge(
        self, what: str, token: str | None, allowed: str, column: str | None = None
    ) -> str | None:
        """Why ``token`` cannot stand as ``what`` (``None`` if it can).

        ``allowed`` is ``"finite"``, ``"number"`` (infinite too), ``"lower"``, ``"upper"`` or
        ``"missing"`` (the value is absent).
        """
        if allowed == "missing":
            return f"{what} has no value (SCIP would take 0)"
        assert token is not None, "only a missing value has no token"
        value = _value(token)
        if value is None:
            return f"{what} is '{token}', not a decimal number (SCIP would misread it)"
        if allowed == "finite" and not abs(value) < SCIP_INFINITY:
            return (
                f"{what} is '{token}'; it must be finite (SCIP takes |value| >= 1e20 as infinite)"
            )
        if allowed == "lower" and value >= SCIP_INFINITY:
            return f"{what} is '{token}'; a lower bound must be below +infinity"
        if allowed == "upper" and value <= -SCIP_INFINITY:
            return f"{what} is '{token}'; an upper bound must be above -infinity"
        if allowed == "upper" and value == math.inf and column in self.integer_columns():
            return (
                f"{what} is '{token}': SCIP makes the integer column {column} binary with upper "
                f"bound 1e+20; write 1e+30 for no upper bound"
            )
        return None


def _line_end(text: bytes, start: int) -> int:
    end = text.find(b"\n", start)
    return len(text) if end < 0 else end


def _value(token: str) -> float | None:
    """The number ``token`` writes as a decimal or an infinity word, or ``None``."""
    raw = token.encode()
    if _DECIMAL.fullmatch(raw):
        return float(raw)
    word = _INFINITY_WORD.fullmatch(raw)
    if word:
        return -math.inf if word.group(1) == b"-" else math.inf
    return None


def _row_entries(section: str, fields: list, check: _MpsCheck):
    """``(what, token, allowed, column)`` of a COLUMNS, RHS or RANGES line read into ``fields``."""
    if section == "COLUMNS":
        pairs = fields[1:3], fields[3:5]
        for row, token in (pair for pair in pairs if len(pair) == 2):
            yield f"coefficient of column {fields[0]} in row {row}", token, "finite", None
        return
    if len(fields) in (2, 4):  # SCIP takes the set name as the missing field
        fields = ["", *fields]
    objective = check.objective_name() if section == "RHS" else None
    for row, token in (pair for pair in (fields[1:3], fields[3:5]) if len(pair) == 2):
        if row == objective:
            yield f"objective offset (RHS of row {row})", token, "finite", None
        else:
            yield f"{section} value of row {row}", token, "number", None


def _bound_entries(section: str, fields: list, check: _MpsCheck):
    """``(what, token, allowed, column)`` of a BOUNDS line read into ``fields``."""
    kind = fields[0]
    if kind not in _VALUE_BOUNDS or len(fields) < 3:
        return
    if len(fields) == 3 and set(fields[2]) <= set("0123456789."):
        column, token = fields[1], fields[2]  # SCIP takes the bound set name as missing
    elif len(fields) == 3:
        yield f"{kind} bound of column {fields[2]}", None, "missing", fields[2]
        return
    else:
        column, token = fields[2], fields[3]
    allowed = {"LO": "lower", "LI": "lower", "FX": "finite"}.get(kind, "upper")
    yield f"{kind} bound of column {column}", token, allowed, column


def _normalised(raw: bytes) -> tuple[bytearray, int]:
    """The line as SCIP holds it (tabs and carriage returns blank, padded to 80) and its length."""
    return bytearray(raw.replace(b"\t", b" ").replace(b"\r", b" ").ljust(80)), len(raw) + 1


def _fixed_format_decision(buf: bytearray, length: int, section: str) -> str:
    """SCIP's test of a data line: ``"patch"`` its names, ``"keep"`` or ``"switch"`` to free MPS."""
    for dollar in (14, 39):
        if buf[dollar] == ord("$") and buf[dollar - 1] == ord(" "):
            buf[dollar:] = b" " * (len(buf) - dollar)
            break
    if any(buf[i] != ord(" ") for i in _FIXED_BLANKS):
        return "switch"
    if any(chr(c).isdigit() for c in buf[24:36]) or length < 14:
        return "patch"
    return "switch" if section in _GOOD_RUNS else "keep"


def _switches_to_new_format(raw: bytes, section: str) -> bool:
    buf, length = _normalised(raw)
    return _fixed_format_decision(buf, length, section) == "switch"


def _scip_fields(raw: bytes, section: str, new_format: bool) -> list:
    """The fields SCIP's ``mpsinputReadLine`` finds on a data line (``[]``: marker or blank)."""
    buf, length = _normalised(raw)
    if not new_format and _fixed_format_decision(buf, length, section) == "patch":
        for begin, end in _NAME_FIELDS:
            _patch(buf, begin, end)
    tokens = [t.decode(errors="replace") for t in bytes(buf[1:]).split(b" ") if t]
    fields = tokens[:1]
    for token in tokens[1:5]:
        if token.startswith("$"):
            break
        fields.append(token)
    return [] if "'MARKER'" in fields[1:3] else fields


def _patch(buf: bytearray, begin: int, end: int) -> None:
    """SCIP's ``patchField``: blanks inside a fixed-format name field become ``_``."""
    while begin <= end and buf[end] == ord(" "):
        end -= 1
    while begin <= end and buf[begin] == ord(" "):
        begin += 1
    buf[begin : end + 1] = buf[begin : end + 1].replace(b" ", b"_")
