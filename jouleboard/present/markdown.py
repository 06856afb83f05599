"""Markdown from contributors -> sanitised HTML (rendered, then cleaned with nh3)."""

from __future__ import annotations

import markdown as md
import nh3

_TAGS = {"a", "abbr", "b", "blockquote", "br", "code", "em", "h2", "h3", "h4", "hr", "i", "li",
         "ol", "p", "pre", "strong", "sub", "sup", "table", "tbody", "td", "th", "thead", "tr",
         "ul"}
_ATTRIBUTES = {"a": {"href", "title"}, "abbr": {"title"}, "td": {"align"}, "th": {"align"},
               "h2": {"id"}, "h3": {"id"}, "h4": {"id"}}


def render_markdown(text: str) -> str:
    """Safe HTML for ``text``: no script, no event handlers, links only to http(s)/mailto/
    relative targets, external links marked ``rel="noopener noreferrer nofollow"``.
    Headings get ids from their text."""
    # toc gives headings ids from their text, so sections can be linked to.
    html = md.markdown(text, extensions=["tables", "toc"], output_format="html")
    return nh3.clean(html, tags=_TAGS, attributes=_ATTRIBUTES,
                     url_schemes={"http", "https", "mailto"},
                     link_rel="noopener noreferrer nofollow")
