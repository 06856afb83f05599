"""Import the published ML.ENERGY Leaderboard site data into measurement files + registries.

Input: a folder with ``index.json``, ``tasks/{task}.json`` and
``models/{org}__{model}__{task}.json`` (the files the ML.ENERGY v3 web app reads).
Output: one measurement JSON per configuration under ``data/measurements/`` and the
registries. Entries already in the registries keep their hand-written fields, so a
maintainer's descriptions survive a re-import. The output is deterministic.

Every source field is kept: per-configuration metrics and serving settings go to the
measurement file, per-model facts to models.yaml. The per-model output-length
histogram of the source is the sum of its configurations' histograms, so it is not
stored twice.

The source is someone else's files: each is checked (a regular file, not a link, at most
``SOURCE_CAP`` bytes) before a byte is read, parsed strictly (jsonio) and its shape checked
(the ``Source*`` models below) before any value is used, so bad input is a located problem
(file, JSON pointer, rule), never a traceback or a hang.
"""

from __future__ import annotations

import json
import re
import stat
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, TypedDict, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic import JsonValue as PydanticJsonValue

from jouleboard.config.registry import load_registry
from jouleboard.config.schema import (
    GPU_ID_PATTERN,
    MODEL_ID_PATTERN,
    SCHEMA_VERSION,
    TASK_ID_PATTERN,
    IsoDate,
    Precision,
)
from jouleboard.core.jsonio import dumps_canonical, parse_strict
from jouleboard.core.problems import Problem, ValidationFailed, pointer, shown_path
from jouleboard.core.safe_read import FileRefused, read_capped
from jouleboard.core.schema_errors import problems_from
from jouleboard.core.shapes import JsonLike, JsonObject, JsonValue, json_object
from jouleboard.core.yamlio import MAX_YAML_BYTES, read_yaml
from jouleboard.importers.contract import ImportPlan, commit, conflicts, stale_files
from jouleboard.importers.registry_yaml import RegistryMerge, dump_new, merge_registry
from jouleboard.importers.run_provenance import zeus_counters
from jouleboard.kinds import check_measurement
from jouleboard.measure.checks import MAX_FILE_BYTES

KINDS = ("llm", "mllm", "diffusion")  # the home page lists tasks in this order

# Who builds the models, by Hugging Face organisation (registry default; editable).
BUILDERS = {
    "openai": "OpenAI",
    "Qwen": "Alibaba Qwen",
    "nvidia": "NVIDIA",
    "deepseek-ai": "DeepSeek",
    "meta-llama": "Meta",
    "google": "Google",
    "mistralai": "Mistral AI",
    "zai-org": "Z.ai",
    "tencent": "Tencent",
    "Tencent-Hunyuan": "Tencent",
    "black-forest-labs": "Black Forest Labs",
    "stabilityai": "Stability AI",
    "Efficient-Large-Model": "NVIDIA (Efficient-Large-Model)",
    "PixArt-alpha": "PixArt-alpha",
    "Wan-AI": "Alibaba Wan",
}

GPUS: dict[str, dict[str, str | float]] = {
    "B200": {
        "name": "NVIDIA B200",
        "vendor": "NVIDIA",
        "generation": "Blackwell",
        "memory_gb": 180.0,
        "board_power_watts": 1000.0,
    },
    "H100": {
        "name": "NVIDIA H100 SXM",
        "vendor": "NVIDIA",
        "generation": "Hopper",
        "memory_gb": 80.0,
        "board_power_watts": 700.0,
    },
}


def _vendors(path: Path) -> dict[str, str]:
    """Each GPU's vendor: as the data folder's gpus.yaml (``path``) names it, which the
    import keeps, else as :data:`GPUS` does (a registry it cannot read: its problem is
    reported with the others)."""
    value, error, _ = read_yaml(path)
    found = {gpu: str(info["vendor"]) for gpu, info in GPUS.items()}
    for gpu, info in value.items() if isinstance(value, dict) and not error else ():
        vendor = info.get("vendor") if isinstance(info, dict) else None
        if isinstance(vendor, str):
            found[str(gpu)] = vendor
    return found


class _Deadline(TypedDict):
    percentile: str
    ms: float


class _CuratedTask(TypedDict, total=False):
    """tasks.yaml fields chosen here for a task of the source (the rest: its defaults)."""

    name: str
    description_md: str
    output_unit: str
    response_unit: str
    efficiency_scale_joules: int
    default_deadline: _Deadline
    preset_deadlines_ms: list[float]


TASKS: dict[str, _CuratedTask] = {
    "gpqa": {
        "name": "Problem Solving with Reasoning",
        "description_md": (
            "Graduate-level multiple-choice science questions (GPQA Diamond). Models reason "
            "step by step before they answer, so responses run to thousands of tokens."
        ),
    },
    "lm-arena-chat": {
        "name": "Chat",
        "description_md": "Conversational prompts as people send them to chat assistants "
        "(LM Arena conversations).",
    },
    "sourcegraph-fim": {
        "name": "Code Completion",
        "description_md": "Fill-in-the-middle code completion requests (Sourcegraph): short "
        "outputs, latency-sensitive.",
    },
    "image-chat": {
        "name": "Image Chat",
        "description_md": "Questions about an image, answered by multimodal models.",
    },
    "video-chat": {
        "name": "Video Chat",
        "description_md": "Questions about a short video, answered by multimodal models.",
    },
    "text-to-image": {
        "name": "Text to Image",
        "description_md": "Images generated from text prompts by diffusion models, at each "
        "model's served resolution and number of denoising steps.",
        "output_unit": "image",
        "response_unit": "image",
        "efficiency_scale_joules": 1000,
        "default_deadline": {"percentile": "p50", "ms": 30_000.0},
        "preset_deadlines_ms": [5_000.0, 10_000.0, 60_000.0],
    },
    "text-to-video": {
        "name": "Text to Video",
        "description_md": "Short videos generated from text prompts by diffusion models.",
        "output_unit": "video",
        "response_unit": "video",
        "efficiency_scale_joules": 1_000_000,
        "default_deadline": {"percentile": "p50", "ms": 300_000.0},
        "preset_deadlines_ms": [120_000.0, 600_000.0, 1_800_000.0],
    },
}
PRESET_DEADLINES_MS = [50.0, 100.0, 200.0, 500.0]
DEFAULT_DEADLINE_MS = 300.0

DATASET = "The ML.ENERGY Benchmark v3"
CITATION = (
    "Jae-Won Chung et al., The ML.ENERGY Benchmark: Toward Automated Inference Energy "
    "Measurement and Optimization, NeurIPS 2025 Datasets and Benchmarks"
)
LICENSE = "Apache-2.0"
SOURCE_PREFIX = "ml-energy/leaderboard public/data"
IMPORTER = "import-mlenergy"


# Largest file of the v3 data: tasks/text-to-image.json, 402 KB; models/ at most 107 KB.
# The cap leaves 40x room and bounds the memory one file can take while it is parsed.
SOURCE_CAP = 16 * 1024 * 1024
PROVENANCE_CAP = 64 * 1024  # PROVENANCE.md: a few lines naming the upstream commit


# The shape of the source files: what this importer reads from them, checked before use.
# Strict (no coercion: "12" is not 12, true is not 1); fields the importer does not use are
# allowed. Only checked: the measurement is built from the parsed JSON itself, so numbers
# keep their written form (an int stays an int) and the output stays byte-identical.
TaskId = Annotated[str, Field(pattern=TASK_ID_PATTERN)]
ModelId = Annotated[str, Field(pattern=MODEL_ID_PATTERN)]
GpuId = Annotated[str, Field(pattern=GPU_ID_PATTERN)]


class _Source(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")


_S = TypeVar("_S", bound=_Source)
_Input = TypeVar("_Input")  # what a "before" validator is given, returned as it is


class SourceIndexModel(_Source):
    nickname: str
    total_params_billions: float
    activated_params_billions: float
    weight_precision: Precision
    architecture: str = ""


class SourceIndex(_Source):
    """index.json: tasks by kind, the data date, per-model facts."""

    architectures: dict[str, list[TaskId]]
    last_updated: IsoDate
    models: dict[ModelId, SourceIndexModel]


class SourceTask(_Source):
    """tasks/{task}.json (only the display name is used)."""

    task_display_name: str


class SourceModel(_Source):
    """models/{org}__{model}__{task}.json; each configuration is checked by its kind."""

    model_id: ModelId
    task: str
    weight_precision: Precision
    configurations: list[dict[str, PydanticJsonValue]]  # used as parsed, not as validated


class _Histogram(_Source):
    bins: list[float]
    counts: list[int]


class _TokenParallel(_Source):
    tensor_parallel: int
    expert_parallel: int
    data_parallel: int
    notes: str = ""


class SourceTokenConfiguration(_Source):
    gpu_model: GpuId
    num_gpus: int
    max_num_seqs: int
    parallelization: _TokenParallel
    energy_per_token_joules: float
    avg_power_watts: float
    output_throughput_tokens_per_sec: float
    energy_per_request_joules: float
    avg_output_len: float
    avg_batch_size: float
    median_itl_ms: float
    p90_itl_ms: float
    p95_itl_ms: float
    p99_itl_ms: float
    output_length_distribution: _Histogram

    @model_validator(mode="before")
    @classmethod
    def _no_batch_size(cls, data: _Input) -> _Input:
        """measurement_path takes a configuration with a batch size for a diffusion one."""
        if isinstance(data, dict) and "batch_size" in data:
            raise ValueError(
                "batch_size is a diffusion field; this task's kind is not "
                "diffusion (see index.json's architectures)"
            )
        return data


class _DiffusionParallel(_Source):
    ulysses_degree: int
    ring_degree: int


class _SourceDiffusionConfiguration(_Source):
    gpu_model: GpuId
    num_gpus: int
    batch_size: int
    inference_steps: int
    parallelization: _DiffusionParallel
    avg_power_watts: float
    batch_latency_s: float


class SourceImageConfiguration(_SourceDiffusionConfiguration):
    energy_per_image_joules: float
    throughput_images_per_sec: float
    image_width: int
    image_height: int


class SourceVideoConfiguration(_SourceDiffusionConfiguration):
    energy_per_video_joules: float
    throughput_videos_per_sec: float
    video_width: int
    video_height: int
    num_frames: int
    fps: float


def _configuration_shape(kind: str, c: JsonObject) -> type[_Source]:
    """The model a configuration of a task of ``kind`` must fit (image or video: as
    :func:`_diffusion_measurement` tells them apart)."""
    if kind != "diffusion":
        return SourceTokenConfiguration
    return SourceVideoConfiguration if "energy_per_video_joules" in c else SourceImageConfiguration


def _shape_problems(
    shape: type[_Source], value: JsonValue, path: Path, prefix: tuple[object, ...] = ()
) -> list[Problem]:
    try:
        shape.model_validate(value)
    except ValidationError as e:
        return problems_from(e, shown_path(path), shape, prefix)
    return []


def _read_bytes(path: Path, cap: int) -> tuple[str | None, list[Problem]]:
    """The UTF-8 text of a supplied file, checked before it is read (safe_read)."""
    try:
        raw = read_capped(path, cap)
    except FileRefused as e:
        return None, [Problem(shown_path(path), "", e.rule, e.message, e.hint)]
    try:
        return raw.decode("utf-8"), []
    except UnicodeDecodeError as e:
        return None, [
            Problem(
                shown_path(path),
                "",
                "file.not-utf8",
                f"not UTF-8 text ({e.reason} at byte {e.start})",
                "save the file as UTF-8",
            )
        ]


def _read(path: Path, shape: type[_S]) -> tuple[tuple[_S, JsonObject] | None, list[Problem]]:
    """A source JSON file, parsed strictly and checked against ``shape``: ((the checked
    model, the object as parsed), problems); None when there is any problem."""
    text, problems = _read_bytes(path, SOURCE_CAP)
    if text is None:
        return None, problems
    value, issues = parse_strict(text)
    if issues:
        return None, [
            Problem(shown_path(path), i.pointer, i.rule, i.message, i.hint) for i in issues
        ]
    try:
        checked = shape.model_validate(value)
    except ValidationError as e:
        return None, problems_from(e, shown_path(path), shape)
    if not isinstance(value, dict):  # the shape is an object's
        raise TypeError(f"{shape.__name__} accepted {type(value).__name__}, not an object")
    return (checked, value), []


def _list(value: JsonValue, what: str) -> list[JsonValue]:
    if not isinstance(value, list):
        raise TypeError(f"{what} is {type(value).__name__}, not a list")
    return value


def _source_ref(src: Path) -> tuple[str, list[Problem]]:
    """The upstream commit, when PROVENANCE.md beside the data names one."""
    provenance = src / "PROVENANCE.md"
    text, problems = _read_bytes(provenance, PROVENANCE_CAP)
    if problems and problems[0].rule == "file.missing":
        return "ml-energy/leaderboard public/data", []
    match = re.search(r"commit ([0-9a-f]{40})", text or "")
    if match:
        return f"ml-energy/leaderboard public/data @ {match.group(1)[:12]}", problems
    return "ml-energy/leaderboard public/data", problems


def _folder_problem(folder: Path) -> Problem | None:
    """models/ and tasks/ are the source's own folders: a link could point anywhere."""
    try:
        mode = folder.lstat().st_mode
    except FileNotFoundError:
        return None  # nothing to read there; a task file it lacks is reported as missing
    except OSError as e:
        return Problem(
            shown_path(folder),
            "",
            "file.unreadable",
            f"cannot read the folder: {e.strerror or e}",
            "check its permissions",
        )
    if stat.S_ISLNK(mode):
        return Problem(
            shown_path(folder),
            "",
            "file.symlinked-folder",
            "a symbolic link to a folder",
            "put the folder itself there",
        )
    if not stat.S_ISDIR(mode):
        return Problem(
            shown_path(folder),
            "",
            "file.not-regular",
            "not a folder",
            "put the folder of the site data there",
        )
    return None


def measurement_path(task: str, model_id: str, c: JsonObject, precision: str, repeat: int) -> str:
    """Where the importer puts a configuration, relative to data/."""
    par = json_object(c["parallelization"], "parallelization")
    if "batch_size" in c:  # diffusion
        name = (
            f"{c['gpu_model']}-x{c['num_gpus']}-{precision}-bs{c['batch_size']}"
            f"-ulysses{par['ulysses_degree']}-ring{par['ring_degree']}"
            f"-steps{c['inference_steps']}"
        )
    else:
        name = (
            f"{c['gpu_model']}-x{c['num_gpus']}-{precision}-tp{par['tensor_parallel']}"
            f"-ep{par['expert_parallel']}-dp{par['data_parallel']}-seqs{c['max_num_seqs']}"
        )
    suffix = f"-r{repeat}" if repeat > 1 else ""
    return f"measurements/{task}/{model_id}/{name}{suffix}.json"


def _diffusion_measurement(
    task: str, model: SourceModel, c: JsonObject, repeat: int, provenance: Mapping[str, str]
) -> JsonObject:
    par = json_object(c["parallelization"], "parallelization")
    unit = "video" if "energy_per_video_joules" in c else "image"
    output: JsonObject = {
        "width_px": c[f"{unit}_width"],
        "height_px": c[f"{unit}_height"],
        "inference_steps": c["inference_steps"],
    }
    if unit == "video":
        output.update(num_frames=c["num_frames"], fps=c["fps"])
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "diffusion",
        "task": task,
        "model_id": model.model_id,
        "gpu_model": c["gpu_model"],
        "num_gpus": c["num_gpus"],
        "weight_precision": model.weight_precision,
        "serving": {
            "batch_size": c["batch_size"],
            "ulysses_degree": par["ulysses_degree"],
            "ring_degree": par["ring_degree"],
        },
        "output": output,
        "repeat": repeat,
        "metrics": {
            "energy_per_output_joules": c[f"energy_per_{unit}_joules"],
            "avg_power_watts": c["avg_power_watts"],
            "throughput_outputs_per_sec": c[f"throughput_{unit}s_per_sec"],
            "batch_latency_s": c["batch_latency_s"],
        },
        "provenance": dict(provenance),
    }


def _measurement(
    task: str,
    kind: str,
    model: SourceModel,
    c: JsonObject,
    repeat: int,
    provenance: Mapping[str, str],
) -> JsonObject:
    if kind == "diffusion":
        return _diffusion_measurement(task, model, c, repeat, provenance)
    par = json_object(c["parallelization"], "parallelization")
    hist = json_object(c["output_length_distribution"], "output_length_distribution")
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": kind,
        "task": task,
        "model_id": model.model_id,
        "gpu_model": c["gpu_model"],
        "num_gpus": c["num_gpus"],
        "weight_precision": model.weight_precision,
        "serving": {
            "max_num_seqs": c["max_num_seqs"],
            "tensor_parallel": par["tensor_parallel"],
            "expert_parallel": par["expert_parallel"],
            "data_parallel": par["data_parallel"],
            "notes": par.get("notes", ""),
        },
        "repeat": repeat,
        "metrics": {
            "energy_per_token_joules": c["energy_per_token_joules"],
            "avg_power_watts": c["avg_power_watts"],
            "output_throughput_tokens_per_sec": c["output_throughput_tokens_per_sec"],
            "energy_per_response_joules": c["energy_per_request_joules"],
            "avg_output_len_tokens": c["avg_output_len"],
            "avg_batch_size": c["avg_batch_size"],
            "median_itl_ms": c["median_itl_ms"],
            "p90_itl_ms": c["p90_itl_ms"],
            "p95_itl_ms": c["p95_itl_ms"],
            "p99_itl_ms": c["p99_itl_ms"],
        },
        "output_length_distribution": {"bin_edges_tokens": hist["bins"], "counts": hist["counts"]},
        "provenance": dict(provenance),
    }


def _model_entry(model_id: str, info: SourceIndexModel) -> JsonObject:
    org = model_id.split("/")[0]
    entry: JsonObject = {
        "nickname": info.nickname,
        "builder": BUILDERS.get(org, org),
        "total_params_billions": float(info.total_params_billions),
        "active_params_billions": float(info.activated_params_billions),
        "architecture": info.architecture,
        "weight_precision": info.weight_precision,
        "links": [{"label": "Hugging Face", "url": f"https://huggingface.co/{model_id}"}],
        "description_md": "",
    }
    return entry


def _task_entry(task: str, display: str, kind: str) -> JsonObject:
    curated = TASKS.get(task, _CuratedTask())
    deadline = curated.get("default_deadline") or _Deadline(
        percentile="p50", ms=DEFAULT_DEADLINE_MS
    )
    entry: JsonObject = {
        "name": curated.get("name", display),
        "benchmark": display,
        "kind": kind,
        "description_md": curated.get("description_md", ""),
        "output_unit": curated.get("output_unit", "token"),
        "response_unit": curated.get("response_unit", "response"),
        "efficiency_scale_joules": curated.get("efficiency_scale_joules", 1),
        "default_deadline": {"percentile": deadline["percentile"], "ms": deadline["ms"]},
        "preset_deadlines_ms": list(curated.get("preset_deadlines_ms", PRESET_DEADLINES_MS)),
    }
    return entry


def _registry_problems(path: Path) -> list[Problem]:
    """Why a registry of the data folder the import merges into cannot be read (a link, too
    large, not YAML, a duplicate key ...): checked before the round-trip parser reads it."""
    _, error, rule = read_yaml(path)
    if rule == "file.missing" or not error:
        return []
    return [Problem(shown_path(path), "", rule, error, f"fix {shown_path(path)}")]


def _ours(text: str) -> bool:
    """A measurement file this importer wrote (its provenance names the ML.ENERGY site data)."""
    value, issues = parse_strict(text)
    provenance = value.get("provenance") if isinstance(value, dict) and not issues else None
    source = provenance.get("source") if isinstance(provenance, dict) else None
    return isinstance(source, str) and source.startswith(SOURCE_PREFIX)


def _earlier_imports(out: Path, tasks: Iterable[str]) -> list[str]:
    """Measurement files of ``tasks`` an earlier import-mlenergy wrote (by content)."""
    found = []
    for task in tasks:
        folder = out / "measurements" / task
        for path in sorted(folder.rglob("*.json")) if folder.is_dir() else []:
            try:  # a link, pipe or oversized file is not one this importer wrote
                text = read_capped(path, MAX_FILE_BYTES).decode("utf-8")
            except (FileRefused, UnicodeDecodeError):
                continue
            if _ours(text):
                found.append(path.relative_to(out).as_posix())
    return found


def _validate(plan: ImportPlan, out: Path) -> list[Problem]:
    """Every planned measurement against the planned registries, before anything is written."""
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("gpus.yaml", "models.yaml", "tasks.yaml", "site.yaml"):
            text = plan.updates.get(name)
            if text is None:
                text, problems = _read_bytes(out / name, MAX_YAML_BYTES)
                if problems and problems[0].rule != "file.missing":
                    return problems
            if text is not None:
                (Path(tmp) / name).write_text(text, encoding="utf-8")
        registry, problems = load_registry(Path(tmp))
        if registry is None:
            return problems
        for rel, text in sorted(plan.files.items()):
            _, found = check_measurement(json.loads(text), rel, rel, registry)
            problems.extend(found)
    return problems


# models.yaml fields an import-mlenergy sets on every import (the source's facts); the others
# (builder, links, description_md) are the user's once the entry exists.
MODEL_FIELDS_IMPORTED = (
    "nickname",
    "total_params_billions",
    "active_params_billions",
    "architecture",
    "weight_precision",
)


@dataclass(frozen=True)
class Imported:
    """What an import did: measurement files per task, and each change to the registries
    (``models.yaml: added Qwen/Qwen3-8B``)."""

    counts: dict[str, int]
    registry_changes: tuple[str, ...]


def import_mlenergy(src: Path, out: Path) -> Imported:
    """Convert the site data in ``src`` into ``out`` (a data folder): files per task and the
    registry changes.

    The importer contract (importers/contract.py): everything is converted and validated
    first; files in the way that this importer did not write stop the import; the files
    are staged and moved into place together. A re-import removes only the measurement
    files an earlier import-mlenergy wrote that the source no longer has.
    """
    plan = ImportPlan(IMPORTER, replace_previous=True, owns=lambda old, new: _ours(old))
    read, problems = _read(src / "index.json", SourceIndex)
    if read is None:
        raise ValidationFailed(problems)
    index = read[0]
    # Text tasks first, then multimodal: the order of the home page.
    kinds = {task: kind for kind in KINDS for task in index.architectures.get(kind, [])}
    source_ref, problems = _source_ref(src)
    provenance = {
        "dataset": DATASET,
        "version": "v3",
        "date": index.last_updated,
        "license": LICENSE,
        "source": source_ref,
        "citation": CITATION,
        "boundary": "gpu",
        "window": "steady-state",
    }
    problems += [p for p in map(_folder_problem, (src / "models", src / "tasks")) if p]
    if problems:
        raise ValidationFailed(problems)

    counts: dict[str, int] = {}
    used_models: set[str] = set()
    vendors = _vendors(out / "gpus.yaml")
    for path in sorted((src / "models").glob("*.json")):
        read_model, found = _read(path, SourceModel)
        if read_model is None or read_model[0].task not in kinds:
            problems += found
            continue
        model, parsed = read_model
        configurations = [
            c for c in _list(parsed["configurations"], "configurations") if isinstance(c, dict)
        ]  # (each one: SourceModel checked that it is an object)
        task = model.task
        if model.model_id not in index.models:
            found.append(
                Problem(
                    shown_path(path),
                    pointer("model_id"),
                    "mlenergy.model-not-in-index",
                    f"model {model.model_id!r} is not in index.json's models",
                    "add it to index.json's models, or remove this file",
                )
            )
        for i, c in enumerate(configurations):
            found += _shape_problems(
                _configuration_shape(kinds[task], c), c, path, ("configurations", i)
            )
        if found or problems:  # the next files are still read: every problem at once
            problems += found
            continue
        # The source publishes some configurations twice (repeat runs): number them.
        seen: dict[str, int] = {}
        for c in configurations:
            key = measurement_path(task, model.model_id, c, model.weight_precision, 1)
            repeat = seen[key] = seen.get(key, 0) + 1
            doc = _measurement(
                task,
                kinds[task],
                model,
                c,
                repeat,
                {
                    **provenance,
                    "source": f"{provenance['source']}/models/{path.name}",
                    # Zeus reads each vendor's counters: NVML on NVIDIA's GPUs.
                    "instrument": zeus_counters(vendors.get(str(c.get("gpu_model")))),
                },
            )
            rel = measurement_path(task, model.model_id, c, model.weight_precision, repeat)
            plan.files[rel] = dumps_canonical(doc, indent=2)
            counts[task] = counts.get(task, 0) + 1
        used_models.add(model.model_id)

    displays: dict[str, str] = {}
    for t in kinds:
        task_file, found = _read(src / "tasks" / f"{t}.json", SourceTask)
        problems += found
        if task_file is not None:
            displays[t] = task_file[0].task_display_name
    for name in ("models.yaml", "tasks.yaml", "gpus.yaml"):
        problems += _registry_problems(out / name)
    if problems:
        raise ValidationFailed(problems)

    header = (
        "# Imported from {} (Apache-2.0) by `jouleboard import-mlenergy`.\n"
        "# Hand-edited fields are kept on re-import: {}.\n"
    )
    # Each registry merged into the user's (registry_yaml.py): new entries appended, only
    # the fields this import owns updated, comments, order and hand edits kept.
    merges = {
        "models.yaml": merge_registry(
            out / "models.yaml",
            {mid: _model_entry(mid, index.models[mid]) for mid in sorted(used_models)},
            MODEL_FIELDS_IMPORTED,
            header.format(DATASET, "builder, links, description_md"),
        ),
        "tasks.yaml": merge_registry(
            out / "tasks.yaml",
            {t: _task_entry(t, displays[t], kinds[t]) for t in kinds},
            (),
            header.format(DATASET, "every field"),
        ),
        "gpus.yaml": merge_registry(
            out / "gpus.yaml",
            dict(sorted(GPUS.items())),
            (),
            "# Accelerators; board_power_watts bounds validation.\n",
        ),
    }
    for name, merge in merges.items():
        if merge.text is not None:
            plan.updates[name] = merge.text

    if not (out / "site.yaml").exists() and not (out / "site.yaml").is_symlink():
        site: dict[str, JsonLike] = {
            "title": "jouleboard",
            "tagline": "Which AI model does the most work per joule of GPU energy?",
            "top_n": 7,
            "default_gpus": sorted(GPUS),
            "data_version": "v3",
            "data_date": index.last_updated,
            "base_url": "/",
            "attribution_md": (
                f"Measurements: [{DATASET}](https://ml.energy/leaderboard) ({CITATION}), "
                f"published under the {LICENSE} license."
            ),
        }
        plan.updates["site.yaml"] = dump_new(site, "# Site settings.\n")
        merges["site.yaml"] = RegistryMerge(plan.updates["site.yaml"], ("created",))
    problems = _validate(plan, out) + conflicts(plan, out)
    if problems:
        raise ValidationFailed(problems)
    commit(plan, out, stale_files(plan, out, _earlier_imports(out, kinds)))
    return Imported(
        dict(sorted(counts.items())),
        tuple(f"{name}: {change}" for name, m in merges.items() for change in m.changes),
    )
