"""Links between the site's own pages, written in markdown by the site's authors (content
pages, registry descriptions, release and quality notes, the footer's attribution), checked
against the plan: a link to a page the site does not have is a located problem, never a
published 404 (``[x](/resluts/)`` in content/team.md built, issue 39).

A link is internal when it names no scheme and no host (``../about/``, ``/models/``,
``#noise``). It is resolved from every page that shows the text (a task's description is on
the home page and on the task's page, the attribution on every page), and must name a page,
file, download or chart the plan makes, a file of static/, or an asset. Its ``#fragment``
must be an ``id`` of the target where the plan holds the target's whole HTML (the about,
glossary, changelog and own pages); other pages' ids come from templates and are not
checked. The packaged about page is jouleboard's own, not the site's, and is not checked.
"""

from __future__ import annotations

import dataclasses
import html
import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from jouleboard.config.registry import Registry
from jouleboard.core.problems import Problem, closest, pointer
from jouleboard.core.urls import Urls
from jouleboard.plan.views import Page, Plan, ProseBody
from jouleboard.render.markdown import render_markdown

RULE = "content.broken-link"
_HREF = re.compile(r'<a\s[^>]*?href="([^"]*)"')
_ID = re.compile(r'\sid="([^"]*)"')
CHART_EXTENSIONS = ("svg", "phone.svg", "png", "vl.json", "csv")


@dataclass(frozen=True)
class MarkdownSource:
    """A markdown text of the site's authors and where it is written."""

    file: str  # as messages name it
    pointer: str  # where in the file ("" for a whole content file)
    text: str  # as the plan renders it
    # The pages that show it: None for those whose HTML holds it as the plan renders it,
    # EVERYWHERE for every page (the footer's attribution); else these output paths.
    pages: tuple[str, ...] | None = None
    first_line: int = 1  # the file's line number of the text's first line


EVERYWHERE = ("*",)


def registry_sources(registry: Registry, names: dict[str, str]) -> list[MarkdownSource]:
    """The markdown fields of the registries; ``names``: how messages name each registry
    file (``site.yaml``, ``models.yaml``, ``tasks.yaml``, ``releases.yaml``,
    ``quality/<task>.yaml``)."""
    site = registry.site
    out = [MarkdownSource(names["site.yaml"], "/attribution_md", site.attribution_md, EVERYWHERE)]
    out += [
        MarkdownSource(names["models.yaml"], pointer(m, "description_md"), info.description_md)
        for m, info in registry.models.items()
    ]
    out += [
        MarkdownSource(names["tasks.yaml"], pointer(t, "description_md"), info.description_md)
        for t, info in registry.tasks.items()
    ]
    out += [
        MarkdownSource(names[f"quality/{t}.yaml"], "/note_md", q.note_md)
        for t, q in registry.quality.items()
    ]
    out += [
        # The changelog joins every release's notes into one text.
        MarkdownSource(
            names["releases.yaml"],
            pointer("releases", i, "notes_md"),
            r.notes_md,
            (Urls.changelog,),
        )
        for i, r in enumerate(registry.releases)
    ]
    return [s for s in out if s.text.strip()]


def link_problems(
    plan: Plan,
    urls: Urls,
    sources: Sequence[MarkdownSource],
    static: Iterable[str] = (),
) -> list[Problem]:
    """Every internal link of ``sources`` that names nothing the site has, from each page
    that shows it; ``static``: the output paths static/ publishes."""
    targets = _targets(plan, static)
    ids = {
        p.path: set(_ID.findall(p.body.html)) for p in plan.pages if isinstance(p.body, ProseBody)
    }
    rendered = {s.text: render_markdown(s.text) for s in sources}  # as the plan renders it
    # Only a text with a link into the site needs the pages that show it (a walk of them all).
    inside = {
        text
        for text in rendered.values()
        if any(_internal(html.unescape(h)) for h in _HREF.findall(text))
    }
    shown_on = _pages_showing(
        plan.pages, {rendered[s.text] for s in sources if s.pages is None} & inside
    )
    everywhere = [p.path for p in plan.pages]
    problems: set[Problem] = set()
    for source in sources:
        pages: Sequence[str] = (
            shown_on.get(rendered[source.text], [])
            if source.pages is None
            else (everywhere if source.pages == EVERYWHERE else source.pages)
        )
        for href in dict.fromkeys(html.unescape(h) for h in _HREF.findall(rendered[source.text])):
            for page in pages:
                found = _check(href, page, urls, targets, ids)
                if found is None:
                    continue
                message, hint = found
                if source.pages == EVERYWHERE and not href.startswith(("/", "#")):
                    hint = (
                        "this text is on every page, at every depth: link from the site's "
                        f"root, e.g. {urls.base}about/"
                    )
                # A line of a file; a registry field's pointer says where it is.
                where = "" if source.pointer else _line(source.text, href, source.first_line)
                problems.add(Problem(source.file, source.pointer, RULE, where + message, hint))
                break  # one problem per link: the first page it fails on
    return sorted(problems)


def _targets(plan: Plan, static: Iterable[str]) -> set[str]:
    """Every output path a link may name: the plan's, each chart's files and oEmbed, the
    favicon and what static/ publishes (the theme's assets/: :func:`_target`)."""
    paths = {p.path for p in plan.pages} | set(plan.files) | {d.path for d in plan.downloads}
    paths |= {f"charts/{cid}.{ext}" for cid in plan.charts for ext in CHART_EXTENSIONS}
    paths |= {Urls.oembed(cid) for cid in plan.charts} | {"favicon.svg"}
    return paths | set(static)


def _internal(href: str) -> bool:
    """Whether ``href`` (unescaped) may name a page of this site."""
    parts = urlsplit(href)
    return not (parts.scheme or parts.netloc or href.startswith("//"))


_FIELDS: dict[type, tuple[str, ...] | None] = {}


def _children(kind: type) -> tuple[str, ...] | None:
    """The field names of a dataclass type; None for a type holding no strings to look in."""
    if kind not in _FIELDS:
        fields = dataclasses.fields(kind) if dataclasses.is_dataclass(kind) else None
        _FIELDS[kind] = None if fields is None else tuple(f.name for f in fields)
    return _FIELDS[kind]


def _shown(body: object, rendered: set[str]) -> set[str]:
    """The texts of ``rendered`` that a page body holds: every string in its dataclasses,
    tuples, lists and mappings (a loop, not recursion: a task page holds ~10^5 values)."""
    found: set[str] = set()
    stack = [body]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if value in rendered:
                found.add(value)
        elif isinstance(value, (tuple, list)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif (names := _children(type(value))) is not None:
            stack.extend(getattr(value, name) for name in names)
    return found


def _pages_showing(pages: Sequence[Page], rendered: set[str]) -> dict[str, list[str]]:
    """Which pages show each rendered text (by the HTML the plan hands their templates)."""
    rendered.discard("")
    out: dict[str, list[str]] = {}
    if not rendered:
        return out
    for page in pages:
        for text in _shown(page.body, rendered):
            out.setdefault(text, []).append(page.path)
    return out


def _check(
    href: str, page: str, urls: Urls, targets: set[str], ids: dict[str, set[str]]
) -> tuple[str, str] | None:
    """Why ``href`` on ``page`` names nothing the site has (message, hint), or None."""
    if not _internal(href):
        return None  # another site: not ours to check
    here = urls.url(page)
    url = urlsplit(urljoin(f"http://site{here}", href))  # a browser's resolution ("/.." is "/")
    if not url.path.startswith(urls.base):
        return (
            f"links to {href!r}, outside the site (its pages are under {urls.base})",
            "write links between pages relative to the page, e.g. ../about/, so they hold "
            "under any base URL",
        )
    relative = url.path[len(urls.base) :]
    target = _target(relative, targets)
    if target is None:
        return (
            f"links to {href!r}, which from {here} is {url.path}: the site has no such page",
            _nearest(relative, here, urls, targets),
        )
    if url.fragment and target in ids and url.fragment not in ids[target]:
        near = closest(url.fragment, ids[target])
        return (
            f"links to {href!r}: {urls.url(target)} has no anchor {url.fragment!r}",
            f"did you mean #{near}?"
            if near
            else "link to a heading of that page "
            "(its id is its text in lowercase, words joined by '-')",
        )
    return None


def _target(relative: str, targets: set[str]) -> str | None:
    """The output path a site-relative URL path names (``x/`` and ``x`` name x/index.html)."""
    for candidate in (
        relative,
        f"{relative}index.html" if relative.endswith("/") or not relative else "",
        f"{relative}/index.html",
    ):
        if candidate in targets:
            return candidate
    if relative.startswith("assets/"):  # the theme's files: named by templates, not checked
        return relative
    return None


def _nearest(relative: str, here: str, urls: Urls, targets: set[str]) -> str:
    """A hint: the link to the page ``relative`` was probably meant to name."""
    by_name: dict[str, str] = {}  # each page folder by its last name (tasks/chat/: chat)
    for folder in sorted(t.removesuffix("index.html") for t in targets if t.endswith("index.html")):
        by_name.setdefault(folder.rstrip("/").rsplit("/", 1)[-1], folder)
    name = closest(relative.rstrip("/").rsplit("/", 1)[-1], [n for n in by_name if n])
    near = by_name[name] if name is not None else None
    if near is None:
        return "link to a page the site makes, as sitemap.xml lists them, or a file of static/"
    folder = posixpath.dirname(here.rstrip("/") + "/x")  # the folder the page is in
    return f"did you mean {posixpath.relpath(urls.base + near, folder)}/?"


def _line(text: str, href: str, first: int) -> str:
    """``line N: `` of the first line of ``text`` that links to ``href`` (the text's first
    line being line ``first`` of its file)."""
    for number, line in enumerate(text.splitlines(), start=first):
        if f"]({href}" in line or f"]: {href}" in line or f'href="{href}"' in line:
            return f"line {number}: "
    return ""
