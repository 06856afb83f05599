"""NVIDIA AIPerf exports (``profile_export_aiperf.json``) into runs (``import-aiperf``).

Read from AIPerf 0.13.0's own code and runs of it (docs/aiperf.md has every field and rule):

- every metric is ``{"unit": ..., "avg": ...}`` (with ``p1``..``p99``, ``min``, ``max``,
  ``std``, ``count``, ``sum`` for distributions). The energy family is what AIPerf's
  EnergyEfficiencyAnalyzer computed: ``nvidia_total_gpu_energy`` (J), ``nvidia_average_gpu_power``
  (W: energy / profiling window), ``nvidia_output_tokens_per_joule`` (tokens/J: ``total_osl`` /
  energy) and ``nvidia_energy_per_output_token`` (mJ per token);
- ``telemetry_data.endpoints[<host:port>].gpus[gpu_<i>]``: each GPU's ``gpu_name`` and
  ``metrics.nvidia_energy_consumption.avg``: the change of its energy counter, in MJ, from
  the last scrape before the profiling phase to the last one before its end plus a grace
  period. Their sum is the total; a GPU without one means AIPerf integrated power instead;
- the profiling window is ``start_time``..``end_time``; the telemetry's ``summary.end_time``
  is its end plus the grace period; ``nvidia_power_usage.count`` counts the scrapes between.

A run that cannot be ranked is refused with one located problem (nothing is written):
cancelled, incomplete or with failed requests; no telemetry; energy integrated from power;
GPUs of two models or not NVIDIA's; no single load level; figures that disagree with each
other; or so short that the energy window's slack (up to one scrape interval before the
phase, the grace period after it) could move its energy by more than 1 %.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from jouleboard.core.problems import Problem, pointer, shown_path
from jouleboard.core.shapes import JsonValue
from jouleboard.importers.aiperf_export import Export, find_exports, open_export
from jouleboard.importers.contract import Skipped
from jouleboard.importers.serving_runs import Load, RunResult, read_each

MAX_GPUS = 1024  # num_gpus of a measurement file
PARITY = 1e-9  # relative: AIPerf's figures agree with each other to rounding
MAX_WINDOW_BIAS = 0.01  # the energy window's slack may move the energy by at most 1 %
RATE_PHASES = ("poisson", "gamma", "constant")  # rate-controlled load (requests/s)
INSTRUMENTS = {"dcgm": "DCGM energy counter", "pynvml": "NVML energy counter"}
# The figures a run gives: name -> (path in the export, unit).
FIGURES = {
    "energy": (("nvidia_total_gpu_energy", "avg"), "J"),
    "power": (("nvidia_average_gpu_power", "avg"), "W"),
    "per_joule": (("nvidia_output_tokens_per_joule", "avg"), "tokens/J"),
    "per_token_mj": (("nvidia_energy_per_output_token", "avg"), "mJ/token"),
    "tokens": (("total_osl", "avg"), "tokens"),
    "length": (("output_sequence_length", "avg"), "tokens"),
    "throughput": (("output_token_throughput", "avg"), "tokens/sec"),
    **{f"itl_{p}": (("inter_token_latency", p), "ms") for p in ("p50", "p90", "p95", "p99")},
    **{f"ttft_{p}": (("time_to_first_token", p), "ms") for p in ("avg", "p50", "p99")},
}


def read_exports(paths: Sequence[Path]) -> tuple[list[RunResult], list[Skipped], list[Problem]]:
    """Every export of ``paths`` read: the runs, the files left out, the problems."""
    files, left_out, problems = find_exports(paths)
    runs, more = read_each(files, read_export)
    return runs, [Skipped(shown_path(p), why) for p, why in left_out], problems + more


def read_export(path: Path) -> RunResult | list[Problem]:
    """One export as a run, or why it cannot be ranked (the first reason found)."""
    e = open_export(path)
    if isinstance(e, list):
        return e
    for check in (_check_run, _check_telemetry, _check_figures):
        check(e)
        if e.problems:
            return e.problems
    load = _load(e)
    result = _run(e, load) if load is not None else None
    return result if result is not None and not e.problems else e.problems


def _check_run(e: Export) -> None:
    """A finished run without failed requests, in an export format this reader knows."""
    version = e.at("schema_version")
    errors = e.at("error_summary")
    if not (isinstance(version, str) and re.fullmatch(r"1\.\d{1,3}", version)):
        e.refuse(
            ("schema_version",),
            "aiperf.unknown-schema",
            f"export schema {str(version)[:20]!r} is not 1.x",
            "import exports of AIPerf 0.10 or later (schema 1.x)",
        )
    elif e.at("was_cancelled") is True:
        e.refuse(("was_cancelled",), "aiperf.cancelled", "the run was cancelled before its end")
    elif e.at("is_complete") is False:
        reason = str(e.at("incomplete_reason") or "no reason given")[:100]
        e.refuse(("is_complete",), "aiperf.incomplete", f"the run is incomplete ({reason})")
    elif errors or (e.at("error_request_count", "avg") or 0) != 0:
        count = e.at("error_request_count", "avg")
        e.refuse(
            ("error_summary",),
            "aiperf.failed-requests",
            f"{count if isinstance(count, int | float) else 'some'} requests failed",
            "fix the failures and run again: the energy of a failed request would be "
            "charged to the others",
        )


def _check_telemetry(e: Export) -> None:
    """GPU telemetry with an energy counter on every GPU, all NVIDIA's and of one model."""
    if e.gpu_count() == 0:
        e.refuse(
            ("telemetry_data", "endpoints"),
            "aiperf.no-telemetry",
            "no GPU telemetry: the export holds no GPU and no energy",
            "run AIPerf with --gpu-telemetry pointing at a dcgm-exporter (or pynvml) that "
            "reports the serving GPUs",
        )
        return
    if e.gpu_count() > MAX_GPUS:
        e.refuse(
            ("telemetry_data", "endpoints"),
            "aiperf.too-many-gpus",
            f"{e.gpu_count()} GPUs; a measurement covers at most {MAX_GPUS}",
        )
        return
    names: dict[str, tuple[str | int, ...]] = {}  # each model's first GPU
    for where, gpu in e.gpus():
        entry = gpu if isinstance(gpu, dict) else {}
        name, platform = entry.get("gpu_name"), entry.get("platform", "nvidia")
        energy = e.at(*where, "metrics", "nvidia_energy_consumption")
        if not isinstance(name, str) or not name:
            e.refuse((*where, "gpu_name"), "aiperf.missing-metric", "the GPU has no gpu_name")
        elif platform != "nvidia":
            e.refuse(
                (*where, "platform"),
                "aiperf.unsupported-platform",
                f"{name[:60]!r} is a {str(platform)[:20]!r} GPU: only NVIDIA telemetry is read",
                "import runs on NVIDIA GPUs",
            )
        elif energy is None:
            e.refuse(
                (*where, "metrics"),
                "aiperf.power-integrated",
                f"{where[-1]} ({name[:60]}) has no energy counter, so AIPerf integrated "
                "sampled power instead of reading one",
                "use a dcgm-exporter that reports DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (or "
                "--gpu-telemetry pynvml) and run again",
            )
        else:
            names.setdefault(name, (*where, "gpu_name"))
            continue
        return  # one line per export: the first GPU that cannot be read
    if len(names) > 1:
        first, other = sorted(names)[:2]
        e.refuse(
            names[other],
            "aiperf.mixed-gpus",
            f"GPUs of two models in one run ({first[:60]!r} and {other[:60]!r})",
            "a measurement is one GPU model: report only the serving GPUs, one model per run",
        )


def _check_figures(e: Export) -> None:
    """AIPerf's figures are there, in their units, positive and agree with each other."""
    f = {name: e.number(path, unit) for name, (path, unit) in FIGURES.items()}
    for name, value in f.items():
        if value is not None and value <= 0:
            e.refuse(FIGURES[name][0], "aiperf.not-positive", f"{value:g}: it must be positive")
    if e.problems:
        return
    energy, tokens = float(f["energy"] or 0), float(f["tokens"] or 0)
    for name, expected, unit in (
        ("per_joule", tokens / energy, "tokens/J"),
        ("per_token_mj", energy * 1e3 / tokens, "mJ/token"),
    ):
        value = float(f[name] or 0)
        if abs(value - expected) > PARITY * expected:
            e.refuse(
                FIGURES[name][0],
                "aiperf.inconsistent",
                f"{value:g} {unit}, but total_osl / nvidia_total_gpu_energy gives {expected:g}",
                "the figures do not belong together: " + "restore the export AIPerf wrote",
            )
    joules = [
        e.number((*where, "metrics", "nvidia_energy_consumption", "avg"), "MJ")
        for where, _ in e.gpus()
    ]
    if any(j is None for j in joules):
        return
    for (where, _), mj in zip(e.gpus(), joules, strict=True):
        if mj is not None and mj < 0:
            e.refuse(
                (*where, "metrics", "nvidia_energy_consumption", "avg"),
                "aiperf.bad-energy",
                f"the energy counter went back by {-mj * 1e6:g} J",
            )
    total = math.fsum(j or 0.0 for j in joules) * 1e6
    if not e.problems and abs(total - energy) > PARITY * energy:
        e.refuse(
            FIGURES["energy"][0],
            "aiperf.energy-mismatch",
            f"{energy:g} J, but the GPUs' energy counters changed by {total:g} J in all",
        )


def _positive_int(value: JsonValue) -> int | None:
    """``value`` when it is a whole number of at least 1 (JSON true is not one)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _load(e: Export) -> Load | None:
    """The profiling phase's load level (one phase; a concurrency or a request rate)."""
    phases = e.at("input_config", "phases")
    profiling = [
        (i, p)
        for i, p in enumerate(phases if isinstance(phases, list) else [])
        if isinstance(p, dict) and (p.get("kind") or p.get("name")) == "profiling"
    ]
    models = e.at("input_config", "models", "items")
    if not isinstance(models, list) or len(models) != 1:
        e.refuse(
            ("input_config", "models", "items"),
            "aiperf.several-models",
            "the run does not name exactly one model",
            "benchmark one model per run",
        )
    elif len(profiling) != 1:
        e.refuse(
            ("input_config", "phases"),
            "aiperf.no-load-level",
            f"{len(profiling)} profiling phases, not one load level",
            "run one AIPerf profile (or sweep variation) per level",
        )
    else:
        i, phase = profiling[0]
        kind, rate = phase.get("type"), phase.get("rate")
        cap = _positive_int(phase.get("concurrency"))
        if kind == "concurrency" and cap is not None:
            return Load(concurrency=cap)
        rated = kind in RATE_PHASES and not isinstance(rate, bool)
        if rated and isinstance(rate, int | float) and 0 < rate < math.inf:
            return Load(cap, float(rate))
        e.refuse(
            ("input_config", "phases", i),
            "aiperf.no-load-level",
            f"a {str(kind)[:30]!r} phase has no single concurrency or request rate",
            "sweep --concurrency or --request-rate, one level per run",
        )
    return None


def _window(e: Export) -> tuple[float, float, float] | None:
    """The profiling window, the grace period after it and the scrape interval (s), once the
    window's slack is checked: at most 1 % of the window."""
    start, end = e.time("start_time"), e.time("end_time")
    scraped_to = e.time("telemetry_data", "summary", "end_time")
    if start is None or end is None or scraped_to is None or not start < end <= scraped_to:
        e.refuse(
            ("end_time",),
            "aiperf.bad-window",
            "start_time, end_time and telemetry_data.summary.end_time are not a window",
        )
        return None
    counts = [e.at(*where, "metrics", "nvidia_power_usage", "count") for where, _ in e.gpus()]
    whole = [c for c in counts if isinstance(c, int) and not isinstance(c, bool)]
    scrapes = min(whole, default=0)
    window, grace = (end - start).total_seconds(), (scraped_to - end).total_seconds()
    if scrapes < 2:
        e.refuse(
            ("telemetry_data", "endpoints"),
            "aiperf.run-too-short",
            f"{scrapes} telemetry scrapes in the run (nvidia_power_usage.count): nothing "
            "bounds how far its energy window reaches past it",
            "run longer, with telemetry that refreshes every second or faster",
        )
        return None
    # n scrapes spread over the telemetry window are at most window / (n - 1) apart.
    interval = (scraped_to - start).total_seconds() / (scrapes - 1)
    bias = (interval + grace) / window
    if bias > MAX_WINDOW_BIAS:
        e.refuse(
            ("end_time",),
            "aiperf.run-too-short",
            f"the run lasted {window:.1f} s, and its energy window may start one scrape "
            f"interval ({interval:.3f} s) early and end {grace:.3f} s late: that could move "
            f"its energy by {bias:.1%}",
            f"run at least {math.ceil((interval + grace) * 100)} s (100 x (interval + grace)), "
            "e.g. with --benchmark-duration, so that it moves it by 1 % at most",
        )
        return None
    return window, grace, interval


def _run(e: Export, load: Load) -> RunResult | None:
    """The run's result, once its window and telemetry collector are checked."""
    timing = _window(e)
    collector = str(e.at("input_config", "gpu_telemetry", "collector") or "dcgm")
    if timing is None:
        return None
    if collector not in INSTRUMENTS:
        e.refuse(
            ("input_config", "gpu_telemetry", "collector"),
            "aiperf.unsupported-collector",
            f"energy from a {collector[:30]!r} collector",
            "collect with dcgm (a dcgm-exporter URL) or pynvml",
        )
        return None
    window, grace, interval = timing
    f = {name: float(e.number(path) or 0) for name, (path, _) in FIGURES.items()}
    names = {str(gpu["gpu_name"]) for _, gpu in e.gpus() if isinstance(gpu, dict)}
    version = str(e.at("aiperf_version") or "unknown")[:20]
    benchmark = e.at("benchmark_id")
    named = isinstance(benchmark, str) and re.fullmatch(r"[0-9a-f]{6,32}", benchmark)
    run_id = str(benchmark) if named else e.digest
    model = e.at("input_config", "models", "items", 0, "name")
    start = e.time("start_time")
    assert start is not None  # _window
    workload = _workload(e)
    requests = f"; requests: {workload.text}" if workload is not None else ""
    return RunResult(
        shown=e.shown,
        run_id=run_id,
        source=f"{e.name[-200:]} (AIPerf {version}, benchmark {run_id}; profiling window "
        f"{start.isoformat()} + {window:.3f} s; energy to {grace:.3f} s after it{requests})",
        instrument=f"{INSTRUMENTS[collector]} via AIPerf {version}, scrapes {interval:.3f} s apart",
        date=start.date().isoformat(),
        served_model=model[:200] if isinstance(model, str) else "",
        gpu_name=names.pop(),
        num_gpus=e.gpu_count(),
        load=load,
        energy_joules=f["energy"],
        output_tokens=f["tokens"],
        avg_output_len_tokens=f["length"],
        throughput_tokens_per_sec=f["throughput"],
        avg_power_watts=f["power"],
        itl_ms=(f["itl_p50"], f["itl_p90"], f["itl_p95"], f["itl_p99"]),
        ttft_ms=(f["ttft_avg"], f["ttft_p50"], f["ttft_p99"]),
        workload=workload.label if workload is not None else "",
        warnings=(workload.warning(e.shown),) if workload is not None else (),
    )


@dataclass(frozen=True)
class Workload:
    """Requests that were not a task's own prompts and answers, and where the export says so."""

    text: str  # "synthetic prompts AIPerf generated (64 tokens on average), each answered ..."
    label: str  # the same, short, for serving.notes: "synthetic prompts, 48-token answers"
    where: tuple[str | int, ...]

    def warning(self, shown: str) -> Problem:
        return Problem(
            shown,
            pointer(*self.where),
            "aiperf.synthetic-workload",
            f"the run's requests were {self.text}: its energy per response (and per correct "
            "answer) is that of these requests, not of the task's prompts and answers",
            "compare it with other data by energy per token, or import it into a task of its "
            "own in tasks.yaml that names this workload",
        )


def _workload(e: Export) -> Workload | None:
    """What the run's requests were when the export shows they were not a task's own: prompts
    AIPerf generated (every ``input_config.datasets[].type`` is "synthetic", as with --isl),
    or answers all of one length (``output_sequence_length`` min = max over two or more
    requests: the benchmark fixed it, as --osl does with a server that stops at max_tokens;
    a model's own answers vary). None when neither holds."""
    datasets = e.at("input_config", "datasets")
    synthetic = (
        isinstance(datasets, list)
        and bool(datasets)
        and all(isinstance(d, dict) and d.get("type") == "synthetic" for d in datasets)
    )
    low, high, count = (e.at("output_sequence_length", k) for k in ("min", "max", "count"))
    fixed = _tokens(low) and _tokens(high) and _tokens(count) and low == high and count >= 2
    said, label = [], []  # the whole, for the source and the warning; a few words, notes
    if synthetic:
        length = e.at("input_sequence_length", "avg")
        average = f" ({length:,.0f} tokens on average)" if _tokens(length) else ""
        said.append(f"synthetic prompts AIPerf generated{average}")
        label.append("synthetic prompts")
    if fixed:
        said.append(f"{'each' if said else 'prompts each'} answered in exactly {high:,.0f} tokens")
        label.append(f"{high:,.0f}-token answers")
    if not said:
        return None
    where = ("input_config", "datasets", 0, "type") if synthetic else ("output_sequence_length",)
    return Workload(", ".join(said), ", ".join(label), where)


MAX_TOKENS = 10**7  # a length or count of requests past it is not one a run had


def _tokens(value: JsonValue) -> TypeGuard[int | float]:
    """A JSON number from 1 to :data:`MAX_TOKENS` (true is not one)."""
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and 1 <= value <= MAX_TOKENS
    )
