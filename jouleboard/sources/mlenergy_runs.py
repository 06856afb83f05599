"""Raw ML.ENERGY benchmark run directories -> measurement documents and Configurations.

Layout (shared docs/raw-run-format.md); a path at any level of it is accepted::

    run/{llm,mllm}/{task}/results/{org}/{model}/{gpu_model}/{runtime_params}/
        results.json        streamed with ijson: per-request text is never held
        prometheus.json     optional; steady_state_stats."vllm:num_requests_running"

find runs -> read each run -> stability filter -> measurement documents -> the checks every
measurement file gets (kinds.check_measurement), so raw runs meet the same bounds.

Decisions (each tested in tests/test_raw_runs.py):
- ITL smoothing (sources/itl.py): a positive gap g followed by k zeros is one chunk of k+1
  tokens, each g/(k+1). Zeros before the first positive gap arrived in the first chunk, with
  the first token; their wait is the time to first token, not an inter-token gap: dropped.
- ITL percentiles: numpy.percentile's default ("linear"), exact, from a float array of the
  successful requests' gaps without a sorted copy of it (sources/itl.py).
- Stability (docs/metrics.md) drops runs with *warnings*, not errors: the data stays
  publishable, every dropped run is reported (strict mode turns warnings into failures).
- No prometheus.json: no average batch size, so the batch-utilisation rule cannot be checked.
  The run is dropped (run.unverifiable-no-prometheus); nothing shows it unstable, so larger
  max_num_seqs of its group are kept.
- "No successful request" and "no ITL values" are errors only for runs that would be
  published; a dropped run is reported by why it was dropped.
- Parallelism from the folder name (tensor_parallel/tp, expert_parallel/ep, data_parallel/dp);
  missing: ep = dp = 1 and tp = num_gpus / dp, or 1 with expert parallelism.
- Runs of one configuration that differ only in other folder keys (seed, ...) are repeats,
  numbered 1, 2, ... in order of their directory path.
- results.json / prometheus.json problems name that file with a pointer into it; problems of
  the derived measurement name the run directory with a pointer into the measurement document.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jouleboard import metrics
from jouleboard.config import Registry
from jouleboard.jsonio import dumps_canonical
from jouleboard.kinds import check_measurement
from jouleboard.problems import Problem, ValidationFailed, pointer
from jouleboard.records import SCHEMA_VERSION, Configuration, SiteSettings
from jouleboard.sources.mlenergy_site import measurement_path
from jouleboard.sources.run_results import (
    BATCH_METRIC,
    RunResults,
    read_avg_batch_size,
    read_results,
)
from jouleboard.validate import check_duplicates

KINDS = ("llm", "mllm")
RESULTS_JSON = "results.json"
PROMETHEUS_JSON = "prometheus.json"
LAYOUT = "run/{llm,mllm}/{task}/results/{org}/{model}/{gpu_model}/{runtime_params}/"
MIN_STEADY_WINDOW_S = 20.0
MIN_BATCH_UTILISATION = 0.85
UNSTABLE_RULES = ("run.unstable-short-window", "run.unstable-nonpositive-energy",
                  "run.unstable-low-batch")

_PARALLEL_KEYS = {"tensor_parallel": ("tensor_parallel", "tensor_parallel_size", "tp"),
                  "expert_parallel": ("expert_parallel", "expert_parallel_size", "ep"),
                  "data_parallel": ("data_parallel", "data_parallel_size", "dp")}


# --- records -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RuntimeParams:
    """The runtime-params folder name, e.g. ``num_gpus+1+max_num_seqs+128+seed+48``."""

    num_gpus: int
    max_num_seqs: int
    tensor_parallel: int
    expert_parallel: int
    data_parallel: int
    extra: dict[str, str]  # keys this reader does not use, kept as written


class RuntimeParamsError(ValueError):
    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule


@dataclass(frozen=True, slots=True)
class RunLocation:
    """What the path of a run directory says."""

    run_dir: Path
    kind: str
    task: str
    org: str
    model: str
    gpu_model: str
    params_folder: str

    @property
    def model_id(self) -> str:
        return f"{self.org}/{self.model}"

    @property
    def source(self) -> str:
        """Where-from of the run, the same on every machine: ``run/{kind}/.../{params}``."""
        return "/".join(("run", self.kind, self.task, "results", self.org, self.model,
                         self.gpu_model, self.params_folder))


@dataclass(frozen=True, slots=True)
class RawRun:
    """One run directory, read. ``avg_batch_size`` is None when prometheus.json is missing."""

    location: RunLocation
    params: RuntimeParams
    results: RunResults
    avg_batch_size: float | None
    shown: str  # the run directory as named in problems
    unpublishable: tuple[Problem, ...] = ()  # errors only if the run would be published

    @property
    def source(self) -> str:
        return self.location.source

    @property
    def group(self) -> tuple[str, str, str, int]:
        """Runs whose stability cascades: same model, task, GPU model and GPU count."""
        loc = self.location
        return (loc.model_id, loc.task, loc.gpu_model, self.params.num_gpus)


@dataclass(frozen=True, slots=True)
class RunProvenance:
    """Provenance fields a run directory does not hold (its ``source`` is the run)."""

    dataset: str
    version: str
    date: str
    license: str = "NOASSERTION"  # SPDX: the runs' owner has not said; pass theirs
    citation: str = ""

    @classmethod
    def for_site(cls, site: SiteSettings) -> RunProvenance:
        return cls(dataset="ML.ENERGY Benchmark runs", version=site.data_version,
                   date=site.data_date)


@dataclass(frozen=True, slots=True)
class PublishedRun:
    """A stable, valid run: its measurement document (as import-runs writes it) and record."""

    run: RawRun
    measurement: dict[str, Any]
    configuration: Configuration


@dataclass(frozen=True)
class RunsReport:
    published: tuple[PublishedRun, ...]  # sorted by source
    errors: tuple[Problem, ...]  # sorted; any error fails validation
    warnings: tuple[Problem, ...]  # sorted; dropped runs

    @property
    def configurations(self) -> tuple[Configuration, ...]:
        return tuple(p.configuration for p in self.published)

    @property
    def shown(self) -> dict[str, str]:
        """Configuration.source -> run directory as named in problems (for check_duplicates)."""
        return {p.run.source: p.run.shown for p in self.published}


def _shown(path: Path) -> str:
    # The rule of dataset.shown_path, which cannot be imported here: dataset imports us.
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


# --- finding runs ------------------------------------------------------------------------


def parse_runtime_params(name: str) -> RuntimeParams:
    """Parse ``key+value+key+value...``; raise :class:`RuntimeParamsError` (with a rule id)."""
    tokens = name.split("+")
    if len(tokens) % 2 or any(not t for t in tokens):
        raise RuntimeParamsError("run.params-malformed",
                                 f"folder name {name!r} is not key+value pairs joined by '+'")
    pairs: dict[str, str] = {}
    for key, value in zip(tokens[::2], tokens[1::2], strict=True):
        if key in pairs:
            raise RuntimeParamsError("run.params-malformed", f"key {key!r} appears twice")
        pairs[key] = value

    def number(key: str) -> int:
        value = pairs.pop(key)
        if not value.isascii() or not value.isdigit() or int(value) < 1:
            raise RuntimeParamsError("run.params-malformed",
                                     f"{key} is {value!r}, not a positive whole number")
        return int(value)

    missing = [k for k in ("num_gpus", "max_num_seqs") if k not in pairs]
    if missing:
        raise RuntimeParamsError("run.params-missing",
                                 f"folder name {name!r} has no {' or '.join(missing)}")
    num_gpus, max_num_seqs = number("num_gpus"), number("max_num_seqs")
    parallel: dict[str, int] = {}
    for field, aliases in _PARALLEL_KEYS.items():
        given = [a for a in aliases if a in pairs]
        if len(given) > 1:
            raise RuntimeParamsError("run.params-malformed",
                                     f"{' and '.join(given)} both give {field}")
        if given:
            parallel[field] = number(given[0])
    ep = parallel.get("expert_parallel", 1)
    dp = parallel.get("data_parallel", 1)
    tp = parallel.get("tensor_parallel", 1 if ep > 1 else max(1, num_gpus // dp))
    return RuntimeParams(num_gpus, max_num_seqs, tp, ep, dp, extra=pairs)


def run_location(run_dir: Path) -> RunLocation | None:
    """The location when ``run_dir`` sits at the runtime-params level of the layout."""
    parts = run_dir.parts
    if len(parts) < 7 or parts[-5] != "results" or parts[-7] not in KINDS:
        return None
    return RunLocation(run_dir, kind=parts[-7], task=parts[-6], org=parts[-4], model=parts[-3],
                       gpu_model=parts[-2], params_folder=parts[-1])


def is_run_tree(path: Path) -> bool:
    """Whether ``path`` is (inside) a run tree rather than measurement files."""
    path = Path(os.path.abspath(path))
    if path.name in (RESULTS_JSON, PROMETHEUS_JSON) or any(
            run_location(Path(*path.parts[:i])) for i in range(7, len(path.parts) + 1)):
        return True
    if not path.is_dir():
        return False
    return any(RESULTS_JSON in files or KINDS[0] in dirs or KINDS[1] in dirs
               for _, dirs, files in os.walk(path))


def find_run_dirs(paths: Iterable[Path]) -> tuple[list[RunLocation], list[Problem]]:
    """Every run directory at or below ``paths`` (sorted), and layout problems."""
    found: dict[Path, RunLocation] = {}
    problems: list[Problem] = []
    for given in paths:
        root = Path(os.path.abspath(given))
        if root.name == RESULTS_JSON and root.is_file():
            root = root.parent
        if not root.is_dir():
            problems.append(Problem(_shown(given), "", "file.missing", "no such run folder",
                                    "check the path"))
            continue
        count, stray = len(found), len(problems)
        for folder, dirs, files in os.walk(root):
            here = Path(folder)
            location = run_location(here)
            if location is not None:
                found.setdefault(here, location)
                dirs[:] = []
                continue
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            if RESULTS_JSON in files:
                problems.append(Problem(_shown(here / RESULTS_JSON), "", "run.bad-layout",
                                        "results.json outside the run layout",
                                        f"put each run in {LAYOUT}"))
        if len(found) == count and len(problems) == stray:
            problems.append(Problem(_shown(given), "", "run.none-found",
                                    "no run directory at or below this path",
                                    f"expected {LAYOUT} holding results.json"))
    unique: dict[str, RunLocation] = {}  # by source: two copies of one tree are one run
    for key in sorted(found):
        loc = found[key]
        first = unique.setdefault(loc.source, loc)
        if first is not loc:
            problems.append(Problem(_shown(loc.run_dir), "", "run.duplicate-run",
                                    f"the same run as {_shown(first.run_dir)}",
                                    "give each run once; are these two copies of one tree?"))
    return list(unique.values()), problems


# --- reading a run --------------------------------------------------------------------------


def _mismatches(loc: RunLocation, params: RuntimeParams, r: RunResults,
                shown: str) -> list[Problem]:
    pairs = [("model_id", r.model_id, loc.model_id, "model folder"),
             ("gpu_model", r.gpu_model, loc.gpu_model, "GPU folder"),
             ("num_gpus", r.num_gpus, params.num_gpus, "folder name"),
             ("max_num_seqs", r.max_num_seqs, params.max_num_seqs, "folder name")]
    return [Problem(shown, pointer(name), "run.path-mismatch",
                    f"{name} is {in_file!r} but the {where} says {in_path!r}",
                    "file the run under its own model, GPU and settings, or fix results.json")
            for name, in_file, in_path, where in pairs if in_file != in_path]


def read_run(loc: RunLocation) -> tuple[RawRun | None, list[Problem]]:
    """Read one run directory; every problem found is returned."""
    shown = _shown(loc.run_dir)
    problems: list[Problem] = []
    params: RuntimeParams | None = None
    try:
        params = parse_runtime_params(loc.params_folder)
    except RuntimeParamsError as e:
        problems.append(Problem(shown, "", e.rule, str(e),
                                "name the folder like num_gpus+1+max_num_seqs+128 "
                                "(more key+value pairs may follow)"))
    results_shown = f"{shown}/{RESULTS_JSON}"
    results: RunResults | None = None
    if not (loc.run_dir / RESULTS_JSON).is_file():
        problems.append(Problem(shown, "", "run.missing-results", "no results.json in the run",
                                "copy the run's results.json here, or remove the folder"))
    else:
        results, found = read_results(loc.run_dir / RESULTS_JSON, results_shown)
        problems.extend(found)
    if results is not None and params is not None:
        problems.extend(_mismatches(loc, params, results, results_shown))
    avg_batch_size: float | None = None
    if (loc.run_dir / PROMETHEUS_JSON).exists():
        avg_batch_size, found = read_avg_batch_size(loc.run_dir / PROMETHEUS_JSON,
                                                    f"{shown}/{PROMETHEUS_JSON}")
        problems.extend(found)
    if problems or results is None or params is None:
        return None, problems
    blockers = []
    if results.successful_requests == 0 or results.completed <= 0:
        blockers.append(Problem(results_shown, "/results", "run.no-successful-request",
                                f"no request succeeded ({results.failed_requests} failed)",
                                "see the run's driver.log and server.log; rerun it"))
    elif results.itl is None:
        blockers.append(Problem(results_shown, "/results", "run.no-itl",
                                "successful requests have no inter-token gaps",
                                "the client must stream tokens so that itl is recorded"))
    return RawRun(loc, params, results, avg_batch_size, shown, tuple(blockers)), []


# --- stability ----------------------------------------------------------------------------


def instability(run: RawRun) -> Problem | None:
    """Why the run is unstable or unverifiable (docs/metrics.md), or None when it is stable."""
    r, results_shown = run.results, f"{run.shown}/{RESULTS_JSON}"
    if r.steady_state_duration_s < MIN_STEADY_WINDOW_S:
        return Problem(results_shown, "/steady_state_duration", "run.unstable-short-window",
                       f"steady-state window of {r.steady_state_duration_s:g} s is under "
                       f"{MIN_STEADY_WINDOW_S:g} s: dropped, with every larger max_num_seqs",
                       "too short to measure; run more prompts")
    if r.energy_per_token_joules <= 0:
        return Problem(results_shown, "/steady_state_energy_per_token",
                       "run.unstable-nonpositive-energy",
                       f"energy per token is {r.energy_per_token_joules:g} J: dropped, with "
                       "every larger max_num_seqs", "the energy measurement failed; rerun it")
    prometheus_shown = f"{run.shown}/{PROMETHEUS_JSON}"
    if run.avg_batch_size is None:
        return Problem(prometheus_shown, "", "run.unverifiable-no-prometheus",
                       "no prometheus.json, so batch utilisation cannot be checked: dropped",
                       "copy the run's prometheus.json here to publish it")
    utilisation = run.avg_batch_size / run.params.max_num_seqs
    if utilisation < MIN_BATCH_UTILISATION:
        return Problem(prometheus_shown, pointer("steady_state_stats", BATCH_METRIC),
                       "run.unstable-low-batch",
                       f"average batch {run.avg_batch_size:g} is {utilisation:.0%} of "
                       f"max_num_seqs {run.params.max_num_seqs} (under "
                       f"{MIN_BATCH_UTILISATION:.0%}): dropped, with every larger max_num_seqs",
                       "the server could not fill the batch; larger caps cannot be filled either")
    return None


def stability_filter(runs: Iterable[RawRun]) -> tuple[list[RawRun], list[Problem]]:
    """Stable runs, and a warning for each dropped run: unstable or unverifiable itself, or
    above the smallest unstable max_num_seqs of its group (:attr:`RawRun.group`)."""
    ordered = sorted(runs, key=lambda r: r.source)
    own = {run.source: instability(run) for run in ordered}
    first_unstable: dict[tuple[str, str, str, int], RawRun] = {}
    for run in sorted(ordered, key=lambda r: (r.params.max_num_seqs, r.source)):
        why = own[run.source]
        if why is not None and why.rule in UNSTABLE_RULES:
            first_unstable.setdefault(run.group, run)
    kept: list[RawRun] = []
    warnings: list[Problem] = []
    for run in ordered:
        why, first = own[run.source], first_unstable.get(run.group)
        if why is None and first is not None and \
                run.params.max_num_seqs > first.params.max_num_seqs:
            reason = own[first.source]
            why = Problem(run.shown, "", "run.dropped-after-unstable",
                          f"max_num_seqs {run.params.max_num_seqs} is above "
                          f"{first.params.max_num_seqs}, which is unstable "
                          f"({reason.rule if reason else ''}) for the same model, task, GPU "
                          "model and GPU count: dropped", f"see {first.shown}")
        if why is None:
            kept.append(run)
        else:
            warnings.append(why)
    return kept, warnings


# --- measurements -------------------------------------------------------------------------


def measurement_document(run: RawRun, registry: Registry, provenance: RunProvenance,
                         repeat: int = 1) -> tuple[dict[str, Any] | None, list[Problem]]:
    """The measurement-file document of a stable run (not yet validated)."""
    loc, p, r = run.location, run.params, run.results
    model = registry.models.get(loc.model_id)
    if model is None:
        return None, [Problem(f"{run.shown}/{RESULTS_JSON}", "/model_id",
                              "registry.unknown-model", f"unknown model {loc.model_id!r}",
                              "add it to models.yaml (the weight precision comes from there)")]
    if run.unpublishable or r.itl is None or run.avg_batch_size is None:
        return None, list(run.unpublishable)
    energy_per_token = r.energy_per_token_joules
    avg_output_len = r.total_output_tokens / r.completed
    duration_s, energy_joules = r.steady_state_duration_s, r.steady_state_energy_joules
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": loc.kind,
        "task": loc.task,
        "model_id": loc.model_id,
        "gpu_model": loc.gpu_model,
        "num_gpus": p.num_gpus,
        "weight_precision": model.weight_precision,
        "serving": {"max_num_seqs": p.max_num_seqs, "tensor_parallel": p.tensor_parallel,
                    "expert_parallel": p.expert_parallel, "data_parallel": p.data_parallel,
                    "notes": ""},
        "repeat": repeat,
        "metrics": {
            "energy_per_token_joules": energy_per_token,
            "avg_power_watts": metrics.average_power(energy_joules, duration_s),
            "output_throughput_tokens_per_sec": metrics.output_throughput(
                energy_joules, energy_per_token, duration_s),
            "energy_per_response_joules": metrics.energy_per_response(energy_per_token,
                                                                      avg_output_len),
            "avg_output_len_tokens": avg_output_len,
            "avg_batch_size": run.avg_batch_size,
            "median_itl_ms": r.itl.median_ms,
            "p90_itl_ms": r.itl.p90_ms,
            "p95_itl_ms": r.itl.p95_ms,
            "p99_itl_ms": r.itl.p99_ms,
        },
        "provenance": {"dataset": provenance.dataset, "version": provenance.version,
                       "date": provenance.date, "license": provenance.license,
                       "source": run.source, "citation": provenance.citation},
    }, []


def _numbered(runs: Iterable[RawRun]) -> list[tuple[RawRun, int]]:
    """Each run with its repeat number among runs of the same configuration (by source)."""
    seen: dict[tuple[object, ...], int] = {}
    out = []
    for run in sorted(runs, key=lambda r: r.source):
        p = run.params
        key = (*run.group, p.max_num_seqs, p.tensor_parallel, p.expert_parallel,
               p.data_parallel)
        seen[key] = seen.get(key, 0) + 1
        out.append((run, seen[key]))
    return out


def load_runs(paths: Iterable[Path], registry: Registry,
              provenance: RunProvenance | None = None) -> RunsReport:
    """Find, read, filter and validate every run at or below ``paths``."""
    provenance = provenance or RunProvenance.for_site(registry.site)
    locations, errors = find_run_dirs(paths)
    runs: list[RawRun] = []
    for loc in locations:
        run, problems = read_run(loc)
        errors.extend(problems)
        if run is not None:
            runs.append(run)
    kept, warnings = stability_filter(runs)
    published: list[PublishedRun] = []
    for run, repeat in _numbered(kept):
        doc, problems = measurement_document(run, registry, provenance, repeat)
        if doc is not None:
            config, problems = check_measurement(doc, run.shown, run.source, registry)
            if isinstance(config, Configuration):  # kind llm/mllm: never a diffusion record
                published.append(PublishedRun(run, doc, config))
        errors.extend(problems)
    return RunsReport(tuple(published), tuple(sorted(errors)), tuple(sorted(warnings)))


# --- import-runs: measurement files -------------------------------------------------------


@dataclass(frozen=True)
class ImportSummary:
    written: tuple[str, ...]  # paths relative to the data folder
    warnings: tuple[Problem, ...]  # dropped runs


def measurement_file(doc: dict[str, Any]) -> str:
    """Where import-runs writes a measurement document, relative to the data folder."""
    s = doc["serving"]
    return measurement_path(doc["task"], doc["model_id"], {
        "gpu_model": doc["gpu_model"], "num_gpus": doc["num_gpus"],
        "max_num_seqs": s["max_num_seqs"],
        "parallelization": {k: s[k] for k in _PARALLEL_KEYS}}, doc["weight_precision"],
        doc["repeat"])


def plan_import(report: RunsReport, data_dir: Path,
                existing: Iterable[Any]) -> tuple[dict[str, str], list[Problem]]:
    """File texts by path relative to ``data_dir``, and what forbids writing them: a file
    there from another source, or a configuration the data folder already has.

    ``existing``: the data folder's records of every kind (LLM, multimodal, diffusion).
    """
    files: dict[str, str] = {}
    problems: list[Problem] = []
    for p in report.published:
        rel = measurement_file(p.measurement)
        target = data_dir / rel
        if target.exists():
            old = json.loads(target.read_text(encoding="utf-8"))["provenance"]["source"]
            if old != p.run.source:
                problems.append(Problem(_shown(target), "/provenance/source",
                                        "import.would-replace",
                                        f"holds this configuration from {old!r}, not from "
                                        f"{p.run.source!r}", "remove that file first, or keep "
                                        "it and leave this run out"))
        files[rel] = dumps_canonical(p.measurement, indent=2)
    others = [c for c in existing if c.source not in files]
    shown = {c.source: _shown(data_dir / c.source) for c in others} | report.shown
    problems.extend(check_duplicates([*others, *report.configurations], shown))
    return files, problems


def import_runs(paths: Iterable[Path], data_dir: Path,
                provenance: RunProvenance | None = None) -> ImportSummary:
    """Write a measurement file per stable run into ``data_dir``; on any error, none."""
    from jouleboard.dataset import load_dataset  # here: dataset imports this module

    data = load_dataset(data_dir)
    report = load_runs(paths, data.registry, provenance)
    files, problems = plan_import(report, data_dir, data.configurations)
    if report.errors or problems:
        raise ValidationFailed([*report.errors, *problems])
    for rel, text in sorted(files.items()):
        target = data_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return ImportSummary(tuple(sorted(files)), report.warnings)
