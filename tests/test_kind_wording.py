"""Wording shared by every task (the home intro, a GPU page's description, the CLI's
--energy-budget error) names what each task's kind ranks by, not always tokens."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from jouleboard.api import rank_task
from jouleboard.core.urls import Urls
from jouleboard.loading.dataset import load_dataset
from jouleboard.measure.units import TaskUnits, efficiency_phrase
from jouleboard.plan.entities import gpu_page, model_page
from jouleboard.plan.site import home_page, site_view
from jouleboard.plan.task import explore, task_table
from tests.golden.tree import DATA


@pytest.fixture(scope="module")
def site() -> Any:
    return site_view(load_dataset(DATA), Urls())


def test_efficiency_phrase_lists_each_wording_once() -> None:
    token, image, video = (
        TaskUnits("token", 1),
        TaskUnits("image", 1000),
        TaskUnits("video", 1_000_000),
    )
    assert efficiency_phrase([token, token]) == "tokens per joule"
    assert efficiency_phrase([token, image, token]) == "tokens per joule or images per kJ"
    assert (
        efficiency_phrase([image, video, token])
        == "images per kJ, videos per MJ or tokens per joule"
    )


def test_home_intro_names_every_kind(site: Any) -> None:
    (page,) = home_page(site).pages
    # The golden data has token tasks (gpqa, image-chat) and one text-to-image task.
    assert "the most tokens per joule or images per kJ of GPU energy" in page.body.intro


def test_home_says_what_its_own_tasks_rank_by(golden_site: Path) -> None:
    """The home page's line under the intro said "tokens per joule (images per kJ, videos per
    MJ)" on every site, a chat-only one too: it names the site's own kinds."""
    home = (golden_site / "index.html").read_text()
    assert "Rankings by tokens per joule or images per kJ; higher is better." in home
    assert "videos per MJ" not in home  # the golden data has no video task


def test_gpu_description_names_the_kinds_measured_on_it(site: Any) -> None:
    descriptions = {gpu: gpu_page(site, gpu).pages[0].description for gpu in ("B200", "H100")}
    image_gpus = {c.gpu_model for c in site.tasks["text-to-image"].configs}
    for gpu, text in descriptions.items():
        words = "tokens per joule or images per kJ" if gpu in image_gpus else "tokens per joule"
        assert text.startswith(f"Models ranked by {words} on "), text


def test_a_model_description_names_the_tasks_it_was_measured_on(site: Any) -> None:
    """It said "on 1 task(s)", and "(NVIDIA (Efficient-Large-Model))" for a builder with
    parentheses: search snippets and link previews show it."""
    for model_id, info in site.registry.models.items():
        if model_id not in site.by_model:
            continue
        tasks = [t.info.name for t in site.tasks.values() if t.id in site.by_model[model_id]]
        text = model_page(site, model_id).pages[0].description
        assert "(s)" not in text and tasks, text
        assert text.startswith(f"Energy efficiency and latency of {info.nickname} by "), text
        assert all(name in text for name in tasks), (tasks, text)


def test_energy_budget_error_is_in_the_tasks_unit() -> None:
    data = load_dataset(DATA)
    with pytest.raises(ValueError, match="J per image"):
        rank_task(data, "text-to-image", energy_budget=-1.0)
    with pytest.raises(ValueError, match="J per token"):
        rank_task(data, "gpqa", energy_budget=0.0)


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.15, "0.150 images per kJ"), (2.96, "2.96 images per kJ"), (1234.6, "1,235 images per kJ")],
)
def test_a_standing_sentence_gives_three_significant_digits_as_the_tables_do(
    value: float, text: str
) -> None:
    """A model page's standing sentence read "0.15 images per kJ" where every table showed
    0.150 (Python's ``.3g`` drops trailing zeros, and writes 1234.6 as 1.23e+03)."""
    from jouleboard.kinds import registered

    image = registered().by_task_kind["diffusion"]
    assert image.standing_value(TaskUnits("image", 1000), value) == text


def gpqa_deadline(tmp_path: Path, ms: float, percentile: str) -> Any:
    """The golden data's site view with the gpqa task's default deadline set to ``ms`` on
    ``percentile``."""
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    tasks_file = data / "tasks.yaml"
    tasks = yaml.safe_load(tasks_file.read_text(encoding="utf-8"))
    tasks["gpqa"]["default_deadline"] = {"ms": ms, "percentile": percentile}
    tasks_file.write_text(yaml.safe_dump(tasks), encoding="utf-8")
    return site_view(load_dataset(data), Urls())


@pytest.mark.parametrize("percentile", ["p50", "p90"])
def test_a_tables_latency_column_is_the_deadlines_percentile(
    percentile: str, tmp_path: Path
) -> None:
    """A task whose deadline is on p90 ranked at p90 but showed each row's median under
    "Median ITL": the column shows the percentile the deadline is on, named so."""
    view = gpqa_deadline(tmp_path, 300.0, percentile)
    t = view.tasks["gpqa"]
    table = task_table(view, t, "x", "x", t.ranking)
    (column,) = [c for c in table.columns if c.key == "median_itl_ms"]
    name = {"p50": "Median", "p90": "P90"}[percentile]
    assert (column.label, column.title) == (f"{name} ITL", f"{name} inter-token latency.")
    where = table.columns.index(column)
    shown = [row[where].value for row in table.rows]
    field = {"p50": "median_itl_ms", "p90": "p90_itl_ms"}[percentile]
    figures = [getattr(r.config, field) for r in t.ranking]
    assert shown == figures and len(set(shown)) > 1
    if percentile == "p90":  # differs from the median in every row of the golden data
        assert all(s > r.config.median_itl_ms for s, r in zip(shown, t.ranking, strict=True))


@pytest.mark.parametrize("ms", [0.5, 300.0, 1e6])
def test_the_slider_reaches_the_default_deadline(ms: float, tmp_path: Path) -> None:
    """A deadline past every latency measured (or short of every one) was off the slider:
    its thumb sat at an end and could not return to it."""
    view = gpqa_deadline(tmp_path, ms, "p50")
    explorer, _ = explore(view, view.tasks["gpqa"])
    assert explorer.min_ms <= ms <= explorer.max_ms, (explorer.min_ms, explorer.max_ms)


def test_chart_tooltips_give_energy_in_the_tasks_unit(golden_site: Path) -> None:
    """The scatter and Pareto charts of an image task said "J/token" over joules per image."""
    import json

    def energy_tooltips(node: object) -> list[str]:
        if isinstance(node, list):
            return [title for item in node for title in energy_tooltips(item)]
        if not isinstance(node, dict):
            return []
        own = [
            t["title"]
            for t in node.get("tooltip", [])
            if isinstance(t, dict) and t.get("field") == "energy"
        ]
        return own + [title for value in node.values() for title in energy_tooltips(value)]

    checked = 0
    for spec_file in sorted((golden_site / "charts").glob("*.vl.json")):
        if not spec_file.name.startswith(("configurations--", "pareto--")):
            continue
        titles = set(energy_tooltips(json.loads(spec_file.read_text(encoding="utf-8"))))
        unit = "J/image" if "text-to-image" in spec_file.name else "J/token"
        assert titles == {unit}, (spec_file.name, titles)
        checked += 1
    assert checked >= 6


def test_the_calculators_token_scale_says_output_tokens(golden_site: Path) -> None:
    """J/token is energy per output token: "per 1B tokens" read as input and output tokens
    together, which a fleet plans by."""
    page = (golden_site / "tasks" / "gpqa" / "index.html").read_text(encoding="utf-8")
    assert "per 1B output tokens" in page and "per 1B tokens" not in page


def test_deadline_chart_tooltips_name_the_unit_and_read_as_the_tables(
    golden_site: Path,
) -> None:
    """The deadline chart's tooltip read "Deadline from 325.5" (ms on a text task, s on an
    image task) and "21.4" or "2" where the tables read 21.42 and 2.00."""
    import csv
    import json

    for task, unit in (("gpqa", "ms"), ("image-chat", "ms"), ("text-to-image", "s")):
        spec = json.loads((golden_site / "charts" / f"deadlines--{task}.vl.json").read_text())
        (tooltips,) = [
            layer["encoding"]["tooltip"]
            for layer in spec["layer"]
            if "tooltip" in layer.get("encoding", {})
        ]
        by_field = {t["field"]: t for t in tooltips}
        assert by_field["latency"]["title"] == f"Deadline from ({unit})", task
        if unit == "ms":  # tokens per joule: two decimals, as every table shows them
            assert by_field["value"]["format"] == ",.2f"
            page = (golden_site / "tasks" / task / "index.html").read_text(encoding="utf-8")
            rows = csv.DictReader((golden_site / "charts" / f"deadlines--{task}.csv").open())
            best = max(float(r["value"]) for r in rows)
            assert f">{best:,.2f}<" in page, (task, best)
