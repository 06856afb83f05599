"""Energy per correct answer: the metric, the ranking on the default data, validation, pages."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from jouleboard.config.registry import load_registry
from jouleboard.loading.dataset import load_dataset
from jouleboard.measure import metrics
from jouleboard.rank.ranking import Deadline, objective_for, rank
from tests.golden.tree import DATA

REPO = Path(__file__).resolve().parents[1]


def test_metric_hand_computed() -> None:
    # 1,000 J per response at 80 % accuracy: 1,250 J per correct answer; 3.6e6 / 1250 = 2880.
    assert metrics.energy_per_correct_answer(1000.0, 80.0) == pytest.approx(1250.0)
    assert metrics.correct_answers_per_kwh(1250.0) == pytest.approx(2880.0)
    assert metrics.energy_per_correct_answer(61.0, 100.0) == pytest.approx(61.0)


def independent_ranking() -> list[str]:
    """gpqa at 300 ms on B200+H100 by J per correct answer, from the files alone:
    per model the lowest energy_per_response / (accuracy / 100) among its configurations."""
    scores = {
        s["model_id"]: s["accuracy_percent"]
        for s in yaml.safe_load((REPO / "data/quality/gpqa.yaml").read_text())["scores"]
    }
    best: dict[str, float] = {}
    for path in (REPO / "data/measurements/gpqa").rglob("*.json"):
        m = json.loads(path.read_text())
        if (
            m["metrics"]["median_itl_ms"] <= 300
            and m["gpu_model"] in {"B200", "H100"}
            and m["model_id"] in scores
        ):
            value = m["metrics"]["energy_per_response_joules"] / (scores[m["model_id"]] / 100)
            best[m["model_id"]] = min(value, best.get(m["model_id"], float("inf")))
    return sorted(best, key=best.__getitem__)


def test_gpqa_by_energy_per_correct_answer_matches_an_independent_computation() -> None:
    data = load_dataset(REPO / "data")

    def accuracy(model_id: str) -> float | None:
        score = data.registry.accuracy("gpqa", model_id)
        return score.accuracy_percent if score else None

    rows = rank(
        data.for_task("gpqa"),
        Deadline(300),
        gpus={"B200", "H100"},
        objective=objective_for("energy_per_correct_answer", accuracy),
    )
    got = [r.config.model_id for r in rows]
    assert got == independent_ranking()
    by_token = [
        r.config.model_id for r in rank(data.for_task("gpqa"), Deadline(300), gpus={"B200", "H100"})
    ]
    # The two swaps the published commentary points at.
    nemotron, qwen30 = "nvidia/NVIDIA-Nemotron-Nano-9B-v2", "Qwen/Qwen3-30B-A3B-Thinking-2507"
    q14, q8 = "Qwen/Qwen3-14B", "Qwen/Qwen3-8B"
    assert by_token.index(qwen30) < by_token.index(nemotron)
    assert got.index(nemotron) < got.index(qwen30)
    assert by_token.index(q8) < by_token.index(q14)
    assert got.index(q14) < got.index(q8)


@pytest.mark.parametrize(
    ("change", "rule", "where"),
    [
        (lambda s: s.pop("source_url"), "schema.missing-field", "/scores/0/source_url"),
        (
            lambda s: s.update(accuracy_percent=140.0),
            "value.out-of-range",
            "/scores/0/accuracy_percent",
        ),
        (
            lambda s: s.update(accuracy_percent=0.0),
            "value.not-positive",
            "/scores/0/accuracy_percent",
        ),
        (
            lambda s: s.update(model_id="acme/unknown"),
            "registry.unknown-model",
            "/scores/0/model_id",
        ),
        (
            lambda s: s.update(source_url="javascript:alert(1)"),
            "value.bad-url",
            "/scores/0/source_url",
        ),
    ],
)
def test_bad_quality_entries_are_rejected(tmp_path: Path, change, rule: str, where: str) -> None:
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    doc = yaml.safe_load((REPO / "data/quality/gpqa.yaml").read_text())
    doc["scores"] = [s for s in doc["scores"] if s["model_id"] == "openai/gpt-oss-20b"]
    change(doc["scores"][0])
    (data / "quality").mkdir(exist_ok=True)
    (data / "quality" / "gpqa.yaml").write_text(yaml.safe_dump(doc))
    _, problems = load_registry(data)
    assert any(
        p.rule == rule and p.pointer == where and p.file.endswith("gpqa.yaml") for p in problems
    ), [str(p) for p in problems]


def test_unknown_task_and_misnamed_file(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    doc = yaml.safe_load((REPO / "data/quality/gpqa.yaml").read_text())
    doc["task"] = "chess"
    (data / "quality").mkdir(exist_ok=True)
    (data / "quality" / "gpqa.yaml").write_text(yaml.safe_dump(doc))
    _, problems = load_registry(data)
    assert {"registry.unknown-task", "quality.file-name"} <= {p.rule for p in problems}


def test_a_hidden_quality_file_is_not_read(tmp_path: Path) -> None:
    """Nothing in the data folder whose name starts with a dot is read (the inputs digest of
    a rebuild does not see it either): a hidden quality file, even one that is not YAML,
    changes nothing."""
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    before, problems = load_registry(data)
    assert before is not None and not problems
    (data / "quality" / ".draft.yaml").write_text("task: [not: yaml", encoding="utf-8")
    assert load_registry(data) == (before, [])


@pytest.fixture(scope="module")
def site(default_site: Path) -> Path:
    return default_site


def test_task_page_shows_the_footnote_sources_and_the_view(site: Path) -> None:
    html = (site / "tasks/gpqa/index.html").read_text()
    assert "vendor-reported GPQA Diamond accuracy, not measured with the energy run" in html
    assert 'href="https://arxiv.org/abs/2508.10925"' in html
    assert 'id="correct-gpqa"' in html and "Energy per correct answer" in html
    assert (site / "charts/accuracy--gpqa.svg").exists()


def test_model_without_a_score_shows_a_dash_not_zero(site: Path) -> None:
    # Chat has no quality file: no accuracy columns at all there.
    assert "Accuracy" not in (site / "tasks/lm-arena-chat/index.html").read_text()
    # In gpqa every model has a score; a model page lists its figure with the source.
    page = (site / "models/openai--gpt-oss-20b/index.html").read_text()
    assert "Published accuracy: <strong>66.0%</strong>" in page


def test_dash_for_missing_accuracy(tmp_path: Path) -> None:
    """A gpqa model without a published score keeps its row, with dashes, never a zero."""
    from jouleboard.core.urls import Urls
    from jouleboard.plan.site import site_view
    from jouleboard.plan.task import task_table

    data_dir = tmp_path / "data"
    shutil.copytree(DATA, data_dir)
    doc = yaml.safe_load((REPO / "data/quality/gpqa.yaml").read_text())
    doc["scores"] = [s for s in doc["scores"] if s["model_id"] == "openai/gpt-oss-20b"]
    (data_dir / "quality").mkdir(exist_ok=True)
    (data_dir / "quality" / "gpqa.yaml").write_text(yaml.safe_dump(doc))
    data = load_dataset(data_dir)
    rows = rank(data.for_task("gpqa"), Deadline(300))
    site = site_view(data, Urls())
    table = task_table(site, site.tasks["gpqa"], "t", "t", rows)
    cells = {row[1].value: row[-2:] for row in table.rows}
    assert cells["GPT OSS 20B"][0].value == 66.0
    assert [(c.value, c.display) for c in cells["Qwen 3 8B"]] == [(None, "–"), (None, "–")]
