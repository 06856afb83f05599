"""Contributor strings with script payloads come out as inert text (static HTML checks)."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest

from jouleboard.build import build_site
from tests.golden.tree import REPO
from tests.payloads import write_payload_data


class _Scan(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}=...>")
            if name in ("href", "src") and value and value.strip().lower().startswith(
                    ("javascript:", "data:text", "vbscript:")):
                self.problems.append(f"<{tag} {name}={value!r}>")
        if tag == "script":
            src = dict(attrs).get("src") or ""
            if not src.startswith("/assets/"):  # our own scripts only, never inline
                self.problems.append(f"<script src={src!r}>")
        if tag in ("iframe", "object", "embed", "svg", "img") and tag != "img":
            self.problems.append(f"<{tag}>")
        if tag == "img" and not (dict(attrs).get("src") or "").startswith(("/charts/", "/labels/")):
            self.problems.append(f"<img src={dict(attrs).get('src')!r}>")
        if tag == "style":
            self.problems.append("<style>")

    def handle_data(self, data: str) -> None:
        self.text.append(data)


@pytest.fixture(scope="module")
def payload_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("xss")
    data = write_payload_data(base / "data")
    out = base / "site"
    build_site(data, out, project=REPO)
    return out


def test_no_payload_becomes_markup(payload_site: Path) -> None:
    pages = sorted(payload_site.rglob("*.html"))
    assert len(pages) > 10
    for page in pages:
        scan = _Scan()
        scan.feed(page.read_text(encoding="utf-8"))
        assert scan.problems == [], page.relative_to(payload_site)


def test_payloads_are_shown_as_text(payload_site: Path) -> None:
    scan = _Scan()
    scan.feed((payload_site / "index.html").read_text(encoding="utf-8"))
    text = " ".join(scan.text)
    assert "<script>window.__xss=1</script>" in text  # escaped markup reads as text
    assert "{{7*7}}" in text and "49" not in text  # no template evaluation


def test_json_outputs_stay_json(payload_site: Path) -> None:
    import json

    for path in sorted(payload_site.rglob("*.json")):
        json.loads(path.read_text(encoding="utf-8"))
