"""Flat records for CSV/JSON: ranking rows (the CLI's and the site's) and configurations."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from jouleboard import metrics
from jouleboard.config import Registry
from jouleboard.escape import csv_text
from jouleboard.present.formats import PRECISION_LABELS
from jouleboard.records import Configuration

RANK_COLUMNS = (
    "rank", "model_id", "nickname", "gpu_model", "num_gpus", "weight_precision", "max_num_seqs",
    "median_itl_ms", "energy_per_token_joules", "tokens_per_joule", "energy_per_response_joules",
    "avg_power_watts", "output_throughput_tokens_per_sec",
    "accuracy_percent", "energy_per_correct_answer_joules",
)

CONFIGURATION_COLUMNS = (
    "task", "model_id", "nickname", "builder", "gpu_model", "num_gpus", "weight_precision",
    "max_num_seqs", "tensor_parallel", "expert_parallel", "data_parallel", "repeat",
    "energy_per_token_joules", "tokens_per_joule", "energy_per_response_joules",
    "avg_power_watts", "output_throughput_tokens_per_sec", "avg_output_len_tokens",
    "avg_batch_size", "median_itl_ms", "p90_itl_ms", "p95_itl_ms", "p99_itl_ms", "source",
)


def rank_record(rank: int, c: Configuration, nickname: str,
                accuracy_percent: float | None = None) -> dict[str, Any]:
    """A ranking row with exactly RANK_COLUMNS, in order, at full precision (accuracy and
    energy per correct answer are None where no accuracy is published)."""
    per_correct = None if accuracy_percent is None else metrics.energy_per_correct_answer(
        c.energy_per_response_joules, accuracy_percent)
    values: dict[str, Any] = {"rank": rank, "nickname": nickname,
                              "accuracy_percent": accuracy_percent,
                              "energy_per_correct_answer_joules": per_correct}
    return {k: values[k] if k in values else getattr(c, k) for k in RANK_COLUMNS}


def configuration_record(c: Configuration, registry: Registry) -> dict[str, Any]:
    info = registry.models[c.model_id]
    values: dict[str, Any] = {"nickname": info.nickname, "builder": info.builder}
    return {k: values[k] if k in values else getattr(c, k) for k in CONFIGURATION_COLUMNS}


def to_csv(columns: Sequence[str], records: Sequence[dict[str, Any]]) -> str:
    """CSV download: text cells a spreadsheet would run as formulas are neutralised."""
    return csv_text(columns, records)


def to_json(records: Sequence[dict[str, Any]]) -> str:
    """Records in column order (not sorted), strict JSON."""
    return json.dumps(list(records), indent=2, allow_nan=False, ensure_ascii=False) + "\n"


EXPLORE_COLUMNS = (
    "model_id", "gpu_model", "num_gpus", "weight_precision", "max_num_seqs", "tensor_parallel",
    "expert_parallel", "data_parallel", "repeat", "source", "energy_per_token_joules",
    "energy_per_response_joules", "median_itl_ms", "p90_itl_ms", "p95_itl_ms", "p99_itl_ms",
    "avg_power_watts", "output_throughput_tokens_per_sec",
)


def explore_payload(configs: Sequence[Configuration], registry: Registry,
                    model_url: Callable[[str], str], gpu_url: Callable[[str], str]
                    ) -> dict[str, Any]:
    """One task's configurations for the browser: columns + rows (compact), and the model
    and GPU names and links the re-ranked table shows."""
    models = sorted({c.model_id for c in configs})
    return {
        "columns": list(EXPLORE_COLUMNS),
        "rows": [[getattr(c, k) for k in EXPLORE_COLUMNS] for c in configs],
        "models": {m: {"nickname": registry.models[m].nickname,
                       "builder": registry.models[m].builder, "url": model_url(m)}
                   for m in models},
        "gpus": {g: gpu_url(g) for g in sorted({c.gpu_model for c in configs})},
        "precisions": {p: PRECISION_LABELS.get(p, p)
                       for p in sorted({c.weight_precision for c in configs})},
        "accuracy": {m: score.accuracy_percent for m in models
                     if (score := registry.accuracy(configs[0].task, m)) is not None},
    }
