"""A third kind of task defined outside the package: speech recognition, ranked by seconds
of audio transcribed per joule under a real-time-factor deadline (milliseconds of processing
per second of audio). One module; tests/test_third_kind.py registers it and builds a site
from tests/fixtures/speech/."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from jouleboard.config.registry import Registry
from jouleboard.config.schema import PERCENTILES, Percentile, Precision, Provenance, TaskInfo
from jouleboard.core.problems import Problem
from jouleboard.kinds.base import Latency, TaskKind
from jouleboard.measure.units import TaskUnits
from jouleboard.rank.tables import GPU, POWER, PRECISION, Column
from jouleboard.rank.tables import Field as Col

Positive = Annotated[float, Field(gt=0)]


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class SpeechServing(_Strict):
    batch_size: Annotated[int, Field(gt=0)]


class SpeechMetrics(_Strict):
    energy_per_audio_second_joules: Positive
    avg_power_watts: Positive
    audio_seconds_per_sec: Positive  # throughput: seconds of audio transcribed per second
    real_time_factor: Positive  # processing time / audio duration, per request (median)


class SpeechMeasurement(_Strict):
    schema_version: Literal[1]
    kind: Literal["asr"]
    task: str
    model_id: str
    gpu_model: str
    num_gpus: Annotated[int, Field(gt=0)]
    weight_precision: Precision
    serving: SpeechServing
    repeat: int = 1
    metrics: SpeechMetrics
    provenance: Provenance


@dataclass(frozen=True, slots=True)
class SpeechConfiguration:
    source: str
    task: str
    model_id: str
    gpu_model: str
    num_gpus: int
    weight_precision: str
    batch_size: int
    repeat: int
    energy_per_audio_second_joules: float
    avg_power_watts: float
    audio_seconds_per_sec: float
    real_time_factor: float
    provenance: Provenance | None = None

    @property
    def energy_per_output_joules(self) -> float:
        return self.energy_per_audio_second_joules

    @property
    def energy_per_response_joules(self) -> float:
        return self.energy_per_audio_second_joules

    def latency_ms(self, percentile: Percentile) -> float:
        """Milliseconds of processing per second of audio (real-time factor x 1000)."""
        return self.real_time_factor * 1000.0

    def tie_break(self) -> tuple[int | str, ...]:
        return (self.batch_size, self.weight_precision, self.repeat, self.source)

    @property
    def identity(self) -> tuple[object, ...]:
        return (
            self.task,
            self.model_id,
            self.gpu_model,
            self.num_gpus,
            self.weight_precision,
            self.batch_size,
            self.repeat,
        )


RTF = Col(
    Column(
        "real_time_factor",
        "Real-time factor",
        numeric=True,
        title="Processing time divided by audio duration.",
    ),
    "sig3",
)
BATCH = Col(Column("batch_size", "Batch", numeric=True), "int")


class SpeechKind(TaskKind):
    name = "speech"
    task_kinds: ClassVar = {"asr": "Speech recognition"}
    measurement = SpeechMeasurement
    percentiles = ("p50",)
    latency = Latency(
        words=dict.fromkeys(PERCENTILES, "processing time per audio second"),
        short=dict.fromkeys(PERCENTILES, "RTF×1000"),
        unit="ms/s",
        scale_ms=1.0,
        noun="processing time",
    )
    download_name = "configurations-speech"
    latency_fields: ClassVar = {p: ("real_time_factor", 1000.0) for p in PERCENTILES}
    tie_fields = ("batch_size", "weight_precision", "repeat", "source")
    energy_field = "energy_per_audio_second_joules"
    response_field = "energy_per_audio_second_joules"
    rank_columns = (
        "rank",
        "model_id",
        "nickname",
        "gpu_model",
        "num_gpus",
        "weight_precision",
        "batch_size",
        "real_time_factor",
        "energy_per_audio_second_joules",
        "audio_seconds_per_joule",
        "avg_power_watts",
    )
    configuration_columns = ("task", *rank_columns[1:], "repeat", "source")

    def check(self, m: SpeechMeasurement, shown: str, registry: Registry) -> list[Problem]:
        x = m.metrics
        implied = x.avg_power_watts / x.audio_seconds_per_sec
        if abs(implied - x.energy_per_audio_second_joules) > 0.05 * implied:
            return [
                Problem(
                    shown,
                    "/metrics/energy_per_audio_second_joules",
                    "bounds.energy-inconsistent",
                    "energy per audio second is not power / throughput",
                    "check the units",
                )
            ]
        return []

    def to_record(self, m: SpeechMeasurement, source: str) -> SpeechConfiguration:
        x = m.metrics
        return SpeechConfiguration(
            source,
            m.task,
            m.model_id,
            m.gpu_model,
            m.num_gpus,
            m.weight_precision,
            m.serving.batch_size,
            m.repeat,
            x.energy_per_audio_second_joules,
            x.avg_power_watts,
            x.audio_seconds_per_sec,
            x.real_time_factor,
            m.provenance,
        )

    def setting_text(self, c: SpeechConfiguration) -> str:
        return f"batch {c.batch_size}"

    def _metrics(self, units: TaskUnits) -> tuple[Col, ...]:
        return (
            Col(Column("efficiency", units.efficiency_label, numeric=True), "sig3"),
            Col(Column("energy_per_audio_second_joules", units.energy_label, numeric=True), "sig3"),
            RTF,
            BATCH,
        )

    def ranking_fields(self, task: TaskInfo, quality: bool) -> tuple[Col, ...]:
        return (GPU, PRECISION, *self._metrics(self.units(task)))

    def configuration_fields(self, task: TaskInfo) -> tuple[Col, ...]:
        return (GPU, PRECISION, *self._metrics(self.units(task)), POWER)

    def values(self, c: SpeechConfiguration, units: TaskUnits) -> dict[str, Any]:
        return {
            "weight_precision": c.weight_precision,
            "efficiency": units.efficiency(c.energy_per_output_joules),
            **{
                k: getattr(c, k)
                for k in (
                    "energy_per_audio_second_joules",
                    "real_time_factor",
                    "batch_size",
                    "avg_power_watts",
                )
            },
        }

    def rank_record(
        self, rank: int, c: SpeechConfiguration, nickname: str, accuracy_percent: float | None
    ) -> dict[str, Any]:
        values = {
            "rank": rank,
            "nickname": nickname,
            "audio_seconds_per_joule": 1.0 / c.energy_per_audio_second_joules,
        }
        return {k: values[k] if k in values else getattr(c, k) for k in self.rank_columns}

    def configuration_record(
        self, c: SpeechConfiguration, nickname: str, builder: str
    ) -> dict[str, Any]:
        record = self.rank_record(0, c, nickname, None)
        del record["rank"]
        return {"task": c.task, **record, "repeat": c.repeat, "source": c.source}

    def footprint_scales(self, units: TaskUnits) -> tuple[tuple[str, str, float, str], ...]:
        return (("khour", "per 1,000 hours of audio", 3.6e6, "energy_per_output_joules"),)
