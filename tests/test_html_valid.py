"""Every built page parses as HTML5 without a single parse error, and ids are unique."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import html5lib
import pytest


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.ids.extend(v for k, v in attrs if k == "id" and v)


@pytest.fixture(scope="module")
def pages(default_site: Path) -> list[tuple[str, str]]:
    site = default_site
    return [
        (p.relative_to(site).as_posix(), p.read_text(encoding="utf-8"))
        for p in sorted(site.rglob("*.html"))
    ]


def test_the_strict_parser_does_reject_bad_html() -> None:
    parser = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False)
    with pytest.raises(html5lib.html5parser.ParseError):
        parser.parse("<!doctype html><html><body><p>x</b></body></html>")


def test_every_page_parses_without_errors(pages: list[tuple[str, str]]) -> None:
    assert len(pages) > 40
    for name, text in pages:
        parser = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False)
        try:
            parser.parse(text)
        except html5lib.html5parser.ParseError as e:
            pytest.fail(f"{name}: {e}")


def test_ids_are_unique_per_page(pages: list[tuple[str, str]]) -> None:
    for name, text in pages:
        scan = _Ids()
        scan.feed(text)
        duplicates = sorted({i for i in scan.ids if scan.ids.count(i) > 1})
        assert duplicates == [], name


def test_doctype_and_language(pages: list[tuple[str, str]]) -> None:
    for name, text in pages:
        assert text.startswith('<!doctype html>\n<html lang="en">'), name
