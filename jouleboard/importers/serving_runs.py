"""Serving-benchmark runs (AIPerf exports, TensorRT-LLM benchmark_serving results) into
token measurement files: what both importers share (``import-aiperf``, ``import-bench``).

A reader (importers/aiperf.py, importers/trtllm_bench.py) turns one result file into a
:class:`RunResult`: the figures the benchmark itself computed, and what the file says of the
run (the served model name, the GPUs where it records them, the load level). What no result
file records comes from the command line (:class:`ServingOptions`): the model id, the weight
precision, the GPUs where the file does not name them, the task, the parallel degrees and
the serving engine. This module makes the measurement documents, checks each as every
measurement file is checked (kinds.check_measurement), numbers repeat runs of one
configuration, and plans the files (importers/contract.py writes them all or none).

A sweep (one run per concurrency or request rate) is one configuration per level:
``serving.concurrency`` / ``serving.request_rate_per_sec`` are part of a configuration's
identity (kinds/token_records.py), so the ranking picks each model's most efficient level
that meets the deadline. Documented in docs/aiperf.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jouleboard.config.registry import Registry
from jouleboard.config.schema import SCHEMA_VERSION
from jouleboard.core.jsonio import dumps_canonical
from jouleboard.core.problems import Problem, closest, resolved, shown_path
from jouleboard.core.shapes import JsonObject
from jouleboard.importers.contract import ImportPlan, same_source
from jouleboard.kinds import check_measurement
from jouleboard.kinds.base import Record
from jouleboard.kinds.token_records import NOTES_CAP
from jouleboard.measure.checks import check_duplicates

UNKNOWN = "unknown"


@dataclass(frozen=True)
class Load:
    """The load a run offered: requests kept in flight, requests per second (None: not set)."""

    concurrency: int | None = None
    request_rate_per_sec: float | None = None

    @property
    def slug(self) -> str:
        """``c8``, ``rate2.5``, ``c8-rate2.5``: the level in a file name."""
        parts = [f"c{self.concurrency}"] if self.concurrency else []
        if self.request_rate_per_sec:
            parts.append(f"rate{self.request_rate_per_sec:g}")
        return "-".join(parts)


@dataclass(frozen=True)
class RunResult:
    """One result file's figures, as the benchmark computed them (units in the names)."""

    shown: str  # the file, as problems name it
    run_id: str  # names the run in file names: same run, same file; another run, another
    source: str  # provenance.source: the file and the run
    instrument: str  # provenance.instrument: how the energy was measured
    date: str  # YYYY-MM-DD or "unknown"
    served_model: str  # the model name the benchmark asked the server for
    gpu_name: str | None  # as the telemetry names the GPUs (None: the file does not say)
    num_gpus: int | None  # GPUs whose energy is summed (None: the file does not say)
    load: Load
    energy_joules: float
    output_tokens: float
    avg_output_len_tokens: float
    throughput_tokens_per_sec: float
    avg_power_watts: float
    itl_ms: tuple[float, float, float, float]  # median, p90, p95, p99
    ttft_ms: tuple[float | None, float | None, float | None] = (None, None, None)  # mean, p50, p99
    # Requests that were not a task's own, in a few words for serving.notes ("synthetic
    # prompts, 48-token answers"), and what the import says of them but imports anyway.
    workload: str = ""
    warnings: tuple[Problem, ...] = ()


@dataclass(frozen=True)
class ServingOptions:
    """What the result files do not record (command-line options)."""

    task: str
    model: str | None = None  # one model id for every run
    model_map: Mapping[str, str] = field(default_factory=dict)  # served name -> model id
    precision: str | None = None  # default: the model's precision in models.yaml
    num_gpus: int | None = None
    gpu: str | None = None  # a gpus.yaml id
    gpu_map: Mapping[str, str] = field(default_factory=dict)  # telemetry GPU name -> id
    # The server's parallel degrees (None: not given; 1 on one GPU, else asked for).
    tensor_parallel: int | None = None
    expert_parallel: int | None = None
    data_parallel: int | None = None
    max_num_seqs: int | None = None  # the server's batch cap
    engine: str = ""  # e.g. "vLLM 0.11.0": serving.notes
    dataset: str = "Serving benchmark runs"
    version: str = UNKNOWN
    license: str = "NOASSERTION"
    citation: str = ""


def source_name(path: Path) -> str:
    """A result file as provenance names it: its last three path parts (the run's folders and
    the file), the same from any working folder and free of the machine's own folders."""
    return "/".join(resolved(path).parts[-3:])


def read_each(
    files: Iterable[Path], read: Callable[[Path], RunResult | list[Problem]]
) -> tuple[list[RunResult], list[Problem]]:
    """Each result file read: the runs, and every file's problems."""
    runs: list[RunResult] = []
    problems: list[Problem] = []
    for path in files:
        got = read(path)
        if isinstance(got, list):
            problems += got
        else:
            runs.append(got)
    return runs, problems


def _problem(run: RunResult, rule: str, message: str, hint: str, where: str = "") -> Problem:
    return Problem(run.shown, where, rule, message, hint)


def model_id(run: RunResult, options: ServingOptions, registry: Registry) -> str | Problem:
    """The models.yaml id of the run's model: --model, else --model-map's entry for the
    served name, else the served name itself when models.yaml has it."""
    mapped = options.model_map.get(run.served_model)
    found = options.model or mapped or run.served_model
    if found in registry.models:
        return found
    given = "--model" if options.model else "--model-map" if mapped else ""
    named = f"{given} {found!r}" if given else f"model {found!r}"
    named += f" (served as {run.served_model!r})" if found != run.served_model else ""
    near = closest(found, sorted(registry.models))
    return _problem(
        run,
        "registry.unknown-model",
        f"{named} is not in models.yaml",
        (f"did you mean {near!r}? Or " if near else "")
        + f"add it to models.yaml, or name its id with --model ID or --model-map "
        f"'{run.served_model}=ORG/NAME'",
    )


def gpu_model(run: RunResult, options: ServingOptions, registry: Registry) -> str | Problem:
    """The gpus.yaml id of the run's GPUs: --gpu, else --gpu-map's entry for the name the
    telemetry gives, else the gpus.yaml entry whose name is that name, else the id that
    name holds as a word (H100 in "NVIDIA H100 80GB HBM3")."""
    if options.gpu is not None:
        found: str | None = options.gpu
    elif run.gpu_name is None:
        return _problem(
            run,
            "serving.no-gpu",
            "the result does not say which GPUs ran it",
            "name them with --gpu ID (a gpus.yaml id)",
        )
    else:
        name = run.gpu_name
        words = set(name.replace("-", " ").replace("_", " ").split())
        by_name = [
            g for g, info in registry.gpus.items() if info.name.casefold() == name.casefold()
        ]
        by_word = [g for g in sorted(registry.gpus) if g in words]
        found = options.gpu_map.get(name) or next(iter(by_name + by_word), None)
    if found in registry.gpus:
        return found
    known = sorted(registry.gpus)
    near = closest(found, known) if found is not None else None
    ids = f"did you mean {near!r}?" if near else f"gpus.yaml has {', '.join(known) or 'none'}"
    if options.gpu is not None:  # the flag's id, not the telemetry's name
        return _problem(run, "registry.unknown-gpu", f"--gpu {found!r} is not in gpus.yaml", ids)
    if found is not None and found == options.gpu_map.get(run.gpu_name or ""):
        return _problem(
            run,
            "registry.unknown-gpu",
            f"--gpu-map gives {run.gpu_name!r} the id {found!r}, which is not in gpus.yaml",
            f"{ids} Or add it to gpus.yaml",
        )
    return _problem(
        run,
        "registry.unknown-gpu",
        f"GPU {run.gpu_name!r} is not in gpus.yaml",
        f"add it to gpus.yaml, or map it with --gpu-map '{run.gpu_name}=ID'",
    )


def gpu_count(run: RunResult, options: ServingOptions) -> int | Problem:
    """The GPUs the energy is summed over: the result's own count; --num-gpus where the
    result has none (and it must agree where it has one)."""
    if run.num_gpus is None and options.num_gpus is None:
        return _problem(
            run,
            "serving.no-gpu-count",
            "the result does not say how many GPUs its energy covers",
            "give it with --num-gpus N",
        )
    if run.num_gpus is not None and options.num_gpus not in (None, run.num_gpus):
        return _problem(
            run,
            "serving.gpu-count-mismatch",
            f"the energy covers the {run.num_gpus} GPUs the telemetry reports, not the "
            f"--num-gpus {options.num_gpus} given",
            "report only the serving GPUs (e.g. dcgm-exporter -d / CUDA_VISIBLE_DEVICES) and "
            "run again, or leave --num-gpus out",
        )
    found = run.num_gpus if run.num_gpus is not None else options.num_gpus
    assert found is not None  # checked above
    return found


def parallel_degrees(
    run: RunResult, options: ServingOptions, gpus: int | Problem
) -> tuple[int, int, int] | Problem:
    """Tensor, expert and data parallel degrees: 1 each on one GPU; on more, at least one
    given (a degree not given is 1). Nothing in a result says how the model was split, and
    TP1 EP1 DP1 on two GPUs would publish one of them as idle."""
    given = (options.tensor_parallel, options.expert_parallel, options.data_parallel)
    if isinstance(gpus, int) and gpus > 1 and given == (None, None, None):
        return _problem(
            run,
            "serving.no-parallelism",
            f"the energy covers {gpus} GPUs, but not how the server split the model over them",
            f"give the server's degrees, e.g. --tensor-parallel {gpus} (and --expert-parallel or "
            "--data-parallel where it used them)",
        )
    tp, ep, dp = (d or 1 for d in given)
    return tp, ep, dp


def batch_cap(run: RunResult, options: ServingOptions) -> int | Problem:
    """``serving.max_num_seqs``: the batch cap in effect, the smaller of the server's cap
    (--max-num-seqs) and the requests the load kept in flight (its concurrency)."""
    caps = [c for c in (options.max_num_seqs, run.load.concurrency) if c]
    if caps:
        return min(caps)
    return _problem(
        run,
        "serving.no-batch-cap",
        "a request-rate run with no concurrency cap: nothing bounds the server's batch",
        "give the server's batch cap with --max-num-seqs N (vLLM --max-num-seqs, SGLang "
        "--max-running-requests, TensorRT-LLM --max_batch_size)",
    )


def document(
    run: RunResult, options: ServingOptions, registry: Registry, repeat: int
) -> JsonObject | list[Problem]:
    """The measurement document of ``run`` (not yet checked), or why it cannot be made."""
    count = gpu_count(run, options)
    found = (
        model_id(run, options, registry),
        gpu_model(run, options, registry),
        count,
        batch_cap(run, options),
        parallel_degrees(run, options, count),
    )
    problems = [p for p in found if isinstance(p, Problem)]
    model, gpu, gpus, cap, degrees = found
    if problems or not isinstance(model, str) or not isinstance(gpu, str):
        return problems
    assert isinstance(gpus, int) and isinstance(cap, int) and isinstance(degrees, tuple)
    per_token = run.energy_joules / run.output_tokens
    figures: dict[str, float] = {
        "energy_per_token_joules": per_token,
        "avg_power_watts": run.avg_power_watts,
        "output_throughput_tokens_per_sec": run.throughput_tokens_per_sec,
        "energy_per_response_joules": per_token * run.avg_output_len_tokens,
        "avg_output_len_tokens": run.avg_output_len_tokens,
        **dict(
            zip(
                ("median_itl_ms", "p90_itl_ms", "p95_itl_ms", "p99_itl_ms"), run.itl_ms, strict=True
            )
        ),
        **{
            name: value
            for name, value in zip(
                ("mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms"), run.ttft_ms, strict=True
            )
            if value is not None
        },
    }
    serving: JsonObject = {
        "max_num_seqs": cap,
        "tensor_parallel": degrees[0],
        "expert_parallel": degrees[1],
        "data_parallel": degrees[2],
        "notes": notes(options.engine, run.workload),
    }
    if run.load.concurrency is not None:
        serving["concurrency"] = run.load.concurrency
    if run.load.request_rate_per_sec is not None:
        serving["request_rate_per_sec"] = run.load.request_rate_per_sec
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": registry.tasks[options.task].kind,  # plan_runs checked the task
        "task": options.task,
        "model_id": model,
        "gpu_model": gpu,
        "num_gpus": gpus,
        "weight_precision": options.precision or registry.models[model].weight_precision,
        "serving": serving,
        "repeat": repeat,
        "metrics": dict(sorted(figures.items())),
        "provenance": {
            "dataset": options.dataset,
            "version": options.version,
            "date": run.date,
            "license": options.license,
            "source": run.source,
            "citation": options.citation,
            "boundary": "gpu",
            "instrument": run.instrument,
            # A serving benchmark's energy spans its whole measuring phase (docs/aiperf.md).
            "window": "whole-run",
        },
    }


def notes(engine: str, workload: str) -> str:
    """serving.notes: the engine, then the workload where the run says it was not a task's
    own ("vLLM 0.11.0; synthetic prompts, 48-token answers"), which a model page shows
    beside each configuration; the engine alone where both would not fit."""
    both = "; ".join(filter(None, (engine, workload)))
    return both if len(both) <= NOTES_CAP else engine


def measurement_path(doc: JsonObject, run: RunResult) -> str:
    """``measurements/<task>/<org>/<model>/<gpu>-x<n>-<precision>-tp..-ep..-dp..-seqs..``
    ``-<level>-<run id>.json``: the run's id keeps another run of the same settings from
    landing on (and replacing) this one."""
    s = doc["serving"]
    assert isinstance(s, dict)
    name = (
        f"{doc['gpu_model']}-x{doc['num_gpus']}-{doc['weight_precision']}"
        f"-tp{s['tensor_parallel']}-ep{s['expert_parallel']}-dp{s['data_parallel']}"
        f"-seqs{s['max_num_seqs']}"
        + (f"-{run.load.slug}" if run.load.slug else "")
        + f"-{run.run_id}"
    )
    return f"measurements/{doc['task']}/{doc['model_id']}/{name}.json"


def _configuration_key(doc: JsonObject) -> str:
    """What a configuration is, whatever run measured it (everything but the repeat)."""
    return dumps_canonical(
        {
            k: doc[k]
            for k in ("task", "model_id", "gpu_model", "num_gpus", "weight_precision", "serving")
        }
    )


def plan_runs(
    importer: str,
    runs: Sequence[RunResult],
    options: ServingOptions,
    registry: Registry,
    data_dir: Path,
    existing: Iterable[Record] = (),
) -> tuple[ImportPlan, list[Problem]]:
    """The files ``runs`` make and every problem found: each document is checked as every
    measurement file is; runs of one configuration are repeats 1, 2, ... in order of their
    result files; a configuration the data folder already has (in another file) is refused."""
    plan = ImportPlan(importer, owns=same_source)
    problems: list[Problem] = []
    if options.task not in registry.tasks:
        known = ", ".join(sorted(registry.tasks))
        return plan, [
            Problem(
                str(data_dir / "tasks.yaml"),
                "",
                "registry.unknown-task",
                f"no task {options.task!r}",
                f"--task is one of: {known}",
            )
        ]
    seen: Counter[str] = Counter()
    made: list[Record] = []
    shown_of: dict[str, str] = {}
    given: dict[str, str] = {}  # run id -> the file that gave it
    made_runs: list[RunResult] = []
    for run in sorted(runs, key=lambda r: r.shown):
        if (other := given.setdefault(run.run_id, run.shown)) != run.shown:
            problems.append(
                _problem(run, "serving.same-run", f"the same run as {other}", "give each run once")
            )
            continue
        first = document(run, options, registry, 1)
        if isinstance(first, list):
            problems += first
            continue
        seen[_configuration_key(first)] += 1
        doc = {**first, "repeat": seen[_configuration_key(first)]}
        rel = measurement_path(doc, run)
        record, found = check_measurement(doc, f"{run.shown} (as {rel})", rel, registry)
        problems += found
        if record is not None:
            plan.files[rel] = dumps_canonical(doc, indent=2) + "\n"
            made.append(record)
            shown_of[rel] = run.shown
            made_runs.append(run)
    others = [c for c in existing if c.source not in plan.files]
    shown_of |= {c.source: shown_path(data_dir / c.source) for c in others}
    problems += already_imported(made_runs, others, data_dir)
    problems += check_duplicates([*others, *made], shown_of)
    return plan, problems


def already_imported(
    runs: Sequence[RunResult], others: Sequence[Record], data_dir: Path
) -> list[Problem]:
    """A run the data folder already has in a file of another name (its file names end with
    the run's id: measurement_path): imported again with other options (another model, other
    parallel degrees), it would be published twice, as two configurations."""
    by_run = {
        Path(source).stem.rsplit("-", 1)[-1]: source
        for c in others
        for source in getattr(c, "run_sources", ()) or (c.source,)  # each repeat's file
    }
    return [
        _problem(
            run,
            "serving.already-imported",
            f"this run is already in the data folder, as {shown_path(data_dir / earlier)}",
            "remove that file to import the run again with other options",
        )
        for run in runs
        if (earlier := by_run.get(run.run_id)) is not None
    ]
