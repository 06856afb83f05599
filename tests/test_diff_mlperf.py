"""jouleboard diff covers MLPerf results (issue 39 item 5): a pull request adding the 22
bundled result files said "0 configuration(s) added ... No ranking changes"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from jouleboard.plan.diff import diff_markdown, load_side

pytestmark = pytest.mark.slow  # loads the bundled data twice

REPO = Path(__file__).resolve().parents[1]
LENOVO = Path("mlperf/v5.1/Lenovo/SR680a_V3_B200SXMx8_TRT/llama2-70b-99/Server.json")


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("mlperf-diff")
    base, head = root / "base", root / "head"
    shutil.copytree(REPO / "data", base, ignore=shutil.ignore_patterns("mlperf"))
    shutil.copytree(REPO / "data", head)
    return base, head


def test_added_results_are_listed(sides: tuple[Path, Path]) -> None:
    base, head = sides
    report = diff_markdown(load_side(base), load_side(head))
    files = len(list((REPO / "data" / "mlperf").rglob("*.json")))
    assert files == 22
    assert f"{files} result(s) added, 0 removed, 0 changed" in report
    assert "llama2-70b-99 Server: " in report and "(Lenovo, v5.1)" in report
    # Every benchmark and scenario gets its table of new rows.
    # gptj, llama2-70b (each at 99 and 99.9), mixtral, sdxl, llama3.1-405b and -8b: 8
    # benchmarks, each in the Server and Offline scenarios.
    assert report.count("### MLPerf ") == 8 * 2
    assert "No MLPerf ranking changes" not in report


def test_a_changed_result_moves_its_system(sides: tuple[Path, Path], tmp_path: Path) -> None:
    """llama2-70b-99 Server: Lenovo's B200 system does 99,159.3 / 10,442.3 = 9.50 tokens/J,
    NVIDIA's H200 system 23,113.1 / 6,280.2 = 3.68. A third of Lenovo's throughput gives
    3.17 tokens/J: it falls to second and NVIDIA's rises to first."""
    _, data = sides
    head = tmp_path / "head"
    shutil.copytree(data, head)
    doc = json.loads((head / LENOVO).read_text())
    doc["throughput_per_sec"] = doc["throughput_per_sec"] / 3
    (head / LENOVO).write_text(json.dumps(doc))
    report = diff_markdown(load_side(data), load_side(head))
    assert "0 result(s) added, 0 removed, 1 changed" in report
    assert "llama2-70b-99 Server: " in report and "9.496 tokens/J → 3.165 tokens/J" in report
    section = report.split("### MLPerf llama2-70b-99, Server")[1].split("###")[0]
    assert "| 1 | " in section and "↑ from 2 | 3.680 tokens/J → 3.680 tokens/J |" in section
    assert "↓ from 1 | 9.496 tokens/J → 3.165 tokens/J |" in section
    assert "### MLPerf llama2-70b-99.9" not in report  # untouched benchmarks: no table
