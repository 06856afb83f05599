"""The one escaping rule for every format the project publishes or prints.

Contributor strings (nicknames, task and GPU names, file names, notes) reach HTML pages,
SVG labels, XML feeds and sitemaps, JSON files, CSV downloads, markdown reports (a pull
request's job summary, the changelog) and the terminal. Each format has exactly one
function here; producers call it instead of escaping on their own:

- :func:`markup` -- HTML, SVG and XML text *and* attribute values: ``& < > " '`` become
  character references (the rule Jinja2's autoescape applies to templates) and characters
  XML 1.0 forbids are dropped, so the result is well-formed wherever it is placed.
- :func:`json_in_html` -- JSON text placed inside an HTML document.
- :func:`csv_cell` / :func:`csv_text` -- spreadsheet formula cells neutralised (OWASP).
- :func:`markdown_text` -- a string shown literally in markdown: one line, no syntax.
- :func:`text_line` -- a string shown on one terminal line.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence

from markupsafe import escape as _markupsafe_escape

from jouleboard.core.shapes import Scalar

# Characters XML 1.0 does not allow in a document (section 2.2): C0 controls except tab,
# newline and carriage return, lone surrogates, U+FFFE and U+FFFF. (Named as they are, not
# as the complement of what XML allows: that class took 4.6 ms to compile, in every command.)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def markup(value: object) -> str:
    """``value`` as HTML/SVG/XML text or a double- or single-quoted attribute value."""
    return str(_markupsafe_escape(_NOT_XML.sub("", str(value))))


def json_in_html(json_text: str) -> str:
    """JSON text safe inside an HTML element or attribute: no ``</script>``, no ``<!--``, no
    character reference, no line terminator JavaScript parsers before ES2019 choke on."""
    return (
        json_text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


# --- CSV --------------------------------------------------------------------------------

# A spreadsheet evaluates a cell whose text starts with =, +, -, @, a tab or a carriage
# return (OWASP, "CSV Injection"); a leading quote makes it text. Leading white space of any
# kind (no-break and ideographic spaces, line breaks) is skipped when checking, since some
# programs trim it before deciding: one match, ``\s`` being what str.isspace() calls white
# space (a tab or a carriage return is white space, so it counts only as the first
# character).
_FORMULA = re.compile(r"[\t\r]|\s*[=+@-]")


def csv_cell(value: Scalar) -> Scalar:
    """A CSV cell: numbers (and None, written empty) unchanged; text that a spreadsheet
    would run as a formula gets a leading ``'``."""
    if isinstance(value, str) and _FORMULA.match(value):
        return "'" + value
    return value


def csv_text(columns: Sequence[str], records: Sequence[Mapping[str, Scalar]]) -> str:
    """CSV with a header row, ``\\n`` line ends, every text cell through :func:`csv_cell`; a
    column a record lacks is empty, and a record with a field that is no column is an error,
    as csv.DictWriter has them (whose check of each row against a list took a third of the
    time)."""
    known = frozenset(columns)
    for row in records:
        if extra := row.keys() - known:
            raise ValueError(f"dict contains fields not in fieldnames: {sorted(extra)}")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([csv_cell(row.get(column, "")) for column in columns] for row in records)
    return out.getvalue()


# --- one-line text ----------------------------------------------------------------------

# Control characters (C0, DEL, C1), line and paragraph separators, and the bidirectional
# controls that reorder what a reader sees ("Trojan Source"): never shown raw in a report.
_CONTROLS = re.compile(
    "[\u0000-\u001f\u007f-\u009f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(match: re.Match[str]) -> str:
    char = match.group(0)
    if char in _NAMED:
        return _NAMED[char]
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def text_line(value: object) -> str:
    """``value`` on one line: control, line-break and bidi characters become visible escapes
    (a newline in a file name shows as ``\\n``, it cannot start a forged line)."""
    return _CONTROLS.sub(_visible, str(value))


# --- markdown -----------------------------------------------------------------------------

# Escapes that both renderers in use understand: GitHub's (CommonMark + GFM) for the job
# summary and Python-Markdown for the changelog page. Backslash escapes work in both only
# for the characters below; the rest use character references, which CommonMark treats as
# literal text (never as syntax) and Python-Markdown passes through to the HTML.
_MD_INLINE = {
    "\\": "\\\\",
    "`": "\\`",
    "*": "\\*",
    "_": "\\_",
    "[": "\\[",
    "]": "\\]",
    "{": "\\{",
    "}": "\\}",
    "<": "&lt;",
    ">": "&gt;",
    "&": "&amp;",
    "|": "&#124;",
    "~": "&#126;",
    "@": "&#64;",
    "$": "&#36;",
}
_MD_INLINE_RE = re.compile("[" + re.escape("".join(_MD_INLINE)) + "]")
# GFM turns scheme:// and www. into links by themselves.
_MD_AUTOLINK = re.compile(r"(?<=[A-Za-z]):(?=\S)|(?<=www)\.", re.IGNORECASE)
# Text at the start of a line (a list item or table cell) that would open a block.
_MD_BLOCK_START = re.compile(r"^(\s*)([#+=-]|\d+(?=[.)]))")


def markdown_text(value: object) -> str:
    """``value`` as literal markdown text on one line: it cannot add a line, a table cell, a
    link, an image, emphasis, code or HTML to the document it is placed in."""
    text = _MD_INLINE_RE.sub(lambda m: _MD_INLINE[m.group(0)], str(value))
    text = _MD_AUTOLINK.sub(lambda m: "&#58;" if m.group(0) == ":" else "&#46;", text)
    text = _MD_BLOCK_START.sub(_block_start, text, count=1)
    return text_line(text)


def _block_start(match: re.Match[str]) -> str:
    lead, mark = match.group(1), match.group(2)
    if mark.isdigit():  # "1." or "1)" would start an ordered list: escape the dot
        return f"{lead}{mark}\\"
    return f"{lead}&#{ord(mark)};"
