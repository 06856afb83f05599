"""An MLPerf result's figures and what a newcomer needs to read them: the figure a
benchmark ranks by (tokens per joule, or joules per sample or image), its label, unit and
order; a chart of each benchmark's systems (that figure with the measured throughput and
wall power it comes from); a note where the compared systems differ by round or software
(which confounds the comparison), and one where a benchmark's 99% and 99.9% accuracy
targets show the very same run.

Pure: values in, values out (plan/mlperf.py puts them on the pages)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from jouleboard.core.shapes import Row
from jouleboard.core.urls import Urls
from jouleboard.kinds.mlperf import SCENARIOS, SystemResult, workload_of
from jouleboard.measure.formats import significant
from jouleboard.measure.units import boundary_words
from jouleboard.plan.views import ChartRef, chart_ref
from jouleboard.render import charts


def per_joule_label(r: SystemResult) -> tuple[str, str]:
    """The ranked figure's column label and unit: tokens per joule for token workloads,
    joules per sample (per image) otherwise."""
    if r.output == "token":
        return "Tokens/J", "tokens/J"
    return f"J/{r.output}", f"J/{r.output}"


def rate_unit(r: SystemResult) -> str:
    """What MLCommons counts per second: tokens/s, or samples/s (images for SDXL)."""
    return "tokens/s" if r.output == "token" else "samples/s"


def ranked_value(r: SystemResult) -> float:
    """The figure a benchmark ranks by, as shown: tokens/J (higher is better) or J per
    sample or image (lower is better)."""
    return r.per_joule if r.output == "token" else r.joules_per_output


def order(results: Iterable[SystemResult]) -> list[SystemResult]:
    """Best first: the least energy per output, then the result's file (a total order)."""
    return sorted(results, key=lambda r: (r.joules_per_output, r.source))


def listed(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return ", ".join(items[:-1]) + f" and {items[-1]}" if len(items) > 1 else "".join(items)


def confound_note(results: Sequence[SystemResult]) -> str:
    """Where the systems ranked together come from different rounds or software stacks:
    the sentence that says so and why it matters ("" where they share both)."""
    rounds = sorted({r.result.round for r in results})
    stacks = sorted({r.result.system.software or "unstated" for r in results})
    if len(rounds) < 2 and len(stacks) < 2:
        return ""
    differ = [
        *([f"round ({listed(rounds)})"] if len(rounds) > 1 else []),
        *([f"software ({'; '.join(stacks)})"] if len(stacks) > 1 else []),
    ]
    return (
        f"These systems differ by {listed(differ)} as well as by hardware: each round "
        "brings its own rules and each stack its own optimisations, so part of a gap "
        "between them may come from those, not from the hardware alone."
    )


def _run(r: SystemResult) -> tuple[object, ...]:
    """What makes two results the same run: system, scenario and every measured figure."""
    res = r.result
    return (r.system_key, res.scenario, res.throughput_per_sec, res.avg_power_watts, res.accuracy)


def twin_note(everything: Iterable[SystemResult], shown: Iterable[SystemResult]) -> str:
    """Where results ``shown`` on a page are the very run the same system submitted for the
    workload's other accuracy target (99% and 99.9%; ``everything``: every result): the
    sentence that explains the identical rows ("" where there are none)."""
    targets: dict[tuple[str, tuple[object, ...]], set[str]] = {}
    for r in everything:
        found = workload_of(r.result.benchmark)
        if found and found[1]:
            targets.setdefault((found[0], _run(r)), set()).add(found[1])
    twins: dict[tuple[str, str, str], set[str]] = {}  # (workload, submitter, round) -> scenarios
    for r in shown:
        found = workload_of(r.result.benchmark)
        if found and len(targets.get((found[0], _run(r)), ())) > 1:
            key = (r.workload.name, r.result.submitter, r.result.round)
            twins.setdefault(key, set()).add(r.result.scenario)
    if not twins:
        return ""
    which = listed(
        [
            f"{name} ({who}, {rnd}; {listed([s for s in SCENARIOS if s in scenarios])})"
            for (name, who, rnd), scenarios in sorted(twins.items())
        ]
    )
    return (
        f"Identical 99% and 99.9% rows: for {which}, one run was reported for both accuracy "
        "targets (the same throughput, power and accuracy). A run that reaches the "
        "stricter 99.9% target also meets the 99% one, so the two rows are the same run, not "
        "two measurements."
    )


def short_system(r: SystemResult) -> str:
    """``ThinkSystem SR680a V3, v5.1``: the system's name before its details, and the round."""
    return f"{r.result.system.name.split(' (')[0]}, {r.result.round}"


def benchmark_chart(
    benchmark: str, name: str, results: Sequence[SystemResult], urls: Urls
) -> ChartRef | None:
    """Every system of a benchmark, Server then Offline, best first: its ranked figure as a
    bar, with the measured throughput and average wall power it is derived from."""
    ordered = [r for s in SCENARIOS for r in order(x for x in results if x.result.scenario == s)]
    if not ordered:
        return None
    label, unit = per_joule_label(ordered[0])
    better = "higher" if ordered[0].output == "token" else "lower"
    rows: list[Row] = []
    for place, r in enumerate(ordered):
        res, value = r.result, ranked_value(r)
        rows.append(
            {
                "model": f"{res.scenario}: {short_system(r)}",
                "system": res.system.name,
                "scenario": res.scenario,
                "order": place,
                "value": value,
                "shown": f"{significant(value, 4)} {unit}",
                "derivation": f"{res.throughput_per_sec:,.6g} {rate_unit(r)} at "
                f"{res.avg_power_watts:,.0f} W",
            }
        )
    spec = charts.bind(
        charts.mlperf_bars(f"{label} (derived; {better} is better)"),
        {"table": rows},
        f"{name}: systems by {unit}, with the throughput and power they come from",
    )
    spec["height"] = charts.MLPERF_BAND * len(rows)
    what = "; ".join(f"{r['model']}: {r['shown']} from {r['derivation']}" for r in rows)
    return chart_ref(
        urls,
        "mlperf",
        [benchmark],
        charts.title_of(spec),
        f"Bar chart of {unit} ({better} is better) of each system and scenario, each with the "
        f"measured throughput and average wall power it is derived from: {what}.",
        spec,
        urls.mlperf(benchmark),
        "derived figures not verified by MLCommons",
        table_id=f"mlperf-{ordered[0].result.scenario.lower()}",
        boundary=boundary_words("system-ac"),
        cites=f"MLPerf Inference {listed(sorted({r.result.round for r in ordered}))} (MLCommons)",
    )
