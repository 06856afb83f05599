"""Limits that keep markdown rendering linear, checked before any text reaches the renderer.

Python-Markdown is super-linear on some inputs (measured, issue 14): each unclosed ``[`` or
``](`` scans to the end of its paragraph (20,000 ``[`` took 52 s); every nesting level of
lists and quotes re-parses its content (3,000 levels: 215 s, 3.7 GB, then RecursionError);
each ``<`` that could open a tag is scanned up to the next ``>`` by the HTML parser, across
the whole text; each heading or rule inside a paragraph re-scans the
rest of it; and every inline match copies its paragraph. Each limit below bounds one of
these, so the work is at most (limit x text length). The check is a single pass, no
regular expression can backtrack, and nothing here imports the renderer (validate stays fast).

Rule ids (documented in docs/measurement-format.md): ``markdown.too-long``,
``markdown.too-deep``, ``markdown.too-many-tags``, ``markdown.too-many-breaks``,
``markdown.paragraph-too-long``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from jouleboard.core.problems import Problem

MAX_NESTING = 16  # lists and block quotes inside each other, on one line's prefix
MAX_OPEN_BRACKETS = 32  # '[' or a link's '(' open at once in one paragraph
MAX_TAGS = 64  # '<' that could open an HTML tag ('<a', '</', '<!', '<?') in one text
MAX_BREAKS = 32  # headings, rules and setext underlines in one paragraph
MAX_PARAGRAPH_CHARS = 20_000  # characters between two blank lines
ABOUT_MAX_BYTES = 100_000  # content/about.md

_TAB = 4  # Python-Markdown's tab length: one nesting level of indentation
_LIST_MARKER = re.compile(r"(?:[*+-]|[0-9]{1,9}[.)])(?: +|$)")
_TAG_OPEN = re.compile(r"<[A-Za-z/!?]")
# After the line's quote and list markers: a heading, a rule or a setext underline; each
# splits the paragraph it is in, and the rest of it is scanned again.
_BREAK_LINE = re.compile(r"(?:#|[-_*= ]+$)")
# A rule or underline ('- - -', '-') also reads as list markers: match it after quotes only.
_RULE_LINE = re.compile(r"[ >]*[-_*=][-_*= ]*$")


@dataclass(frozen=True, slots=True)
class MarkdownIssue:
    """One limit a markdown text exceeds, at a 1-based line."""

    rule: str
    message: str
    hint: str
    line: int = 1

    def __str__(self) -> str:
        return f"line {self.line}: {self.message} ({self.hint})"


def markdown_issues(
    text: str, max_chars: int | None = None, structure_only: bool = False
) -> list[MarkdownIssue]:
    """Every limit ``text`` exceeds (the first place for each rule); empty when it is safe
    to render. ``max_chars`` caps the whole text; ``structure_only`` checks only the limits
    that hold for each paragraph (what text joined from checked parts still meets)."""
    issues: list[MarkdownIssue] = []
    if max_chars is not None and len(text) > max_chars:
        issues.append(
            MarkdownIssue(
                "markdown.too-long",
                f"{len(text):,} characters, over the {max_chars:,} cap",
                "shorten it, or link to a longer text",
            )
        )
        return issues  # the other scans are linear, but say the first thing to fix
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    issues += _nesting_issues(lines)
    issues += _paragraph_issues(lines, structure_only)
    if not structure_only:
        tags = len(_TAG_OPEN.findall(text))
        if tags > MAX_TAGS:
            issues.append(
                MarkdownIssue(
                    "markdown.too-many-tags",
                    f"{tags} '<' that could open an HTML tag, over the {MAX_TAGS} cap",
                    "write '&lt;' or put a space after '<' where no tag is meant",
                )
            )
    return issues


def _nesting(line: str) -> tuple[int, str]:
    """Levels of lists and quotes a line opens (its markers '>', '-', '1.', and every four
    columns of indentation before them or past the one space that ends each marker), and
    the text after them."""
    line = line.expandtabs(_TAB)
    depth, spaces, i = 0, 0, 0
    while True:
        start = i
        while i < len(line) and line[i] == " ":
            i += 1
        spaces += i - start - (1 if depth and i > start else 0)
        if i < len(line) and line[i] == ">":
            depth, i = depth + 1, i + 1
            continue
        marker = _LIST_MARKER.match(line, i)
        if marker is None:
            break
        depth, i = depth + 1, marker.end()
        i -= len(marker.group(0)) - len(marker.group(0).rstrip(" "))  # spaces counted above
    # Indentation without a marker is a code block, not a level.
    return (depth + spaces // _TAB if depth else 0), line[i:]


def _nesting_issues(lines: list[str]) -> list[MarkdownIssue]:
    for number, line in enumerate(lines, start=1):
        depth, _ = _nesting(line)
        if depth > MAX_NESTING:
            return [
                MarkdownIssue(
                    "markdown.too-deep",
                    f"lists or quotes nested {depth} levels deep, over the {MAX_NESTING}-level cap",
                    f"nest at most {MAX_NESTING} levels",
                    number,
                )
            ]
    return []


def _paragraphs(lines: list[str]) -> list[tuple[int, list[str]]]:
    """Runs of non-blank lines with the 1-based number of their first line (a line of
    spaces is blank to Python-Markdown; one holding a tab is not)."""
    runs: list[tuple[int, list[str]]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip(" "):
            continue
        if runs and runs[-1][0] + len(runs[-1][1]) == number:
            runs[-1][1].append(line)
        else:
            runs.append((number, [line]))
    return runs


def _paragraph_issues(lines: list[str], structure_only: bool) -> list[MarkdownIssue]:
    found: dict[str, MarkdownIssue] = {}
    for first, run in _paragraphs(lines):
        if "markdown.too-deep" not in found:
            line = _bracket_overflow(run)
            if line is not None:
                found["markdown.too-deep"] = MarkdownIssue(
                    "markdown.too-deep",
                    f"more than {MAX_OPEN_BRACKETS} '[' or link '(' open at once",
                    "close each '[' and '(' or escape it as '\\[' and '\\('",
                    first + line,
                )
        breaks = sum(
            1 for line in run if _BREAK_LINE.match(_nesting(line)[1]) or _RULE_LINE.match(line)
        )
        if breaks > MAX_BREAKS and "markdown.too-many-breaks" not in found:
            found["markdown.too-many-breaks"] = MarkdownIssue(
                "markdown.too-many-breaks",
                f"{breaks} headings or rules in one paragraph, over the {MAX_BREAKS} cap",
                "put a blank line before each heading or rule",
                first,
            )
        chars = sum(len(line) for line in run) + len(run) - 1  # newlines between
        if (
            not structure_only
            and chars > MAX_PARAGRAPH_CHARS
            and "markdown.paragraph-too-long" not in found
        ):
            found["markdown.paragraph-too-long"] = MarkdownIssue(
                "markdown.paragraph-too-long",
                f"a paragraph of {chars:,} characters, over the {MAX_PARAGRAPH_CHARS:,} cap",
                "split it with blank lines",
                first,
            )
    return list(found.values())


def _bracket_overflow(run: list[str]) -> int | None:
    """0-based line of ``run`` where more than MAX_OPEN_BRACKETS '[' are open, or a link
    destination's '(' nest that deep; None when it never happens. An unclosed '[' stays
    open to the paragraph's end: that is how far the renderer scans for its ']'."""
    squares = parens = 0
    for index, line in enumerate(run):
        escaped = False
        previous = ""
        for ch in line:
            if escaped:
                escaped, previous = False, ""
                continue
            if ch == "\\":
                escaped = True
            elif ch == "[":
                squares += 1
            elif ch == "]" and squares:
                squares -= 1
            elif ch == "(" and (parens or previous == "]"):
                parens += 1  # a link destination, or a '(' inside one
            elif ch == ")" and parens:
                parens -= 1
            if squares > MAX_OPEN_BRACKETS or parens > MAX_OPEN_BRACKETS:
                return index
            previous = ch
    return None


def markdown_problems(
    text: str, file: str, pointer: str, max_chars: int | None = None
) -> list[Problem]:
    """:func:`markdown_issues` as located problems of ``file`` at ``pointer``."""
    return [
        Problem(file, pointer, issue.rule, f"line {issue.line}: {issue.message}", issue.hint)
        for issue in markdown_issues(text, max_chars)
    ]
