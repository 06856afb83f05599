"""Text-to-image and text-to-video: ranking, importer, validation and the unit words."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from jouleboard.kinds.diffusion import DiffusionConfiguration
from jouleboard.loading.dataset import load_dataset
from jouleboard.rank.ranking import Deadline, rank

REPO = Path(__file__).resolve().parents[1]


def dc(
    model: str, energy: float, latency_s: float, batch: int = 1, gpu: str = "B200"
) -> DiffusionConfiguration:
    return DiffusionConfiguration(
        source=f"{model}-{energy}-{latency_s}",
        task="t2i",
        model_id=model,
        gpu_model=gpu,
        num_gpus=1,
        weight_precision="bfloat16",
        batch_size=batch,
        ulysses_degree=1,
        ring_degree=1,
        repeat=1,
        energy_per_output_joules=energy,
        avg_power_watts=600.0,
        throughput_outputs_per_sec=600.0 / energy,
        batch_latency_s=latency_s,
        width_px=1024,
        height_px=1024,
        inference_steps=20,
    )


def test_hand_computed_batch_latency_ranking() -> None:
    a_fast = dc("org/a", 300.0, 2.0)
    a_slow_cheap = dc("org/a", 200.0, 40.0, batch=8)
    b = dc("org/b", 250.0, 10.0)
    # 30 s: a's cheap configuration is too slow, so b (250 J) beats a (300 J).
    at_30 = rank([a_fast, a_slow_cheap, b], Deadline(30_000))
    assert [(r.rank, r.config) for r in at_30] == [(1, b), (2, a_fast)]
    # 60 s admits it: a (200 J) first.
    at_60 = rank([a_fast, a_slow_cheap, b], Deadline(60_000))
    assert [r.config for r in at_60] == [a_slow_cheap, b]
    # Exactly at the deadline is kept.
    assert [r.config for r in rank([b], Deadline(10_000))] == [b]


@pytest.fixture(scope="module")
def data():
    return load_dataset(REPO / "data")


def test_every_task_of_the_default_data_has_configurations(data) -> None:
    """Both diffusion tasks are loaded as diffusion records, and no task is empty (the size
    of the data is not pinned: it grows with every release)."""
    kinds = {t: info.kind for t, info in data.registry.tasks.items()}
    assert {"text-to-image", "text-to-video"} <= {t for t, k in kinds.items() if k == "diffusion"}
    for task in kinds:
        assert any(c.task == task for c in data.configurations), task
    assert all(
        isinstance(c, DiffusionConfiguration)
        for c in data.configurations
        if kinds[c.task] == "diffusion"
    )


def _one_file(tmp_path: Path, task: str = "text-to-video") -> tuple[Path, Path, dict]:
    data = tmp_path / "data"
    shutil.copytree(REPO / "data", data, ignore=shutil.ignore_patterns("measurements"))
    source = next((REPO / "data/measurements" / task).rglob("*.json"))
    target = data / "measurements" / source.relative_to(REPO / "data/measurements")
    target.parent.mkdir(parents=True)
    return data, target, json.loads(source.read_text())


@pytest.mark.parametrize(
    ("edit", "rule", "where"),
    [
        (
            lambda d: d["metrics"].update(batch_latency_s=d["metrics"]["batch_latency_s"] * 1000),
            "bounds.latency-inconsistent",
            "/metrics/batch_latency_s",
        ),
        (
            lambda d: d["metrics"].update(energy_per_output_joules=1.0),
            "bounds.energy-inconsistent",
            "/metrics/energy_per_output_joules",
        ),
        (lambda d: d["output"].pop("num_frames"), "schema.missing-field", "/output"),
        (
            lambda d: d["metrics"].update(avg_power_watts=d["metrics"]["avg_power_watts"] * 10),
            "bounds.power-above-limit",
            "/metrics/avg_power_watts",
        ),
        (
            lambda d: d["metrics"].update(batch_latency_s=-1),
            "value.not-positive",
            "/metrics/batch_latency_s",
        ),
    ],
)
def test_diffusion_validation(tmp_path: Path, edit, rule: str, where: str) -> None:
    from jouleboard.core.problems import ValidationFailed

    data, target, doc = _one_file(tmp_path)
    edit(doc)
    target.write_text(json.dumps(doc))
    with pytest.raises(ValidationFailed) as e:
        load_dataset(data)
    assert any(
        p.rule == rule and p.pointer == where and p.file.endswith(target.name)
        for p in e.value.problems
    ), [str(p) for p in e.value.problems]


@pytest.fixture(scope="module")
def site(default_site: Path) -> Path:
    return default_site


@pytest.mark.parametrize(
    ("page", "unit"),
    [
        ("tasks/text-to-image/index.html", "Images/kJ"),
        ("tasks/text-to-video/index.html", "Videos/MJ"),
        ("models/black-forest-labs--flux.1-dev/index.html", "Images/kJ"),
        ("models/wan-ai--wan2.1-t2v-14b-diffusers/index.html", "Videos/MJ"),
        ("embed/top--text-to-image/index.html", "images per kJ"),
    ],
)
def test_unit_words_fit_the_output(site: Path, page: str, unit: str) -> None:
    html = (site / page).read_text()
    assert unit in html
    assert "token" not in html.lower()


def test_gpu_page_sections_use_the_right_units(site: Path) -> None:
    html = (site / "gpus/h100/index.html").read_text()
    t2i = html.split("Text to Image</a></h2>")[1].split("<h2>")[0]
    assert "Images/kJ" in t2i and "token" not in t2i.lower()


def test_home_page_groups_all_seven_tasks(site: Path) -> None:
    html = (site / "index.html").read_text()
    groups = [
        html.index(g)
        for g in (
            '<h2 class="group">Text</h2>',
            '<h2 class="group">Multimodal</h2>',
            '<h2 class="group">Image and video generation</h2>',
        )
    ]
    assert groups == sorted(groups)
    for name in (
        "Problem Solving with Reasoning",
        "Chat",
        "Code Completion",
        "Image Chat",
        "Video Chat",
        "Text to Image",
        "Text to Video",
    ):
        assert f'">{name}</a></h3>' in html, name
