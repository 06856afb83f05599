"""The MLPerf pages of the default site (data/mlperf/: 22 real results) and the measurement
boundary on every published figure.

Independent facts: MLCommons' official v5.1 summary (tests/fixtures/mlperf) for the B200
figures; the ML.ENERGY data is GPU energy throughout."""

from __future__ import annotations

import csv
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.cli_run import jouleboard as jouleboard_here

REPO = Path(__file__).resolve().parents[1]
SUMMARY = REPO / "tests" / "fixtures" / "mlperf" / "summary_results-v5.1-power.json"


class Tables(HTMLParser):
    """Every table of a page: caption and rows of cell texts (and each cell's links)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, dict[str, list[object]]] = {}
        self._table: str | None = None
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._in_caption = False
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self._table = a.get("id") or ""
            self.tables[self._table] = {"caption": [], "rows": []}
        elif tag == "caption":
            self._in_caption = True
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag == "td" and self._row is not None:
            self._cell = []
        elif tag == "a" and a.get("href"):
            self.links.append(str(a["href"]))

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._table = None
        elif tag == "caption":
            self._in_caption = False
        elif tag == "td" and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row and self._table is not None:
            self.tables[self._table]["rows"].append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._in_caption and self._table is not None:
            self.tables[self._table]["caption"].append(data)
        if self._cell is not None:
            self._cell.append(data)


def tables(page: Path) -> Tables:
    parser = Tables()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def number(text: str) -> float:
    return float(re.sub(r"[^0-9.]", "", text.split()[0]))


def test_a_benchmark_page_ranks_systems_server_and_offline_apart(default_site: Path) -> None:
    page = default_site / "mlperf" / "llama2-70b-99" / "index.html"
    t = tables(page)
    html = page.read_text(encoding="utf-8")
    assert set(t.tables) == {"mlperf-server", "mlperf-offline"}
    official = {
        (r["Model"], r["Scenario"]): r for r in json.loads(SUMMARY.read_text(encoding="utf-8"))
    }
    for scenario, table in (("Server", "mlperf-server"), ("Offline", "mlperf-offline")):
        rows = t.tables[table]["rows"]
        # One row per system: the v5.1 8x B200 and the v4.1 8x H200; best (most tokens/J) first.
        assert [r[0] for r in rows] == ["1", "2"]
        assert "B200" in str(rows[0][1]) and "H200" in str(rows[1][1])
        figures = [number(str(r[2])) for r in rows]
        assert figures == sorted(figures, reverse=True)
        # The derived figure stands beside the measured ones it comes from.
        for r in rows:
            tokens_per_j = number(str(r[3])) / number(str(r[4]))
            assert number(str(r[2])) == pytest.approx(tokens_per_j, rel=2e-3)
        row = official[("llama2-70b-99", scenario)]
        expected = float(row["Performance_Result"]) / float(row["Power_Result"])
        assert number(str(rows[0][2])) == pytest.approx(expected, rel=1e-3)
        assert f"Derived from MLPerf Inference v5.1 result {row['ID']}" in str(rows[0][-1])
        assert "Not verified by MLCommons" in str(rows[0][-1])
        # v4.1's own summary (MLCommons, beside v5.1's) gives its rows result v4.1-0049.
        assert "Derived from MLPerf Inference v4.1 result v4.1-0049" in str(rows[1][-1])
        assert "Lenovo, v5.1, closed" in str(rows[0][1])
    # The constraint the Server results met; Offline has none.
    assert "p99 time to first token ≤ 2,000 ms and p99 time per output token ≤ 200 ms" in html
    assert "there is no latency constraint" in html
    assert "whole system at the wall" in html
    assert (
        "https://github.com/mlcommons/inference_results_v5.1/tree/main/closed/Lenovo/results/"
        "SR680a_V3_B200SXMx8_TRT/llama2-70b-99/Server" in t.links
    )
    assert "MLPerf is a trademark of MLCommons" in html


def test_sample_workloads_rank_by_joules_per_image(default_site: Path) -> None:
    t = tables(default_site / "mlperf" / "stable-diffusion-xl" / "index.html")
    page = (default_site / "mlperf" / "stable-diffusion-xl" / "index.html").read_text()
    assert "J/image (derived)" in page
    rows = t.tables["mlperf-offline"]["rows"]
    joules = [number(str(r[2])) for r in rows]
    assert joules == sorted(joules)  # fewest joules first
    for r in rows:  # J/image = W / (images/s)
        assert number(str(r[2])) == pytest.approx(number(str(r[4])) / number(str(r[3])), rel=2e-3)


def test_mlperf_results_never_enter_a_gpu_energy_ranking(default_site: Path) -> None:
    """Task pages rank models by GPU energy and say so; no MLPerf system is among them; the
    model and GPU pages show MLPerf results in a section of their own, at the wall."""
    for task in ("gpqa", "lm-arena-chat", "text-to-image"):
        page = default_site / "tasks" / task / "index.html"
        html = page.read_text(encoding="utf-8")
        assert "MLPerf Inference" not in html.split("<footer")[0]
        captions = ["".join(map(str, v["caption"])) for v in tables(page).tables.values()]
        assert any("(GPU energy only)" in c for c in captions)
    model = next((default_site / "models").glob("*llama-3.1-8b-instruct/index.html"))
    html = model.read_text(encoding="utf-8")
    assert 'id="mlperf"' in html
    before, mlperf_part = html.split('id="mlperf"', 1)
    assert "ThinkSystem SR780a" in mlperf_part and "ThinkSystem" not in before
    assert "whole system at the wall" in mlperf_part
    b200 = (default_site / "gpus" / "b200" / "index.html").read_text(encoding="utf-8")
    assert 'id="mlperf"' in b200 and "ThinkSystem SR680a" in b200.split('id="mlperf"', 1)[1]


def test_charts_and_embeds_state_the_boundary(default_site: Path) -> None:
    """Every energy chart's caption, and every embed's credit, says what the energy includes
    (GPU energy, or the whole system at the wall for MLPerf's; the output-length histograms
    show no energy and say nothing)."""
    page = (default_site / "tasks" / "gpqa" / "index.html").read_text(encoding="utf-8")
    figures = re.findall(r'<figure class="chart" id="chart-([^"]+)".*?</figcaption>', page, re.S)
    captions = re.findall(r'<figure class="chart".*?</figcaption>', page, re.S)
    assert len(figures) >= 2
    assert all('<span class="chart-boundary">GPU energy only.</span>' in c for c in captions)
    embeds = sorted((default_site / "embed").glob("*/index.html"))
    assert embeds
    for embed in embeds:
        credit = re.search(r'<p class="credit">(.*?)</p>', embed.read_text(encoding="utf-8"), re.S)
        assert credit is not None
        name, said = embed.parent.name, credit.group(1)
        # An MLPerf chart's energy is at the wall; a histogram of lengths shows no energy.
        assert ("whole system at the wall" in said) == name.startswith("mlperf")
        assert ("GPU energy only" in said) == (not name.startswith(("lengths", "mlperf")))


def test_downloads_and_labels_state_the_boundary(default_site: Path) -> None:
    with (default_site / "downloads" / "mlperf.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 22
    assert {r["energy_boundary"] for r in rows} == {"system-ac"}
    for r in rows:
        assert float(r["outputs_per_joule"]) == pytest.approx(
            float(r["throughput_per_sec"]) / float(r["avg_power_watts"]), rel=1e-12
        )
        assert "not verified by MLCommons" in r["derived_figures"]
    with (default_site / "downloads" / "configurations.csv").open(encoding="utf-8") as f:
        assert {r["energy_boundary"] for r in csv.DictReader(f)} == {"gpu"}
    ranking = next((default_site / "downloads" / "rankings").glob("gpqa-*.csv"))
    with ranking.open(encoding="utf-8") as f:
        assert {r["energy_boundary"] for r in csv.DictReader(f)} == {"gpu"}
    label = next((default_site / "labels").rglob("*.svg")).read_text(encoding="utf-8")
    assert "GPU energy" in label


def test_the_api_rows_state_the_boundary() -> None:
    import jouleboard

    board = jouleboard.load(REPO / "data")
    results = board.mlperf("llama2-70b-99")
    assert len(results.records) == 4  # two systems, Server and Offline
    assert {r["energy_boundary"] for r in results.records} == {"system-ac"}
    assert {r["energy_boundary"] for r in board.rank("gpqa").records} == {"gpu"}
    assert {r["energy_boundary"] for r in board.configurations(task="gpqa").records} == {"gpu"}
    with pytest.raises(ValueError, match="unknown benchmark 'llama2-70b'"):
        board.mlperf("llama2-70b")


def test_a_task_mixing_boundaries_does_not_validate(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(REPO / "tests" / "golden" / "data", data)
    first = sorted((data / "measurements").rglob("*.json"))[0]
    doc = json.loads(first.read_text(encoding="utf-8"))
    doc["provenance"]["boundary"] = "system-ac"
    first.write_text(json.dumps(doc), encoding="utf-8")
    done = jouleboard_here("validate", "--data", data)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    shown = first.relative_to(tmp_path).as_posix()
    assert re.search(
        rf"{re.escape(shown)}: /provenance/boundary: dataset.mixed-boundary: task 'gpqa' mixes",
        done.stderr,
    ), done.stderr


def test_an_mlperf_chart_credits_mlperf_not_the_sites_measurements(default_site: Path) -> None:
    """An MLPerf chart's citation, BibTeX and embed credit named "The ML.ENERGY Benchmark v3"
    (the site's own measurements) for figures MLCommons publishes, and the embed wrote "not
    verified by mlcommons" (Jinja's capitalize lowers the rest). Each now names MLPerf
    Inference, the rounds its systems come from (read from downloads/mlperf.csv), and
    MLCommons; a GPU-energy chart still cites the site's measurements."""
    with (default_site / "downloads" / "mlperf.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    checked = 0
    for benchmark in sorted({r["benchmark"] for r in rows}):
        rounds = sorted({r["round"] for r in rows if r["benchmark"] == benchmark})
        named = f"MLPerf Inference {' and '.join(rounds)} (MLCommons)"
        page = (default_site / "mlperf" / benchmark / "index.html").read_text(encoding="utf-8")
        cite = re.search(r'<p class="cite">(.*?)</p>', page, re.S)
        assert cite is not None and f"Measurements: {named}." in cite.group(1), benchmark
        assert "ML.ENERGY" not in cite.group(1) and f"Measurements: {named}" in page  # BibTeX
        embed = default_site / "embed" / f"mlperf--{benchmark}" / "index.html"
        credit = re.search(r'<p class="credit">(.*?)</p>', embed.read_text(encoding="utf-8"))
        assert credit is not None and f"measurements from {named}" in credit.group(1)
        assert "ML.ENERGY" not in credit.group(1) and "not verified by MLCommons" in credit.group(1)
        checked += 1
    assert checked >= 8 and len(rounds) >= 1
    gpqa = (default_site / "embed" / "top--gpqa" / "index.html").read_text(encoding="utf-8")
    assert "measurements from The ML.ENERGY Benchmark v3" in gpqa
