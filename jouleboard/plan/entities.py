"""Model and GPU pages: pure functions of the site view that return a :class:`Part`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from markupsafe import escape

from jouleboard.core.shapes import Row
from jouleboard.core.urls import model_slug
from jouleboard.kinds.base import Record
from jouleboard.measure.formats import precision_label, show, significant
from jouleboard.measure.units import WINDOW_WORDS, boundary_words, efficiency_phrase, in_words
from jouleboard.plan import mlperf
from jouleboard.plan.finding import standings
from jouleboard.plan.first_view import full_view_path, gpu_first_view, with_full_view
from jouleboard.plan.task import ranking_downloads, task_table
from jouleboard.plan.views import (
    ChartRef,
    DataSource,
    GpuBody,
    GpuTaskSection,
    LabelRef,
    Link,
    ModelBody,
    ModelTaskSection,
    Page,
    Part,
    QualitySource,
    SiteView,
    TaskView,
    chart_ref,
)
from jouleboard.rank import ranking
from jouleboard.rank.ranking import runs_of
from jouleboard.rank.tables import (
    MODEL,
    Cell,
    Column,
    Table,
    configurations_table,
    figure_second,
    model_cell,
)
from jouleboard.render import charts
from jouleboard.render.finding import summary
from jouleboard.render.labels import WIDTH, EnergyLabel, band, label_height, label_svg
from jouleboard.render.markdown import render_markdown


def energy_label(
    site: SiteView, t: TaskView, model_id: str, value: float, best: float, places: str = ""
) -> tuple[LabelRef, Part]:
    """The A-G label of a model on a task (render/labels.py), as an SVG file; ``places``:
    its rank range on the task ("1–4")."""
    info = site.registry.models[model_id]
    unit = t.units.efficiency_unit
    energy = EnergyLabel(
        band(value, best),
        value,
        best,
        unit,
        info.nickname,
        t.info.name,
        f"data {site.registry.site.data_date}",
        t.kind.latency.short_text(t.deadline.ms, t.deadline.percentile),
        places,
        len(t.ranking),
        show(t.units.efficiency_show, value),
        show(t.units.efficiency_show, best),
        boundary_words(t.boundary, short=True),
    )
    path = site.urls.label(model_id, t.id)
    place = f", place {places} of {len(t.ranking)}" if places else ""
    alt = (
        f"Energy label {energy.band} for {info.nickname} on {t.info.name}: "
        f"{energy.shown} {unit}{place}, best {energy.best_shown}, at {t.deadline_text()}"
    )
    height = label_height(energy)
    snippet = (
        f'<img src="{escape(site.urls.absolute(path))}" alt="{escape(alt)}" '
        f'width="{WIDTH}" height="{height}">'
    )
    return (
        LabelRef(site.urls.url(path), energy.band, alt, snippet, height),
        Part(files=((path, label_svg(energy)),)),
    )


def _lengths_chart(
    site: SiteView, t: TaskView, model_id: str, configs: list[Record]
) -> ChartRef | None:
    hist = t.kind.output_lengths(configs)
    if hist is None:
        return None
    edges, counts = hist
    nickname = site.registry.models[model_id].nickname
    bins = [{"start": edges[i], "end": edges[i + 1], "count": n} for i, n in enumerate(counts)]
    spec = charts.bind(
        charts.length_histogram(), {"table": bins}, f"{nickname} on {t.info.name}: output length"
    )
    return chart_ref(
        site.urls,
        "lengths",
        [model_slug(model_id), t.id],
        charts.title_of(spec),
        f"Histogram of the output length of {sum(counts):,} responses over all "
        f"configurations, from {edges[0]:,.0f} to {edges[-1]:,.0f} tokens.",
        spec,
        site.urls.model(model_id),
        "all configurations",
        data=configs,
    )


def model_section(site: SiteView, t: TaskView, model_id: str) -> tuple[ModelTaskSection, Part]:
    """A model on one task: its standing, best configuration per GPU, every configuration
    and its Pareto frontier of energy per output against latency."""
    info, d, kind, urls = site.registry.models[model_id], t.deadline, t.kind, site.urls
    configs = sorted(site.by_model[model_id][t.id], key=kind.model_sort_key)
    rows = t.ranking
    mine = t.ranked.get(model_id)
    if mine is not None:
        value = t.units.efficiency(mine.config.energy_per_output_joules)
        within = " (within measurement noise)" if mine.shared else ""
        standing = (
            f"Rank {mine.places} of {len(rows)}{within} at {t.deadline_text()}, with "
            f"{kind.config_label(mine.config)}: {kind.standing_value(t.units, value)}."
        )
    else:
        standing = (
            f"No configuration on {' or '.join(site.registry.site.default_gpus)} meets "
            f"{t.deadline_text()}, so it is not ranked on this task."
        )
    frontier = {c.identity for c in ranking.pareto_frontier(configs, d.percentile)}
    chosen = mine.config.identity if mine else None

    def note(c: Record) -> str:
        marks = (["chosen"] if c.identity == chosen else []) + (
            ["Pareto"] if c.identity in frontier else []
        )
        if runs_of(c) > 1:  # repeat runs folded into this row (listed below the table)
            marks.append(f"{runs_of(c)} runs")
        return ", ".join(marks)

    repeated = tuple(
        f"{kind.config_label(c)}: the geometric mean of "
        f"{runs_of(c)} runs, from {' and '.join(run_sources(c))}."
        for c in configs
        if runs_of(c) > 1
    )

    fields = figure_second(kind.configuration_fields(t.info), kind.ranked_key)
    configs_table = configurations_table(
        f"configs-{t.id}",
        f"Every configuration of {info.nickname} on {t.info.name}",
        fields,
        configs,
        t.values,
        urls,
        note,
        sourced=True,
        grouped=lambda c: f"{c.num_gpus}× {c.gpu_model}",
    )
    gpu_table = configurations_table(
        f"gpus-{t.id}",
        f"{t.info.name}: best configuration on each GPU at {t.deadline_text()}",
        fields,
        ranking.best_per_model_and_gpu(configs, d).values(),
        t.values,
        urls,
    )
    points = [
        {
            "latency": kind.chart_latency(c, d.percentile),
            "energy": c.energy_per_output_joules,
            "low": low,
            "high": high,
            "gpu": c.gpu_model,
            "frontier": c.identity in frontier,
            "kind": "Pareto frontier" if c.identity in frontier else "other",
            "config": kind.config_label(c),
        }
        for c in configs
        for low, high in (t.energy_interval(c),)
    ]
    spec = charts.bind(
        charts.pareto(
            kind.latency.axis_title(d.percentile),
            f"Energy per {t.units.output} (J)",
            t.units.energy_label,
        ),
        {"table": points, "deadline": t.deadline_rows()},
        f"{info.nickname} on {t.info.name}: energy vs {kind.latency.noun}",
    )
    pareto = chart_ref(
        urls,
        "pareto",
        [model_slug(model_id), t.id],
        charts.title_of(spec),
        f"Scatter plot of {len(points)} configurations, energy per {t.units.output} against "
        f"{kind.latency.words[d.percentile]} (both on log scales), with the Pareto frontier "
        f"drawn as a step line through {len(frontier)} of them (diamonds) and the "
        f"{kind.latency.value(d.ms)} deadline as a dashed line.",
        spec,
        urls.model(model_id),
        f"deadline: {t.deadline_text()}",
        table_id=f"configs-{t.id}",
        boundary=boundary_words(t.boundary),
        data=configs,
    )
    lengths = _lengths_chart(site, t, model_id, configs)
    out = Part(charts=(pareto, *((lengths,) if lengths else ())))
    label = None
    if mine is not None:
        label, label_part = energy_label(
            site,
            t,
            model_id,
            t.units.efficiency(mine.config.energy_per_output_joules),
            t.units.efficiency(rows[0].config.energy_per_output_joules),
            mine.places,
        )
        out += label_part
    score = site.registry.accuracy(t.id, model_id)
    quality = (
        None
        if score is None
        else QualitySource(
            info.nickname,
            urls.url(urls.model(model_id)),
            f"{score.accuracy_percent:.1f}",
            score.setting,
            score.source_url,
            score.source_detail,
            score.confidence,
            score.matches_energy_run,
        )
    )
    return ModelTaskSection(
        t.info.name,
        urls.url(urls.task(t.id)),
        f"task-{t.id}",
        standing,
        gpu_table,
        configs_table,
        pareto,
        lengths,
        label,
        quality,
        repeated,
    ), out


def run_sources(c: Record) -> tuple[str, ...]:
    """The files the runs folded into ``c`` come from (loading/repeats.py); () for a record
    of a kind that folds none."""
    sources = getattr(c, "run_sources", ())
    return tuple(s for s in sources if isinstance(s, str)) if isinstance(sources, tuple) else ()


def data_sources(configs: Iterable[Record]) -> tuple[DataSource, ...]:
    """The distinct data sets of ``configs`` (a citation is long: cited once, not per row),
    in the order of their names, each with how many configurations (and measurements: repeat
    runs folded) it gives."""
    count: Counter[tuple[str, str, str, str, str, str]] = Counter()
    runs: Counter[tuple[str, str, str, str, str, str]] = Counter()
    for c in configs:
        p = c.provenance
        if p is not None:
            window = WINDOW_WORDS[p.window] if p.window else ""
            key = (p.dataset, p.version, p.date, p.license, p.citation, window)
            count[key] += 1
            runs[key] += runs_of(c)
    return tuple(DataSource(*key, n, runs[key]) for key, n in sorted(count.items()))


def model_page(site: SiteView, model_id: str) -> Part:
    info = site.registry.models[model_id]
    tasks = [t for t in site.tasks.values() if t.id in site.by_model[model_id]]
    facts = (
        ("Builder", info.builder),
        ("Model id", model_id),
        (
            "Parameters",
            f"{significant(info.total_params_billions, 3)} B total, "
            f"{significant(info.active_params_billions, 3)} B active",
        ),
        ("Architecture", info.architecture or "–"),
        ("Weight precision", precision_label(info.weight_precision)),
    )
    sections, out = [], Part()
    for t in tasks:
        section, part = model_section(site, t, model_id)
        sections.append(section)
        out += part
    body = ModelBody(
        info.nickname,
        model_id,
        info.builder,
        facts,
        tuple(Link(link.label, link.url) for link in info.links),
        render_markdown(info.description_md),
        tuple(sections),
        data_sources(c for t in tasks for c in site.by_model[model_id][t.id]),
        mlperf.section(
            [r for r in site.mlperf if r.result.model_id == model_id],
            site.urls,
            site.registry,
            f"{info.nickname} in MLPerf Inference (whole system at the wall)",
            "mlperf-model",
        ),
    )
    page = Page(
        site.urls.model(model_id),
        "model.html",
        f"{info.nickname} energy efficiency",
        f"Energy efficiency and latency of {info.nickname} by {info.builder}, "
        f"measured on {in_words(t.info.name for t in tasks)}.",
        body,
    )
    return out + Part(pages=(page,))


def _comparison(site: SiteView, t: TaskView, gpu: str, other: str) -> Table | None:
    best = t.best_by_gpu
    models = sorted({m for (m, g) in best if g == gpu} & {m for (m, g) in best if g == other})
    if not models:
        return None
    units = t.units
    value = {key: units.efficiency(c.energy_per_output_joules) for key, c in best.items()}
    ratio = Column(
        "ratio",
        f"{gpu} ÷ {other}",
        numeric=True,
        title=f"{units.efficiency_label} on {gpu} divided by "
        f"{units.efficiency_unit_lower} on {other}",
    )
    columns = (
        MODEL,
        Column(gpu, f"{gpu} {units.efficiency_unit}", numeric=True),
        Column(other, f"{other} {units.efficiency_unit}", numeric=True),
        ratio,
    )
    rows = []
    for m in sorted(models, key=lambda m: -value[(m, gpu)]):
        a, b = value[(m, gpu)], value[(m, other)]
        rows.append(
            (
                model_cell(m, site.registry, site.urls),
                Cell(a, show(units.efficiency_show, a)),
                Cell(b, show(units.efficiency_show, b)),
                Cell(a / b, f"{a / b:.2f}×"),
            )
        )
    return Table(
        f"compare-{t.id}-{other.lower()}",
        f"{t.info.name}: best {units.efficiency_unit_lower} on {gpu} vs {other} "
        f"at {t.deadline_text()}",
        columns,
        tuple(rows),
        empty_text="No model was measured on both GPUs.",
    )


def _gpu_chart(site: SiteView, t: TaskView, gpu: str) -> ChartRef | None:
    best, units = t.best_by_gpu, t.units
    compared = {m for (m, g) in best if g == gpu} & {m for (m, g) in best if g != gpu}
    if not compared:
        return None
    value = {key: units.efficiency(c.energy_per_output_joules) for key, c in best.items()}
    # A 24 px band per model: past the first view's table rows, the best on this GPU only.
    ranked = sorted(compared, key=lambda m: (-value[(m, gpu)], m))[: site.table_rows]
    order = {m: i for i, m in enumerate(ranked)}
    points: list[Row] = [
        {
            "model": site.registry.models[m].nickname,
            "gpu": g,
            "order": order[m],
            "value": value[(m, g)],
        }
        for (m, g) in best
        if m in order
    ]
    which = (
        f"the {len(compared)} models"
        if len(ranked) == len(compared)
        else f"the {len(ranked)} best on {gpu} of the {len(compared):,} models"
    )
    title = f"{t.info.name}: best {units.efficiency_unit_lower} per GPU"
    spec = charts.bind(
        charts.gpu_compare(f"Best {units.efficiency_words}"),
        {"table": points},
        title
        if len(ranked) == len(compared)
        else f"{title} (top {len(ranked)} of {len(compared):,} models)",
    )
    return chart_ref(
        site.urls,
        "gpu-compare",
        [gpu, t.id],
        charts.title_of(spec),
        f"Dot plot of each model's best {units.efficiency_words} on each GPU at "
        f"{t.deadline_text()}, for {which} measured on more than one GPU.",
        spec,
        site.urls.gpu(gpu),
        f"at {t.deadline_text()}",
        boundary=boundary_words(t.boundary),
        table_alt="The comparison table gives the same figures.",
        data=t.configs,
    )


def gpu_section(site: SiteView, t: TaskView, gpu: str) -> tuple[GpuTaskSection | None, Part]:
    if not any(c.gpu_model == gpu for c in t.configs):
        return None, Part()
    rows = ranking.rank(t.configs, t.deadline, gpus={gpu}, noise=t.noise)
    table = task_table(
        site, t, f"ranking-{t.id}", f"{t.info.name} on {gpu} only, at {t.deadline_text()}", rows
    )
    comparisons = tuple(
        c
        for other in sorted(site.registry.gpus)
        if other != gpu
        if (c := _comparison(site, t, gpu, other)) is not None
    )
    chart = _gpu_chart(site, t, gpu)
    downloads, out = ranking_downloads(site, t, rows, table.caption, t.deadline.ms, gpu)
    answer = summary(
        standings(site, t, rows), t.units.efficiency_unit_lower, t.units.efficiency_show, t.noise
    )
    return (
        GpuTaskSection(
            t.info.name,
            site.urls.url(site.urls.task(t.id)),
            table,
            downloads,
            comparisons,
            chart,
            answer,
            f"task-{t.id}",
        ),
        out + Part(charts=(chart,) if chart else ()),
    )


def gpu_page(site: SiteView, gpu: str) -> Part:
    info = site.registry.gpus[gpu]
    sections, out, shown = [], Part(), set()
    for t in site.tasks.values():
        section, part = gpu_section(site, t, gpu)
        if section is not None:
            sections.append(section)
            shown.add(t.id)
            out += part
    facts = (
        ("Vendor", info.vendor),
        ("Generation", info.generation),
        ("Memory", f"{info.memory_gb:g} GB"),
        ("Board power limit", f"{info.board_power_watts:g} W"),
    )
    systems = mlperf.section(
        [r for r in site.mlperf if r.result.system.gpu_model == gpu],
        site.urls,
        site.registry,
        f"Systems with {info.name} in MLPerf Inference (whole system at the wall)",
        "mlperf-gpu",
    )
    # A GPU of the registry that no task's measurement ran on (`jouleboard init`'s B200).
    unmeasured = (
        ""
        if sections
        else f"No task has a configuration measured on {info.name} yet"
        + ("; MLPerf's systems with it follow." if systems else ".")
    )
    page = Page(
        site.urls.gpu(gpu),
        "gpu.html",
        f"{info.name} energy leaderboard",
        unmeasured
        or f"Models ranked by "
        f"{efficiency_phrase(t.units for t in site.tasks.values() if t.id in shown)} "
        f"on {info.name}.",
        body := GpuBody(
            info.name,
            facts,
            tuple(sections),
            systems,
            unmeasured=unmeasured,
        ),
    )
    first = gpu_first_view(
        body, site.urls.url(full_view_path(page.path)), site.table_rows, site.top_n
    )
    return out + Part(pages=with_full_view(page, first))
