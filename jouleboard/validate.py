"""Measurement files -> Configuration records, or every located problem.

Checks run in layers; a file that fails a layer is not checked further, but every file
is checked, and dataset-wide rules (duplicates) run over all files that passed.
Rule ids are listed in docs/measurement-format.md.
"""

from __future__ import annotations

import difflib
import itertools
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from jouleboard import metrics
from jouleboard.config import Registry
from jouleboard.jsonio import parse_strict
from jouleboard.problems import Problem, pointer
from jouleboard.records import (
    DiffusionMeasurement,
    Measurement,
    Record,
)
from jouleboard.urls import model_slug, task_slug

MAX_FILE_BYTES = 1024 * 1024
POWER_MARGIN = 1.05  # average power may exceed the board limit by 5% (sensor error)
MIN_WATTS_PER_GPU = 30.0  # below an idle GPU's draw: a unit mistake (kW?)
MIN_MEDIAN_ITL_MS = 0.5  # faster than any GPU decodes: seconds given as ms?
MAX_ITL_MS = 120_000.0  # two minutes per token: microseconds given as ms?
CONSISTENCY_TOLERANCE = 0.01  # relative, for linked metrics
BATCH_MARGIN = 1.01
# Chart files are named <kind>--<model slug>--<task>.<ext>; file names stop at 255 bytes, and
# 55 are left for the kind, separators and extension (the longest today needs 26).
MAX_MODEL_AND_TASK_CHARS = 200
# output throughput / (avg_batch_size / median ITL): 0.062 to 1.391 over the 838 token
# configurations of the ML.ENERGY v3 data; the reasoning is in docs/measurement-format.md.
THROUGHPUT_RATIO_MIN = 0.02
THROUGHPUT_RATIO_MAX = 2.0
# Efficiency ceilings per watt of one GPU's board power, about 10x the best measured
# (tokens: 0.0352 tokens/J per W, gpt-oss-20b on B200; diffusion: 7.28e-5 megapixel-steps
# per J per W, SANA 1.5 1.6B on H100).
TOKENS_PER_JOULE_PER_BOARD_WATT = 0.35
MEGAPIXEL_STEPS_PER_JOULE_PER_BOARD_WATT = 7.5e-4


def read_json(path: Path, shown: str) -> tuple[Any, list[Problem]]:
    """Read one JSON file with a size cap and strict parsing."""
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode):
            return None, [Problem(shown, "", "file.not-regular",
                                  "not a regular file (a link, device or pipe)",
                                  "commit the measurement itself, not a link to it")]
        with path.open("rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)  # bounded even if the file grows meanwhile
        if len(raw) > MAX_FILE_BYTES:
            return None, [Problem(shown, "", "file.too-large",
                                  f"file has {max(info.st_size, len(raw))} bytes, over the "
                                  f"{MAX_FILE_BYTES}-byte cap",
                                  "one configuration per file; drop per-request data")]
    except OSError as e:
        return None, [Problem(shown, "", "file.unreadable", e.strerror or str(e),
                              "check the path and permissions")]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return None, [Problem(shown, "", "file.not-utf8",
                              f"not UTF-8 text ({e.reason} at byte {e.start})",
                              "save the file as UTF-8")]
    value, issues = parse_strict(text)
    return value, [Problem(shown, i.pointer, i.rule, i.message, i.hint) for i in issues]


def _closest(value: str, known: Iterable[str]) -> str:
    known = sorted(known)
    close = difflib.get_close_matches(value, known, n=1)
    if close:
        return f"did you mean {close[0]!r}? (or add it to the registry)"
    return f"known: {', '.join(known)}" if len(known) <= 12 else "add it to the registry first"


def check_references(m: Measurement | DiffusionMeasurement, shown: str,
                     registry: Registry) -> list[Problem]:
    """The task, model and GPU must be in the registries, and the task kind must match."""
    problems = []
    task = registry.tasks.get(m.task)
    if task is None:
        problems.append(Problem(shown, "/task", "registry.unknown-task",
                                f"unknown task {m.task!r}",
                                _closest(m.task, registry.tasks) + " in tasks.yaml"))
    elif task.kind != m.kind:
        problems.append(Problem(shown, "/kind", "registry.kind-mismatch",
                                f"kind {m.kind!r} but task {m.task!r} is {task.kind!r}",
                                f"set kind to {task.kind!r}"))
    names = len(model_slug(m.model_id)) + len(task_slug(m.task))
    if names > MAX_MODEL_AND_TASK_CHARS:
        problems.append(Problem(shown, "/model_id", "value.name-too-long",
                                f"model id and task id have {names} characters together, over "
                                f"{MAX_MODEL_AND_TASK_CHARS}: chart file names would exceed "
                                "255 bytes", "use a shorter model id or task id"))
    if m.model_id not in registry.models:
        problems.append(Problem(shown, "/model_id", "registry.unknown-model",
                                f"unknown model {m.model_id!r}",
                                _closest(m.model_id, registry.models) + " in models.yaml"))
    if m.gpu_model not in registry.gpus:
        problems.append(Problem(shown, "/gpu_model", "registry.unknown-gpu",
                                f"unknown GPU {m.gpu_model!r}",
                                _closest(m.gpu_model, registry.gpus) + " in gpus.yaml"))
    return problems


def power_problems(m: Measurement | DiffusionMeasurement, shown: str,
                   registry: Registry) -> list[Problem]:
    """Average power within num_gpus x the board limit (5 % margin), and not kW-sized."""
    power, problems = m.metrics.avg_power_watts, []
    gpu = registry.gpus.get(m.gpu_model)
    if gpu is not None and power > m.num_gpus * gpu.board_power_watts * POWER_MARGIN:
        problems.append(Problem(
            shown, "/metrics/avg_power_watts", "bounds.power-above-limit",
            f"{power:g} W exceeds {m.num_gpus} x {gpu.board_power_watts:g} W board limit of "
            f"{m.gpu_model}", "power is the average over all GPUs in watts; check num_gpus and "
            "units"))
    if power < m.num_gpus * MIN_WATTS_PER_GPU:
        problems.append(Problem(shown, "/metrics/avg_power_watts",
                                "bounds.power-implausibly-low",
                                f"{power:g} W is below {MIN_WATTS_PER_GPU:g} W per GPU",
                                "give watts, not kilowatts"))
    return problems


def inconsistent(value: float, implied: float) -> bool:
    """More than the tolerance apart; an overflow to inf (a NaN difference) counts too."""
    return not metrics.relative_difference(value, implied) <= CONSISTENCY_TOLERANCE


def throughput_problems(m: Measurement, shown: str) -> list[Problem]:
    """Output throughput must be near avg_batch_size / median ITL (bounds.throughput-
    inconsistent): a scaled throughput with a matching J/token passes every other rule."""
    x = m.metrics
    if x.avg_batch_size is None:  # a raw run without prometheus.json: nothing to tie it to
        return []
    implied = metrics.decode_throughput(x.avg_batch_size, x.median_itl_ms)
    ratio = x.output_throughput_tokens_per_sec / implied
    if THROUGHPUT_RATIO_MIN <= ratio <= THROUGHPUT_RATIO_MAX:
        return []
    return [Problem(
        shown, "/metrics/output_throughput_tokens_per_sec", "bounds.throughput-inconsistent",
        f"{x.output_throughput_tokens_per_sec:g} tokens/s is {ratio:.3g} x the "
        f"avg_batch_size / median ITL rate ({x.avg_batch_size:g} / {x.median_itl_ms:g} ms = "
        f"{implied:g} tokens/s)",
        f"the ratio must lie between {THROUGHPUT_RATIO_MIN:g} and {THROUGHPUT_RATIO_MAX:g}; "
        "check the units of throughput (tokens/s), batch size and ITL (ms)")]


def _ceiling_problem(shown: str, where: str, value: float, ceiling: float, unit: str,
                     basis: str) -> list[Problem]:
    if value <= ceiling:
        return []
    return [Problem(shown, where, "bounds.efficiency-above-ceiling",
                    f"{value:.4g} {unit} is above the ceiling of {ceiling:.4g} {unit} ({basis})",
                    "check the units of energy and throughput; a genuine record needs the "
                    "ceiling in jouleboard/validate.py raised, with the run as evidence")]


def token_ceiling_problems(m: Measurement, shown: str, registry: Registry) -> list[Problem]:
    """tokens/J at most TOKENS_PER_JOULE_PER_BOARD_WATT x one GPU's board power."""
    gpu = registry.gpus.get(m.gpu_model)
    if gpu is None:
        return []
    ceiling = TOKENS_PER_JOULE_PER_BOARD_WATT * gpu.board_power_watts
    return _ceiling_problem(
        shown, "/metrics/energy_per_token_joules",
        metrics.tokens_per_joule(m.metrics.energy_per_token_joules), ceiling, "tokens/J",
        f"{TOKENS_PER_JOULE_PER_BOARD_WATT:g} tokens/J per W of {m.gpu_model}'s "
        f"{gpu.board_power_watts:g} W board power, 10x the best measured")


def diffusion_ceiling_problems(m: DiffusionMeasurement, shown: str,
                               registry: Registry) -> list[Problem]:
    """Outputs per kJ at most MEGAPIXEL_STEPS_PER_JOULE_PER_BOARD_WATT x board power / the
    output's megapixel-steps (bigger, longer, more-step outputs cost more)."""
    gpu, task, o = registry.gpus.get(m.gpu_model), registry.tasks.get(m.task), m.output
    if gpu is None:
        return []
    work = metrics.megapixel_steps(o.width_px, o.height_px, o.inference_steps, o.num_frames)
    ceiling = MEGAPIXEL_STEPS_PER_JOULE_PER_BOARD_WATT * gpu.board_power_watts / work * 1000
    unit = f"{task.output_unit if task else 'output'}s/kJ"
    frames = f" x {o.num_frames} frames" if o.num_frames else ""
    return _ceiling_problem(
        shown, "/metrics/energy_per_output_joules", 1000 / m.metrics.energy_per_output_joules,
        ceiling, unit, f"{o.width_px}x{o.height_px} px{frames} x {o.inference_steps} steps = "
        f"{work:g} megapixel-steps at {MEGAPIXEL_STEPS_PER_JOULE_PER_BOARD_WATT:g} per J per W "
        f"of {m.gpu_model}'s {gpu.board_power_watts:g} W board power, 10x the best measured")


def check_diffusion(m: DiffusionMeasurement, shown: str, registry: Registry) -> list[Problem]:
    """Bounds for text-to-image and text-to-video: power, linked metrics, video fields."""
    x, problems = m.metrics, power_problems(m, shown, registry)
    problems += diffusion_ceiling_problems(m, shown, registry)
    implied = x.avg_power_watts / x.throughput_outputs_per_sec
    if inconsistent(x.energy_per_output_joules, implied):
        problems.append(Problem(
            shown, "/metrics/energy_per_output_joules", "bounds.energy-inconsistent",
            f"{x.energy_per_output_joules:g} J per output but avg_power_watts / "
            f"throughput_outputs_per_sec = {implied:g}",
            f"the three must agree within {CONSISTENCY_TOLERANCE:.0%}; check units"))
    batch = m.serving.batch_size / x.throughput_outputs_per_sec
    if inconsistent(x.batch_latency_s, batch):
        problems.append(Problem(
            shown, "/metrics/batch_latency_s", "bounds.latency-inconsistent",
            f"batch latency {x.batch_latency_s:g} s but batch_size / throughput = {batch:g} s",
            "batch latency is seconds per batch; check units (ms given as s?)"))
    task = registry.tasks.get(m.task)
    if task is not None and task.output_unit == "video" and (
            m.output.num_frames is None or m.output.fps is None):
        problems.append(Problem(shown, "/output", "schema.missing-field",
                                "a video task needs num_frames and fps",
                                "give the frames per video and frames per second"))
    return problems


def check_physics(m: Measurement, shown: str, registry: Registry) -> list[Problem]:
    """Physical sanity bounds (docs/metrics.md): power, latency, linked metrics."""
    x, problems = m.metrics, []

    def add(where: str, rule: str, message: str, hint: str) -> None:
        problems.append(Problem(shown, where, rule, message, hint))

    problems += power_problems(m, shown, registry)
    percentiles = [("median_itl_ms", x.median_itl_ms), ("p90_itl_ms", x.p90_itl_ms),
                   ("p95_itl_ms", x.p95_itl_ms), ("p99_itl_ms", x.p99_itl_ms)]
    for (lo_name, lo), (hi_name, hi) in itertools.pairwise(percentiles):
        if lo > hi:
            add(f"/metrics/{hi_name}", "bounds.percentile-order",
                f"{hi_name} ({hi:g}) is below {lo_name} ({lo:g})",
                "percentiles must satisfy median <= p90 <= p95 <= p99")
    if x.median_itl_ms < MIN_MEDIAN_ITL_MS:
        add("/metrics/median_itl_ms", "bounds.itl-implausible",
            f"median ITL of {x.median_itl_ms:g} ms is implausibly fast",
            "ITL fields are in milliseconds; was it given in seconds?")
    for name, value in percentiles:
        if value > MAX_ITL_MS:
            add(f"/metrics/{name}", "bounds.itl-implausible",
                f"{value:g} ms per token is implausibly slow",
                "ITL fields are in milliseconds; was it given in microseconds?")
    implied = x.avg_power_watts / x.output_throughput_tokens_per_sec
    if inconsistent(x.energy_per_token_joules, implied):
        add("/metrics/energy_per_token_joules", "bounds.energy-inconsistent",
            f"{x.energy_per_token_joules:g} J/token but avg_power_watts / "
            f"output_throughput_tokens_per_sec = {implied:g}",
            f"the three must agree within {CONSISTENCY_TOLERANCE:.0%}; check units (J, W, "
            "tokens/s)")
    problems += throughput_problems(m, shown) + token_ceiling_problems(m, shown, registry)
    response = metrics.energy_per_response(x.energy_per_token_joules, x.avg_output_len_tokens)
    if inconsistent(x.energy_per_response_joules, response):
        add("/metrics/energy_per_response_joules", "bounds.response-energy-inconsistent",
            f"{x.energy_per_response_joules:g} J but energy_per_token_joules x "
            f"avg_output_len_tokens = {response:g}",
            f"the three must agree within {CONSISTENCY_TOLERANCE:.0%}")
    if x.avg_batch_size is not None and \
            x.avg_batch_size > m.serving.max_num_seqs * BATCH_MARGIN:
        add("/metrics/avg_batch_size", "bounds.batch-above-cap",
            f"average batch {x.avg_batch_size:g} exceeds max_num_seqs "
            f"{m.serving.max_num_seqs}", "check max_num_seqs and avg_batch_size")
    s = m.serving
    if s.tensor_parallel * s.data_parallel > m.num_gpus or s.expert_parallel > m.num_gpus:
        add("/serving", "bounds.parallelism-exceeds-gpus",
            f"tensor x data parallel ({s.tensor_parallel} x {s.data_parallel}) or expert "
            f"parallel ({s.expert_parallel}) exceeds num_gpus ({m.num_gpus})",
            "parallel degrees must fit on the configuration's GPUs")
    h = m.output_length_distribution
    if h is not None and (len(h.bin_edges_tokens) != len(h.counts) + 1 or any(
            a >= b for a, b in zip(h.bin_edges_tokens, h.bin_edges_tokens[1:], strict=False))):
        add("/output_length_distribution", "value.histogram-shape",
            "bin_edges_tokens must be increasing and one longer than counts",
            "give n+1 increasing edges for n counts")
    return problems


def check_duplicates(configs: list[Record], shown: dict[str, str]) -> list[Problem]:
    """Two files may not describe the same configuration."""
    first: dict[object, Record] = {}
    problems = []
    for c in sorted(configs, key=lambda c: c.source):
        other = first.setdefault(c.identity, c)
        if other is not c:
            problems.append(Problem(shown[c.source], pointer(), "dataset.duplicate-configuration",
                                    f"same configuration as {shown[other.source]}",
                                    "keep one file per (model, task, GPU, GPU count, precision, "
                                    "serving settings)"))
    return problems
