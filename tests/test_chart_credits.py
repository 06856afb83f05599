"""A chart credits the data sets it draws from: on a site of ML.ENERGY data and AIPerf runs of
one task, every embed credited both ("measurements from AIPerf runs; The ML.ENERGY
Benchmark v3"), the image task's too, which has no AIPerf run."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from jouleboard.engine.build import build_site
from tests.cli_run import jouleboard
from tests.golden.tree import DATA, REPO

pytestmark = pytest.mark.slow  # builds a site

SWEEP = REPO / "tests" / "fixtures" / "aiperf" / "sweep"
ML_ENERGY = "The ML.ENERGY Benchmark v3"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The golden data (ML.ENERGY's, three tasks) with an AIPerf sweep of Qwen 3 8B on GPQA."""
    folder = tmp_path_factory.mktemp("credits")
    data = folder / "data"
    shutil.copytree(DATA, data)
    done = jouleboard(
        "import-aiperf", SWEEP, "--out", data, "--task", "gpqa", "--model", "Qwen/Qwen3-8B",
        "--tensor-parallel", "2", cwd=folder, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    build_site(data, folder / "site", project=REPO)
    return folder / "site"


def credit(page: Path) -> str:
    text = page.read_text(encoding="utf-8")
    found = re.search(r"measurements from ([^<]*?) · <a", text)
    return found.group(1) if found else ""


def test_each_embed_credits_the_data_sets_of_its_own_task(site: Path) -> None:
    credits = {p.parent.name: credit(p) for p in (site / "embed").glob("*/index.html")}
    own = {k: v for k, v in credits.items() if k.startswith(("pareto--", "lengths--"))}
    tasks = {k: v for k, v in credits.items() if k not in own}  # a task's, or a GPU page's
    image = {k: v for k, v in tasks.items() if k.endswith("--text-to-image")}
    gpqa = {k: v for k, v in tasks.items() if k.endswith("--gpqa")}
    assert image and gpqa
    assert set(image.values()) == {f"{ML_ENERGY} (Apache-2.0)"}, image
    for name, said in gpqa.items():  # GPQA's charts draw both
        assert "AIPerf runs" in said and ML_ENERGY in said, (name, said)
    # A model's own chart draws its own runs: Qwen 3 8B on GPQA has both, Gemma on image
    # chat ML.ENERGY's alone.
    assert own and all(
        ("AIPerf runs" in v) == (k.endswith("qwen--qwen3-8b--gpqa")) for k, v in own.items()
    ), own


def test_the_cite_text_of_a_chart_names_its_own_data_sets(site: Path) -> None:
    page = (site / "tasks" / "text-to-image" / "index.html").read_text(encoding="utf-8")
    assert "AIPerf" not in page.split("<footer")[0], "the image task's page names AIPerf"


def test_the_glossary_says_the_noise_estimate_is_applied_to_the_aiperf_runs(site: Path) -> None:
    """GPQA's noise estimate rests on the ML.ENERGY data's repeat pair and is applied to
    the task's AIPerf runs as well (they give them rank ranges); the glossary listed the
    tasks and GPUs without a repeat, but not that data set."""
    glossary = (site / "glossary" / "index.html").read_text(encoding="utf-8")
    said = re.findall(r"<p>No repeat ran on [^<]*</p>", glossary)
    assert any("the measurements of AIPerf runs" in p and "and data set." in p for p in said), said
    assert not any(ML_ENERGY in p for p in said), said


def test_each_row_of_the_full_data_set_names_its_data_set_and_licence(site: Path) -> None:
    """The downloads named neither: the AIPerf rows (those with a load level; no licence
    stated) could not be told from the Apache-2.0 rows but by their energy window."""
    import csv

    with (site / "downloads" / "configurations.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    named = {(r["dataset"], r["license"]) for r in rows if r["concurrency"]}
    others = {(r["dataset"], r["license"]) for r in rows if not r["concurrency"]}
    assert named == {("AIPerf runs", "NOASSERTION")}, named
    assert others == {(ML_ENERGY, "Apache-2.0")}, others
