"""Text-to-image and text-to-video pages: energy per image or video under a batch-latency
deadline, with units that fit (no "tokens" on an image leaderboard)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jouleboard import rank as ranking
from jouleboard.contexts import (
    ChartRef,
    Download,
    GpuTaskSection,
    Link,
    ModelTaskSection,
    Page,
    PresetRanking,
    TaskBody,
)
from jouleboard.pages import Planner
from jouleboard.present import charts
from jouleboard.present.markdown import render_markdown
from jouleboard.present.tables import (
    MODEL,
    Cell,
    Column,
    Table,
    diffusion_configurations_table,
    diffusion_ranking_table,
    model_cell,
)
from jouleboard.present.units import TaskUnits
from jouleboard.records import DiffusionConfiguration
from jouleboard.urls import deadline_slug, model_slug

LATENCY_TITLE = "Batch latency (s, log)"

DIFFUSION_RANK_COLUMNS = (
    "rank", "model_id", "nickname", "gpu_model", "num_gpus", "weight_precision", "batch_size",
    "inference_steps", "width_px", "height_px", "num_frames", "fps", "ulysses_degree",
    "ring_degree", "batch_latency_s", "energy_per_output_joules", "outputs_per_joule",
    "avg_power_watts", "throughput_outputs_per_sec",
)


def rank_record(rank: int, c: DiffusionConfiguration, nickname: str) -> dict[str, Any]:
    values: dict[str, Any] = {"rank": rank, "nickname": nickname,
                              "outputs_per_joule": 1.0 / c.energy_per_output_joules}
    return {k: values[k] if k in values else getattr(c, k) for k in DIFFUSION_RANK_COLUMNS}


def config_label(c: DiffusionConfiguration) -> str:
    return (f"{c.num_gpus}× {c.gpu_model}, batch {c.batch_size}, "
            f"Ulysses {c.ulysses_degree} ring {c.ring_degree}")


def _units(p: Planner, task: str) -> TaskUnits:
    return TaskUnits.of(p.reg.tasks[task])


def diffusion_top_table(p: Planner, task: str, caption: str) -> Table:
    rows = p.diffusion_rankings[task][: p.reg.site.top_n]
    return diffusion_ranking_table(f"ranking-{task}", caption.format(len(rows)), rows, p.reg,
                                   p.urls, _units(p, task))


def diffusion_bar_chart(p: Planner, task: str) -> ChartRef | None:
    units = _units(p, task)
    top = p.diffusion_rankings[task][: p.reg.site.top_n]
    if not top:
        return None
    rows = [{"model": p.reg.models[r.config.model_id].nickname, "rank": r.rank,
             "value": units.efficiency(r.config.energy_per_output_joules),
             "gpu": r.config.gpu_model} for r in top]
    name = p.reg.tasks[task].name
    spec = charts.bind(charts.ranking_bar(f"{units.efficiency_label} (higher is better)"),
                       {"table": rows}, f"{name}: top {len(top)} by {units.efficiency_words}")
    return p.plan.chart(
        p.urls, "top", [task], spec["title"],
        f"Bar chart of {units.efficiency_words} for the {len(top)} most efficient models at "
        f"{p._deadline_text(task)}; the table shows the same figures.", spec,
        p.urls.task(task), f"at {p._deadline_text(task)}", table_id=f"ranking-{task}")


def _points(p: Planner, configs: Sequence[DiffusionConfiguration],
            chosen: set[tuple[object, ...]]) -> list[dict[str, Any]]:
    return [{"model": p.reg.models[c.model_id].nickname, "gpu": c.gpu_model,
             "latency": c.batch_latency_s, "energy": c.energy_per_output_joules,
             "chosen": c.identity in chosen, "config": config_label(c)} for c in configs]


def _deadline_rows(p: Planner, task: str) -> list[dict[str, Any]]:
    seconds = p._deadline(task).ms / 1000
    return [{"ms": seconds, "label": f"deadline {seconds:g} s"}]


def diffusion_task_page(p: Planner, task: str) -> Page:
    info, units = p.reg.tasks[task], _units(p, task)
    d = p._deadline(task)
    rows = p.diffusion_rankings[task]
    table = diffusion_ranking_table(f"ranking-{task}", f"{info.name}: every model at "
                                    f"{p._deadline_text(task)}", rows, p.reg, p.urls, units)
    downloads = ranking_downloads(p, task, rows, table.caption, d.ms)
    presets = []
    for ms in info.preset_deadlines_ms:
        if ms == d.ms:
            continue
        preset_rows = ranking.rank(p.diffusion_by_task[task], ranking.Deadline(ms),
                                   gpus=p.default_gpus)
        text = f"batch latency ≤ {ms / 1000:g} s"
        preset = diffusion_ranking_table(f"ranking-{task}-{ms:g}ms", f"{info.name}: at {text}",
                                         preset_rows, p.reg, p.urls, units)
        presets.append(PresetRanking(text, preset, ranking_downloads(
            p, task, preset_rows, preset.caption, ms)))
    chosen = {r.config.identity for r in rows}
    configs = p.diffusion_by_task[task]
    spec = charts.bind(charts.task_scatter(LATENCY_TITLE, f"Energy per {units.output} (J)"),
                       {"table": _points(p, configs, chosen), "deadline": _deadline_rows(p, task)},
                       f"{info.name}: every configuration")
    scatter = p.plan.chart(
        p.urls, "configurations", [task], spec["title"],
        f"Scatter plot of energy per {units.output} against batch latency for all "
        f"{len(configs)} configurations, with the {d.ms / 1000:g} s deadline drawn and each "
        "model's chosen configuration enlarged; the ranking table lists the chosen ones.",
        spec, p.urls.task(task), f"deadline: {p._deadline_text(task)}",
        table_id=f"ranking-{task}")
    body = TaskBody(info.name, info.benchmark, render_markdown(info.description_md),
                    p._deadline_text(task), " and ".join(p.reg.site.default_gpus), table,
                    tuple(presets), scatter, diffusion_bar_chart(p, task), downloads,
                    None, None, None)
    return Page(p.urls.task(task), "task.html", f"{info.name} energy leaderboard",
                f"Models ranked by {units.efficiency_words} on {info.name} at "
                f"{p._deadline_text(task)}.", body)


def ranking_downloads(p: Planner, task: str,
                      rows: Sequence[ranking.RankedRow[DiffusionConfiguration]], caption: str,
                      ms: float, gpu: str | None = None) -> tuple[Link, ...]:
    records = [rank_record(r.rank, r.config, p.reg.models[r.config.model_id].nickname)
               for r in rows]
    links = []
    for ext in ("csv", "json"):
        path = p.urls.ranking_download(task, deadline_slug(ms, "batch"), ext, gpu)
        p.plan.downloads.append(Download(path, DIFFUSION_RANK_COLUMNS, records))
        links.append(Link(ext.upper(), p.urls.url(path), caption))
    return tuple(links)


CONFIGURATION_COLUMNS = ("task", *DIFFUSION_RANK_COLUMNS[1:], "repeat", "source")


def configuration_downloads(p: Planner) -> list[Download]:
    records = []
    for task, configs in p.diffusion_by_task.items():
        for c in configs:
            record = rank_record(0, c, p.reg.models[c.model_id].nickname)
            del record["rank"]
            records.append({"task": task, **record, "repeat": c.repeat, "source": c.source})
    if not records:
        return []
    return [Download(f"downloads/configurations-diffusion.{ext}", CONFIGURATION_COLUMNS,
                     records) for ext in ("csv", "json")]


def diffusion_model_section(p: Planner, model_id: str, task: str) -> ModelTaskSection:
    """A model's section on a diffusion task: standing, best per GPU, every configuration,
    and its Pareto frontier of energy per output against batch latency."""
    from jouleboard.pages_detail import energy_label

    info, task_info, units = p.reg.models[model_id], p.reg.tasks[task], _units(p, task)
    d = p._deadline(task)
    configs = sorted((c for c in p.by_model[model_id][task]
                      if isinstance(c, DiffusionConfiguration)),
                     key=lambda c: (c.gpu_model, c.num_gpus, c.batch_size, c.ulysses_degree,
                                    c.ring_degree, c.repeat))
    rows = p.diffusion_rankings[task]
    mine = next((r for r in rows if r.config.model_id == model_id), None)
    if mine is not None:
        value = units.efficiency(mine.config.energy_per_output_joules)
        standing = (f"Rank {mine.rank} of {len(rows)} at {p._deadline_text(task)}, with "
                    f"{config_label(mine.config)}: {value:.3g} {units.efficiency_words}.")
    else:
        standing = (f"No configuration on {' or '.join(p.reg.site.default_gpus)} meets "
                    f"{p._deadline_text(task)}, so it is not ranked on this task.")
    frontier = {c.identity for c in ranking.pareto_frontier(configs)}
    chosen = mine.config.identity if mine else None

    def note(c: DiffusionConfiguration) -> str:
        marks = (["chosen"] if c.identity == chosen else []) + \
                (["Pareto"] if c.identity in frontier else [])
        return ", ".join(marks)

    configs_table = diffusion_configurations_table(
        f"configs-{task}", f"Every configuration of {info.nickname} on {task_info.name}",
        configs, p.urls, units, note)
    best_gpu = list(ranking.best_per_model_and_gpu(configs, d).values())
    gpu_table = diffusion_configurations_table(
        f"gpus-{task}", f"Best configuration on each GPU at {p._deadline_text(task)}",
        best_gpu, p.urls, units)
    points = [{"latency": c.batch_latency_s, "energy": c.energy_per_output_joules,
               "gpu": c.gpu_model, "frontier": c.identity in frontier,
               "kind": "Pareto frontier" if c.identity in frontier else "other",
               "config": config_label(c)} for c in configs]
    spec = charts.bind(charts.pareto(LATENCY_TITLE, f"Energy per {units.output} (J)"),
                       {"table": points, "deadline": _deadline_rows(p, task)},
                       f"{info.nickname} on {task_info.name}: energy vs batch latency")
    pareto = p.plan.chart(
        p.urls, "pareto", [model_slug(model_id), task], spec["title"],
        f"Scatter plot of {len(points)} configurations, energy per {units.output} against "
        f"batch latency, with the Pareto frontier ({len(frontier)} configurations, marked in "
        f"the table) and the {d.ms / 1000:g} s deadline.", spec, p.urls.model(model_id),
        f"deadline: {p._deadline_text(task)}", table_id=f"configs-{task}")
    label = None
    if mine is not None:
        value = units.efficiency(mine.config.energy_per_output_joules)
        best = units.efficiency(rows[0].config.energy_per_output_joules)
        label = energy_label(p, model_id, task, value, best, units.efficiency_label,
                             f"batch ≤ {d.ms / 1000:g} s")
    return ModelTaskSection(task_info.name, p.urls.url(p.urls.task(task)), f"task-{task}",
                            standing, gpu_table, configs_table, pareto, None, label, None)


def diffusion_gpu_section(p: Planner, gpu: str, task: str) -> GpuTaskSection | None:
    if not any(c.gpu_model == gpu for c in p.diffusion_by_task[task]):
        return None
    info, units = p.reg.tasks[task], _units(p, task)
    d = p._deadline(task)
    rows = ranking.rank(p.diffusion_by_task[task], d, gpus={gpu})
    table = diffusion_ranking_table(f"ranking-{task}", f"{info.name} on {gpu} only, at "
                                    f"{p._deadline_text(task)}", rows, p.reg, p.urls, units)
    downloads = ranking_downloads(p, task, rows, table.caption, d.ms, gpu)
    best = p.best_by_gpu[task]
    comparisons = []
    for other in sorted(p.reg.gpus):
        if other == gpu:
            continue
        models = sorted({m for (m, g) in best if g == gpu} & {m for (m, g) in best if g == other})
        if not models:
            continue
        value = {key: units.efficiency(c.energy_per_output_joules) for key, c in best.items()}
        body = tuple((model_cell(m, p.reg, p.urls),
                      Cell(value[(m, gpu)], f"{value[(m, gpu)]:.3g}"),
                      Cell(value[(m, other)], f"{value[(m, other)]:.3g}"),
                      Cell(value[(m, gpu)] / value[(m, other)],
                           f"{value[(m, gpu)] / value[(m, other)]:.2f}×"))
                     for m in sorted(models, key=lambda m: -value[(m, gpu)]))
        comparisons.append(Table(
            f"compare-{task}-{other.lower()}", f"Best {units.efficiency_words} on {gpu} vs "
            f"{other} at {p._deadline_text(task)}",
            (MODEL, Column(gpu, f"{gpu} {units.efficiency_label}", numeric=True),
             Column(other, f"{other} {units.efficiency_label}", numeric=True),
             Column("ratio", f"{gpu} ÷ {other}", numeric=True)), body))
    return GpuTaskSection(info.name, p.urls.url(p.urls.task(task)), table, downloads,
                          tuple(comparisons), None)
