"""Model pages say where each configuration comes from: the data set, version, date and
licence of its measurement's provenance, escaped like every contributed text."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from markupsafe import escape

from jouleboard.core.urls import model_slug
from jouleboard.engine.build import build_site
from tests.golden.tree import DATA, REPO

HOSTILE = '<img src=x onerror="alert(1)"> Lab & Co'
# (measurement file, its model) of a token task and of an image task
CHANGED = {
    "gpqa/Qwen/Qwen3-8B/H100-x1-bfloat16-tp1-ep1-dp1-seqs8.json": "Qwen/Qwen3-8B",
}


def _named(p: dict[str, str]) -> tuple[str, str]:
    """A data set as pages name it: its version after its name unless the name ends with it
    ("The ML.ENERGY Benchmark v3", not "... v3 v3"), then its date and licence."""
    name, version = p["dataset"], p["version"]
    shown = name if name.endswith(f" {version}") else f"{name} {version}"
    return shown, f"{p['date']}, {p['license']}"


def _rows(page: str, table_id: str) -> list[str]:
    table = re.search(rf'<table[^>]*id="{table_id}".*?</table>', page, re.S)
    assert table is not None, table_id
    return re.findall(r"<tr>.*?</tr>", table.group(0), re.S)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sources")
    data = root / "data"
    shutil.copytree(DATA, data)
    image = next((data / "measurements" / "text-to-image").rglob("*.json"))
    files = {
        **{data / "measurements" / k: v for k, v in CHANGED.items()},
        image: json.loads(image.read_text())["model_id"],
    }
    for i, path in enumerate(files):
        doc = json.loads(path.read_text())
        doc["provenance"].update(
            dataset=f"{HOSTILE} {i}", version="v9", date="2024-05-06", license="CC-BY-4.0"
        )
        path.write_text(json.dumps(doc))
    build_site(data, root / "out", project=REPO)
    return root


def test_every_configuration_row_names_its_source(site: Path) -> None:
    data = site / "data"
    for path in sorted((data / "measurements").rglob("*.json")):
        doc = json.loads(path.read_text())
        page = site / "out" / "models" / model_slug(doc["model_id"]) / "index.html"
        text = page.read_text()
        rows = _rows(text, f"configs-{doc['task']}")
        p = doc["provenance"]
        table = re.search(rf'<table[^>]*id="configs-{doc["task"]}".*?</table>', text, re.S)
        assert table is not None
        name, details = _named(p)
        if ">Source<" in table.group(0):  # sources differ: each row names its own
            expected = f'{escape(name)}<span class="note">{details}</span>'
            assert any(expected in row for row in rows), path
        else:  # one source for every row: the caption names it once (issue 29, item 3)
            caption = re.search(r"<caption[^>]*>(.*?)</caption>", table.group(0), re.S)
            assert caption is not None
            assert f"from {escape(name)} ({details})" in caption.group(1), path


def test_a_source_column_only_where_sources_differ(site: Path) -> None:
    """A model's table of a task has a Source column where its files name more than one
    data set (the files changed above); otherwise its caption names the one source."""
    sources: dict[tuple[str, str], set[str]] = {}
    for path in (site / "data" / "measurements").rglob("*.json"):
        doc = json.loads(path.read_text())
        sources.setdefault((doc["model_id"], doc["task"]), set()).add(doc["provenance"]["dataset"])
    assert any(len(v) > 1 for v in sources.values()) and any(len(v) == 1 for v in sources.values())
    for (model, task), names in sources.items():
        page = (site / "out" / "models" / model_slug(model) / "index.html").read_text()
        table = re.search(rf'<table[^>]*id="configs-{task}".*?</table>', page, re.S)
        assert table is not None
        assert (">Source<" in table.group(0)) == (len(names) > 1), (model, task)
        assert (", from " in table.group(0)) == (len(names) == 1), (model, task)


def test_contributed_source_text_is_escaped(site: Path) -> None:
    """The data-set names reach the model pages (their Data sources and each chart's
    citation) and every embed page's credit, always escaped, never as markup."""
    every = {p: p.read_text() for p in (site / "out").rglob("*.html")}
    named = {
        p.relative_to(site / "out").as_posix()
        for p, text in every.items()
        if escape(HOSTILE) in text
    }
    assert {f"models/{model_slug(m)}/index.html" for m in CHANGED.values()} <= named
    assert any(p.startswith("embed/") for p in named)  # an embed's credit names it too
    assert not any("<img src=x" in text for text in every.values())


def test_each_data_set_is_cited_once_below_the_tables(site: Path) -> None:
    """A citation is long: every row names its data set, the page cites it once, with how
    many of the page's configurations it gives (counted here from the measurement files)."""
    cited: dict[str, dict[tuple[str, str], int]] = {}
    files: dict[str, dict[tuple[str, str], int]] = {}
    for path in sorted((site / "data" / "measurements").rglob("*.json")):
        doc = json.loads(path.read_text())
        p = doc["provenance"]
        key = (_named(p)[0], p.get("citation", ""))
        per_page = files.setdefault(model_slug(doc["model_id"]), {})
        per_page[key] = per_page.get(key, 0) + 1
        # A repeat run (repeat > 1) is folded into its configuration's row.
        per_page = cited.setdefault(model_slug(doc["model_id"]), {})
        per_page[key] = per_page.get(key, 0) + (doc.get("repeat", 1) == 1)
    for slug, sources in cited.items():
        text = (site / "out" / "models" / slug / "index.html").read_text()
        section = re.search(r'<section class="data-sources".*?</section>', text, re.S)
        assert section is not None, slug
        items = re.findall(r"<li>.*?</li>", section.group(0), re.S)
        assert len(items) == len(sources), slug
        for (dataset, citation), n in sources.items():
            plural = "" if n == 1 else "s"
            runs = files[slug][(dataset, citation)]
            measured = "" if runs == n else f" ({runs} measurements)"
            assert any(
                f"<strong>{escape(dataset)}</strong>" in li
                and f": {n} configuration{plural}{measured}." in li
                and (not citation or f"<cite>{escape(citation)}</cite>" in li)
                for li in items
            ), (slug, dataset)
        assert text.count("Cite as:") == len(items)
