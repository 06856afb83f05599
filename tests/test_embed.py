"""Embeds: every chart has its embed page and exports; oEmbed documents; stable chart ids."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from jouleboard.engine.build import build_site
from jouleboard.render.labels import band
from tests.golden.tree import DATA, REPO

CHART_EXPORTS = ("svg", "png", "vl.json", "csv")


@pytest.fixture(scope="module")
def site(default_site: Path) -> Path:
    return default_site


def chart_ids(site: Path) -> set[str]:
    """Every chart id a page shows (figure ids), from the HTML itself."""
    ids = set()
    for page in site.rglob("*.html"):
        ids |= set(
            re.findall(
                r'<figure class="chart" id="chart-([^"]+)"', page.read_text(encoding="utf-8")
            )
        )
    return ids - {"compare"}  # the compare page's chart is drawn from the reader's choice


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_every_chart_has_an_embed_page_and_valid_exports(site: Path) -> None:
    ids = chart_ids(site)
    assert len(ids) > 50
    for cid in sorted(ids):
        embed = site / "embed" / cid / "index.html"
        assert embed.is_file(), cid
        for ext in CHART_EXPORTS:
            assert (site / "charts" / f"{cid}.{ext}").stat().st_size > 0, (cid, ext)
        svg = ET.fromstring((site / "charts" / f"{cid}.svg").read_bytes())
        assert svg.tag.endswith("svg")
        width, height = int(svg.get("width")), int(svg.get("height"))
        # The PNG is the same chart at twice the resolution.
        assert png_size((site / "charts" / f"{cid}.png").read_bytes()) == (2 * width, 2 * height)
        spec = json.loads((site / "charts" / f"{cid}.vl.json").read_text())
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
        rows = spec["datasets"]["table"]
        csv_lines = (site / "charts" / f"{cid}.csv").read_text().splitlines()
        assert len(csv_lines) == len(rows) + 1


def test_oembed_documents(site: Path) -> None:
    for cid in sorted(chart_ids(site)):
        doc = json.loads((site / "embed" / cid / "oembed.json").read_text())
        # oEmbed 1.0 rich type: version, type, html, width, height are required.
        assert doc["version"] == "1.0" and doc["type"] == "rich"
        assert isinstance(doc["width"], int) and isinstance(doc["height"], int)
        assert doc["html"].startswith("<iframe ") and f"/embed/{cid}/" in doc["html"]
        assert doc["title"] and doc["provider_name"]
        assert doc["thumbnail_url"].endswith(f"/charts/{cid}.png")
        page = (site / "embed" / cid / "index.html").read_text()
        assert f'type="application/json+oembed" href="/embed/{cid}/oembed.json"' in page


def test_embed_code_and_citation_under_each_chart(site: Path) -> None:
    html = (site / "tasks" / "gpqa" / "index.html").read_text()
    assert "&lt;iframe src=&#34;/embed/configurations--gpqa/&#34;" in html
    assert "@misc{jouleboard-configurations--gpqa," in html
    assert "The ML.ENERGY Benchmark v3" in html and "data version v3 (2026-02-16)" in html
    assert '<meta property="og:image" content="/charts/' in html


def test_energy_label_bands_hand_computed() -> None:
    assert [band(r, 1.0) for r in (1.0, 0.5, 0.49, 0.25, 0.2, 0.125, 0.1, 1 / 64, 0.01)] == [
        "A",
        "A",
        "B",
        "B",
        "C",
        "C",
        "D",
        "F",
        "G",
    ]
    # On the default data, Qwen 3 14B (5.48 tokens/J) against GPT OSS 20B (35.15): 0.156 -> C.
    assert band(5.48, 35.15) == "C"


def test_energy_labels_are_valid_svg_with_the_figures(site: Path) -> None:
    label = site / "labels" / "qwen--qwen3-14b--gpqa.svg"
    root = ET.fromstring(label.read_bytes())
    text = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "Qwen 3 14B" in text and "5.48 tokens/J" in text and "2026-02-16" in text
    assert "C" in text.split()
    assert len(list((site / "labels").glob("*.svg"))) > 20


def _tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_chart_ids_and_bytes_are_stable_when_input_files_are_renamed(
    golden_site: Path, tmp_path: Path
) -> None:
    """Renaming and reshuffling measurement files changes no chart id and no byte of the
    site except the provenance 'source' paths in the downloads."""
    first = golden_site  # DATA built as is
    moved = tmp_path / "data"
    shutil.copytree(DATA, moved)
    files = sorted((moved / "measurements").rglob("*.json"))
    shuffled = moved / "measurements" / "zz-reordered"
    shuffled.mkdir()
    for i, path in enumerate(reversed(files)):
        path.rename(shuffled / f"{i:03d}-{path.name}")
    second = tmp_path / "b"
    build_site(moved, second, project=REPO)
    a, b = _tree(first), _tree(second)
    assert sorted(p for p in a if p.startswith("embed/")) == sorted(
        p for p in b if p.startswith("embed/")
    )
    differing = {p for p in a if a[p] != b.get(p)}
    # Only files that list source paths may differ, and the downloads page that gives their
    # sizes: the downloads, the explore data, and the files behind a repeated configuration
    # (the glossary's noise section and that model's page name them).
    repeated = {"glossary/index.html", "models/openai--gpt-oss-20b/index.html"}
    assert all(
        p.startswith(("downloads/configurations", "explore/"))
        or p == "downloads/index.html"
        or p in repeated
        for p in differing
    ), differing


def test_a_build_without_png_links_no_png(golden_site: Path) -> None:
    """PNGs are an option (build --png, which the deploy workflow passes): without it no PNG
    is written and nothing points at one — no 'PNG (2×)' link, no og:image, no oEmbed
    thumbnail — while every other export is there."""
    out = golden_site  # DATA built without --png
    assert not list(out.rglob("*.png"))
    ids = chart_ids(out)
    assert ids
    for cid in sorted(ids):
        for ext in ("svg", "phone.svg", "vl.json", "csv"):
            assert (out / "charts" / f"{cid}.{ext}").stat().st_size > 0, (cid, ext)
        doc = json.loads((out / "embed" / cid / "oembed.json").read_text())
        assert not any(key.startswith("thumbnail") for key in doc), cid
    for page in out.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        assert ".png" not in html and "PNG (2×)" not in html and "og:image" not in html, page


def test_with_png_every_chart_page_links_its_png(site: Path) -> None:
    """The shared site is built with --png: each chart's export line offers the PNG, and a
    page with a chart names one as its og:image."""
    html = (site / "tasks" / "gpqa" / "index.html").read_text(encoding="utf-8")
    assert "PNG (2×)" in html
    og = re.search(r'<meta property="og:image" content="([^"]*)"', html)
    assert og is not None and og.group(1).endswith(".png")
    assert (site / og.group(1).lstrip("/")).is_file()
    # The preview image has the chart's text alternative (link previews had none).
    chart = og.group(1).rsplit("/", 1)[1].removesuffix(".png")
    img = re.search(rf'id="chart-{re.escape(chart)}".*?<img [^>]*alt="([^"]+)"', html, re.S)
    assert img is not None
    for name in ("og:image:alt", "twitter:image:alt"):
        meta = re.search(rf'<meta [^>]*"{name}"[^>]*>', html)
        assert meta is not None and f'content="{img.group(1)}"' in meta.group(0), name


def test_every_energy_label_prints_its_figure_as_the_task_table_does(site: Path) -> None:
    """Labels rounded diffusion figures to two decimals (37.75 where every other view shows
    37.7, issue 29): each label's figure is the ranked cell of its model on the task page."""
    checked = 0
    for label in sorted((site / "labels").glob("*.svg")):
        slug, _, task = label.stem.rpartition("--")
        page = (site / "tasks" / task / "index.html").read_text(encoding="utf-8")
        model = (site / "models" / slug / "index.html").read_text(encoding="utf-8")
        name = re.search(r"<h1>([^<]+)</h1>", model)
        assert name is not None
        row = re.search(
            rf'<table[^>]*id="ranking-{re.escape(task)}".*?>{re.escape(name.group(1))}</a>'
            r'.*?<td class="num col-[a-z_]+ ranked"[^>]*>([^<]+)<',
            page,
            re.S,
        )
        if row is None:  # ranked, but past the task page's first view
            continue
        text = " ".join(t.text or "" for t in ET.fromstring(label.read_bytes()).iter())
        assert f"{row.group(1)} " in text, (label.name, row.group(1), text)
        checked += 1
    assert checked > 20


def test_no_chart_data_names_a_field_ms_that_holds_seconds(site: Path) -> None:
    """The deadline rule and the deadline chart called their x field `ms` also where it held
    seconds (diffusion: "ms": 300.0 for 300 s): the field is `latency`, in the axis's unit."""
    specs = list((site / "charts").glob("*.vl.json"))
    assert specs
    for spec_path in specs:
        spec = json.loads(spec_path.read_text())
        for rows in spec.get("datasets", {}).values():
            assert all("ms" not in row for row in rows), spec_path.name
    assert "ms" not in (site / "charts" / "deadlines--text-to-image.csv").read_text().split("\n")[
        0
    ].split(",")


def test_no_phone_chart_shortens_two_names_alike(site: Path) -> None:
    """Every axis of every phone render of the default site: its labels are distinct."""
    ns = "{http://www.w3.org/2000/svg}"
    axes = 0
    for svg in sorted((site / "charts").glob("*.phone.svg")):
        for group in ET.fromstring(svg.read_bytes()).iter(f"{ns}g"):
            if "role-axis-label" in (group.get("class") or ""):
                labels = [t.text for t in group.iter(f"{ns}text") if t.text]
                assert len(labels) == len(set(labels)), (svg.name, labels)
                axes += 1
    assert axes > 100


def test_an_embed_pages_text_alternative_names_no_table_it_lacks(site: Path) -> None:
    """Embed pages said "the ranking table lists the chosen ones", "the comparison table
    gives the same figures": a chart alone in an article's frame has no table. Its page's
    text alternative still says where the figures are."""
    checked = 0
    for page in sorted((site / "embed").glob("*/index.html")):
        html = page.read_text(encoding="utf-8")
        assert "<table" not in html
        (alt,) = re.findall(r'<img src="[^"]*" alt="([^"]*)"', html)
        assert not re.search(r"\btables?\b", alt), (page.parent.name, alt)
        checked += 1
    assert checked >= 50
    task = (site / "tasks" / "gpqa" / "index.html").read_text(encoding="utf-8")
    assert "enlarged. The ranking table lists the chosen ones." in task
