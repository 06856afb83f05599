"""Markdown from contributors -> sanitised HTML (rendered, then cleaned with nh3).

Contributed text is checked against :mod:`jouleboard.core.markdown_limits` when it is read
(registries by validate, content/about.md by build), so the renderer only sees text it
handles in linear time; :func:`render_markdown` checks the per-paragraph limits again.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from jouleboard.core.markdown_limits import markdown_issues

# markdown and nh3 are imported by the first text rendered: a rebuild that takes every text
# it shows from the last build's renders never imports them (markdown is 0.02 s of imports).
if TYPE_CHECKING:
    import markdown as md

_TAGS = {
    "a",
    "abbr",
    "b",
    "blockquote",
    "br",
    "code",
    "em",
    "h2",
    "h3",
    "h4",
    "hr",
    "i",
    "li",
    "ol",
    "p",
    "pre",
    "strong",
    "sub",
    "sup",
    "table",
    "tbody",
    "td",
    "th",
    "thead",
    "tr",
    "ul",
}
_ATTRIBUTES = {
    "a": {"href", "title"},
    "abbr": {"title"},
    "td": {"align"},
    "th": {"align"},
    "h2": {"id"},
    "h3": {"id"},
    "h4": {"id"},
}


class MarkdownRefused(ValueError):
    """Text that reached the renderer without the check its source must make (a bug)."""


_converters = threading.local()


def _converter() -> md.Markdown:
    """This thread's converter, reset for a new text. Making one builds its ~30 patterns:
    at 100,000 configurations the plan's 4,300 texts spent 3 of their 4 s making them."""
    converter: md.Markdown | None = getattr(_converters, "markdown", None)
    if converter is None:
        import markdown as md

        # toc gives headings ids from their text, so sections can be linked to.
        converter = md.Markdown(extensions=["tables", "toc"], output_format="html")
        _converters.markdown = converter
    return converter.reset()


def render_markdown(text: str) -> str:
    """Safe HTML for ``text``: no script, no event handlers, links only to http(s)/mailto/
    relative targets, external links marked ``rel="noopener noreferrer nofollow"``.
    Headings get ids from their text.

    Raises :class:`MarkdownRefused` for text nested past the limits of
    :mod:`jouleboard.core.markdown_limits` (checked per paragraph, so text joined from checked
    parts, like the changelog, passes).

    The HTML is a pure function of the text (and of the markdown and nh3 versions): a text
    rendered once in a process is not rendered again, nor one an earlier process rendered
    and kept (:func:`take_rendered`)."""
    html = _rendered.get(text)
    if html is None:
        html = _render(text)
        if len(_rendered) >= _RENDERED_CAP:  # (serve, after many edits of descriptions)
            _rendered.clear()
        _rendered[text] = html
    if _used is not None:
        _used.add(text)
    return html


# Each text rendered in this process, with its HTML; and, between take_rendered and
# rendered_since, the texts asked for (a build's: what it keeps for the next process).
_rendered: dict[str, str] = {}
_RENDERED_CAP = 20_000  # texts (the 100,000-configuration data renders ~4,300)
_used: set[str] | None = None


def take_rendered(earlier: dict[str, str]) -> None:
    """Take ``earlier``'s renders, an earlier process's (made by the same code and versions:
    jouleboard/engine/kept_parts.py), and start noting the texts asked for."""
    global _used
    for text, html in earlier.items():
        _rendered.setdefault(text, html)
    _used = set()


def rendered_since() -> dict[str, str]:
    """The texts asked for since :func:`take_rendered`, with their HTML (to keep for the next
    process); stops noting them."""
    global _used
    used, _used = _used or set(), None
    return {text: _rendered[text] for text in sorted(used) if text in _rendered}


def _render(text: str) -> str:
    import nh3

    issues = markdown_issues(text, structure_only=True)
    if issues:
        raise MarkdownRefused("; ".join(f"{i.rule}: {i}" for i in issues))
    html = _converter().convert(text)
    return nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
