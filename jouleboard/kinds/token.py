"""Token tasks (text LLMs and multimodal LLMs): tokens per joule under an inter-token
latency deadline at a percentile."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from jouleboard.config.registry import Registry
from jouleboard.config.schema import PERCENTILES, TaskInfo
from jouleboard.core.problems import Problem
from jouleboard.core.shapes import Row
from jouleboard.kinds.base import Latency, Record, TaskKind, field_value, own
from jouleboard.kinds.token_records import Configuration, Measurement, check_physics
from jouleboard.measure import metrics
from jouleboard.measure.checks import MeasurementHead
from jouleboard.measure.formats import precision_label
from jouleboard.measure.units import TaskUnits
from jouleboard.rank.tables import (
    GPU,
    POWER,
    PRECISION,
    QUALITY_FIELDS,
    Column,
    Field,
    number,
)

ITL_FIELDS = {"p50": "median_itl_ms", "p90": "p90_itl_ms", "p95": "p95_itl_ms", "p99": "p99_itl_ms"}

TOKENS_PER_J = number(
    "tokens_per_joule",
    title="Output tokens per joule of GPU energy (= throughput / power). Higher is better.",
)
J_PER_TOKEN = number(
    "energy_per_token_joules", title="GPU energy per output token. Lower is better."
)
J_PER_RESPONSE = number(
    "energy_per_response_joules",
    title="GPU energy of an average response (J/token x average length).",
)
MEDIAN_ITL = number("median_itl_ms", title="Median inter-token latency.", by_percentile=ITL_FIELDS)
BATCH = number("max_num_seqs", title="Batch-size cap of the server (max_num_seqs).")
THROUGHPUT = number("output_throughput_tokens_per_sec")
P90_ITL = number("p90_itl_ms")
P99_ITL = number("p99_itl_ms")
METRICS = (TOKENS_PER_J, J_PER_TOKEN, J_PER_RESPONSE, MEDIAN_ITL)


class TokenKind(TaskKind):
    ranked_key = "tokens_per_joule"
    name = "token"
    task_kinds: ClassVar = {"llm": "Text", "mllm": "Multimodal"}
    measurement = Measurement
    percentiles = PERCENTILES
    latency = Latency(
        words={
            "p50": "median inter-token latency",
            "p90": "p90 inter-token latency",
            "p95": "p95 inter-token latency",
            "p99": "p99 inter-token latency",
        },
        short={"p50": "median ITL", "p90": "p90 ITL", "p95": "p95 ITL", "p99": "p99 ITL"},
        unit="ms",
        scale_ms=1.0,
    )
    download_name = "configurations"
    latency_fields: ClassVar = {p: (f, 1.0) for p, f in ITL_FIELDS.items()}
    tie_fields = (
        "max_num_seqs",
        "tensor_parallel",
        "expert_parallel",
        "data_parallel",
        "weight_precision",
        "repeat",
        "source",
    )
    energy_field = "energy_per_token_joules"
    interval_columns = ("energy_per_token_joules", "tokens_per_joule")
    rank_columns = (
        "rank",
        "model_id",
        "nickname",
        "gpu_model",
        "num_gpus",
        "weight_precision",
        "max_num_seqs",
        "median_itl_ms",
        "energy_per_token_joules",
        "tokens_per_joule",
        "energy_per_response_joules",
        "avg_power_watts",
        "output_throughput_tokens_per_sec",
        "accuracy_percent",
        "energy_per_correct_answer_joules",
    )
    configuration_columns = (
        "task",
        "model_id",
        "nickname",
        "builder",
        "gpu_model",
        "num_gpus",
        "weight_precision",
        "max_num_seqs",
        "tensor_parallel",
        "expert_parallel",
        "data_parallel",
        # The load a serving benchmark offered: two levels of one sweep are two rows that
        # differ in nothing else (empty where the data does not say: the ML.ENERGY data).
        "concurrency",
        "request_rate_per_sec",
        "repeat",
        "energy_per_token_joules",
        "tokens_per_joule",
        "energy_per_response_joules",
        "avg_power_watts",
        "output_throughput_tokens_per_sec",
        "avg_output_len_tokens",
        "avg_batch_size",
        "median_itl_ms",
        "p90_itl_ms",
        "p95_itl_ms",
        "p99_itl_ms",
        "source",
    )

    def check(self, m: MeasurementHead, shown: str, registry: Registry) -> list[Problem]:
        return check_physics(own(m, Measurement), shown, registry)

    def to_record(self, m: MeasurementHead, source: str) -> Configuration:
        return Configuration.from_measurement(own(m, Measurement), source)

    def units(self, task: TaskInfo) -> TaskUnits:
        return TaskUnits(
            task.output_unit,
            task.efficiency_scale_joules,
            axis="Tokens per joule",
            label_unit="tokens/J",
        )

    def standing_value(self, units: TaskUnits, value: float) -> str:
        return f"{value:.2f} {units.efficiency_unit}"

    def config_label(self, record: Record) -> str:
        c = own(record, Configuration)
        precision = precision_label(c.weight_precision)
        load = f", {c.load_text}" if c.load_text else ""
        return f"{c.num_gpus}× {c.gpu_model}, {precision}, batch cap {c.max_num_seqs}{load}"

    def setting_text(self, record: Record) -> str:
        c = own(record, Configuration)
        return f"max_num_seqs {c.max_num_seqs}" + (f", {c.load_text}" if c.load_text else "")

    def model_sort_key(self, record: Record) -> tuple[int | str, ...]:
        c = own(record, Configuration)
        key = (c.gpu_model, c.num_gpus, c.weight_precision, c.max_num_seqs, c.repeat)
        # A sweep's levels in load order (requests/s in thousandths: the key holds integers).
        return key if c.load is None else (*key, c.load[0], round(c.load[1] * 1000))

    def output_lengths(
        self, configs: Sequence[Record]
    ) -> tuple[tuple[float, ...], list[int]] | None:
        """Output-length histogram of all configurations together (when their bins agree;
        else the first one's)."""
        with_hist = [c for c in (own(r, Configuration) for r in configs) if c.output_length_counts]
        if not with_hist:
            return None
        edges = with_hist[0].output_length_bin_edges_tokens
        if any(c.output_length_bin_edges_tokens != edges for c in with_hist):
            return edges, list(with_hist[0].output_length_counts)
        counts = [
            sum(col) for col in zip(*(c.output_length_counts for c in with_hist), strict=True)
        ]
        return edges, counts

    def ranking_fields(self, task: TaskInfo, quality: bool) -> tuple[Field, ...]:
        # The ranked figure first, so a phone shows it beside the model without scrolling.
        return (
            TOKENS_PER_J,
            GPU,
            PRECISION,
            J_PER_TOKEN,
            J_PER_RESPONSE,
            MEDIAN_ITL,
            BATCH,
            *(QUALITY_FIELDS if quality else ()),
        )

    def configuration_fields(self, task: TaskInfo) -> tuple[Field, ...]:
        return (
            GPU,
            PRECISION,
            Field(Column("parallel", "Parallelism"), "text"),
            *METRICS,
            P90_ITL,
            P99_ITL,
            BATCH,
            POWER,
            THROUGHPUT,
        )

    def values(self, record: Record, units: TaskUnits) -> Row:
        c = own(record, Configuration)
        return {
            "weight_precision": c.weight_precision,
            "parallel": f"TP{c.tensor_parallel} EP{c.expert_parallel} DP{c.data_parallel}"
            + (f", {c.load_text}" if c.load_text else "")
            + (f" ({c.serving_notes})" if c.serving_notes else ""),
            "tokens_per_joule": c.tokens_per_joule,
            **{
                k: field_value(c, k)
                for k in (
                    "energy_per_token_joules",
                    "energy_per_response_joules",
                    "median_itl_ms",
                    "p90_itl_ms",
                    "p95_itl_ms",
                    "p99_itl_ms",
                    "max_num_seqs",
                    "avg_power_watts",
                    "output_throughput_tokens_per_sec",
                )
            },
        }

    def rank_record(
        self, rank: int, record: Record, nickname: str, accuracy_percent: float | None
    ) -> Row:
        c = own(record, Configuration)
        per_correct = (
            None
            if accuracy_percent is None
            else metrics.energy_per_correct_answer(c.energy_per_response_joules, accuracy_percent)
        )
        values: Row = {
            "rank": rank,
            "nickname": nickname,
            "accuracy_percent": accuracy_percent,
            "energy_per_correct_answer_joules": per_correct,
        }
        return {k: values[k] if k in values else field_value(c, k) for k in self.rank_columns}

    def configuration_record(self, record: Record, nickname: str, builder: str) -> Row:
        c = own(record, Configuration)
        values: Row = {"nickname": nickname, "builder": builder}
        return {
            k: values[k] if k in values else field_value(c, k) for k in self.configuration_columns
        }

    def footprint_scales(self, units: TaskUnits) -> tuple[tuple[str, str, float, str], ...]:
        # Amounts whose cost reads in dollars, not fractions of a cent (0.000948 USD).
        return (
            # J/token counts output tokens only (prompt processing is folded into it).
            ("btok", f"per 1B output {units.output}s", 1e9, "energy_per_output_joules"),
            ("mresp", f"per 1M {units.response}s", 1e6, "energy_per_response_joules"),
        )
