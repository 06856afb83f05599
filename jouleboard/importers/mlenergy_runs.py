"""Raw ML.ENERGY benchmark runs -> measurement documents and records, and import-runs.

find runs (run_layout) -> read each (llm_runs, diffusion_runs) -> stability (llm_runs) ->
model facts (configs/ or models.yaml) -> measurement documents -> the checks every
measurement file gets (kinds.check_measurement), so raw runs meet the same bounds.
What is published and how each number is computed follows the ML.ENERGY data toolkit
(``mlenergy-data``); tests/test_parity_oracle.py holds jouleboard to it, and
docs/raw-runs.md lists where an option departs from it.

Decisions (each tested in tests/test_raw_runs.py or tests/test_parity_oracle.py):
- ITL: importers/itl.py (chunk smoothing, numpy's "linear" percentiles, exactly).
- Dropped runs are *warnings*, each with its rule id; ``--strict`` turns them into failures.
- Weight precision and model facts: configs/.../model_info.json when present, else
  models.yaml. Parallel degrees: monolithic.config.yaml when present, else the folder name.
- Runs of one configuration that differ only in other folder keys (seed, tc, ...) are
  repeats, numbered 1, 2, ... in order of their source path.
- results.json / prometheus.json problems name that file with a pointer into it; problems of
  the derived measurement name the run directory with a pointer into the measurement document.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from jouleboard.config.registry import Registry
from jouleboard.config.schema import ModelInfo
from jouleboard.core.jsonio import dumps_canonical
from jouleboard.core.problems import Problem, shown_path
from jouleboard.core.shapes import JsonObject, json_object, text_field
from jouleboard.importers.contract import ImportPlan, conflicts, same_source
from jouleboard.importers.diffusion_runs import (
    DiffusionResults,
    diffusion_document,
    read_diffusion,
)
from jouleboard.importers.llm_runs import (
    RawRun,
    RunPolicy,
    RuntimeParamsError,
    llm_document,
    parse_runtime_params,
    read_run,
    stability_filter,
)
from jouleboard.importers.mlenergy_site import BUILDERS, measurement_path
from jouleboard.importers.run_configs import (
    ModelFacts,
    entry_line,
    entry_yaml,
    inferred_precision,
    model_facts,
    models_yaml_entry,
)
from jouleboard.importers.run_layout import (
    RESULTS_JSON,
    RunLocation,
    find_run_dirs,
    is_run_tree,
    not_current,
)
from jouleboard.importers.run_provenance import (
    ProvenanceFiles,
    RunProvenance,
    resolve,
    run_date,
)
from jouleboard.kinds import check_measurement
from jouleboard.kinds.base import Record
from jouleboard.measure.checks import check_duplicates

__all__ = [
    "RunOptions",
    "RunPolicy",
    "RunProvenance",
    "RunsReport",
    "RuntimeParamsError",
    "find_run_dirs",
    "is_run_tree",
    "load_runs",
    "parse_runtime_params",
]
IMPORTER = "import-runs"


@dataclass(frozen=True, slots=True)
class DiffusionRawRun:
    location: RunLocation
    results: DiffusionResults
    shown: str
    facts: ModelFacts | None

    @property
    def source(self) -> str:
        return self.location.source


AnyRun = RawRun | DiffusionRawRun


@dataclass(frozen=True)
class RunOptions:
    """How runs are turned into measurements (command-line choices)."""

    provenance: RunProvenance = field(default_factory=RunProvenance)
    explicit: frozenset[str] = frozenset()  # provenance fields given on the command line
    policy: RunPolicy = field(default_factory=RunPolicy)
    add_models: bool = False  # models.yaml entries from model_info.json for unknown models


@dataclass(frozen=True)
class PublishedRun:
    """A published run: its measurement document (as import-runs writes it) and record."""

    run: AnyRun
    measurement: JsonObject
    configuration: Record


@dataclass(frozen=True)
class RunsReport:
    published: tuple[PublishedRun, ...]  # sorted by source
    errors: tuple[Problem, ...]  # sorted; any error fails validation
    warnings: tuple[Problem, ...]  # sorted; dropped runs
    found: int = 0  # run directories found
    new_models: Mapping[str, JsonObject] = field(default_factory=dict)  # --add-models

    @property
    def configurations(self) -> tuple[Record, ...]:
        return tuple(p.configuration for p in self.published)

    @property
    def shown(self) -> dict[str, str]:
        """Configuration.source -> run directory as named in problems (for check_duplicates)."""
        return {p.run.source: p.run.shown for p in self.published}

    def summary(self) -> str:
        """``N runs found, M published, K dropped (rule: n, ...)``."""
        by_rule = Counter(w.rule for w in self.warnings)
        dropped = ", ".join(f"{rule}: {n}" for rule, n in sorted(by_rule.items()))
        return (
            f"{self.found} runs found, {len(self.published)} published, "
            f"{len(self.warnings)} dropped" + (f" ({dropped})" if dropped else "")
        )


def _read_all(locations: list[RunLocation]) -> tuple[list[AnyRun], list[Problem], list[Problem]]:
    """Runs read, errors, and drops that are not about stability."""
    runs: list[AnyRun] = []
    errors: list[Problem] = []
    dropped: list[Problem] = []
    for loc in locations:
        why = not_current(loc)
        if why is not None:
            dropped.append(why)
            continue
        if loc.is_diffusion:
            results, problems = read_diffusion(loc)
            facts, more = model_facts(loc)
            errors.extend(problems + more)
            if results is not None and results.iterations == 0:
                dropped.append(
                    Problem(
                        f"{shown_path(loc.run_dir)}/{RESULTS_JSON}",
                        "/iteration_energy_measurements",
                        "run.no-valid-iteration",
                        "no iteration with a positive time: dropped",
                        "rerun the benchmark",
                    )
                )
            elif results is not None and not more:
                runs.append(DiffusionRawRun(loc, results, shown_path(loc.run_dir), facts))
        else:
            run, problems = read_run(loc)
            errors.extend(problems)
            if run is not None:
                runs.append(run)
    return runs, errors, dropped


def _identity(run: AnyRun, precision: str) -> tuple[object, ...]:
    """The configuration a run measures, without the repeat number."""
    if isinstance(run, RawRun):
        p = run.params
        return (
            *run.group,
            precision,
            p.max_num_seqs,
            p.tensor_parallel,
            p.expert_parallel,
            p.data_parallel,
        )
    r = run.results
    return (
        *run.location.group,
        r.gpu_model,
        precision,
        r.batch_size,
        r.ulysses_degree,
        r.ring_degree,
        r.inference_steps,
        r.width_px,
        r.height_px,
        r.num_frames,
    )


def _unknown_model(run: AnyRun, registry: Registry) -> tuple[JsonObject, Problem]:
    model_id, diffusion = run.location.model_id, isinstance(run, DiffusionRawRun)
    entry = models_yaml_entry(
        model_id,
        run.facts,
        inferred_precision(model_id, diffusion),
        BUILDERS.get(run.location.org, run.location.org),
    )
    how = (
        "add this entry to models.yaml, or rerun import-runs with --add-models"
        if run.facts
        else "add this entry to models.yaml with the model's real facts "
        "(no model_info.json in the benchmark's configs/ to take them from)"
    )
    return entry, Problem(
        f"{run.shown}/{RESULTS_JSON}",
        "/model_id",
        "registry.unknown-model",
        f"unknown model {model_id!r}",
        f"{how}; as one line: {entry_line(model_id, entry)}",
    )


def _models(
    runs: list[AnyRun], registry: Registry, add: bool
) -> tuple[Registry, dict[str, JsonObject], list[Problem]]:
    """The registry with --add-models entries, those entries, and unknown-model errors."""
    new: dict[str, JsonObject] = {}
    problems: list[Problem] = []
    reported: set[str] = set()  # one error per model, at its first run
    for run in sorted(runs, key=lambda r: r.source):
        model_id = run.location.model_id
        if model_id in registry.models or model_id in new or model_id in reported:
            continue
        reported.add(model_id)
        entry, problem = _unknown_model(run, registry)
        if add and run.facts is not None:
            try:
                ModelInfo.model_validate(entry)
                new[model_id] = entry
                continue
            except ValueError as e:
                problem = replace(
                    problem,
                    message=f"{problem.message}; model_info.json "
                    f"does not make a valid entry ({str(e).splitlines()[0]})",
                )
        problems.append(problem)
    models = {**registry.models, **{k: ModelInfo.model_validate(v) for k, v in new.items()}}
    return replace(registry, models=models), new, problems


def _precision(run: AnyRun, registry: Registry) -> str:
    if run.facts is not None and run.facts.weight_precision:
        return run.facts.weight_precision
    return registry.models[run.location.model_id].weight_precision


def load_runs(
    paths: Iterable[Path], registry: Registry, options: RunOptions | None = None
) -> RunsReport:
    """Find, read, filter and validate every run at or below ``paths``."""
    options = options or RunOptions()
    paths = list(paths)
    locations, errors = find_run_dirs(paths)
    runs, read_errors, dropped = _read_all(locations)
    errors.extend(read_errors)
    llm = [r for r in runs if isinstance(r, RawRun)]
    kept_llm, warnings = stability_filter(llm, options.policy)
    warnings.extend(dropped)
    for llm_run in kept_llm:
        warnings.extend(llm_run.unpublishable)
    kept: list[AnyRun] = [r for r in kept_llm if not r.unpublishable]
    kept += [r for r in runs if isinstance(r, DiffusionRawRun)]
    registry, new_models, problems = _models(kept, registry, options.add_models)
    errors.extend(problems)
    known = [r for r in kept if r.location.model_id in registry.models]
    files = ProvenanceFiles([p.parent for p in paths])
    seen: Counter[tuple[object, ...]] = Counter()
    published: list[PublishedRun] = []
    for run in sorted(known, key=lambda r: r.source):
        precision = _precision(run, registry)
        key = _identity(run, precision)
        seen[key] += 1
        from_file, problems = files.for_run(run.location.run_dir)
        errors.extend(p for p in problems if p not in errors)
        gpu = run.location.gpu_model if isinstance(run, RawRun) else run.results.gpu_model
        vendor = registry.gpus[gpu].vendor if gpu in registry.gpus else None
        prov = resolve(
            options.provenance,
            set(options.explicit),
            from_file,
            run_date(run.results.date),
            vendor,
        )
        doc = (
            llm_document(run, precision, seen[key], prov)
            if isinstance(run, RawRun)
            else diffusion_document(run.location, run.results, precision, seen[key], prov)
        )
        config, problems = check_measurement(doc, run.shown, run.source, registry)
        if config is not None:
            published.append(PublishedRun(run, doc, config))
        errors.extend(problems)
    # set: a link or pipe is reported by the walk and again by the reader it would reach
    return RunsReport(
        tuple(published),
        tuple(sorted(set(errors))),
        tuple(sorted(warnings)),
        found=len(locations),
        new_models=new_models,
    )


# --- import-runs: measurement files -------------------------------------------------------


@dataclass(frozen=True)
class ImportSummary:
    written: tuple[str, ...]  # paths relative to the data folder
    warnings: tuple[Problem, ...]  # dropped runs
    report: RunsReport | None = None
    added_models: tuple[str, ...] = ()


DOCUMENT = "a measurement document built here (llm_document, ...)"


def measurement_file(doc: JsonObject) -> str:
    """Where import-runs writes a measurement document, relative to the data folder."""
    s = json_object(doc["serving"], "serving")
    repeat = doc["repeat"]
    if not isinstance(repeat, int):
        raise TypeError(f"repeat of a measurement document is {repeat!r}, not a whole number")
    if doc["kind"] == "diffusion":
        o = json_object(doc["output"], "output")
        name = (
            f"{doc['gpu_model']}-x{doc['num_gpus']}-{doc['weight_precision']}"
            f"-bs{s['batch_size']}-ulysses{s['ulysses_degree']}-ring{s['ring_degree']}"
            f"-steps{o['inference_steps']}-{o['width_px']}x{o['height_px']}"
            + (f"-f{o['num_frames']}" if "num_frames" in o else "")
            + (f"-r{repeat}" if repeat > 1 else "")
        )
        return f"measurements/{doc['task']}/{doc['model_id']}/{name}.json"
    return measurement_path(
        text_field(doc, "task", DOCUMENT),
        text_field(doc, "model_id", DOCUMENT),
        {
            "gpu_model": doc["gpu_model"],
            "num_gpus": doc["num_gpus"],
            "max_num_seqs": s["max_num_seqs"],
            "parallelization": {
                k: s[k] for k in ("tensor_parallel", "expert_parallel", "data_parallel")
            },
        },
        text_field(doc, "weight_precision", DOCUMENT),
        repeat,
    )


def plan_import(
    report: RunsReport, data_dir: Path, existing: Iterable[Record], models_text: str | None
) -> tuple[ImportPlan, list[Problem]]:
    """The files to write and what forbids writing them: a file in the way, or a
    configuration the data folder already has. ``existing``: the data folder's records."""
    plan = ImportPlan(IMPORTER, owns=same_source)
    for p in report.published:
        plan.files[measurement_file(p.measurement)] = dumps_canonical(p.measurement, indent=2)
    if report.new_models and models_text is not None:
        added = "".join(entry_yaml(k, v) for k, v in sorted(report.new_models.items()))
        plan.updates["models.yaml"] = (
            models_text.rstrip("\n")
            + "\n# Added by `jouleboard import-runs --add-models` from model_info.json:\n"
            + added
        )
    others = [c for c in existing if c.source not in plan.files]
    shown_of = {c.source: shown_path(data_dir / c.source) for c in others} | report.shown
    problems = conflicts(plan, data_dir)
    problems.extend(check_duplicates([*others, *report.configurations], shown_of))
    return plan, problems
