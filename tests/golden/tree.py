"""The golden-output snapshot: build tests/golden/data and compare with tests/golden/expected.

Regenerate after an intended change, then review the diff (git diff tests/golden/expected):

    python -m tests.golden.tree
"""

from __future__ import annotations

import hashlib
import re
import shutil
import sys
import tempfile
from pathlib import Path

from jouleboard.engine.build import build_site

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "golden" / "data"
EXPECTED = REPO / "tests" / "golden" / "expected"


def is_volatile(path: str) -> bool:
    """Files whose bytes belong to the rasteriser or the Vega bundle, not to us: compared by
    name only (chart SVGs are compared by :func:`svg_signature`)."""
    return (path.endswith(".png") and path.startswith("charts/")) or (
        path.startswith("assets/vega-") and path.endswith(".js"))


def is_chart_svg(path: str) -> bool:
    return path.startswith("charts/") and path.endswith(".svg")


_TEXT = re.compile(r"<text\b[^>]*>([^<]*)</text>")
_TAG = re.compile(r"<([a-zA-Z]+)\b")
_LABEL = re.compile(r'aria-label="([^"]*)"')


def svg_signature(svg: bytes) -> dict[str, object]:
    """What a chart SVG says, without the coordinates that depend on font metrics: every
    text in order, every mark's aria label (Vega writes the data values there), and how
    many elements of each kind it has."""
    text = svg.decode("utf-8")
    tags: dict[str, int] = {}
    for tag in _TAG.findall(text):
        tags[tag] = tags.get(tag, 0) + 1
    return {"texts": _TEXT.findall(text), "labels": _LABEL.findall(text),
            "tags": dict(sorted(tags.items()))}


def build_sample(out: Path) -> None:
    build_site(DATA, out, project=REPO, png=True)


def tree(root: Path) -> dict[str, str]:
    """Every file below ``root`` (a built site) by its path, with the sha256 of its bytes:
    two sites are the same when their trees are equal."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def snapshot(site: Path) -> dict[str, bytes | None]:
    return {p.relative_to(site).as_posix(): None if is_volatile(
                p.relative_to(site).as_posix()) else p.read_bytes()
            for p in sorted(site.rglob("*")) if p.is_file()}


def regenerate() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "site"
        build_sample(out)
        shutil.rmtree(EXPECTED, ignore_errors=True)
        for path, content in snapshot(out).items():
            target = EXPECTED / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content if content is not None else b"")


if __name__ == "__main__":
    regenerate()
    print(f"wrote {EXPECTED.relative_to(REPO)}; review with git diff", file=sys.stderr)
