"""Configuration and model facts a benchmark root keeps beside its runs (``configs/``).

    configs/vllm/{task}/{org}/{model}/model_info.json                  (LLM, multimodal)
    configs/vllm/{task}/{org}/{model}/{gpu_model}/monolithic.config.yaml
    configs/xdit/{task}/{org}/{model}/model_info.json                  (diffusion)

model_info.json: nickname, total_parameters_billion, active_parameters_billion,
architecture, weight_precision. monolithic.config.yaml: the vLLM server settings;
tensor-parallel-size, enable-expert-parallel, expert-parallel-size and data-parallel-size
give the parallel degrees, with the ML.ENERGY data toolkit's defaults (see
:func:`parallelism`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from jouleboard.core.jsonio import parse_strict
from jouleboard.core.problems import Problem, pointer, shown_path
from jouleboard.core.safe_read import FileRefused, read_capped, refusal
from jouleboard.core.shapes import JsonObject, YamlValue
from jouleboard.core.yamlio import read_yaml
from jouleboard.importers.run_layout import RunLocation, configs_dir

MODEL_INFO = "model_info.json"
MONOLITHIC = "monolithic.config.yaml"
MAX_CONFIG_BYTES = 1024 * 1024  # model_info.json is a few hundred bytes


@dataclass(frozen=True, slots=True)
class ModelFacts:
    """model_info.json of a model (None where the file does not say)."""

    nickname: str | None
    total_params_billions: float | None
    active_params_billions: float | None
    architecture: str | None
    weight_precision: str | None
    file: str  # as shown in problems


def _number(info: JsonObject, key: str) -> float | None:
    value = info.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _text(info: JsonObject, key: str) -> str | None:
    value = info.get(key)
    return value if isinstance(value, str) and value else None


def _config_file(loc: RunLocation, *below: str) -> tuple[Path | None, list[Problem]]:
    """``configs/{vllm,xdit}/{task}/{org}/{model}/*below`` when it is there, and a problem
    when a folder on the way is a symbolic link (it is not followed: configs/ is part of the
    run tree) or the file is not a regular file."""
    root = configs_dir(loc)
    if root is None:
        return None, []
    path = root.joinpath(loc.task, loc.org, loc.model, *below)
    folder = root.parent  # configs/, then each folder down to the file's
    for name in ("", root.name, loc.task, loc.org, loc.model, *below[:-1]):
        folder = folder / name if name else folder
        if folder.is_symlink():
            return None, [
                Problem(
                    shown_path(folder),
                    "",
                    "file.symlinked-folder",
                    "a symbolic link to a folder in a run tree: not followed",
                    "copy the folder itself here",
                )
            ]
    if not os.path.lexists(path):
        return None, []
    why = refusal(path, MAX_CONFIG_BYTES)
    if why is not None:
        return None, [Problem(shown_path(path), "", why.rule, why.message, why.hint)]
    return path, []


def model_facts(loc: RunLocation) -> tuple[ModelFacts | None, list[Problem]]:
    """The run's model_info.json, when its benchmark root has one."""
    path, problems = _config_file(loc, MODEL_INFO)
    if path is None:
        return None, problems
    where = shown_path(path)
    try:
        text = read_capped(path, MAX_CONFIG_BYTES).decode("utf-8")
    except FileRefused as e:
        return None, [Problem(where, "", e.rule, e.message, e.hint)]
    except UnicodeDecodeError as e:
        return None, [
            Problem(
                where,
                "",
                "file.not-utf8",
                f"not UTF-8 text ({e.reason} at byte {e.start})",
                "save the file as UTF-8",
            )
        ]
    info, issues = parse_strict(text)
    if issues:
        return None, [
            Problem(
                where,
                i.pointer,
                "run.config-invalid" if i.rule == "json.syntax" else i.rule,
                i.message,
                i.hint,
            )
            for i in issues
        ]
    if not isinstance(info, dict):
        return None, [
            Problem(
                where,
                "",
                "run.config-invalid",
                "not a JSON object",
                "model_info.json holds one object",
            )
        ]
    return ModelFacts(
        _text(info, "nickname"),
        _number(info, "total_parameters_billion"),
        _number(info, "active_parameters_billion"),
        _text(info, "architecture"),
        _text(info, "weight_precision"),
        where,
    ), []


def parallelism(
    loc: RunLocation, num_gpus: int
) -> tuple[tuple[int, int, int] | None, list[Problem]]:
    """(tensor, expert, data) parallel degrees from monolithic.config.yaml, the toolkit's way:
    expert parallel = expert-parallel-size (default num_gpus) when enable-expert-parallel,
    else 1; tensor parallel = tensor-parallel-size (default 1 with expert parallelism, else
    num_gpus); data parallel = data-parallel-size (default 1; 0 means num_gpus).
    None when there is no such file (the folder name decides)."""
    path, problems = _config_file(loc, str(loc.gpu_model), MONOLITHIC)
    if path is None:
        return None, problems
    where = shown_path(path)
    raw, error, rule = read_yaml(path)
    if error or not isinstance(raw, dict):
        return None, [
            Problem(
                where,
                "",
                rule or "run.config-invalid",
                error or "not a YAML mapping",
                "use the monolithic.config.yaml of the benchmark's configs/",
            )
        ]
    try:
        ep = (
            _int(raw.get("expert-parallel-size", num_gpus))
            if bool(raw.get("enable-expert-parallel", False))
            else 1
        )
        tp = _int(raw.get("tensor-parallel-size", 1 if ep > 1 else num_gpus))
        dp = _int(raw.get("data-parallel-size", 1)) or num_gpus
    except (TypeError, ValueError) as e:
        return None, [
            Problem(
                where,
                "",
                "run.config-invalid",
                f"a parallel size is not a whole number ({e})",
                "give the sizes as whole numbers",
            )
        ]
    bad = [name for name, v in (("tensor", tp), ("expert", ep), ("data", dp)) if v < 1]
    if bad:
        return None, [
            Problem(
                where,
                pointer(f"{bad[0]}-parallel-size"),
                "run.config-invalid",
                f"{bad[0]}-parallel-size is below 1",
                "give a size of 1 or more",
            )
        ]
    return (tp, ep, dp), []


def _int(value: YamlValue) -> int:
    """``int(value)``, with its errors, for a value of a YAML file."""
    if isinstance(value, int | float | str | bytes):
        return int(value)
    raise TypeError(
        "int() argument must be a string, a bytes-like object or a real number, "
        f"not {type(value).__name__!r}"
    )


def inferred_precision(model_id: str, diffusion: bool) -> str:
    """The toolkit's weight precision when model_info.json does not give one."""
    if not diffusion and (
        "FP8" in model_id or "DeepSeek-R1" in model_id or "DeepSeek-V3" in model_id
    ):
        return "fp8"
    return "bfloat16"


def models_yaml_entry(
    model_id: str, facts: ModelFacts | None, fallback_precision: str, builder: str
) -> JsonObject:
    """The models.yaml entry of a model the registry lacks, from its model_info.json.
    Without one the facts are left for a person to fill in (0 fails validation on purpose)."""
    f = facts
    total = f.total_params_billions if f and f.total_params_billions else 0.0
    active = f.active_params_billions if f and f.active_params_billions else total
    architecture = (
        f.architecture
        if f and f.architecture
        else (("MoE" if total != active else "Dense") if f and total else "")
    )
    entry: JsonObject = {
        "nickname": f.nickname if f and f.nickname else model_id.split("/", 1)[1],
        "builder": builder,
        "total_params_billions": total,
        "active_params_billions": active,
        "architecture": architecture,
        "weight_precision": f.weight_precision if f and f.weight_precision else fallback_precision,
        "links": [{"label": "Hugging Face", "url": f"https://huggingface.co/{model_id}"}],
    }
    return entry


def entry_yaml(model_id: str, entry: JsonObject) -> str:
    """``entry`` as the YAML lines to paste into models.yaml."""
    return yaml.safe_dump({model_id: entry}, sort_keys=False, allow_unicode=True, width=100)


def entry_line(model_id: str, entry: JsonObject) -> str:
    """``entry`` as one line of models.yaml (its facts a flow mapping): what a problem's
    hint can hold, since a report shows each problem on one line (a line break as ``\n``)."""
    pair = yaml.safe_dump(
        {model_id: entry}, sort_keys=False, allow_unicode=True, default_flow_style=True, width=10**9
    )
    return pair.strip()[1:-1]  # a flow mapping of one pair, less its braces: a block line
