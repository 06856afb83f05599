"""MLPerf Inference pages: each benchmark ranks the submitted systems (one row per system
and software stack and round), Server and Offline apart; the index lists every benchmark's
leaders; model and GPU pages get a section of their own. Every figure is the whole system
at the wall, never ranked with the GPU-only figures of the other tasks (kinds/mlperf.py).

Pure: values in, values out (the engine renders and writes them).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from jouleboard.config.registry import Registry
from jouleboard.core.shapes import Row
from jouleboard.core.urls import Urls
from jouleboard.kinds.mlperf import SCENARIOS, WORKLOADS, SystemResult, workload_of
from jouleboard.measure.formats import significant
from jouleboard.plan.mlperf_figures import (
    benchmark_chart,
    confound_note,
    order,
    per_joule_label,
    ranked_value,
    rate_unit,
    twin_note,
)
from jouleboard.plan.views import (
    Download,
    Link,
    MLPerfBody,
    MLPerfScenario,
    MLPerfSection,
    Page,
    Part,
)
from jouleboard.rank.noise import UNKNOWN, table_note
from jouleboard.rank.tables import Cell, Column, Table

BOUNDARY = (
    "Energy of the whole system at the wall (power supplies, host CPUs, memory, fans and "
    "every accelerator), measured by an external power analyzer (SPEC PTDaemon): not "
    "comparable with the GPU-only figures of the other leaderboards on this site."
)
NOT_VERIFIED = "not verified by MLCommons"
DOWNLOAD_NAME = "mlperf"
# A Server result's p99 latencies and their limits, ms (None where a result has none).
LATENCY_COLUMNS = (
    "ttft_p99_ms",
    "ttft_limit_ms",
    "tpot_p99_ms",
    "tpot_limit_ms",
    "query_p99_ms",
    "query_limit_ms",
)
DOWNLOAD_COLUMNS = (
    "round",
    "submitter",
    "division",
    "availability",
    "result_id",
    "unique_id",
    "benchmark",
    "scenario",
    "model_id",
    "system_id",
    "system_name",
    "accelerator",
    "gpu_model",
    "num_accelerators",
    "nodes",
    "host",
    "software",
    "power_settings",
    "throughput_per_sec",
    "throughput_unit",
    "avg_power_watts",
    "power_samples",
    "outputs_per_joule",
    "joules_per_output",
    "output_unit",
    *LATENCY_COLUMNS,
    "accuracy",
    "energy_boundary",
    "energy_instrument",
    "derived_figures",
    "result_url",
    "license",
    "source",
)


def title(benchmark: str) -> str:
    """``Llama 2 70B Chat (99.9% accuracy target)``."""
    workload, target = workload_of(benchmark) or (benchmark, "")
    name = WORKLOADS[workload].name if workload in WORKLOADS else benchmark
    return f"{name} ({target}% accuracy target)" if target else name


def constraint_text(results: Sequence[SystemResult], scenario: str) -> str:
    """What a scenario's results had to meet."""
    if scenario == "Offline":
        return (
            "Offline: all queries are sent at once, so there is no latency constraint: "
            "these are throughput-bound figures, not a service under a deadline."
        )
    limits = set()
    for r in results:
        lat = r.result.latency
        if lat is None:
            continue
        if lat.ttft_limit_ms is not None and lat.tpot_limit_ms is not None:
            limits.add(
                f"p99 time to first token ≤ {lat.ttft_limit_ms:,.0f} ms and p99 time per "
                f"output token ≤ {lat.tpot_limit_ms:,.0f} ms"
            )
        elif lat.query_limit_ms is not None:
            limits.add(f"p99 latency of a query ≤ {lat.query_limit_ms / 1000:g} s")
    met = "; ".join(sorted(limits)) or "the benchmark's latency constraints"
    return (
        f"Server: queries arrive at random as in a live service; a result is valid only "
        f"if it meets {met}. Every result here met it."
    )


def _latency_cell(r: SystemResult) -> Cell:
    lat = r.result.latency
    if lat is None:
        return Cell(None, "–" if r.result.scenario == "Offline" else "met (not in the summary)")
    if lat.ttft_p99_ms is not None and lat.tpot_p99_ms is not None:
        return Cell(
            lat.tpot_p99_ms,
            f"TTFT {lat.ttft_p99_ms:,.0f} ms, TPOT {lat.tpot_p99_ms:,.1f} ms",
        )
    if lat.query_p99_ms is not None:
        return Cell(lat.query_p99_ms, f"{lat.query_p99_ms / 1000:,.2f} s")
    return Cell(None, "–")


def source_cell(r: SystemResult) -> Cell:
    """Which result a row comes from, linked, with the words MLCommons asks for."""
    return Cell(
        r.result.result_id or r.result.unique_id,
        f"Derived from MLPerf Inference {r.result.round} {r.reference}",
        r.result.result_url,
        f"{NOT_VERIFIED[:1].upper()}{NOT_VERIFIED[1:]}.",
    )


def accelerator_cell(r: SystemResult, urls: Urls, registry: Registry) -> Cell:
    s = r.result.system
    text = f"{s.accelerators}× {s.accelerator}"
    href = urls.url(urls.gpu(s.gpu_model)) if s.gpu_model in registry.gpus else None
    return Cell(text, text, href, f"host {s.host}" if s.host else "")


def scenario_table(
    table_id: str,
    caption: str,
    results: Sequence[SystemResult],
    urls: Urls,
    registry: Registry,
    *,
    with_benchmark: bool = False,
) -> Table:
    """One scenario's ranking; ``with_benchmark``: a list of results of several benchmarks
    and scenarios (a model's or a GPU's), by benchmark, not ranked across them."""
    ordered = order(results)
    if with_benchmark:
        ordered = sorted(ordered, key=lambda r: (r.result.benchmark, r.result.scenario))
    label = per_joule_label(ordered[0])[0] if ordered else "Tokens/J"
    throughput_unit = rate_unit(ordered[0]) if ordered else "tokens/s"
    scenario = ordered[0].result.scenario if ordered else "Server"
    server = with_benchmark or scenario == "Server"
    columns = (
        *(
            (Column("benchmark", "Benchmark"),)
            if with_benchmark
            else (Column("rank", "#", numeric=True),)
        ),
        Column("system", "System"),
        Column(
            "per_joule",
            f"{label} (derived)",
            numeric=True,
            title=(
                "= throughput / average wall power"
                if label == "Tokens/J"
                else "= average wall power / throughput"
            )
            + f"; derived from the result, {NOT_VERIFIED}",
        ),
        Column(
            "throughput",
            "Throughput (measured)",
            throughput_unit,
            numeric=True,
            title="As MLCommons reports it",
        ),
        Column(
            "power",
            "Wall power (measured)",
            "W",
            numeric=True,
            title="Whole system at the wall, mean over the run's power window",
        ),
        Column("accelerators", "Accelerators"),
        *(
            (Column("latency", "p99 latency", title="Measured; the constraint is above"),)
            if server
            else ()
        ),
        Column("software", "Software"),
        Column("source", "Result"),
    )
    rows = []
    for place, r in enumerate(ordered, start=1):
        res = r.result
        value = ranked_value(r)
        rows.append(
            (
                *(
                    (
                        Cell(
                            res.benchmark,
                            title(res.benchmark),
                            urls.url(urls.mlperf(res.benchmark)),
                            res.scenario,
                        ),
                    )
                    if with_benchmark
                    else (Cell(place, str(place)),)
                ),
                Cell(
                    res.system.name,
                    res.system.name,
                    None,
                    f"{res.submitter}, {res.round}, {res.division}",
                ),
                Cell(value, significant(value, 4)),
                Cell(res.throughput_per_sec, f"{res.throughput_per_sec:,.6g}"),
                Cell(res.avg_power_watts, f"{res.avg_power_watts:,.0f}"),
                accelerator_cell(r, urls, registry),
                *((_latency_cell(r),) if server else ()),
                Cell(res.system.software, res.system.software or "–"),
                source_cell(r),
            )
        )
    return Table(
        table_id,
        caption,
        columns,
        tuple(rows),
        empty_text="No result.",
        ranked="" if with_benchmark else "per_joule",
        rank_note=""
        if with_benchmark
        else f"{table_note(UNKNOWN)} Energy: whole system at the wall.",
        rank_note_url=urls.url(urls.glossary) + "#noise",
        glossary_url=urls.url(urls.glossary),
    )


def record(r: SystemResult) -> Row:
    """A download row: the measured figures, the derived ones and where they come from."""
    res, s = r.result, r.result.system
    lat = res.latency
    return {
        "round": res.round,
        "submitter": res.submitter,
        "division": res.division,
        "availability": res.availability,
        "result_id": res.result_id,
        "unique_id": res.unique_id,
        "benchmark": res.benchmark,
        "scenario": res.scenario,
        "model_id": res.model_id,
        "system_id": s.id,
        "system_name": s.name,
        "accelerator": s.accelerator,
        "gpu_model": s.gpu_model,
        "num_accelerators": s.accelerators,
        "nodes": s.nodes,
        "host": s.host,
        "software": s.software,
        "power_settings": s.power_settings,
        "throughput_per_sec": res.throughput_per_sec,
        "throughput_unit": rate_unit(r),
        "avg_power_watts": res.avg_power_watts,
        "power_samples": res.power_samples,
        "outputs_per_joule": r.per_joule,
        "joules_per_output": r.joules_per_output,
        "output_unit": r.output,
        **{k: getattr(lat, k) if lat is not None else None for k in LATENCY_COLUMNS},
        "accuracy": res.accuracy,
        "energy_boundary": res.provenance.boundary,
        "energy_instrument": res.provenance.instrument,
        "derived_figures": r.attribution,
        "result_url": res.result_url,
        "license": res.provenance.license,
        "source": r.source,
    }


def downloads(results: Sequence[SystemResult], urls: Urls) -> tuple[tuple[Link, ...], Part]:
    records = [record(r) for r in sorted(results, key=lambda r: r.source)]
    description = "every MLPerf Inference power result, whole system at the wall"
    files = tuple(
        Download(
            urls.configurations_download(ext, DOWNLOAD_NAME),
            DOWNLOAD_COLUMNS,
            records,
            "Full data set",
            description,
        )
        for ext in ("csv", "json")
    )
    links = tuple(Link(d.path.rsplit(".", 1)[1].upper(), urls.url(d.path)) for d in files)
    return links, Part(downloads=files)


def benchmark_page(
    benchmark: str,
    results: Sequence[SystemResult],
    urls: Urls,
    registry: Registry,
    links: tuple[Link, ...],
    everything: Sequence[SystemResult] = (),
) -> Page:
    """A benchmark's page: its chart, then its systems ranked per scenario; ``everything``:
    every MLPerf result (a note names the rows that are the same run as another target's)."""
    first = results[0]
    model_id = first.result.model_id
    model_url = urls.url(urls.model(model_id)) if model_id in registry.models else ""
    scenarios = []
    for scenario in SCENARIOS:
        mine = [r for r in results if r.result.scenario == scenario]
        if not mine:
            continue
        label, _ = per_joule_label(mine[0])
        scenarios.append(
            MLPerfScenario(
                scenario,
                constraint_text(mine, scenario),
                scenario_table(
                    f"mlperf-{scenario.lower()}",
                    f"{title(benchmark)}, {scenario}: systems by {label}",
                    mine,
                    urls,
                    registry,
                ),
            )
        )
    workload = first.workload
    what = (
        "tokens per joule (throughput ÷ wall power)"
        if workload.output == "token"
        else f"joules per {workload.output} (wall power ÷ throughput)"
    )
    intro = (
        f"In an MLPerf Inference benchmark the model ({workload.name}) and the data "
        f"({workload.data}) are fixed and the submitted systems compete, so this page ranks "
        f"systems, not models: one row per system, software stack and round, by {what}."
    )
    return Page(
        urls.mlperf(benchmark),
        "mlperf.html",
        f"MLPerf Inference {title(benchmark)}: systems by energy",
        f"Submitted systems ranked by {what} on MLPerf Inference {benchmark}.",
        MLPerfBody(
            title(benchmark),
            benchmark,
            intro,
            BOUNDARY,
            tuple(scenarios),
            workload.name,
            model_url,
            links,
            attribution(results),
            notes=tuple(n for n in (confound_note(results), twin_note(everything, results)) if n),
            chart=benchmark_chart(benchmark, title(benchmark), results, urls),
        ),
    )


def attribution(results: Iterable[SystemResult]) -> str:
    rounds = sorted({r.result.round for r in results})
    return (
        f"Throughput and average power are the figures of MLPerf Inference {', '.join(rounds)} "
        f"results as MLCommons publishes them; tokens, samples and images per joule are "
        f"derived from them by jouleboard and are {NOT_VERIFIED}. MLPerf is a trademark of "
        "MLCommons."
    )


def mlperf_link(results: Sequence[SystemResult], urls: Urls) -> Link | None:
    """The home page's pointer to the MLPerf pages: how many benchmarks and systems."""
    if not results:
        return None
    benchmarks = len({r.result.benchmark for r in results})
    systems = len({r.system_key for r in results})
    return Link(
        f"MLPerf Inference: {benchmarks} benchmarks, {systems} systems",
        urls.url(urls.mlperf_index),
        "Power-measured MLPerf Inference results rank the submitted systems of each "
        "benchmark (the model is fixed) by energy of the whole system at the wall: a "
        "different boundary from the GPU energy above, so they are not ranked with it.",
    )


def mlperf_part(results: Sequence[SystemResult], urls: Urls, registry: Registry) -> Part:
    """The index, a page per benchmark and the download (nothing without results)."""
    if not results:
        return Part()
    links, out = downloads(results, urls)
    by_benchmark: dict[str, list[SystemResult]] = {}
    for r in results:
        by_benchmark.setdefault(r.result.benchmark, []).append(r)
    pages = [
        benchmark_page(b, rs, urls, registry, links, results)
        for b, rs in sorted(by_benchmark.items())
    ]
    charts = tuple(
        c for page in pages if isinstance(page.body, MLPerfBody) and (c := page.body.chart)
    )
    leaders = [
        (order(same)[0], len(same))
        for b, rs in sorted(by_benchmark.items())
        for scenario in SCENARIOS
        if (same := [r for r in rs if r.result.scenario == scenario])
    ]
    index = Page(
        urls.mlperf_index,
        "mlperf.html",
        "MLPerf Inference: systems by energy",
        "The most energy-efficient submitted system of each MLPerf Inference benchmark.",
        MLPerfBody(
            "MLPerf Inference: systems by energy",
            "",
            "MLPerf Inference results that carry a power measurement, ranked by energy: each "
            "benchmark fixes the model and the data and ranks the submitted systems. The "
            "best system of each benchmark and scenario:",
            BOUNDARY,
            (),
            "",
            "",
            links,
            attribution(results),
            leaders=_leaders_tables(leaders, urls),
            notes=tuple(n for n in (twin_note(results, [r for r, _ in leaders]),) if n),
        ),
    )
    return out + Part(pages=(index, *pages), charts=charts)


# The index's tables, one per unit (a sortable column never mixes two): its caption.
LEADER_TABLES = (
    ("token", "Tokens per joule (higher is better)"),
    ("sample", "Joules per sample (lower is better)"),
    ("image", "Joules per image (lower is better)"),
)


def _leaders_tables(leaders: Sequence[tuple[SystemResult, int]], urls: Urls) -> tuple[Table, ...]:
    """The most efficient system of each benchmark and scenario, in one table per unit of
    the ranked figure: tokens per joule, joules per sample, joules per image."""
    return tuple(
        _leaders_table([(r, n) for r, n in leaders if r.output == output], urls, output, caption)
        for output, caption in LEADER_TABLES
        if any(r.output == output for r, _ in leaders)
    )


def _leaders_table(
    leaders: Sequence[tuple[SystemResult, int]], urls: Urls, output: str, caption: str
) -> Table:
    label, unit = per_joule_label(leaders[0][0])
    columns = (
        Column("benchmark", "Benchmark"),
        Column("scenario", "Scenario"),
        Column("system", "Best system"),
        Column(
            "figure",
            f"{label} (derived)",
            unit,
            numeric=True,
            title=f"Derived from the measured throughput and wall power; {NOT_VERIFIED}",
        ),
        Column("throughput", "Throughput (measured)", rate_unit(leaders[0][0]), numeric=True),
        Column("power", "Average wall power (measured)", "W", numeric=True),
        Column("systems", "Systems", numeric=True),
        Column("source", "Result"),
    )
    rows = []
    for r, n in leaders:
        res = r.result
        value = ranked_value(r)
        rows.append(
            (
                Cell(res.benchmark, title(res.benchmark), urls.url(urls.mlperf(res.benchmark))),
                Cell(res.scenario, res.scenario),
                Cell(
                    res.system.name,
                    res.system.name,
                    None,
                    f"{res.submitter}, {res.round}, {res.division}",
                ),
                Cell(value, significant(value, 4)),
                Cell(res.throughput_per_sec, f"{res.throughput_per_sec:,.6g}"),
                Cell(res.avg_power_watts, f"{res.avg_power_watts:,.0f}"),
                Cell(n, f"{n:,}"),
                source_cell(r),
            )
        )
    return Table(
        f"mlperf-leaders-{output}",
        f"The most energy-efficient system per benchmark and scenario: {caption.lower()}",
        columns,
        tuple(rows),
        glossary_url=urls.url(urls.glossary),
    )


def section(
    results: Sequence[SystemResult], urls: Urls, registry: Registry, heading: str, table_id: str
) -> MLPerfSection | None:
    """Results of one model, or on one GPU, as a section of its page: a table of every
    result, never merged into the GPU-only rankings."""
    if not results:
        return None
    tables = []
    for output in ("token", "sample", "image"):
        mine = [r for r in results if r.output == output]
        if mine:
            tables.append(
                scenario_table(
                    f"{table_id}-{output}",
                    f"{heading}: {per_joule_label(mine[0])[0]}",
                    mine,
                    urls,
                    registry,
                    with_benchmark=True,
                )
            )
    return MLPerfSection(heading, BOUNDARY, tuple(tables), urls.url(urls.mlperf_index))
