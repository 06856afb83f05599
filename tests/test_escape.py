"""The one escaping rule (jouleboard/core/escape.py) and the producers that route through it:
markup for HTML/SVG/XML, JSON in HTML, CSV formula cells, markdown reports, text lines."""

from __future__ import annotations

import csv
import io
import json
import random
import shutil
import xml.etree.ElementTree as ET
from datetime import date
from pathlib import Path

import jinja2
import markdown as md
import pytest
from pydantic import ValidationError

from jouleboard.cli import main
from jouleboard.config.schema import Release
from jouleboard.core.escape import (
    csv_cell,
    csv_text,
    json_in_html,
    markdown_text,
    markup,
    text_line,
)
from jouleboard.core.urls import Urls
from jouleboard.plan.diff import Side, diff_markdown, load_side
from jouleboard.plan.releases import ReleaseData, atom_feed
from jouleboard.plan.views import Page, ProseBody
from jouleboard.render.downloads import to_csv
from jouleboard.render.embeds import chart_csv
from tests.golden.tree import DATA

# A file name a contributor could commit: a newline, a code fence, a link, an image, HTML,
# a bare www. address, a heading and table cells ("/" is the one character it cannot hold).
HOSTILE_NAME = (
    "x\n```\n[click](javascript:alert(1)) ![i](x.png) <img src=x onerror=alert(1)> "
    "www.evil.example\n# forged | cell |\n.json"
)
# Every character markup must handle, plus a few XML 1.0 forbids.
ALPHABET = "ab &<>\"'\n\t\x00\x0b\x1b\ufffe\u2028é😀;#="


def _random_strings(n: int, seed: int = 14) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 24))) for _ in range(n)]


# --- markup: HTML, SVG, XML --------------------------------------------------------------


def test_markup_escapes_the_five_characters() -> None:
    assert (
        markup('x" onload="alert(1)" y=\'<&>')
        == "x&#34; onload=&#34;alert(1)&#34; y=&#39;&lt;&amp;&gt;"
    )


def test_markup_is_jinja_autoescape_for_legal_text() -> None:
    """One rule: Python-built markup escapes exactly as the templates do."""
    template = jinja2.Environment(autoescape=True).from_string("{{ s }}")
    for s in _random_strings(300):
        legal = "".join(c for c in s if c not in "\x00\x0b\x1b\ufffe")
        assert markup(legal) == template.render(s=legal)


def test_markup_round_trips_through_a_strict_xml_parser() -> None:
    """As text and as a double- or single-quoted attribute, any string parses back to itself
    (less the characters XML forbids; attribute whitespace is normalised by XML itself)."""
    for s in _random_strings(500):
        legal = "".join(c for c in s if c not in "\x00\x0b\x1b\ufffe")
        for quote in ('"', "'"):
            element = ET.fromstring(f"<a b={quote}{markup(s)}{quote}>{markup(s)}</a>")
            assert (element.text or "") == legal
            assert element.attrib["b"] == legal.replace("\n", " ").replace("\t", " ")
            assert list(element.attrib) == ["b"]  # no attribute broke out


# --- JSON in HTML ------------------------------------------------------------------------


def test_json_in_html_has_no_markup_and_decodes_to_the_same_value() -> None:
    value = {"n": "</script><script>alert(1)</script><!-- & \u2028\u2029"}
    text = json_in_html(json.dumps(value, ensure_ascii=False))
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}
    assert json.loads(text) == value


# --- CSV -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '=HYPERLINK("http://x","y")',
        "+1+1",
        "-2+3",
        "@SUM(A1)",
        "\tx",
        "\rx",
        "  =1+1",
        "\u00a0=1+1",
        "\u3000+1",
        "\n=1+1",
        " \n @SUM(A1)",
    ],
)
def test_formula_text_gets_a_leading_quote(text: str) -> None:
    assert csv_cell(text) == "'" + text


@pytest.mark.parametrize("value", [-0.5, -3, 0, 2.5, None, True, "Qwen 3 8B", "a=b", "x-y"])
def test_numbers_and_plain_text_are_unchanged(value: object) -> None:
    assert csv_cell(value) == value


def test_csv_writes_negative_numbers_as_numbers_and_quotes_formulas() -> None:
    records = [{"name": '=HYPERLINK("http://x","y")', "delta": -0.25}, {"name": "-1", "delta": -7}]
    rows = list(csv.reader(io.StringIO(csv_text(["name", "delta"], records))))
    assert rows == [["name", "delta"], ['\'=HYPERLINK("http://x","y")', "-0.25"], ["'-1", "-7"]]


def test_every_csv_producer_neutralises_formulas() -> None:
    """Downloads and chart data both go through the same rule."""
    formula = "@SUM(1+1)"
    assert "'@SUM" in to_csv(["model"], [{"model": formula}])
    assert "'@SUM" in chart_csv({"datasets": {"table": [{"model": formula, "x": -1.5}]}})
    assert ",-1.5" in chart_csv({"datasets": {"table": [{"model": formula, "x": -1.5}]}})


# --- markdown and text lines ---------------------------------------------------------------


def _html(markdown_source: str) -> str:
    return md.markdown(markdown_source, extensions=["tables"])


def test_markdown_text_adds_no_syntax() -> None:
    """Rendered inside a list item and a table row, the hostile name stays one item, one
    row of two cells, and shows its characters as text."""
    name = markdown_text(HOSTILE_NAME)
    assert "\n" not in name
    html = _html(f"- {name}\n- second\n\n| a | b |\n|---|---|\n| {name} | 2 |\n")
    for tag in ("<a", "<img", "<h1", "<code", "<pre", "<em", "<strong"):
        assert tag not in html, tag
    assert html.count("<li>") == 2 and html.count("<td>") == 2
    assert "[click](javascript:alert(1))" in html.replace("&#58;", ":")
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("# head", "&#35; head"),
        ("- item", "&#45; item"),
        ("1. one", "1\\. one"),
        ("see https://x.org", "see https&#58;//x.org"),
        ("www.x.org", "www&#46;x.org"),
        ("a@b.org", "a&#64;b.org"),
        ("a_b*c", "a\\_b\\*c"),
        ("Qwen 3 8B (v2)", "Qwen 3 8B (v2)"),
    ],
)
def test_markdown_text_by_hand(text: str, escaped: str) -> None:
    assert markdown_text(text) == escaped


def test_text_line_shows_line_breaks_and_controls() -> None:
    assert text_line("a\nb\r\tc\x1b[31m\u2028\u202e") == "a\\nb\\r\\tc\\x1b[31m\\u2028\\u202e"
    assert text_line("plain é 😀") == "plain é 😀"


# --- producers -----------------------------------------------------------------------------


@pytest.fixture()
def hostile_head(tmp_path: Path) -> Path:
    """The golden data plus a copy of one measurement under a hostile file name."""
    head = tmp_path / "head"
    shutil.copytree(DATA, head)
    source = next((head / "measurements/gpqa/Qwen/Qwen3-8B").glob("*.json"))
    shutil.copy(source, source.with_name(HOSTILE_NAME))
    return head


def test_diff_report_lists_a_hostile_file_name_on_one_line(hostile_head: Path) -> None:
    head = load_side(hostile_head)
    assert any("# forged | cell |" in p.file for p in head.problems)  # it reaches the report
    report = diff_markdown(load_side(DATA), head)
    problem_lines = [line for line in report.splitlines() if line.startswith("- ")]
    assert len(problem_lines) == len(head.problems)
    assert not any(line.startswith(("#", "|", "```")) for line in report.splitlines()[1:])
    html = _html(report)
    for tag in ("<a", "<img", "<h1", "<table", "<code", "<pre"):
        assert tag not in html, tag


def test_diff_report_shows_a_hostile_nickname_as_text(tmp_path: Path) -> None:
    """A new model whose nickname holds a link, an image and table pipes: listed and ranked
    as text, every rank row keeps its four cells."""
    nickname = "[click](http://evil.example) ![i](http://evil.example/x.png) | a | b | <b>x</b>"
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(DATA, base)
    shutil.copytree(DATA, head)
    shutil.rmtree(base / "measurements/image-chat")  # its only model is new in head
    models = (head / "models.yaml").read_text(encoding="utf-8")
    (head / "models.yaml").write_text(
        models.replace("nickname: Gemma 3 12B", f"nickname: '{nickname}'"), encoding="utf-8"
    )
    head_side = load_side(head)
    assert head_side.data is not None
    assert head_side.data.registry.models["google/gemma-3-12b-it"].nickname == nickname
    report = diff_markdown(load_side(base), head_side)
    html = _html(report)
    for tag in ("<a", "<img", "<b>"):
        assert tag not in html, tag
    rows = [line for line in report.splitlines() if line.startswith("| ")]
    assert any("new" in row for row in rows)
    assert all(row.count("|") == 5 for row in rows), rows  # 4 cells: 5 pipes


def test_cli_text_report_keeps_one_line_per_problem(
    hostile_head: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", "--data", str(hostile_head)]) == 1
    lines = capsys.readouterr().err.splitlines()
    body = lines[:-2]  # then "N problem(s) in M file(s)" and "validation failed"
    assert body and all(line.startswith(str(hostile_head)) for line in body), lines
    assert lines[-2].endswith("file(s)")


def test_atom_feed_is_well_formed_whatever_the_notes_hold() -> None:
    notes = "bell \x07, escape \x1b, form feed \x0c & <b>bold</b>"
    with pytest.raises(ValidationError, match="hidden_character"):
        Release(version="v1", date="2026-01-01", notes_md=notes)  # releases.yaml refuses them
    # The feed does not rely on that: notes that were never validated still make valid XML.
    release = Release.model_construct(version="v1", date=date(2026, 1, 1), notes_md=notes)
    feed = atom_feed([ReleaseData(release, Side(None))], Urls(base="/"), 'A "quoted" & title')
    root = ET.fromstring(feed)
    ns = "{http://www.w3.org/2005/Atom}"
    assert root.findtext(f"{ns}title") == 'A "quoted" & title: data releases'
    assert "&amp;" in (root.findtext(f"{ns}entry/{ns}content") or "")


def test_sitemap_is_well_formed_under_any_base_url() -> None:
    from jouleboard.plan.site import sitemap

    page = Page("models/a&b/index.html", "prose.html", "t", "d", ProseBody(""))
    root = ET.fromstring(sitemap(Urls(base="/x&y/"), [page]))
    locs = [e.text for e in root.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")]
    assert locs == ["/x&y/models/a&b/"]


def test_diff_report_shows_a_hostile_output_unit_as_text(tmp_path: Path) -> None:
    """A task's output_unit makes the unit of its tables' header ("Images/kJ"), which the
    report printed as it was: an HTML comment hid the rest of the job summary, a pipe broke
    the table into a paragraph, and a link came through."""
    unit = "image <!-- @octocat | [x](javascript:alert(1))"
    head = tmp_path / "head"
    shutil.copytree(DATA, head)
    tasks = (head / "tasks.yaml").read_text(encoding="utf-8")
    (head / "tasks.yaml").write_text(
        tasks.replace("output_unit: image\n", f"output_unit: '{unit}'\n"), encoding="utf-8"
    )
    image = next((head / "measurements/text-to-image").rglob("*.json"))
    doc = json.loads(image.read_text())
    doc["metrics"]["energy_per_output_joules"] *= 0.5  # twice as efficient: a rank move
    doc["metrics"]["throughput_outputs_per_sec"] *= 2
    doc["metrics"]["batch_latency_s"] /= 2
    image.write_text(json.dumps(doc))
    head_side = load_side(head)
    assert head_side.data is not None, head_side.problems
    report = diff_markdown(load_side(DATA), head_side)
    assert "octocat" in report  # the section is there
    html = _html(report)
    for tag in ("<a", "<!--", "@octocat"):
        assert tag not in html, tag
    rows = [line for line in report.splitlines() if line.startswith("| ")]
    assert rows and all(row.count("|") == 5 for row in rows), rows  # 4 cells: 5 pipes
