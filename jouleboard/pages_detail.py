"""Model and GPU pages (the per-entity part of the page plan)."""

from __future__ import annotations

from markupsafe import escape

from jouleboard import rank as ranking
from jouleboard.contexts import (
    ChartRef,
    GpuBody,
    GpuTaskSection,
    LabelRef,
    Link,
    ModelBody,
    ModelTaskSection,
    Page,
    QualitySource,
)
from jouleboard.pages import PERCENTILE_WORDS, Planner, config_label, latency_title
from jouleboard.present import charts
from jouleboard.present.formats import PRECISION_LABELS, significant
from jouleboard.present.labels import EnergyLabel, band, label_svg
from jouleboard.present.markdown import render_markdown
from jouleboard.present.tables import (
    MODEL,
    TOKENS_PER_J,
    Cell,
    Column,
    Table,
    configurations_table,
    model_cell,
    num_cell,
    ranking_table,
)
from jouleboard.records import Configuration
from jouleboard.urls import model_slug


def _lengths(configs: list[Configuration]) -> tuple[tuple[float, ...], list[int]] | None:
    """Output-length histogram of all configurations together (when their bins agree)."""
    with_hist = [c for c in configs if c.output_length_counts]
    if not with_hist:
        return None
    edges = with_hist[0].output_length_bin_edges_tokens
    if any(c.output_length_bin_edges_tokens != edges for c in with_hist):
        return edges, list(with_hist[0].output_length_counts)
    counts = [sum(col) for col in zip(*(c.output_length_counts for c in with_hist), strict=True)]
    return edges, counts


def _model_section(p: Planner, model_id: str, task: str) -> ModelTaskSection:
    info, task_info = p.reg.models[model_id], p.reg.tasks[task]
    d = p._deadline(task)
    configs = sorted((c for c in p.by_model[model_id][task] if isinstance(c, Configuration)),
                     key=lambda c: (c.gpu_model, c.num_gpus, c.weight_precision,
                                    c.max_num_seqs, c.repeat))
    rows = p.rankings[task]
    mine = next((r for r in rows if r.config.model_id == model_id), None)
    if mine is not None:
        standing = (f"Rank {mine.rank} of {len(rows)} at {p._deadline_text(task)}, "
                    f"with {config_label(mine.config)}: "
                    f"{mine.config.tokens_per_joule:.2f} tokens/J.")
    else:
        standing = (f"No configuration on {' or '.join(p.reg.site.default_gpus)} meets "
                    f"{p._deadline_text(task)}, so it is not ranked on this task.")
    frontier = {c.identity for c in ranking.pareto_frontier(configs, d.percentile)}
    chosen = mine.config.identity if mine else None

    def note(c: Configuration) -> str:
        marks = (["chosen"] if c.identity == chosen else []) + \
                (["Pareto"] if c.identity in frontier else [])
        return ", ".join(marks)

    slug = model_slug(model_id)
    configs_table = configurations_table(f"configs-{task}",
                                         f"Every configuration of {info.nickname} on "
                                         f"{task_info.name}", configs, p.urls, note)
    best_gpu = ranking.best_per_model_and_gpu(configs, d).values()
    gpu_table = configurations_table(f"gpus-{task}", f"Best configuration on each GPU at "
                                     f"{p._deadline_text(task)}", best_gpu, p.urls)
    points = [{"latency": c.itl_ms(d.percentile), "energy": c.energy_per_token_joules,
               "gpu": c.gpu_model, "frontier": c.identity in frontier,
               "kind": "Pareto frontier" if c.identity in frontier else "other",
               "config": config_label(c)} for c in configs]
    spec = charts.bind(charts.pareto(latency_title(d.percentile)),
                       {"table": points,
                        "deadline": [{"ms": d.ms, "label": f"deadline {d.ms:g} ms"}]},
                       f"{info.nickname} on {task_info.name}: energy vs latency")
    pareto = p.plan.chart(
        p.urls, "pareto", [slug, task], spec["title"],
        f"Scatter plot of {len(points)} configurations, energy per token against "
        f"{PERCENTILE_WORDS[d.percentile]} inter-token latency, with the Pareto frontier "
        f"({len(frontier)} configurations, marked in the table) and the {d.ms:g} ms deadline.",
        spec, p.urls.model(model_id), f"deadline: {p._deadline_text(task)}",
        table_id=f"configs-{task}")
    lengths: ChartRef | None = None
    hist = _lengths(configs)
    if hist is not None:
        edges, counts = hist
        bins = [{"start": edges[i], "end": edges[i + 1], "count": n}
                for i, n in enumerate(counts)]
        spec = charts.bind(charts.length_histogram(), {"table": bins},
                           f"{info.nickname} on {task_info.name}: output length")
        total = sum(counts)
        lengths = p.plan.chart(
            p.urls, "lengths", [slug, task], spec["title"],
            f"Histogram of the output length of {total:,} responses over all configurations, "
            f"from {edges[0]:,.0f} to {edges[-1]:,.0f} tokens.", spec, p.urls.model(model_id),
            "all configurations")
    label = None
    if mine is not None:
        label = energy_label(p, model_id, task, mine.config.tokens_per_joule,
                             rows[0].config.tokens_per_joule, "tokens/J",
                             f"{PERCENTILE_WORDS[d.percentile]} ITL ≤ {d.ms:g} ms")
    score = p.reg.accuracy(task, model_id)
    quality = None if score is None else QualitySource(
        info.nickname, p.urls.url(p.urls.model(model_id)), f"{score.accuracy_percent:.1f}",
        score.setting, score.source_url, score.source_detail, score.confidence,
        score.matches_energy_run)
    return ModelTaskSection(task_info.name, p.urls.url(p.urls.task(task)), f"task-{task}",
                            standing, gpu_table, configs_table, pareto, lengths, label,
                            quality)


def energy_label(p: Planner, model_id: str, task: str, value: float, best: float, unit: str,
                 deadline_short: str) -> LabelRef:
    """The A-G label of a model on a task (present/labels.py), written as an SVG file."""
    info, task_info = p.reg.models[model_id], p.reg.tasks[task]
    energy = EnergyLabel(band(value, best), value, best, unit, info.nickname, task_info.name,
                         f"data {p.reg.site.data_date}", deadline_short)
    path = p.urls.label(model_id, task)
    p.plan.labels[path] = label_svg(energy)
    alt = (f"Energy label {energy.band} for {info.nickname} on {task_info.name}: "
           f"{value:.2f} {unit}, best {best:.2f}, at {p._deadline_text(task)}")
    snippet = (f'<img src="{escape(p.urls.absolute(path))}" alt="{escape(alt)}" '
               'width="240" height="96">')
    return LabelRef(p.urls.url(path), energy.band, alt, snippet)


def _section(p: Planner, model_id: str, task: str) -> ModelTaskSection:
    if p.reg.tasks[task].kind == "diffusion":
        from jouleboard.pages_diffusion import diffusion_model_section

        return diffusion_model_section(p, model_id, task)
    return _model_section(p, model_id, task)


def model_page(p: Planner, model_id: str) -> Page:
    info = p.reg.models[model_id]
    tasks = [t for t in p.reg.tasks if t in p.by_model[model_id]]
    facts = (
        ("Builder", info.builder),
        ("Model id", model_id),
        ("Parameters", f"{significant(info.total_params_billions, 3)} B total, "
                       f"{significant(info.active_params_billions, 3)} B active"),
        ("Architecture", info.architecture or "–"),
        ("Weight precision", PRECISION_LABELS.get(info.weight_precision,
                                                  info.weight_precision)),
    )
    body = ModelBody(info.nickname, model_id, info.builder, facts,
                     tuple(Link(link.label, link.url) for link in info.links),
                     render_markdown(info.description_md),
                     tuple(_section(p, model_id, t) for t in tasks))
    return Page(p.urls.model(model_id), "model.html", f"{info.nickname} energy efficiency",
                f"Energy efficiency and latency of {info.nickname} "
                f"({info.builder}) on {len(tasks)} task(s).", body)


def _comparison(p: Planner, gpu: str, other: str,
                best: dict[tuple[str, str], Configuration], task: str) -> Table | None:
    models = sorted({m for (m, g) in best if g == gpu} & {m for (m, g) in best if g == other})
    if not models:
        return None
    ratio = Column("ratio", f"{gpu} ÷ {other}", numeric=True,
                   title=f"Tokens/J on {gpu} divided by tokens/J on {other}")
    columns = (MODEL, Column(f"{gpu}", f"{gpu} tokens/J", numeric=True),
               Column(f"{other}", f"{other} tokens/J", numeric=True), ratio)
    rows = []
    for m in sorted(models, key=lambda m: -best[(m, gpu)].tokens_per_joule):
        a, b = best[(m, gpu)].tokens_per_joule, best[(m, other)].tokens_per_joule
        rows.append((model_cell(m, p.reg, p.urls), num_cell(TOKENS_PER_J, a),
                     num_cell(TOKENS_PER_J, b), Cell(a / b, f"{a / b:.2f}×")))
    return Table(f"compare-{task}-{other.lower()}",
                 f"Best tokens/J on {gpu} vs {other} at {p._deadline_text(task)}",
                 columns, tuple(rows), empty_text="No model was measured on both GPUs.")


def gpu_page(p: Planner, gpu: str) -> Page:
    info = p.reg.gpus[gpu]
    sections = []
    for task, task_info in p.reg.tasks.items():
        if task_info.kind == "diffusion":
            from jouleboard.pages_diffusion import diffusion_gpu_section

            if (section := diffusion_gpu_section(p, gpu, task)) is not None:
                sections.append(section)
            continue
        best = p.best_by_gpu[task]
        if not any(c.gpu_model == gpu for c in p.by_task[task]):
            continue
        d = p._deadline(task)
        rows = ranking.rank(p.by_task[task], d, gpus={gpu})
        table = ranking_table(f"ranking-{task}",
                              f"{task_info.name} on {gpu} only, at {p._deadline_text(task)}",
                              rows, p.reg, p.urls, task)
        comparisons = tuple(t for other in sorted(p.reg.gpus) if other != gpu
                            if (t := _comparison(p, gpu, other, best, task)) is not None)
        compared = {m for (m, g) in best if g == gpu} & \
                   {m for (m, g) in best if g != gpu}
        chart = None
        if compared:
            order = {m: i for i, m in enumerate(sorted(
                compared, key=lambda m: -best[(m, gpu)].tokens_per_joule))}
            points = [{"model": p.reg.models[m].nickname, "gpu": g, "order": order[m],
                       "value": c.tokens_per_joule}
                      for (m, g), c in best.items() if m in compared]
            spec = charts.bind(charts.gpu_compare("Best tokens per joule"), {"table": points},
                               f"{task_info.name}: best tokens/J per GPU")
            chart = p.plan.chart(
                p.urls, "gpu-compare", [gpu, task], spec["title"],
                f"Dot plot of each model's best tokens per joule on each GPU at "
                f"{p._deadline_text(task)}, for the {len(compared)} models measured on more "
                "than one GPU; the comparison table gives the same figures.", spec,
                p.urls.gpu(gpu), f"at {p._deadline_text(task)}")
        downloads = p.ranking_downloads(task, rows, table.caption, d.ms, d.percentile, gpu)
        sections.append(GpuTaskSection(task_info.name, p.urls.url(p.urls.task(task)), table,
                                       downloads, comparisons, chart))
    facts = (("Vendor", info.vendor), ("Generation", info.generation),
             ("Memory", f"{info.memory_gb:g} GB"),
             ("Board power limit", f"{info.board_power_watts:g} W"))
    return Page(p.urls.gpu(gpu), "gpu.html", f"{info.name} energy leaderboard",
                f"Models ranked by tokens per joule on {info.name}.",
                GpuBody(info.name, facts, tuple(sections)))

