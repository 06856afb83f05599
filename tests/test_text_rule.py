"""One text rule (issue 25, items 6 and 15): names are plain text in every output, feeds
included; every text field of a registry or measurement file refuses hidden characters
with its rule id and pointer; every accepted text field is published, escaped.

The site tests build one small site through the CLI (tests/cli_run.py, under a timeout):
33 models nicknamed ``Model N [beta``, one with 40 ``[``, and one whose nickname is a
markdown link, each with one measurement, released as v1.
"""

from __future__ import annotations

import json
import subprocess
import unicodedata
import xml.etree.ElementTree as ET
from pathlib import Path
from types import UnionType
from typing import Any, Union, get_args, get_origin

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from jouleboard.config.registry import load_registry
from jouleboard.config.schema import (
    GpuInfo,
    ModelInfo,
    QualityFile,
    Releases,
    SiteSettings,
    TaskInfo,
)
from jouleboard.kinds.diffusion import DiffusionMeasurement
from jouleboard.kinds.token_records import Measurement
from tests.cli_run import jouleboard as jouleboard_here
from tests.test_validation_rules import (
    GPUS_YAML,
    MODELS_YAML,
    SITE_YAML,
    TASKS_YAML,
    changed,
    make_data_dir,
    problems,
    valid_measurement,
    write_measurement,
)

TIMEOUT = 300
BRACKETED = [f"Model {n} [beta" for n in range(33)] + ["Forty " + "[" * 40]
PHISHING = "[Click to claim](https://evil.example/login)"
NICKNAMES = [*BRACKETED, PHISHING]
NOTES = "DP for attention <script>alert(1)</script>"
CITATION = "Doe et al., <script>alert(2)</script> Energy 2025"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return jouleboard_here(*args, timeout=TIMEOUT)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("text-rule")
    models = {
        f"acme/m{i}": {
            "nickname": name,
            "builder": "Acme",
            "total_params_billions": 1.0,
            "active_params_billions": 1.0,
            "weight_precision": "bfloat16",
        }
        for i, name in enumerate(NICKNAMES)
    }
    data = make_data_dir(root, models_yaml=yaml.safe_dump(models, allow_unicode=True))
    (data / "releases.yaml").write_text(
        yaml.safe_dump(
            {"releases": [{"version": "v1", "date": "2025-01-01", "notes_md": "First."}]}
        )
    )
    for i, model_id in enumerate(models):
        doc = changed(
            valid_measurement(),
            {"model_id": model_id, "serving.notes": NOTES, "provenance.citation": CITATION},
        )
        write_measurement(data, doc, f"measurements/chat/acme/m{i}/H100-x1-bfloat16.json")
    validate = _cli("validate", "--data", str(data))
    assert validate.returncode == 0, validate.stdout + validate.stderr
    out = root / "site"
    build = _cli("build", "--data", str(data), "--out", str(out))
    assert build.returncode == 0, build.stdout + build.stderr
    assert "Traceback" not in build.stderr
    return out


def _feed_html(site: Path) -> list[str]:
    """The HTML of every entry of both feeds."""
    atom = ET.fromstring((site / "feed.xml").read_bytes())
    entries = [e.text or "" for e in atom.iter("{http://www.w3.org/2005/Atom}content")]
    items = json.loads((site / "feed.json").read_text())["items"]
    return entries + [item["content_html"] for item in items]


@pytest.mark.slow  # builds a site through the command line
def test_bracketed_nicknames_validate_build_and_are_plain_text_in_feeds(site: Path) -> None:
    htmls = _feed_html(site)
    assert len(htmls) == 2
    for html in htmls:
        listed = html.split("<p>New models: ", 1)[1].split(".</p>", 1)[0]
        # markup() escapes nothing in '[' or spaces: each nickname appears exactly as written.
        for name in BRACKETED:
            assert name in listed
        assert "[Click to claim](https://evil.example/login)" in listed
        assert "<a" not in listed


@pytest.mark.slow  # builds a site through the command line
def test_a_nickname_makes_no_link_anywhere_in_the_site(site: Path) -> None:
    files = [p for p in site.rglob("*") if p.is_file()]
    assert any(p.name == "feed.xml" for p in files) and any(p.name == "feed.json" for p in files)
    linked = [
        p.relative_to(site).as_posix()
        for p in files
        if b'href="https://evil.example' in p.read_bytes()
        or b'href=\\"https://evil.example' in p.read_bytes()
        or b"href=&#34;https://evil.example" in p.read_bytes()
        or b"href=&quot;https://evil.example" in p.read_bytes()
    ]
    assert linked == []


@pytest.mark.slow  # builds a site through the command line
def test_serving_notes_and_citation_are_published_escaped(site: Path) -> None:
    html = next(
        p.read_text()
        for p in (site / "models").rglob("index.html")
        if "<h1>Model 0 [beta</h1>" in p.read_text()
    )
    assert "DP for attention &lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "Doe et al., &lt;script&gt;alert(2)&lt;/script&gt; Energy 2025" in html
    # Markup formats escape it; JSON data files hold it as data (the site's scripts insert
    # data as text only), and feed.json's HTML holds no script either.
    for path in site.rglob("*"):
        if path.is_file() and path.suffix in {".html", ".xml", ".svg"}:
            assert b"<script>alert(" not in path.read_bytes(), path
    assert all("<script" not in html for html in _feed_html(site))


# --- every text field refuses hidden characters -------------------------------------------


def _text_fields(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Paths of every free-text string field of ``model`` and the records inside it (a
    field whose values are a fixed list or an ASCII pattern cannot hold the characters)."""
    out = []
    for name, info in model.model_fields.items():
        annotation = info.annotation
        # A field's own type, or the members of a union (not the items of a list).
        members = (
            get_args(annotation) if get_origin(annotation) in (Union, UnionType) else (annotation,)
        )
        nested = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
        for m in nested:
            out += _text_fields(m, (*prefix, name))
        patterned = any(getattr(meta, "pattern", None) for meta in info.metadata)
        if str in members and not patterned:
            out.append((*prefix, name))
    return out


MEASUREMENT_FIELDS = _text_fields(Measurement)
SITE_FIELDS = _text_fields(SiteSettings)
MODEL_FIELDS = _text_fields(ModelInfo)
GPU_FIELDS = _text_fields(GpuInfo)
TASK_FIELDS = _text_fields(TaskInfo)
HIDDEN = {"rlo": "\u202e", "nul": "\x00"}


def test_the_enumeration_finds_the_fields_of_the_issue() -> None:
    assert {
        ("serving", "notes"),
        ("provenance", "citation"),
        ("provenance", "dataset"),
        ("provenance", "source"),
    } <= set(MEASUREMENT_FIELDS)
    assert {("tagline",), ("data_version",), ("title",), ("attribution_md",)} <= set(SITE_FIELDS)
    # A diffusion measurement's text fields are those of its provenance, tested here too.
    assert set(_text_fields(DiffusionMeasurement)) <= set(MEASUREMENT_FIELDS)
    assert ("nickname",) in MODEL_FIELDS and ("description_md",) in MODEL_FIELDS
    assert QualityFile and Releases  # their text fields share Strict's rule (test below)


def _refused(data: Path, file: str, where: str) -> None:
    found = [(Path(p.file).name, p.pointer, p.rule) for p in problems(data)]
    assert (file, where, "value.hidden-character") in found, found


@pytest.mark.parametrize("char", HIDDEN.values(), ids=HIDDEN.keys())
@pytest.mark.parametrize("path", MEASUREMENT_FIELDS, ids=".".join)
def test_measurement_text_fields_refuse_hidden_characters(
    tmp_path: Path, path: tuple[str, ...], char: str
) -> None:
    data = make_data_dir(tmp_path)
    doc = valid_measurement()
    value = doc
    for part in path[:-1]:
        value = value[part]
    value[path[-1]] = f"Hand{char}made"
    write_measurement(data, doc)
    _refused(data, "H100-x1-bfloat16-seqs64.json", "/" + "/".join(path))


def _registry_case(file: str, base: str, key: str | None, field: tuple[str, ...], char: str) -> str:
    doc: Any = yaml.safe_load(base)
    entry = doc[key] if key else doc
    for part in field[:-1]:
        entry = entry.setdefault(part, {})
    entry[field[-1]] = f"Some{char}text"
    return yaml.safe_dump(doc, allow_unicode=True)


REGISTRY_CASES = (
    [("site.yaml", SITE_YAML, None, f) for f in SITE_FIELDS]
    + [("models.yaml", MODELS_YAML, "acme/tiny-1b", f) for f in MODEL_FIELDS]
    + [("gpus.yaml", GPUS_YAML, "H100", f) for f in GPU_FIELDS]
    + [("tasks.yaml", TASKS_YAML, "chat", f) for f in TASK_FIELDS]
)


@pytest.mark.parametrize("char", HIDDEN.values(), ids=HIDDEN.keys())
@pytest.mark.parametrize(
    ("file", "base", "key", "field"),
    REGISTRY_CASES,
    ids=[f"{c[0]}:{'.'.join(c[3])}" for c in REGISTRY_CASES],
)
def test_registry_text_fields_refuse_hidden_characters(
    tmp_path: Path, file: str, base: str, key: str | None, field: tuple[str, ...], char: str
) -> None:
    text = _registry_case(file, base, key, field, char)
    data = make_data_dir(tmp_path, **{file.replace(".", "_"): text})
    where = "/" + "/".join(((key.replace("/", "~1"),) if key else ()) + field)
    _refused(data, file, where)


def test_markdown_fields_keep_line_breaks_but_refuse_hidden_characters(tmp_path: Path) -> None:
    site = yaml.safe_load(SITE_YAML)
    site["attribution_md"] = "Line one\n\tand two\r\nthree"
    data = make_data_dir(tmp_path, site_yaml=yaml.safe_dump(site))
    registry, found = load_registry(data)
    assert found == [] and registry is not None
    assert registry.site.attribution_md == "Line one\n\tand two\r\nthree"
    site["attribution_md"] = "Line one\n\u200band two"
    data = make_data_dir(tmp_path, site_yaml=yaml.safe_dump(site))
    _refused(data, "site.yaml", "/attribution_md")


def test_quality_and_release_texts_refuse_hidden_characters(tmp_path: Path) -> None:
    data = make_data_dir(tmp_path)
    (data / "releases.yaml").write_text(
        yaml.safe_dump(
            {"releases": [{"version": "v1", "date": "2025-01-01", "notes_md": "Fir\u202est."}]}
        )
    )
    (data / "quality").mkdir()
    (data / "quality" / "chat.yaml").write_text(
        yaml.safe_dump(
            {
                "task": "chat",
                "benchmark": "Chat\x00bench",
                "scores": [
                    {
                        "model_id": "acme/tiny-1b",
                        "accuracy_percent": 50.0,
                        "setting": "0-shot",
                        "source_url": "https://example.org/",
                        "source_detail": "Table\u202e 1",
                        "confidence": "high",
                    }
                ],
            }
        )
    )
    _refused(data, "releases.yaml", "/releases/0/notes_md")
    _refused(data, "chat.yaml", "/benchmark")
    _refused(data, "chat.yaml", "/scores/0/source_detail")


def test_a_nul_in_the_tagline_is_refused_by_validate_with_its_location(tmp_path: Path) -> None:
    data = make_data_dir(tmp_path, site_yaml=SITE_YAML + 'tagline: "a\\0b"\n')
    result = _cli("validate", "--data", str(data))
    assert result.returncode != 0
    assert (
        "site.yaml: /tagline: value.hidden-character: contains U+0000 (NUL)"
        in result.stdout + result.stderr
    )
    assert "Traceback" not in result.stderr


@given(st.text(alphabet=st.characters(codec=None), max_size=40), st.booleans())
def test_hidden_characters_are_each_character_of_a_hidden_category(
    text: str, multiline: bool
) -> None:
    """The rule's definition, character by character (its fast path for printable text
    must agree): Unicode categories Cc, Cf, Cs, Co, Zl, Zp, bar line breaks and tabs in a
    multiline field."""
    from jouleboard.core.text_rules import hidden_characters

    expected = {
        f"U+{ord(ch):04X}"
        for ch in text
        if unicodedata.category(ch) in {"Cc", "Cf", "Cs", "Co", "Zl", "Zp"}
        and not (multiline and ch in "\n\r\t")
    }
    found = hidden_characters(text, multiline)
    assert {d.split(" ")[0] for d in found} == expected
    assert len(found) == len(expected)


def test_a_hidden_character_is_found_among_numbers_at_any_depth() -> None:
    """Lists of numbers are passed over item by item without a look (a measurement's
    lists hold dozens), while text among them, in a nested list or a mapping, is still
    looked at, and located."""
    from jouleboard.config.schema import _hidden_text

    rlo = "\u202e"
    assert _hidden_text([1, 2.5, None, True, ["a", f"b{rlo}"]], False) == (
        "item 4, item 1",
        ["U+202E (RIGHT-TO-LEFT OVERRIDE)"],
    )
    assert _hidden_text([0.5] * 50 + [{"k": f"v{rlo}"}], False) == (
        "item 50, item 'k'",
        ["U+202E (RIGHT-TO-LEFT OVERRIDE)"],
    )
    assert _hidden_text([1, 2, (3, ["ok"]), {"k": 4}], False) is None
