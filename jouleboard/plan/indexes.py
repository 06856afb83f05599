"""The compare page and the model and GPU indexes."""

from __future__ import annotations

from jouleboard.core.jsonio import dumps_canonical
from jouleboard.measure.formats import precision_label, significant
from jouleboard.plan.views import (
    Calculator,
    CompareBody,
    CompareTask,
    IndexBody,
    Page,
    Part,
    SiteView,
)
from jouleboard.rank.noise import UNKNOWN
from jouleboard.rank.tables import Cell, Column, Table, model_cell, ranking_table
from jouleboard.render import charts
from jouleboard.render.footprint import FootprintInputs, footprint_table


def compare_page(site: SiteView) -> Part:
    """The comparison tool: every task (the script re-ranks any kind from its explore data;
    the empty tables start in the first task's columns and follow the chosen task)."""
    urls, tasks = site.urls, list(site.tasks.values())
    choices = tuple(
        CompareTask(
            t.id,
            t.info.name,
            urls.url(urls.explore_data(t.id)),
            t.deadline.ms,
            t.deadline.percentile,
            t.kind.latency.unit,
            t.kind.latency.scale_ms,
            tuple(t.kind.percentiles),
        )
        for t in tasks
    )
    first = tasks[0] if tasks else None
    fields = first.kind.ranking_fields(first.info, quality=False) if first else ()
    table = ranking_table(
        "compare-table",
        "Each model's most energy-efficient configuration that meets the deadline",
        fields,
        [],
        lambda c: {},
        site.registry,
        urls,
        first.kind.ranked_key if first else "",
        noise=first.noise if first else UNKNOWN,
    )
    inputs = FootprintInputs()
    calculator = Calculator(
        inputs,
        footprint_table(
            "compare-footprint",
            "Electricity, cost and emissions at each model's best configuration",
            [],
            site.registry,
            urls,
            inputs,
            first.kind.footprint_scales(first.units) if first else (),
        ),
    )
    latency = first.kind.latency.axis_title("p50") if first else "Latency (ms, log)"
    template = urls.chart_template("compare-pareto")
    page = Page(
        urls.compare,
        "compare.html",
        "Compare models",
        "Compare the energy and latency trade-offs of up to six models.",
        CompareBody(choices, urls.url(template), table, calculator),
    )
    return Part(pages=(page,), files=((template, dumps_canonical(charts.compare_pareto(latency))),))


def models_index(site: SiteView, model_ids: list[str]) -> Part:
    columns = (
        Column("model", "Model"),
        Column("builder", "Builder"),
        Column("total_params_billions", "Total params", "B", numeric=True),
        Column("active_params_billions", "Active params", "B", numeric=True),
        Column("architecture", "Architecture"),
        Column("weight_precision", "Precision"),
        Column("tasks", "Tasks"),
    )
    rows = []
    for model_id in model_ids:
        info = site.registry.models[model_id]
        tasks = sorted(site.registry.tasks[t].name for t in site.by_model[model_id])
        precision = precision_label(info.weight_precision)
        rows.append(
            (
                model_cell(model_id, site.registry, site.urls),
                Cell(info.builder, info.builder),
                Cell(info.total_params_billions, significant(info.total_params_billions, 3)),
                Cell(info.active_params_billions, significant(info.active_params_billions, 3)),
                Cell(info.architecture, info.architecture or "–"),
                Cell(info.weight_precision, precision),
                Cell(", ".join(tasks), ", ".join(tasks)),
            )
        )
    table = Table("models", f"All {len(rows)} models with measurements", columns, tuple(rows))
    return Part(
        pages=(
            Page(
                site.urls.models_index,
                "index.html",
                "Models",
                "Every model on the leaderboard.",
                IndexBody(
                    "Every model with at least one valid measurement. Open a model "
                    "for its configurations, Pareto frontiers and GPU comparison.",
                    table,
                ),
            ),
        )
    )


def gpus_index(site: SiteView) -> Part:
    columns = (
        Column("gpu", "GPU"),
        Column("vendor", "Vendor"),
        Column("generation", "Generation"),
        Column("memory_gb", "Memory", "GB", numeric=True),
        Column("board_power_watts", "Board power limit", "W", numeric=True),
        Column("configurations", "Configurations", numeric=True),
    )
    rows = []
    for gpu, info in sorted(site.registry.gpus.items()):
        n = site.gpu_counts.get(gpu, 0)
        rows.append(
            (
                Cell(gpu, info.name, href=site.urls.url(site.urls.gpu(gpu))),
                Cell(info.vendor, info.vendor),
                Cell(info.generation, info.generation),
                Cell(info.memory_gb, f"{info.memory_gb:g}"),
                Cell(info.board_power_watts, f"{info.board_power_watts:g}"),
                Cell(n, f"{n:,}"),
            )
        )
    table = Table("gpus", "Accelerators", columns, tuple(rows))
    return Part(
        pages=(
            Page(
                site.urls.gpus_index,
                "index.html",
                "GPUs",
                "The accelerators measured.",
                IndexBody(
                    "The accelerators in the data. A GPU page ranks models on that "
                    "GPU alone and compares each model across GPUs.",
                    table,
                ),
            ),
        )
    )
