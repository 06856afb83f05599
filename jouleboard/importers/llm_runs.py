"""Raw LLM and multimodal-LLM runs: reading one run, and the stability rules.

    run/{llm,mllm}/{task}/results/{org}/{model}/{gpu_model}/{runtime_params}/
        results.json        streamed with ijson: per-request text is never held
        prometheus.json     optional; steady_state_stats."vllm:num_requests_running"

Stability (docs/metrics.md), as the ML.ENERGY data toolkit decides it
(``LLMRuns.from_raw_results``): a run is unstable when its steady window is under 20 s, its
energy per token is <= 0, or its average batch is under 85 % of max_num_seqs; every run of
the same model, task, GPU model and GPU count whose max_num_seqs is at or above the smallest
unstable one is dropped too (a repeat at the same max_num_seqs included). A run without an
average batch (no prometheus.json, or no batch metric in it) cannot be checked for
utilisation and is kept; :attr:`RunPolicy.require_prometheus` drops it instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from jouleboard.config.schema import SCHEMA_VERSION
from jouleboard.core.problems import Problem, pointer, shown_path
from jouleboard.core.shapes import JsonObject
from jouleboard.importers.run_configs import ModelFacts, model_facts, parallelism
from jouleboard.importers.run_layout import PROMETHEUS_JSON, RESULTS_JSON, RunLocation
from jouleboard.importers.run_results import (
    BATCH_METRIC,
    RunResults,
    read_avg_batch_size,
    read_results,
)
from jouleboard.measure import metrics

MIN_STEADY_WINDOW_S = 20.0
MIN_BATCH_UTILISATION = 0.85
UNSTABLE_RULES = (
    "run.unstable-short-window",
    "run.unstable-nonpositive-energy",
    "run.unstable-low-batch",
)
PARALLEL_KEYS = {
    "tensor_parallel": ("tensor_parallel", "tensor_parallel_size", "tp"),
    "expert_parallel": ("expert_parallel", "expert_parallel_size", "ep"),
    "data_parallel": ("data_parallel", "data_parallel_size", "dp"),
}


@dataclass(frozen=True, slots=True)
class RunPolicy:
    """Stricter rules than the toolkit's, each an explicit choice (docs/raw-runs.md)."""

    require_prometheus: bool = False  # drop runs whose utilisation cannot be checked


@dataclass(frozen=True, slots=True)
class RuntimeParams:
    """The runtime-params folder name, e.g. ``num_gpus+1+max_num_seqs+128+seed+48``."""

    num_gpus: int
    max_num_seqs: int
    tensor_parallel: int
    expert_parallel: int
    data_parallel: int
    extra: dict[str, str]  # keys this reader does not use, kept as written
    given_parallel: tuple[str, ...] = ()  # parallel fields the folder name states


class RuntimeParamsError(ValueError):
    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule


@dataclass(frozen=True, slots=True)
class RawRun:
    """One LLM run directory, read. ``avg_batch_size`` is None without prometheus.json."""

    location: RunLocation
    params: RuntimeParams
    results: RunResults
    avg_batch_size: float | None
    shown: str  # the run directory as named in problems
    facts: ModelFacts | None = None  # configs/.../model_info.json
    unpublishable: tuple[Problem, ...] = field(default=())  # why it cannot be published

    @property
    def source(self) -> str:
        return self.location.source

    @property
    def group(self) -> tuple[str, str, str, int]:
        """Runs whose stability cascades: same model, task, GPU model and GPU count."""
        return (*self.location.group, self.params.num_gpus)


def parse_runtime_params(name: str) -> RuntimeParams:
    """Parse ``key+value+key+value...``; raise :class:`RuntimeParamsError` (with a rule id)."""
    tokens = name.split("+")
    if len(tokens) % 2 or any(not t for t in tokens):
        raise RuntimeParamsError(
            "run.params-malformed", f"folder name {name!r} is not key+value pairs joined by '+'"
        )
    pairs: dict[str, str] = {}
    for key, value in zip(tokens[::2], tokens[1::2], strict=True):
        if key in pairs:
            raise RuntimeParamsError("run.params-malformed", f"key {key!r} appears twice")
        pairs[key] = value

    def number(key: str) -> int:
        value = pairs.pop(key)
        if not value.isascii() or not value.isdigit() or int(value) < 1:
            raise RuntimeParamsError(
                "run.params-malformed", f"{key} is {value!r}, not a positive whole number"
            )
        return int(value)

    missing = [k for k in ("num_gpus", "max_num_seqs") if k not in pairs]
    if missing:
        raise RuntimeParamsError(
            "run.params-missing", f"folder name {name!r} has no {' or '.join(missing)}"
        )
    num_gpus, max_num_seqs = number("num_gpus"), number("max_num_seqs")
    parallel: dict[str, int] = {}
    for name_, aliases in PARALLEL_KEYS.items():
        given = [a for a in aliases if a in pairs]
        if len(given) > 1:
            raise RuntimeParamsError(
                "run.params-malformed", f"{' and '.join(given)} both give {name_}"
            )
        if given:
            parallel[name_] = number(given[0])
    ep = parallel.get("expert_parallel", 1)
    dp = parallel.get("data_parallel", 1)
    tp = parallel.get("tensor_parallel", 1 if ep > 1 else max(1, num_gpus // dp))
    return RuntimeParams(
        num_gpus, max_num_seqs, tp, ep, dp, extra=pairs, given_parallel=tuple(parallel)
    )


def _mismatches(
    loc: RunLocation, params: RuntimeParams, r: RunResults, shown_file: str
) -> list[Problem]:
    pairs = [
        ("model_id", r.model_id, loc.model_id, "model folder"),
        ("gpu_model", r.gpu_model, loc.gpu_model, "GPU folder"),
        ("num_gpus", r.num_gpus, params.num_gpus, "folder name"),
        ("max_num_seqs", r.max_num_seqs, params.max_num_seqs, "folder name"),
    ]
    return [
        Problem(
            shown_file,
            pointer(name),
            "run.path-mismatch",
            f"{name} is {in_file!r} but the {where} says {in_path!r}",
            "file the run under its own model, GPU and settings, or fix results.json",
        )
        for name, in_file, in_path, where in pairs
        if in_file != in_path
    ]


def _with_configs(
    loc: RunLocation, params: RuntimeParams, folder: str
) -> tuple[RuntimeParams, list[Problem]]:
    """Parallel degrees from monolithic.config.yaml when the benchmark root has one."""
    degrees, problems = parallelism(loc, params.num_gpus)
    if degrees is None:
        return params, problems
    from_config = dict(zip(PARALLEL_KEYS, degrees, strict=True))
    for key in params.given_parallel:
        if getattr(params, key) != from_config[key]:
            problems.append(
                Problem(
                    folder,
                    "",
                    "run.path-mismatch",
                    f"the folder name says {key} {getattr(params, key)} but "
                    f"monolithic.config.yaml gives {from_config[key]}",
                    "the config is what the server ran: fix the folder name",
                )
            )
    tp, ep, dp = degrees
    return replace(params, tensor_parallel=tp, expert_parallel=ep, data_parallel=dp), problems


def read_run(loc: RunLocation) -> tuple[RawRun | None, list[Problem]]:
    """Read one run directory; every problem found is returned."""
    folder = shown_path(loc.run_dir)
    problems: list[Problem] = []
    params: RuntimeParams | None = None
    try:
        params = parse_runtime_params(loc.params_folder)
    except RuntimeParamsError as e:
        problems.append(
            Problem(
                folder,
                "",
                e.rule,
                str(e),
                "name the folder like num_gpus+1+max_num_seqs+128 "
                "(more key+value pairs may follow)",
            )
        )
    else:
        params, found = _with_configs(loc, params, folder)
        problems.extend(found)
    facts, found = model_facts(loc)
    problems.extend(found)
    results_shown = f"{folder}/{RESULTS_JSON}"
    results: RunResults | None = None
    if not os.path.lexists(loc.run_dir / RESULTS_JSON):  # a link is refused, not followed
        problems.append(
            Problem(
                folder,
                "",
                "run.missing-results",
                "no results.json in the run",
                "copy the run's results.json here, or remove the folder",
            )
        )
    else:
        results, found = read_results(loc.run_dir / RESULTS_JSON, results_shown)
        problems.extend(found)
    if results is not None and params is not None:
        problems.extend(_mismatches(loc, params, results, results_shown))
    avg_batch_size: float | None = None
    if os.path.lexists(loc.run_dir / PROMETHEUS_JSON):
        avg_batch_size, found = read_avg_batch_size(
            loc.run_dir / PROMETHEUS_JSON, f"{folder}/{PROMETHEUS_JSON}"
        )
        problems.extend(found)
    if problems or results is None or params is None:
        return None, problems
    blockers = []  # the toolkit skips such a run (it has no ITL): a drop, reported
    if results.successful_requests == 0 or results.completed <= 0:
        blockers.append(
            Problem(
                results_shown,
                "/results",
                "run.no-successful-request",
                f"no request succeeded ({results.failed_requests} failed): dropped",
                "see the run's driver.log and server.log; rerun it",
            )
        )
    elif results.itl is None:
        blockers.append(
            Problem(
                results_shown,
                "/results",
                "run.no-itl",
                "successful requests have no inter-token gaps: dropped",
                "the client must stream tokens so that itl is recorded",
            )
        )
    return RawRun(loc, params, results, avg_batch_size, folder, facts, tuple(blockers)), []


def instability(run: RawRun, policy: RunPolicy = RunPolicy()) -> Problem | None:
    """Why the run is unstable or unverifiable (docs/metrics.md), or None when it is stable."""
    r, results_shown = run.results, f"{run.shown}/{RESULTS_JSON}"
    if r.steady_state_duration_s < MIN_STEADY_WINDOW_S:
        return Problem(
            results_shown,
            "/steady_state_duration",
            "run.unstable-short-window",
            f"steady-state window of {r.steady_state_duration_s:g} s is under "
            f"{MIN_STEADY_WINDOW_S:g} s: dropped, with every larger max_num_seqs",
            "too short to measure; run more prompts",
        )
    if r.energy_per_token_joules <= 0:
        return Problem(
            results_shown,
            "/steady_state_energy_per_token",
            "run.unstable-nonpositive-energy",
            f"energy per token is {r.energy_per_token_joules:g} J: dropped, with "
            "every larger max_num_seqs",
            "the energy measurement failed; rerun it",
        )
    prometheus_shown = f"{run.shown}/{PROMETHEUS_JSON}"
    if run.avg_batch_size is None:
        if not policy.require_prometheus:
            return None  # the toolkit's rule: utilisation unknown is not instability
        return Problem(
            prometheus_shown,
            "",
            "run.unverifiable-no-prometheus",
            "no average batch size (prometheus.json), so batch utilisation cannot "
            "be checked: dropped (--require-prometheus)",
            "copy the run's prometheus.json here to publish it",
        )
    utilisation = run.avg_batch_size / run.params.max_num_seqs
    if utilisation < MIN_BATCH_UTILISATION:
        return Problem(
            prometheus_shown,
            pointer("steady_state_stats", BATCH_METRIC),
            "run.unstable-low-batch",
            f"average batch {run.avg_batch_size:g} is {utilisation:.0%} of "
            f"max_num_seqs {run.params.max_num_seqs} (under "
            f"{MIN_BATCH_UTILISATION:.0%}): dropped, with every larger max_num_seqs",
            "the server could not fill the batch; larger caps cannot be filled either",
        )
    return None


def stability_filter(
    runs: Iterable[RawRun], policy: RunPolicy = RunPolicy()
) -> tuple[list[RawRun], list[Problem]]:
    """Stable runs, and a warning for each dropped run: unstable or unverifiable itself, or
    at or above the smallest unstable max_num_seqs of its group (:attr:`RawRun.group`)."""
    ordered = sorted(runs, key=lambda r: r.source)
    own = {run.source: instability(run, policy) for run in ordered}
    first_unstable: dict[tuple[str, str, str, int], RawRun] = {}
    for run in sorted(ordered, key=lambda r: (r.params.max_num_seqs, r.source)):
        why = own[run.source]
        if why is not None and why.rule in UNSTABLE_RULES:
            first_unstable.setdefault(run.group, run)
    kept: list[RawRun] = []
    warnings: list[Problem] = []
    for run in ordered:
        why, first = own[run.source], first_unstable.get(run.group)
        if (
            why is None
            and first is not None
            and run.params.max_num_seqs >= first.params.max_num_seqs
        ):
            reason = own[first.source]
            why = Problem(
                run.shown,
                "",
                "run.dropped-after-unstable",
                f"max_num_seqs {run.params.max_num_seqs} is at or above "
                f"{first.params.max_num_seqs}, which is unstable "
                f"({reason.rule if reason else ''}) for the same model, task, GPU "
                "model and GPU count: dropped",
                f"see {first.shown}",
            )
        if why is None:
            kept.append(run)
        else:
            warnings.append(why)
    return kept, warnings


def llm_document(
    run: RawRun, precision: str, repeat: int, provenance: Mapping[str, str]
) -> JsonObject:
    """The measurement-file document of a stable run (not yet validated)."""
    loc, p, r = run.location, run.params, run.results
    assert r.itl is not None
    energy_per_token = r.energy_per_token_joules
    avg_output_len = r.total_output_tokens / r.completed
    duration_s, energy_joules = r.steady_state_duration_s, r.steady_state_energy_joules
    token_metrics: dict[str, float] = {
        "energy_per_token_joules": energy_per_token,
        "avg_power_watts": metrics.average_power(energy_joules, duration_s),
        "output_throughput_tokens_per_sec": metrics.output_throughput(
            energy_joules, energy_per_token, duration_s
        ),
        "energy_per_response_joules": metrics.energy_per_response(energy_per_token, avg_output_len),
        "avg_output_len_tokens": avg_output_len,
        "median_itl_ms": r.itl.median_ms,
        "p90_itl_ms": r.itl.p90_ms,
        "p95_itl_ms": r.itl.p95_ms,
        "p99_itl_ms": r.itl.p99_ms,
    }
    if run.avg_batch_size is not None:
        token_metrics["avg_batch_size"] = run.avg_batch_size
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": loc.kind,
        "task": loc.task,
        "model_id": loc.model_id,
        "gpu_model": loc.gpu_model,
        "num_gpus": p.num_gpus,
        "weight_precision": precision,
        "serving": {
            "max_num_seqs": p.max_num_seqs,
            "tensor_parallel": p.tensor_parallel,
            "expert_parallel": p.expert_parallel,
            "data_parallel": p.data_parallel,
            "notes": "",
        },
        "repeat": repeat,
        "metrics": dict(sorted(token_metrics.items())),
        "provenance": {**provenance, "source": run.source},
    }
