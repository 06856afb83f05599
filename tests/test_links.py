"""Internal links of the built site, checked without a browser.

Every href/src of a, link, script and img on every page (and the URLs that site.js fetches:
figure[data-spec], body[data-vega]) must point at a file of the site (a URL ending in '/'
means its index.html), and every #fragment at an element with that id on the target page.
External http(s)/mailto links are not followed. Each page also has exactly one <h1>, a
<title>, <html lang>, and alt text on every <img>.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

LINK_ATTRIBUTES = {
    "a": ("href",),
    "link": ("href",),
    "script": ("src",),
    "img": ("src",),
    # URLs that site.js fetches: a chart's Vega-Lite spec and the shared Vega bundle.
    "figure": ("data-spec",),
    "body": ("data-vega",),
}
EXTERNAL_SCHEMES = {"http", "https", "mailto"}
INLINE_SCHEMES = {"data"}


@dataclass
class Page:
    """What the link check needs to know about one HTML page."""

    links: list[tuple[str, str]] = field(default_factory=list)  # (tag, url)
    ids: set[str] = field(default_factory=set)
    duplicate_ids: set[str] = field(default_factory=set)
    h1: int = 0
    title: str = ""
    lang: str | None = None
    images_without_alt: list[str] = field(default_factory=list)


class _PageParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        element_id = attributes.get("id")
        if element_id:
            if element_id in self.page.ids:
                self.page.duplicate_ids.add(element_id)
            self.page.ids.add(element_id)
        # <a name="x"> is a fragment target too (legacy, but valid for navigation).
        if tag == "a" and attributes.get("name"):
            self.page.ids.add(attributes["name"] or "")
        for name in LINK_ATTRIBUTES.get(tag, ()):
            value = attributes.get(name)
            if value is not None:
                self.page.links.append((tag, value.strip()))
        if tag == "h1":
            self.page.h1 += 1
        elif tag == "title":
            self._in_title = True
        elif tag == "html":
            self.page.lang = attributes.get("lang")
        elif tag == "img" and not (attributes.get("alt") or "").strip():
            # alt="" marks a decorative image; the site's images are all charts, which need text.
            self.page.images_without_alt.append(attributes.get("src") or "?")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.page.title += data


@pytest.fixture(scope="module")
def site(default_site: Path) -> Path:
    return default_site


@pytest.fixture(scope="module")
def pages(site: Path) -> dict[str, Page]:
    """Every .html file of the site, parsed, by its path relative to the site folder."""
    parsed = {}
    for file in sorted(site.rglob("*.html")):
        parser = _PageParser()
        parser.feed(file.read_text(encoding="utf-8"))
        parser.close()
        parsed[file.relative_to(site).as_posix()] = parser.page
    return parsed


def resolve(site: Path, page: str, url: str) -> tuple[str | None, str]:
    """(file path relative to the site, or None for external/inline URLs; fragment).

    Root-relative URLs resolve against the site folder, relative ones against the page's
    folder; a path ending in '/' means its index.html. '#x' alone points into ``page``.
    """
    parts = urlsplit(url)
    if parts.scheme in EXTERNAL_SCHEMES or parts.scheme in INLINE_SCHEMES:
        return None, ""
    assert not parts.scheme and not parts.netloc, f"{page}: unexpected URL {url!r}"
    fragment = unquote(parts.fragment)
    path = unquote(parts.path)
    if not path:
        return page, fragment
    if not path.startswith("/"):
        path = posixpath.join("/" + posixpath.dirname(page), path)
    if path.endswith("/"):
        path += "index.html"
    normal = posixpath.normpath(path).lstrip("/")
    assert not normal.startswith(".."), f"{page}: {url!r} leaves the site"
    return normal, fragment


def test_site_has_the_expected_pages(pages: dict[str, Page]) -> None:
    for page in [
        "index.html",
        "404.html",
        "about/index.html",
        "downloads/index.html",
        "models/index.html",
        "gpus/index.html",
        "tasks/gpqa/index.html",
    ]:
        assert page in pages
    assert len(pages) > 20


def test_every_internal_link_resolves(site: Path, pages: dict[str, Page]) -> None:
    broken: list[str] = []
    checked = 0
    for name, page in pages.items():
        for tag, url in page.links:
            if not url:
                broken.append(f"{name}: <{tag}> with an empty URL")
                continue
            target, fragment = resolve(site, name, url)
            if target is None:
                continue
            checked += 1
            if not (site / target).is_file():
                broken.append(f"{name}: <{tag}> {url} -> missing {target}")
                continue
            if fragment:
                if target not in pages:
                    broken.append(f"{name}: <{tag}> {url}: fragment on a non-HTML file")
                elif fragment not in pages[target].ids:
                    broken.append(f"{name}: <{tag}> {url}: no id={fragment!r} in {target}")
    assert checked > 100
    assert broken == [], "\n".join(broken)


def test_ids_are_unique(pages: dict[str, Page]) -> None:
    duplicates = {name: sorted(p.duplicate_ids) for name, p in pages.items() if p.duplicate_ids}
    assert duplicates == {}


@pytest.mark.parametrize(
    ("check", "problem"),
    [
        (lambda p: p.h1 == 1, "not exactly one <h1>"),
        (lambda p: bool(p.title.strip()), "no <title>"),
        (lambda p: bool((p.lang or "").strip()), "no <html lang>"),
        (lambda p: not p.images_without_alt, "an <img> without alt text"),
    ],
    ids=["one-h1", "title", "lang", "img-alt"],
)
def test_every_page_has(pages: dict[str, Page], check: object, problem: str) -> None:
    assert callable(check)
    failing = sorted(name for name, page in pages.items() if not check(page))
    assert failing == [], f"{problem}: {failing}"


def test_every_column_a_task_page_shows_links_its_definition(site: Path) -> None:
    """A reader taps a column's "?" for what it means. The image and video tables' Batch,
    Steps and Output and every page's Electricity, Cost and CO₂e columns had none (nor a
    glossary entry). Now every header of every table on every task page, but the model's
    name, links a glossary entry that exists."""
    import re

    glossary = (site / "glossary" / "index.html").read_text(encoding="utf-8")
    defined = set(re.findall(r'id="([^"]+)"', glossary))
    missing, seen = [], 0
    for page in sorted((site / "tasks").glob("*/index.html")):
        for th in re.findall(r'<th scope="col" (.*?)</th>', page.read_text(encoding="utf-8")):
            key = re.search(r'class="[^"]*col-([A-Za-z0-9_]+)', th)
            link = re.search(r'<a class="def" href="/glossary/#([^"]+)"', th)
            seen += 1
            if key and key.group(1) == "model":
                continue
            if link is None or link.group(1) not in defined:
                missing.append((page.parent.name, key.group(1) if key else th[:40]))
    assert seen > 100 and not missing, sorted(set(missing))


def test_the_downloads_page_says_what_every_column_holds(site: Path) -> None:
    """A researcher opening a CSV met columns named repeat, runs, critical_value or
    rank_best that nothing on the site explained. The downloads page now lists every
    column the published CSV files have (read from their header lines), each with its
    meaning, and no column they lack."""
    import csv
    import html
    import re

    from jouleboard.plan.columns import COLUMNS

    headers: set[str] = set()
    for path in sorted((site / "downloads").rglob("*.csv")):
        with path.open(encoding="utf-8") as f:
            headers |= set(next(csv.reader(f)))
    page = (site / "downloads" / "index.html").read_text(encoding="utf-8")
    listed = {
        name: html.unescape(meaning)
        for name, meaning in re.findall(r"<dt><code>([^<]+)</code></dt><dd>([^<]*)</dd>", page)
    }
    assert len(headers) > 80 and set(listed) == headers, set(listed) ^ headers
    assert not [n for n, m in listed.items() if "own kind" in m or len(m) < 12]
    assert set(COLUMNS) == headers  # no entry for a column no file has
    assert '<a href="#columns">Columns</a>' in page
