"""Diffusion tasks (text to image, text to video): images per kJ or videos per MJ under a
batch-latency deadline (one latency per configuration: no percentiles)."""

from __future__ import annotations

from typing import Any, ClassVar

from jouleboard.config import Registry
from jouleboard.kinds.base import Latency, TaskKind
from jouleboard.present.tables import GPU, POWER, QUALITY_FIELDS, Column, Field
from jouleboard.present.units import TaskUnits
from jouleboard.problems import Problem
from jouleboard.records import (
    PERCENTILES,
    DiffusionConfiguration,
    DiffusionMeasurement,
    Percentile,
    TaskInfo,
)
from jouleboard.urls import deadline_slug
from jouleboard.validate import check_diffusion

BATCH_LATENCY = Field(Column("batch_latency_s", "Batch latency", "s", numeric=True,
                             title="Time to generate one batch."))
BATCH_SIZE = Field(Column("batch_size", "Batch", numeric=True), "int")
STEPS = Field(Column("inference_steps", "Steps", numeric=True), "int")
RESOLUTION = Field(Column("resolution", "Output"), "text")


def _output_text(c: DiffusionConfiguration) -> str:
    size = f"{c.width_px}×{c.height_px}"
    return f"{size}, {c.num_frames} frames" if c.num_frames else size


class DiffusionKind(TaskKind):
    name = "diffusion"
    task_kinds: ClassVar = {"diffusion": "Image and video generation"}
    measurement = DiffusionMeasurement
    percentiles = ("p50",)
    latency = Latency(words=dict.fromkeys(PERCENTILES, "batch latency"),
                      short=dict.fromkeys(PERCENTILES, "batch"), unit="s", scale_ms=1000.0,
                      noun="batch latency")
    download_name = "configurations-diffusion"
    latency_fields: ClassVar = {p: ("batch_latency_s", 1000.0) for p in PERCENTILES}
    tie_fields = ("batch_size", "ulysses_degree", "ring_degree", "inference_steps", "width_px",
                  "height_px", "num_frames", "weight_precision", "repeat", "source")
    response_field = "energy_per_output_joules"
    rank_columns = (
        "rank", "model_id", "nickname", "gpu_model", "num_gpus", "weight_precision",
        "batch_size", "inference_steps", "width_px", "height_px", "num_frames", "fps",
        "ulysses_degree", "ring_degree", "batch_latency_s", "energy_per_output_joules",
        "outputs_per_joule", "avg_power_watts", "throughput_outputs_per_sec",
    )
    configuration_columns = ("task", *rank_columns[1:], "repeat", "source")

    def check(self, m: DiffusionMeasurement, shown: str, registry: Registry) -> list[Problem]:
        return check_diffusion(m, shown, registry)

    def to_record(self, m: DiffusionMeasurement, source: str) -> DiffusionConfiguration:
        return DiffusionConfiguration.from_measurement(m, source)

    def config_label(self, c: DiffusionConfiguration) -> str:
        return (f"{c.num_gpus}× {c.gpu_model}, batch {c.batch_size}, "
                f"Ulysses {c.ulysses_degree} ring {c.ring_degree}")

    def setting_text(self, c: DiffusionConfiguration) -> str:
        return f"batch {c.batch_size}, {c.inference_steps} steps"

    def model_sort_key(self, c: DiffusionConfiguration) -> tuple[Any, ...]:
        return (c.gpu_model, c.num_gpus, c.batch_size, c.ulysses_degree, c.ring_degree,
                c.repeat)

    def chart_latency(self, c: DiffusionConfiguration, percentile: Percentile) -> float:
        return c.batch_latency_s

    def download_slug(self, ms: float, percentile: Percentile) -> str:
        return deadline_slug(ms, "batch")

    def _metrics(self, units: TaskUnits) -> tuple[Field, ...]:
        return (Field(Column("efficiency", units.efficiency_label, numeric=True,
                             title=f"{units.efficiency_words.capitalize()} of GPU energy. "
                             "Higher is better.")),
                Field(Column("energy_per_output_scaled", units.energy_scaled_label, numeric=True,
                             title=f"GPU energy per {units.output}. Lower is better.")),
                BATCH_LATENCY, BATCH_SIZE, STEPS, RESOLUTION)

    def ranking_fields(self, task: TaskInfo, quality: bool) -> tuple[Field, ...]:
        efficiency, *rest = self._metrics(self.units(task))
        return (efficiency, GPU, *rest, *(QUALITY_FIELDS if quality else ()))

    def configuration_fields(self, task: TaskInfo) -> tuple[Field, ...]:
        return (GPU, Field(Column("parallel", "Parallelism"), "text"),
                *self._metrics(self.units(task)), POWER)

    def values(self, c: DiffusionConfiguration, units: TaskUnits) -> dict[str, Any]:
        return {"weight_precision": c.weight_precision,
                "parallel": f"Ulysses {c.ulysses_degree}, ring {c.ring_degree}",
                "efficiency": units.efficiency(c.energy_per_output_joules),
                "energy_per_output_scaled": units.energy_scaled(c.energy_per_output_joules),
                "resolution": _output_text(c),
                **{k: getattr(c, k) for k in (
                    "energy_per_output_joules", "batch_latency_s", "batch_size",
                    "inference_steps", "avg_power_watts")}}

    def rank_record(self, rank: int, c: DiffusionConfiguration, nickname: str,
                    accuracy_percent: float | None) -> dict[str, Any]:
        values: dict[str, Any] = {"rank": rank, "nickname": nickname,
                                  "outputs_per_joule": 1.0 / c.energy_per_output_joules}
        return {k: values[k] if k in values else getattr(c, k) for k in self.rank_columns}

    def configuration_record(self, c: DiffusionConfiguration, nickname: str,
                             builder: str) -> dict[str, Any]:
        record = self.rank_record(0, c, nickname, None)
        del record["rank"]
        return {"task": c.task, **record, "repeat": c.repeat, "source": c.source}

    def footprint_scales(self, units: TaskUnits) -> tuple[tuple[str, str, float, str], ...]:
        # Amounts whose cost reads in dollars, not fractions of a cent.
        amount, words = (1e6, "1M") if units.scale_joules <= 1000 else (1e3, "1,000")
        return (("kout", f"per {words} {units.output}s", amount, "energy_per_output_joules"),)
