"""Contributor strings with hostile payloads come out inert in every file the site publishes.

The payload site (tests/payloads.py) is built once per run (the ``payload_site`` fixture of
tests/conftest.py, shared with tests/browser/test_xss_browser.py); then every published file
is checked by its format: HTML pages, SVG and XML (strict XML parser: no script, no event
handler, no javascript: link, payloads only as text), JSON (parses; HTML inside it is
inert), CSV (no formula cell), PNG, robots.txt, and the site's own assets. A file of any
other kind fails the scan unless it carries no payload at all, so a new output format
cannot slip past.
"""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.golden.tree import REPO
from tests.payloads import ACCEPTED, FORMULAS

# Markers only a payload carries: a file that contains none has no contributor text in it.
MARKERS = ("__xss", "HYPERLINK", "evil.example", "alert(")
ATTACK_TAGS = ("iframe", "object", "embed", "svg", "style", "base")


# The home page's bars (templates/home.html): an inline SVG the template writes from numbers,
# exactly these attributes; any other svg in a page is foreign.
OWN_BAR = {
    "class": "mini-bar",
    "viewbox": "0 0 100 6",
    "preserveaspectratio": "none",
    "aria-hidden": "true",
    "focusable": "false",
}


def _own_bar(tag: str, attrs: list[tuple[str, str | None]]) -> bool:
    return tag == "svg" and dict(attrs) == OWN_BAR


class _Scan(HTMLParser):
    """Collects what would run: on* attributes, script, javascript: links, foreign tags.

    ``allowed`` names tags a format may hold (the oEmbed snippet is an iframe by design).
    """

    def __init__(self, allowed: tuple[str, ...] = ()) -> None:
        super().__init__(convert_charrefs=True)
        self.allowed = allowed
        self.problems: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}=...>")
            if (
                name in ("href", "src")
                and value
                and value.strip().lower().startswith(("javascript:", "data:text", "vbscript:"))
            ):
                self.problems.append(f"<{tag} {name}={value!r}>")
        if tag == "script":
            src = dict(attrs).get("src") or ""
            if not src.startswith("/assets/"):  # our own scripts only, never inline
                self.problems.append(f"<script src={src!r}>")
        if tag in ATTACK_TAGS and tag not in self.allowed and not _own_bar(tag, attrs):
            self.problems.append(f"<{tag}>")
        if tag == "img" and not (dict(attrs).get("src") or "").startswith(("/charts/", "/labels/")):
            self.problems.append(f"<img src={dict(attrs).get('src')!r}>")

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def scan_html(text: str, allowed: tuple[str, ...] = ()) -> _Scan:
    scan = _Scan(allowed)
    scan.feed(text)
    scan.close()
    return scan


def published(site: Path, *suffixes: str) -> list[Path]:
    return sorted(p for p in site.rglob("*") if p.is_file() and p.name.endswith(suffixes))


# --- HTML -----------------------------------------------------------------------------------


def test_no_payload_becomes_markup(payload_site: Path) -> None:
    pages = published(payload_site, ".html")
    assert len(pages) > 10
    for page in pages:
        assert scan_html(page.read_text(encoding="utf-8")).problems == [], page.relative_to(
            payload_site
        )


def test_payloads_are_shown_as_text(payload_site: Path) -> None:
    text = " ".join(scan_html((payload_site / "index.html").read_text(encoding="utf-8")).text)
    assert "<script>window.__xss=1</script>" in text  # escaped markup reads as text
    assert "{{7*7}}" in text and "49" not in text  # no template evaluation


def test_about_and_changelog_carry_the_payloads_as_text(payload_site: Path) -> None:
    """about.md and release notes come from the payload project and releases.yaml."""
    for page in ("about/index.html", "changelog/index.html"):
        html = (payload_site / page).read_text(encoding="utf-8")
        text = " ".join(scan_html(html).text)
        # The payload arrived, as text: never evaluated as a template (markdown may pair the
        # asterisk of 7*7 with a later one as emphasis, which is fine).
        assert "{{7" in text and "{% raw %}" in text, page


def test_json_embedded_in_html_cannot_close_its_element(payload_site: Path) -> None:
    """Any JSON a page carries (script data blocks, data-* attributes) has no raw ``</``."""
    for page in published(payload_site, ".html"):
        html = page.read_text(encoding="utf-8")
        for block in _script_blocks(html):
            assert "</" not in block and "<!--" not in block, page.relative_to(payload_site)


def _script_blocks(html: str) -> Iterator[str]:
    start = 0
    while (i := html.find("<script", start)) >= 0:
        body = html.index(">", i) + 1
        end = html.find("</script", body)
        yield html[body:end]
        start = end + 1


# --- SVG and XML ----------------------------------------------------------------------------


def _local(name: str) -> str:
    """An element or attribute name without its {namespace}."""
    return name.rsplit("}", 1)[-1].lower()


def xml_problems(text: str) -> list[str]:
    """What would run if the document were opened: script, on* handlers, javascript: links,
    foreign HTML. Raises ParseError for anything that is not well-formed XML."""
    root = ET.fromstring(text)  # strict: no recovery from malformed markup
    problems = []
    for element in root.iter():
        tag = _local(element.tag)
        if tag in ("script", "foreignobject", "iframe", "embed", "object", "handler"):
            problems.append(f"<{tag}>")
        for name, value in element.attrib.items():
            if _local(name).startswith("on"):
                problems.append(f"<{tag} {_local(name)}=...>")
            if _local(name) in ("href", "src") and value.strip().lower().startswith(
                ("javascript:", "data:", "vbscript:")
            ):
                problems.append(f"<{tag} {_local(name)}={value!r}>")
    return problems


def test_svg_and_xml_files_are_well_formed_and_inert(payload_site: Path) -> None:
    files = published(payload_site, ".svg", ".xml")
    assert len([f for f in files if f.suffix == ".svg"]) > 10
    assert {"sitemap.xml", "feed.xml"} <= {f.name for f in files}
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert xml_problems(text) == [], path.relative_to(payload_site)
        for p in ACCEPTED:  # markup-bearing payloads never appear unescaped
            if "<" in p:
                assert p not in text, (path.relative_to(payload_site), p)


def test_energy_label_keeps_quotes_inside_its_attribute(payload_site: Path) -> None:
    """The nickname ``x" onload="alert(document.domain)" y="`` stays in aria-label."""
    labels = published(payload_site / "labels", ".svg")
    assert labels
    found = 0
    for path in labels:
        root = ET.fromstring(path.read_text(encoding="utf-8"))
        assert not any(_local(a).startswith("on") for e in root.iter() for a in e.attrib)
        texts = " ".join(t for e in root.iter() for t in [e.text or ""])
        if 'onload="alert(document.domain)"' in root.attrib.get("aria-label", ""):
            assert 'x" onload="alert(document.domain)" y="' in texts
            found += 1
    assert found >= 1  # the payload reached a label, as text


def test_feeds_are_inert(payload_site: Path) -> None:
    """The Atom feed's HTML content and the JSON Feed's content_html are sanitised HTML."""
    atom = ET.fromstring((payload_site / "feed.xml").read_text(encoding="utf-8"))
    ns = "{http://www.w3.org/2005/Atom}"
    contents = [e.text or "" for e in atom.iter(f"{ns}content")]
    feed = json.loads((payload_site / "feed.json").read_text(encoding="utf-8"))
    contents += [item["content_html"] for item in feed["items"]]
    assert len(contents) == 4
    for html in contents:
        scan = scan_html(html)
        assert scan.problems == []
        assert "window.__xss" in " ".join(scan.text)  # the release notes arrived, as text


# --- JSON -----------------------------------------------------------------------------------


def _no_constants(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def test_json_files_parse_strictly(payload_site: Path) -> None:
    files = published(payload_site, ".json")
    assert len(files) > 10
    for path in files:
        value = json.loads(path.read_text(encoding="utf-8"), parse_constant=_no_constants)
        if path.name == "oembed.json":
            # The embed snippet is an iframe by design; nothing else may be in it.
            assert scan_html(value["html"], ("iframe",)).problems == [], path


# --- CSV ------------------------------------------------------------------------------------


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def formula_cells(text: str) -> list[str]:
    """Cells a spreadsheet would run: text starting with = + - @ tab or CR (leading blanks
    skipped) that is not a plain number."""
    return [
        cell
        for row in csv.reader(io.StringIO(text))
        for cell in row
        if cell.lstrip(" ")[:1] in ("=", "+", "-", "@", "\t", "\r")
        and cell.lstrip(" ")[:1] != ""
        and not _is_number(cell)
    ]


def test_csv_downloads_have_no_formula_cells(payload_site: Path) -> None:
    files = published(payload_site, ".csv")
    assert len(files) > 10
    neutralised = set()
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert formula_cells(text) == [], path.relative_to(payload_site)
        neutralised |= {
            f for f in FORMULAS if f"'{f}" in text or f"'{f}".replace('"', '""') in text
        }
    assert '=HYPERLINK("http://x","y")' in neutralised  # the payload arrived, quoted


# --- everything else ------------------------------------------------------------------------


def test_every_other_file_is_known_and_inert(payload_site: Path) -> None:
    """PNG images, robots.txt and our own assets; any other file may hold no payload."""
    scanned = (".html", ".svg", ".xml", ".json", ".csv")
    assets = REPO / "templates" / "assets"
    sources = {p.name: p.read_bytes() for p in assets.iterdir() if p.is_file()}
    modules = {p.name: p.read_bytes() for p in (assets / "js").glob("*.js")}
    for path in sorted(p for p in payload_site.rglob("*") if p.is_file()):
        name = path.relative_to(payload_site).as_posix()
        data = path.read_bytes()
        if name.endswith(scanned):
            continue
        if name.endswith(".png"):
            assert data.startswith(b"\x89PNG\r\n\x1a\n"), name
        elif name == "robots.txt":
            assert all(
                line.split(":", 1)[0] in ("User-agent", "Allow", "Sitemap")
                for line in data.decode().splitlines()
            ), name
        elif name.startswith("assets/js-"):  # a module of the browser code, as written
            assert name.endswith(".js") and modules.get(name.rsplit("/", 1)[-1]) == data, name
        elif name.startswith("assets/") and name.endswith((".js", ".css")):
            stem = name.removeprefix("assets/").rsplit("-", 1)[0]
            ext = name.rsplit(".", 1)[-1]
            assert stem == "vega" or sources.get(f"{stem}.{ext}") == data, name
        else:
            assert not any(m.encode() in data for m in MARKERS), name


def test_scan_catches_the_attacks_it_looks_for() -> None:
    """The checkers themselves: each flags a hand-written hostile document."""
    assert xml_problems('<svg xmlns="http://www.w3.org/2000/svg" onload="x()"/>')
    assert xml_problems('<svg xmlns="http://www.w3.org/2000/svg"><script>x()</script></svg>')
    assert xml_problems(
        '<svg xmlns="http://www.w3.org/2000/svg" '
        'xmlns:l="http://www.w3.org/1999/xlink"><a l:href="javascript:x()"/></svg>'
    )
    with pytest.raises(ET.ParseError):
        xml_problems('<svg aria-label="x" onload="a" y=""">')
    assert formula_cells("a,b\n=1+1,2\n") == ["=1+1"]
    assert formula_cells("a,b\n-2.5,-3\n") == []
    assert formula_cells("a\n'=1+1\n") == []
    assert scan_html('<p onclick="x">').problems
