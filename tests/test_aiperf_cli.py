"""The whole path a team takes (issue 38): a fresh `jouleboard init` folder, the exports of a
real AIPerf 0.13.0 run at three concurrencies (tests/fixtures/aiperf/sweep), `jouleboard
import-aiperf`, `jouleboard build`. The built leaderboard's figures equal AIPerf's own to
1e-9, and its ranking at a deadline picks the level the exports themselves say is the most
efficient one meeting it. Refusals print one located line and write nothing."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest

from tests.cli_run import jouleboard as jouleboard_here
from tests.test_mlperf_import import tree_digest as digest

pytestmark = pytest.mark.slow  # builds a site with the command line

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "aiperf"
LEVELS = (1, 4, 16)
MODEL = "example-org/example-llm-8b"
OPTIONS = ("--out", "data", "--task", "chat", "--model", MODEL, "--tensor-parallel", "2")
# The sweep's import, as a team would type it.
IMPORT = (
    "import-aiperf",
    FIXTURES / "sweep",
    *OPTIONS,
    "--engine",
    "vLLM",
    "--engine-version",
    "0.11.0",
)


def cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return jouleboard_here(*args, cwd=cwd, timeout=600)


def export(level: int) -> dict:
    path = FIXTURES / "sweep" / f"concurrency_{level}" / "profile_export_aiperf.json"
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh leaderboard folder with the sweep imported (its example measurement removed,
    as its README says to) and built."""
    folder = tmp_path_factory.mktemp("aiperf") / "mysite"
    assert cli("init", folder, cwd=folder.parent).returncode == 0
    for example in (folder / "data" / "measurements").rglob("*.json"):
        example.unlink()
    done = cli(*IMPORT, cwd=folder)
    assert done.returncode == 0, done.stderr
    (folder.parent / "import.stderr").write_text(done.stderr, encoding="utf-8")
    assert done.stdout.count("\nwrote ") + done.stdout.startswith("wrote ") == 3, done.stdout
    built = cli("build", "-q", cwd=folder)
    assert built.returncode == 0, built.stderr
    return folder


def best_level(deadline_ms: float) -> int:
    """From the exports alone: the most tokens per joule with median ITL within the deadline."""
    meeting = [c for c in LEVELS if export(c)["inter_token_latency"]["p50"] <= deadline_ms]
    return max(meeting, key=lambda c: export(c)["nvidia_output_tokens_per_joule"]["avg"])


@pytest.mark.parametrize("deadline", [50, 100, 300])
def test_the_ranking_picks_the_most_efficient_level_within_the_deadline(
    site: Path, deadline: int
) -> None:
    rows = json.loads(
        (site / "site" / "downloads" / "rankings" / f"chat-p50-{deadline}ms.json").read_text()
    )
    assert len(rows) == 1
    level = best_level(deadline)
    doc = export(level)
    row = rows[0]
    assert row["max_num_seqs"] == level
    assert row["median_itl_ms"] == doc["inter_token_latency"]["p50"]
    assert math.isclose(
        row["tokens_per_joule"], doc["nvidia_output_tokens_per_joule"]["avg"], rel_tol=1e-9
    )
    assert math.isclose(
        row["avg_power_watts"], doc["nvidia_average_gpu_power"]["avg"], rel_tol=1e-9
    )
    assert row["energy_boundary"] == "gpu"


def test_the_levels_differ_at_these_deadlines() -> None:
    """The deadlines above exercise the rule: a tighter one picks a lower level."""
    assert best_level(50) != best_level(300)


def test_every_level_is_a_configuration_with_aiperfs_figures(site: Path) -> None:
    rows = json.loads((site / "site" / "downloads" / "configurations.json").read_text())
    assert sorted(r["max_num_seqs"] for r in rows) == list(LEVELS)
    for row in rows:
        doc = export(row["max_num_seqs"])
        assert math.isclose(
            row["energy_per_token_joules"] * 1000,
            doc["nvidia_energy_per_output_token"]["avg"],
            rel_tol=1e-9,
        )
        assert row["num_gpus"] == 2 and row["gpu_model"] == "H100"
        # The load level, as AIPerf ran it (it was in no download: two levels capped alike
        # by --max-num-seqs were two rows alike in all but their source).
        (profiling,) = [p for p in doc["input_config"]["phases"] if p["kind"] == "profiling"]
        assert row["concurrency"] == profiling["concurrency"]
        assert row["request_rate_per_sec"] is None
        assert row["p99_itl_ms"] == doc["inter_token_latency"]["p99"]
        assert row["output_throughput_tokens_per_sec"] == doc["output_token_throughput"]["avg"]


def test_the_model_page_names_each_level_the_engine_and_the_workload(site: Path) -> None:
    """The sweep's requests were AIPerf's synthetic prompts with --osl 48 (input_config)."""
    page = (site / "site" / "models" / "example-org--example-llm-8b" / "index.html").read_text()
    for level in LEVELS:
        (dataset,) = export(level)["input_config"]["datasets"]
        assert dataset["type"] == "synthetic"
        answers = dataset["prompts"]["osl"]["mean"]
        assert (
            f"concurrency {level} (vLLM 0.11.0; synthetic prompts, {answers:.0f}-token answers)"
            in page
        )


def test_the_import_warns_once_per_run_of_synthetic_requests(site: Path) -> None:
    """Imported, but told on stderr, each on its export, with how to compare it fairly."""
    said = (site.parent / "import.stderr").read_text(encoding="utf-8").splitlines()
    warned = [line for line in said if ": aiperf.synthetic-workload: " in line]
    assert len(warned) == len(LEVELS)
    for level in LEVELS:
        (line,) = [w for w in warned if f"concurrency_{level}/profile_export_aiperf.json" in w]
        assert line.startswith("warning: ")
        assert "/input_config/datasets/0/type" in line and "energy per token" in line


def test_importing_again_changes_nothing(site: Path) -> None:
    before = digest(site / "data")
    again = cli(*IMPORT, cwd=site)
    assert again.returncode == 0, again.stderr
    assert "0 measurement files written, 3 already there unchanged" in again.stdout
    assert digest(site / "data") == before


@pytest.mark.parametrize(
    ("case", "rule"),
    [
        ("no-telemetry", "aiperf.no-telemetry"),
        ("power-only", "aiperf.power-integrated"),
        ("short", "aiperf.run-too-short"),
        ("errors", "aiperf.failed-requests"),
        ("mixed-gpus", "aiperf.mixed-gpus"),
    ],
)
def test_a_refused_run_is_one_line_and_nothing_is_written(site: Path, case: str, rule: str) -> None:
    before = digest(site / "data")
    # with a good run beside it: all or nothing
    done = cli("import-aiperf", FIXTURES / case, FIXTURES / "sweep", *OPTIONS, cwd=site)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert lines[1:] == ["1 problem(s) in 1 file(s)", "validation failed"], done.stderr
    assert f"{case}/profile_export_aiperf.json: /" in lines[0] and f": {rule}: " in lines[0]
    assert "Traceback" not in done.stderr
    assert digest(site / "data") == before


def test_import_bench_takes_a_result_with_energy_and_refuses_one_without(tmp_path: Path) -> None:
    """import-bench, in a data folder of its own: a TensorRT-LLM result with energy imports; the
    same script's result without an energy block is one line, "no energy recorded"."""
    trtllm = REPO / "tests" / "fixtures" / "trtllm"
    options = (*OPTIONS, "--gpu", "H100", "--num-gpus", "2")
    assert cli("init", tmp_path / "bench", cwd=tmp_path).returncode == 0
    folder = tmp_path / "bench"
    done = cli("import-bench", trtllm / "with-energy", *options, cwd=folder)
    assert done.returncode == 0, done.stderr
    assert "1 measurement files written" in done.stdout
    assert cli("validate", cwd=folder).returncode == 0
    before = digest(folder / "data")
    refused = cli("import-bench", trtllm / "no-energy", *options, cwd=folder)
    assert refused.returncode == 1
    lines = refused.stderr.strip().splitlines()
    assert lines[1:] == ["1 problem(s) in 1 file(s)", "validation failed"], refused.stderr
    assert ": /energy: bench.no-energy: no energy recorded" in lines[0]
    assert digest(folder / "data") == before


def test_the_site_says_the_energy_covers_each_whole_run(site: Path) -> None:
    """AIPerf's GPU telemetry spans the whole run, ramp-up and drain included: the exports'
    own telemetry window starts with the benchmark and ends after it. Every page's footer
    and the home page said the energy was "measured in the steady state of each run"."""
    for level in LEVELS:
        doc = export(level)
        window = doc["telemetry_data"]["summary"]
        assert window["start_time"] <= doc["start_time"] and window["end_time"] >= doc["end_time"]
    pages = site / "site"
    home = (pages / "index.html").read_text()
    model = (pages / "models" / "example-org--example-llm-8b" / "index.html").read_text()
    for page in (home, model, (pages / "about" / "index.html").read_text()):
        footer = page[page.index("<footer") :]
        assert "GPU energy only, measured over each benchmark run as a whole." in footer
    assert "steady state" not in home
    assert "GPUs only, over each benchmark run as a whole, in serving benchmarks on H100" in home
    assert "Energy measured over each benchmark run as a whole." in model
    rows = json.loads((pages / "downloads" / "configurations.json").read_text())
    assert {r["energy_window"] for r in rows} == {"whole-run"}


def test_the_model_page_names_the_data_set_by_what_is_known(site: Path) -> None:
    """The data sources read "AIPerf runs unknown, 2026-12-03, NOASSERTION": a version and a
    licence the import does not know, said as if they were ones. The date is the run's."""
    page = (site / "site" / "models" / "example-org--example-llm-8b" / "index.html").read_text()
    sources = page[
        page.index('id="data-sources"') : page.index("</section>", page.index('id="data-sources"'))
    ]
    day = export(LEVELS[0])["start_time"][:10]
    assert f"<strong>AIPerf runs</strong> ({day}): 3 configurations." in sources, sources
    assert "unknown" not in sources and "NOASSERTION" not in sources
    # The configuration table's caption names its one source the same way.
    assert f"Chat, from AIPerf runs ({day}) <span" in page
    assert "unknown" not in page and "NOASSERTION" not in page


def test_the_glossary_says_aiperfs_percentiles_are_over_requests(site: Path) -> None:
    """The glossary said a percentile is over "all token gaps": AIPerf's inter-token latency
    has one value per request (its count is the request count, not the token gaps')."""
    for level in LEVELS:
        doc = export(level)
        assert doc["inter_token_latency"]["count"] == doc["request_count"]["avg"]
        assert doc["inter_token_latency"]["count"] < doc["total_osl"]["avg"] / 2
    glossary = (site / "site" / "glossary" / "index.html").read_text()
    assert "half of all token gaps" not in glossary
    assert "AIPerf gives each request&#39;s average gap, so its percentiles are over requests" in (
        glossary
    )
