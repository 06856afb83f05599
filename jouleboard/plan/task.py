"""Task pages and the home page's task sections: pure functions of the site view that return
their pages, charts and downloads (a :class:`Part`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from jouleboard.core.jsonio import dumps_canonical
from jouleboard.core.shapes import Row
from jouleboard.kinds.base import Record
from jouleboard.measure.formats import precision_label, show
from jouleboard.measure.units import boundary_words, in_words, measured_gpus
from jouleboard.plan.explore import explore_payload
from jouleboard.plan.first_view import full_view_path, task_first_view, with_full_view
from jouleboard.plan.task_charts import (
    accuracy_spec,
    chart_colors,
    scatter_colors,
    sensitivity_chart,
)
from jouleboard.plan.views import (
    Calculator,
    ChartRef,
    Download,
    Explorer,
    Link,
    LiveView,
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
from jouleboard.rank import ranking
from jouleboard.rank.tables import Table, noise_columns, ranking_table, with_noise
from jouleboard.render import charts
from jouleboard.render.footprint import FootprintInputs, footprint_table
from jouleboard.render.markdown import render_markdown


def task_table(
    site: SiteView,
    t: TaskView,
    table_id: str,
    caption: str,
    rows: Sequence[ranking.RankedRow[Record]],
    ranked: str = "",
) -> Table:
    """A leaderboard table of ``t`` in its kind's columns, ranked by its efficiency column
    unless ``ranked`` names another; the ranked-by column comes first after the model, so it
    is in view on any screen (js/table.js rankedFirst orders the browser's rows alike)."""
    key = ranked or t.kind.ranked_key
    fields = t.kind.ranking_fields(t.info, quality=t.id in site.registry.quality)
    fields = tuple(  # stable: the rest in order
        f.at(t.deadline.percentile, t.kind.latency)
        for f in sorted(fields, key=lambda f: f.column.key != key)
    )
    return ranking_table(
        table_id,
        caption,
        fields,
        rows,
        t.values,
        site.registry,
        site.urls,
        key,
        t.noise,
    )


def ranking_downloads(
    site: SiteView,
    t: TaskView,
    rows: Sequence[ranking.RankedRow[Record]],
    caption: str,
    ms: float,
    gpu: str | None = None,
    by: str = "energy_per_token",
) -> tuple[tuple[Link, ...], Part]:
    """CSV and JSON of a ranking: the links, and the downloads to publish."""
    interval = t.kind.interval_columns
    columns = (*t.kind.rank_columns, *noise_columns(interval))
    records = [
        with_noise(
            t.kind.rank_record(
                r.rank,
                r.config,
                site.registry.models[r.config.model_id].nickname,
                t.accuracy.get(r.config.model_id),
            ),
            r,
            t.noise,
            interval,
        )
        for r in rows
    ]
    slug = t.kind.download_slug(ms, t.deadline.percentile) + (
        "" if by == "energy_per_token" else f"-by-{by}"
    )
    links, downloads = [], []
    for ext in ("csv", "json"):
        path = site.urls.ranking_download(t.id, slug, ext, gpu)
        downloads.append(Download(path, columns, records, f"Rankings: {t.info.name}", caption))
        links.append(Link(ext.upper(), site.urls.url(path), caption))
    return tuple(links), Part(downloads=tuple(downloads))


def bar_label(shown: str, places: str, shared: bool) -> str:
    """A bar's figure, with the places it shares within measurement noise: ``18.26 (#1–4)``
    (the page script writes the same: js/task-follow.js)."""
    return f"{shown} (#{places})" if shared else shown


def bar_chart(site: SiteView, t: TaskView) -> ChartRef | None:
    top = t.ranking[: site.top_n]
    if not top:
        return None
    rows: list[Row] = [
        {
            "model": site.registry.models[r.config.model_id].nickname,
            "rank": r.rank,
            "places": r.places,
            "value": value,
            "low": low,
            "high": high,
            "shown": show(t.units.efficiency_show, value),
            "label": bar_label(show(t.units.efficiency_show, value), r.places, r.shared),
            "interval": "unknown"
            if r.u is None
            else "–".join(show(t.units.efficiency_show, v) for v in (low, high)),
            "gpu": r.config.gpu_model,
        }
        for r in top
        for value in (t.units.efficiency(r.config.energy_per_output_joules),)
        for low, high in (t.noise.interval(value, r.u),)
    ]
    words = t.units.efficiency_words
    spec = charts.bind(
        charts.ranking_bar(f"{t.units.efficiency_axis} (higher is better)"),
        {"table": rows},
        f"{t.info.name}: top {len(top)} by {words}",
        chart_colors(site, t)[0],
    )
    return chart_ref(
        site.urls,
        "top",
        [t.id],
        charts.title_of(spec),
        f"Bar chart of {words} for the {len(top)} most efficient models at "
        f"{t.deadline_text()}: "
        + "; ".join(f"{row['model']} {row['label']}" for row in rows)
        + (
            ". Each bar carries the interval measurement noise allows."
            if t.noise.known
            else ". Measurement noise unknown: the bars carry no interval."
        ),
        spec,
        site.urls.task(t.id),
        f"at {t.deadline_text()}",
        table_id=f"ranking-{t.id}",
        boundary=boundary_words(t.boundary),
        live=live_view(site, t, "bar"),
        data=t.configs,
    )


def live_view(site: SiteView, t: TaskView, draw: str) -> LiveView:
    """What the embed page of a chart that follows the task page's controls needs to draw
    it at a reader's settings (js/embed-view.js)."""
    return LiveView(
        draw,
        t.info.name,
        site.urls.url(site.urls.explore_data(t.id)),
        t.deadline.ms,
        t.deadline.percentile,
        tuple(sorted(g for g in site.default_gpus if any(c.gpu_model == g for c in t.configs))),
        site.top_n,
    )


def scatter_configs(t: TaskView, limit: int = charts.MAX_POINTS) -> tuple[list[Record], str]:
    """The configurations the configurations chart draws: all of them, or past
    charts.MAX_POINTS a sample that keeps every chosen one and the Pareto front; and a
    sentence saying so ("" when all are drawn)."""
    p = t.deadline.percentile
    kept = {r.config.identity for r in t.ranking} | {
        c.identity for c in ranking.pareto_frontier(t.configs, p)
    }
    shown = charts.sample(
        t.configs, lambda c: c.identity in kept, lambda c: repr(c.identity), limit
    )
    if len(shown) == len(t.configs):
        return shown, ""
    return shown, (
        f"Showing {len(shown):,} of {len(t.configs):,} configurations: every "
        "chosen one, the Pareto front of energy against latency, and an even "
        "sample of the rest; all are in the configurations CSV (Downloads)."
    )


def scatter_chart(
    site: SiteView, t: TaskView, limit: int = charts.MAX_POINTS
) -> tuple[ChartRef, str]:
    """The configurations chart (at most ``limit`` points), and its sampling note ("" when
    it draws them all)."""
    p, latency = t.deadline.percentile, t.kind.latency
    chosen = {r.config.identity for r in t.ranking}
    configs, note = scatter_configs(t, limit)
    colors, entry = scatter_colors(site, t)
    rows: list[Row] = [
        {
            "model": site.registry.models[c.model_id].nickname,
            "legend": entry[site.registry.models[c.model_id].nickname],
            "gpu": c.gpu_model,
            "latency": t.kind.chart_latency(c, p),
            "energy": c.energy_per_output_joules,
            "chosen": c.identity in chosen,
            "config": t.kind.config_label(c),
        }
        for c in configs
    ]
    what = (
        f"all {len(rows)} configurations"
        if not note
        else f"{len(rows):,} of the {len(t.configs):,} configurations (a sample that keeps "
        "every chosen one and the Pareto front)"
    )
    spec = charts.bind(
        charts.task_scatter(
            latency.axis_title(p), f"Energy per {t.units.output} (J)", t.units.energy_label
        ),
        {"table": rows, "deadline": t.deadline_rows()},
        f"{t.info.name}: every configuration"
        if not note
        else f"{t.info.name}: {len(rows):,} of {len(t.configs):,} configurations",
        colors,
    )
    return chart_ref(
        site.urls,
        "configurations",
        [t.id],
        charts.title_of(spec),
        f"Scatter plot of energy per {t.units.output} against {latency.words[p]} for {what}, "
        f"with the {latency.value(t.deadline.ms)} deadline drawn "
        "and each model's chosen configuration enlarged.",
        spec,
        site.urls.task(t.id),
        f"deadline: {t.deadline_text()}",
        table_id=f"ranking-{t.id}",
        table_alt="The ranking table lists the chosen ones.",
        boundary=boundary_words(t.boundary),
        live=live_view(site, t, "scatter"),
        data=t.configs,
    ), note


def home_section(site: SiteView, t: TaskView) -> tuple[TaskSection, Part]:
    rows = t.ranking[: site.top_n]
    table = task_table(
        site, t, f"ranking-{t.id}", f"{t.info.name}: top {len(rows)} at {t.deadline_text()}", rows
    )
    chart = bar_chart(site, t)
    section = TaskSection(
        t.info.name,
        site.urls.url(site.urls.task(t.id)),
        render_markdown(t.info.description_md),
        t.deadline_text(),
        table,
        chart,
        t.kind.task_kinds[t.info.kind],
        site.findings[t.id],
    )
    return section, Part(charts=(chart,) if chart else ())


def task_page(site: SiteView, t: TaskView) -> Part:
    info, d = t.info, t.deadline
    table = task_table(
        site, t, f"ranking-{t.id}", f"{info.name}: every model at {t.deadline_text()}", t.ranking
    )
    downloads, out = ranking_downloads(site, t, t.ranking, table.caption, d.ms)
    presets = []
    for ms in info.preset_deadlines_ms:
        if ms == d.ms:
            continue
        rows = ranking.rank(
            t.configs, ranking.Deadline(ms, d.percentile), gpus=site.default_gpus, noise=t.noise
        )
        text = t.deadline_text(ms)
        # Fixed views, whatever the controls say: each caption names its deadline and GPUs.
        on = " and ".join(site.registry.site.default_gpus)
        preset = task_table(
            site, t, f"ranking-{t.id}-{ms:g}ms", f"{info.name}: at {text}, on {on}", rows
        )
        links, files = ranking_downloads(site, t, rows, preset.caption, ms)
        presets.append(PresetRanking(text, preset, links))
        out += files
    inputs = FootprintInputs()
    calculator = Calculator(
        inputs,
        footprint_table(
            f"footprint-{t.id}",
            f"Electricity, cost and emissions of the top "
            f"{min(len(t.ranking), site.top_n)} at {t.deadline_text()}",
            t.ranking[: site.top_n],
            site.registry,
            site.urls,
            inputs,
            t.kind.footprint_scales(t.units),
        ),
    )
    (scatter, scatter_note), bar = scatter_chart(site, t), bar_chart(site, t)
    sensitivity, sensitivity_note = sensitivity_chart(site, t) or (None, "")
    quality, quality_part = quality_section(site, t)
    explorer, explore_part = explore(site, t)
    body = TaskBody(
        info.name,
        info.benchmark,
        render_markdown(info.description_md),
        t.deadline_text(),
        in_words(measured_gpus(site.registry.site.default_gpus, t.configs)),
        table,
        tuple(presets),
        scatter,
        bar,
        downloads,
        explorer,
        calculator,
        quality,
        site.findings[t.id],
        sensitivity,
        scatter_note=scatter_note,
        sensitivity_note=sensitivity_note,
    )
    benchmark = f" ({info.benchmark})" if info.benchmark != info.name else ""
    page = Page(
        site.urls.task(t.id),
        "task.html",
        f"{info.name} energy leaderboard",
        f"Models ranked by {t.units.efficiency_words} on {info.name}{benchmark} at "
        f"{t.deadline_text()}.",
        body,
    )
    first = task_first_view(
        body, site.urls.url(full_view_path(page.path)), site.table_rows, site.top_n
    )
    return (
        out
        + quality_part
        + explore_part
        + Part(
            pages=with_full_view(page, first),
            charts=(scatter, *(c for c in (bar, sensitivity) if c)),
        )
    )


def quality_section(site: SiteView, t: TaskView) -> tuple[QualitySection | None, Part]:
    """Energy per correct answer, for tasks with published accuracy (data/quality/)."""
    quality = site.registry.quality.get(t.id)
    if quality is None:
        return None, Part()
    objective = ranking.objective_for("energy_per_correct_answer", t.accuracy.get)
    rows = ranking.rank(
        t.configs, t.deadline, gpus=site.default_gpus, objective=objective, noise=t.noise
    )
    table = task_table(
        site,
        t,
        f"correct-{t.id}",
        f"{t.info.name}: ranked by energy per correct answer at {t.deadline_text()}",
        rows,
        ranked="energy_per_correct_answer_joules",
    )
    _, out = ranking_downloads(
        site, t, rows, table.caption, t.deadline.ms, by="energy_per_correct_answer"
    )
    models, urls = site.registry.models, site.urls
    unscored = tuple(
        Link(models[m].nickname, urls.url(urls.model(m)))
        for m in sorted({r.config.model_id for r in t.ranking})
        if m not in t.accuracy
    )
    chart = None
    if rows:
        points: list[Row] = []
        front_best = -1.0
        for r in sorted(rows, key=lambda r: r.config.energy_per_response_joules):
            acc = t.accuracy.get(r.config.model_id) or 0.0
            on_front = acc > front_best
            front_best = max(front_best, acc)
            info = models[r.config.model_id]
            points.append(
                {
                    "model": info.nickname,
                    "builder": info.builder,
                    "accuracy": acc,
                    "energy": r.config.energy_per_response_joules,
                    "per_correct": objective(r.config),
                    "frontier": on_front,
                }
            )
        spec = accuracy_spec(
            points,
            f"{t.info.name}: accuracy vs energy per response",
            *chart_colors(site, t, [r.config.model_id for r in rows]),
        )
        chart = chart_ref(
            urls,
            "accuracy",
            [t.id],
            charts.title_of(spec),
            f"Scatter plot of {quality.benchmark} accuracy against energy per response for "
            f"{len(points)} models at {t.deadline_text()}; the dashed line joins the models no "
            "other beats on both.",
            spec,
            urls.task(t.id),
            f"at {t.deadline_text()}",
            table_id=f"correct-{t.id}",
            table_alt="The table ranked by energy per correct answer lists the same figures.",
            boundary=boundary_words(t.boundary),
            data=t.configs,
        )
        out += Part(charts=(chart,))
    sources = tuple(
        QualitySource(
            models[q.model_id].nickname,
            urls.url(urls.model(q.model_id)),
            f"{q.accuracy_percent:.1f}",
            q.setting,
            q.source_url,
            q.source_detail,
            q.confidence,
            q.matches_energy_run,
        )
        for q in quality.scores
    )
    return QualitySection(
        quality.benchmark, render_markdown(quality.note_md), table, chart, sources, unscored
    ), out


def explore(site: SiteView, t: TaskView) -> tuple[Explorer, Part]:
    """The task page's controls, and the data the browser re-ranks."""
    d, latency = t.deadline, t.kind.latency
    # The default deadline is on the slider too, beyond every latency measured: its thumb
    # sat at the end, below the deadline the box showed, and could never return to it.
    latencies = [c.latency_ms(p) for c in t.configs for p in t.kind.percentiles] + [d.ms]
    path = site.urls.explore_data(t.id)
    # The slider reaches the next round value (1 or 3 × 10^k) past the slowest latency, so
    # a round deadline such as 1,000 ms is a tick, not something to type.
    top = max(latencies) / latency.scale_ms
    step = 10 ** math.floor(math.log10(top)) if top > 0 else 1.0
    round_top = next(v * step for v in (1, 3, 10) if v * step >= top)
    explorer = Explorer(
        t.id,
        site.urls.url(path),
        d.ms,
        d.percentile,
        min_ms=float(min(latencies)),
        max_ms=float(round_top * latency.scale_ms),
        gpus=tuple((g, g in site.default_gpus) for g in sorted({c.gpu_model for c in t.configs})),
        precisions=tuple(
            (p, precision_label(p)) for p in sorted({c.weight_precision for c in t.configs})
        ),
        top_n=site.top_n,
        compare_url=site.urls.url(site.urls.compare) + f"?task={t.id}",
        latency_unit=latency.unit,
        latency_scale_ms=latency.scale_ms,
        percentiles=tuple(t.kind.percentiles),
        budget_unit=t.units.energy_scaled_label,  # as the table's energy column reads
        budget_scale_joules=t.units.scale_joules,
    )
    return explorer, Part(files=((path, explore_file(site, t)),))


def explore_file(site: SiteView, t: TaskView) -> str:
    urls = site.urls
    return dumps_canonical(
        explore_payload(
            t,
            site.registry,
            lambda m: urls.url(urls.model(m)),
            lambda g: urls.url(urls.gpu(g)),
            urls.url(urls.glossary),
        )
    )
