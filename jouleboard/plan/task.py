"""Task pages and the home page's task sections: pure functions of the site view that return
their pages, charts and downloads (a :class:`Part`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jouleboard import rank as ranking
from jouleboard.jsonio import dumps_canonical
from jouleboard.plan.explore import explore_payload
from jouleboard.plan.views import (
    Calculator,
    ChartRef,
    Download,
    Explorer,
    Link,
    Page,
    Part,
    PresetRanking,
    QualitySection,
    QualitySource,
    SiteView,
    TaskBody,
    TaskSection,
    TaskView,
    chart_ref,
)
from jouleboard.present import charts
from jouleboard.present.footprint import FootprintInputs, footprint_table
from jouleboard.present.formats import PRECISION_LABELS
from jouleboard.present.markdown import render_markdown
from jouleboard.present.tables import Table, ranking_table


def task_table(site: SiteView, t: TaskView, table_id: str, caption: str,
               rows: Sequence[ranking.RankedRow[Any]]) -> Table:
    """A leaderboard table of ``t`` in its kind's columns."""
    fields = t.kind.ranking_fields(t.info, quality=t.id in site.registry.quality)
    return ranking_table(table_id, caption, fields, rows, t.values, site.registry, site.urls)


def ranking_downloads(site: SiteView, t: TaskView, rows: Sequence[ranking.RankedRow[Any]],
                      caption: str, ms: float, gpu: str | None = None,
                      by: str = "energy_per_token") -> tuple[tuple[Link, ...], Part]:
    """CSV and JSON of a ranking: the links, and the downloads to publish."""
    records = [t.kind.rank_record(r.rank, r.config,
                                  site.registry.models[r.config.model_id].nickname,
                                  t.accuracy.get(r.config.model_id)) for r in rows]
    slug = t.kind.download_slug(ms, t.deadline.percentile) + (
        "" if by == "energy_per_token" else f"-by-{by}")
    links, downloads = [], []
    for ext in ("csv", "json"):
        path = site.urls.ranking_download(t.id, slug, ext, gpu)
        downloads.append(Download(path, t.kind.rank_columns, records))
        links.append(Link(ext.upper(), site.urls.url(path), caption))
    return tuple(links), Part(downloads=tuple(downloads))


def bar_chart(site: SiteView, t: TaskView) -> ChartRef | None:
    top = t.ranking[: site.top_n]
    if not top:
        return None
    rows = [{"model": site.registry.models[r.config.model_id].nickname, "rank": r.rank,
             "value": t.units.efficiency(r.config.energy_per_output_joules),
             "gpu": r.config.gpu_model} for r in top]
    words = t.units.efficiency_words
    spec = charts.bind(charts.ranking_bar(f"{t.units.efficiency_axis} (higher is better)"),
                       {"table": rows}, f"{t.info.name}: top {len(top)} by {words}")
    return chart_ref(
        site.urls, "top", [t.id], spec["title"],
        f"Bar chart of {words} for the {len(top)} most efficient models at "
        f"{t.deadline_text()}; the table shows the same figures.", spec,
        site.urls.task(t.id), f"at {t.deadline_text()}", table_id=f"ranking-{t.id}")


def scatter_chart(site: SiteView, t: TaskView) -> ChartRef:
    p, latency = t.deadline.percentile, t.kind.latency
    chosen = {r.config.identity for r in t.ranking}
    rows = [{"model": site.registry.models[c.model_id].nickname, "gpu": c.gpu_model,
             "latency": t.kind.chart_latency(c, p), "energy": c.energy_per_output_joules,
             "chosen": c.identity in chosen, "config": t.kind.config_label(c)}
            for c in t.configs]
    spec = charts.bind(charts.task_scatter(latency.axis_title(p),
                                           f"Energy per {t.units.output} (J)"),
                       {"table": rows, "deadline": t.deadline_rows()},
                       f"{t.info.name}: every configuration")
    return chart_ref(
        site.urls, "configurations", [t.id], spec["title"],
        f"Scatter plot of energy per {t.units.output} against {latency.words[p]} for all "
        f"{len(rows)} configurations, with the {latency.value(t.deadline.ms)} deadline drawn "
        "and each model's chosen configuration enlarged; the ranking table lists the chosen "
        "ones.", spec, site.urls.task(t.id), f"deadline: {t.deadline_text()}",
        table_id=f"ranking-{t.id}")


def home_section(site: SiteView, t: TaskView) -> tuple[TaskSection, Part]:
    rows = t.ranking[: site.top_n]
    table = task_table(site, t, f"ranking-{t.id}",
                       f"{t.info.name}: top {len(rows)} at {t.deadline_text()}", rows)
    chart = bar_chart(site, t)
    section = TaskSection(t.info.name, site.urls.url(site.urls.task(t.id)),
                          render_markdown(t.info.description_md), t.deadline_text(), table,
                          chart, t.kind.task_kinds[t.info.kind])
    return section, Part(charts=(chart,) if chart else ())


def task_page(site: SiteView, t: TaskView) -> Part:
    info, d = t.info, t.deadline
    table = task_table(site, t, f"ranking-{t.id}",
                       f"{info.name}: every model at {t.deadline_text()}", t.ranking)
    downloads, out = ranking_downloads(site, t, t.ranking, table.caption, d.ms)
    presets = []
    for ms in info.preset_deadlines_ms:
        if ms == d.ms:
            continue
        rows = ranking.rank(t.configs, ranking.Deadline(ms, d.percentile),
                            gpus=site.default_gpus)
        text = t.deadline_text(ms)
        preset = task_table(site, t, f"ranking-{t.id}-{ms:g}ms", f"{info.name}: at {text}",
                            rows)
        links, files = ranking_downloads(site, t, rows, preset.caption, ms)
        presets.append(PresetRanking(text, preset, links))
        out += files
    inputs = FootprintInputs()
    calculator = Calculator(inputs, footprint_table(
        f"footprint-{t.id}", f"Electricity, cost and emissions of the top "
        f"{min(len(t.ranking), site.top_n)} at {t.deadline_text()}",
        t.ranking[: site.top_n], site.registry, site.urls, inputs,
        t.kind.footprint_scales(t.units)))
    scatter, bar = scatter_chart(site, t), bar_chart(site, t)
    quality, quality_part = quality_section(site, t)
    explorer, explore_part = explore(site, t)
    body = TaskBody(info.name, info.benchmark, render_markdown(info.description_md),
                    t.deadline_text(), " and ".join(site.registry.site.default_gpus), table,
                    tuple(presets), scatter, bar, downloads, explorer, calculator, quality)
    benchmark = f" ({info.benchmark})" if info.benchmark != info.name else ""
    page = Page(site.urls.task(t.id), "task.html", f"{info.name} energy leaderboard",
                f"Models ranked by {t.units.efficiency_words} on {info.name}{benchmark} at "
                f"{t.deadline_text()}.", body)
    return out + quality_part + explore_part + Part(
        pages=(page,), charts=(scatter, *((bar,) if bar else ())))


def quality_section(site: SiteView, t: TaskView) -> tuple[QualitySection | None, Part]:
    """Energy per correct answer, for tasks with published accuracy (data/quality/)."""
    quality = site.registry.quality.get(t.id)
    if quality is None:
        return None, Part()
    objective = ranking.objective_for("energy_per_correct_answer", t.accuracy.get)
    rows = ranking.rank(t.configs, t.deadline, gpus=site.default_gpus, objective=objective)
    table = task_table(site, t, f"correct-{t.id}", f"{t.info.name}: ranked by energy per "
                       f"correct answer at {t.deadline_text()}", rows)
    _, out = ranking_downloads(site, t, rows, table.caption, t.deadline.ms,
                               by="energy_per_correct_answer")
    models, urls = site.registry.models, site.urls
    unscored = tuple(Link(models[m].nickname, urls.url(urls.model(m)))
                     for m in sorted({r.config.model_id for r in t.ranking})
                     if m not in t.accuracy)
    chart = None
    if rows:
        points, front_best = [], -1.0
        for r in sorted(rows, key=lambda r: r.config.energy_per_response_joules):
            acc = t.accuracy.get(r.config.model_id) or 0.0
            on_front = acc > front_best
            front_best = max(front_best, acc)
            info = models[r.config.model_id]
            points.append({"model": info.nickname, "builder": info.builder, "accuracy": acc,
                           "energy": r.config.energy_per_response_joules,
                           "per_correct": objective(r.config), "frontier": on_front})
        spec = charts.bind(charts.accuracy_energy(), {"table": points},
                           f"{t.info.name}: accuracy vs energy per response")
        chart = chart_ref(
            urls, "accuracy", [t.id], spec["title"],
            f"Scatter plot of {quality.benchmark} accuracy against energy per response for "
            f"{len(points)} models at {t.deadline_text()}; the dashed line joins the models no "
            "other beats on both. The table ranked by energy per correct answer lists the "
            "same figures.", spec, urls.task(t.id), f"at {t.deadline_text()}",
            table_id=f"correct-{t.id}")
        out += Part(charts=(chart,))
    sources = tuple(QualitySource(
        models[q.model_id].nickname, urls.url(urls.model(q.model_id)),
        f"{q.accuracy_percent:.1f}", q.setting, q.source_url, q.source_detail, q.confidence,
        q.matches_energy_run) for q in quality.scores)
    return QualitySection(quality.benchmark, render_markdown(quality.note_md), table, chart,
                          sources, unscored), out


def explore(site: SiteView, t: TaskView) -> tuple[Explorer, Part]:
    """The task page's controls, and the data the browser re-ranks."""
    d, latency = t.deadline, t.kind.latency
    latencies = [c.latency_ms(p) for c in t.configs for p in t.kind.percentiles] or [d.ms]
    path = site.urls.explore_data(t.id)
    explorer = Explorer(
        t.id, site.urls.url(path), d.ms, d.percentile, min_ms=float(min(latencies)),
        max_ms=float(max(latencies)),
        gpus=tuple((g, g in site.default_gpus) for g in sorted({c.gpu_model
                                                                for c in t.configs})),
        precisions=tuple((p, PRECISION_LABELS.get(p, p))
                         for p in sorted({c.weight_precision for c in t.configs})),
        top_n=site.top_n, compare_url=site.urls.url(site.urls.compare) + f"?task={t.id}",
        latency_unit=latency.unit, latency_scale_ms=latency.scale_ms,
        percentiles=tuple(t.kind.percentiles), budget_unit=t.units.energy_label)
    return explorer, Part(files=((path, explore_file(site, t)),))


def explore_file(site: SiteView, t: TaskView) -> str:
    urls = site.urls
    return dumps_canonical(explore_payload(t, site.registry, lambda m: urls.url(urls.model(m)),
                                           lambda g: urls.url(urls.gpu(g))))
