"""Text-to-image and text-to-video pages in a real browser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.browser.conftest import Recorder

REPO = Path(__file__).resolve().parents[2]


def most_efficient(task: str, deadline_s: float) -> str:
    """Straight from the files: the lowest J per output within the batch-latency deadline."""
    best: tuple[float, str] | None = None
    for path in (REPO / "data" / "measurements" / task).rglob("*.json"):
        m = json.loads(path.read_text())
        if m["metrics"]["batch_latency_s"] <= deadline_s and m["gpu_model"] in {"B200", "H100"}:
            candidate = (m["metrics"]["energy_per_output_joules"], m["model_id"])
            best = min(best, candidate) if best else candidate
    assert best is not None
    return yaml.safe_load((REPO / "data" / "models.yaml").read_text())[best[1]]["nickname"]


@pytest.mark.browser
@pytest.mark.parametrize(("task", "unit", "deadline_s"), [
    ("text-to-image", "Images/kJ", 30.0),
    ("text-to-video", "Videos/MJ", 300.0),
])
def test_diffusion_task_page(site_page: Recorder, task: str, unit: str,
                             deadline_s: float) -> None:
    first = most_efficient(task, deadline_s)
    page = site_page.page
    site_page.goto(f"/tasks/{task}/")
    table = page.locator(f"#ranking-{task}")
    assert unit in table.locator("thead").inner_text()
    assert table.locator("tbody tr").first.locator("td").nth(1).inner_text().startswith(first)
    assert "token" not in page.locator("main").inner_text().lower()
    figure = page.locator(f"#chart-configurations--{task}")
    figure.locator("button.interactive").click()
    figure.locator("svg.marks").wait_for()
    assert figure.locator("g.mark-symbol.role-mark path").count() > 10
    assert site_page.problems() == []
    assert site_page.external_requests() == []
