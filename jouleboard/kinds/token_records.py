"""Token tasks' measurement file, flat record and physical checks (text LLMs and multimodal
LLMs): the data half of jouleboard/kinds/token.py. Rule ids are documented in
docs/measurement-format.md."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

from jouleboard.config.registry import Registry
from jouleboard.config.schema import (
    GPU_ID_PATTERN,
    MODEL_ID_PATTERN,
    TASK_ID_PATTERN,
    Percentile,
    PositiveFloat,
    PositiveInt,
    Precision,
    Provenance,
    SchemaVersion,
    Strict,
)
from jouleboard.core.frozen import quick_pickle
from jouleboard.core.problems import Problem
from jouleboard.measure import metrics
from jouleboard.measure.checks import (
    CONSISTENCY_TOLERANCE,
    ceiling_problem,
    inconsistent,
    power_problems,
)

MIN_MEDIAN_ITL_MS = 0.5  # faster than any GPU decodes: seconds given as ms?
MAX_ITL_MS = 120_000.0  # two minutes per token: microseconds given as ms?
BATCH_MARGIN = 1.01
# output throughput / (avg_batch_size / median ITL): 0.062 to 1.391 over the 838 token
# configurations of the ML.ENERGY v3 data; the reasoning is in docs/measurement-format.md.
THROUGHPUT_RATIO_MIN = 0.02
THROUGHPUT_RATIO_MAX = 2.0
# tokens/J per watt of one GPU's board power, about 10x the best measured (0.0352 tokens/J
# per W, gpt-oss-20b on B200).
TOKENS_PER_JOULE_PER_BOARD_WATT = 0.35


# --- the measurement file -----------------------------------------------------------------


NOTES_CAP = 200  # characters of serving.notes


class Serving(Strict):
    """Serving settings that distinguish configurations of the same model on the same GPUs."""

    max_num_seqs: PositiveInt = Field(description="Batch-size cap of the server.")
    tensor_parallel: PositiveInt = 1
    expert_parallel: PositiveInt = 1
    data_parallel: PositiveInt = 1
    notes: Annotated[str, Field(max_length=NOTES_CAP)] = ""
    # The load a serving benchmark offered (one configuration per level of a sweep):
    concurrency: PositiveInt | None = Field(
        default=None,
        description="Requests the load generator kept in flight (AIPerf "
        "--concurrency, benchmark_serving --max-concurrency); absent: not stated.",
    )
    request_rate_per_sec: PositiveFloat | None = Field(
        default=None,
        description="Requests per second the load generator sent (AIPerf "
        "--request-rate, benchmark_serving --request-rate); absent: not stated.",
    )


class TokenMetrics(Strict):
    """Steady-state metrics of an LLM or multimodal-LLM configuration."""

    energy_per_token_joules: PositiveFloat = Field(description="GPU energy per output token, J.")
    avg_power_watts: PositiveFloat = Field(
        description="Average power of all the GPUs together (their sum, not one GPU's), W."
    )
    output_throughput_tokens_per_sec: PositiveFloat
    energy_per_response_joules: PositiveFloat = Field(
        description="energy_per_token_joules x avg_output_len_tokens, J."
    )
    avg_output_len_tokens: PositiveFloat
    avg_batch_size: PositiveFloat | None = Field(
        default=None,
        description="Average running batch in steady state; absent when the "
        "run has no prometheus.json (the utilisation rule could not be checked).",
    )
    median_itl_ms: PositiveFloat = Field(description="Median inter-token latency, ms.")
    p90_itl_ms: PositiveFloat
    p95_itl_ms: PositiveFloat
    p99_itl_ms: PositiveFloat
    # Time to first token as the client saw it, ms: recorded, not ranked (optional).
    mean_ttft_ms: PositiveFloat | None = None
    median_ttft_ms: PositiveFloat | None = None
    p99_ttft_ms: PositiveFloat | None = None


class Histogram(Strict):
    """Output-length distribution: ``len(bin_edges_tokens) == len(counts) + 1``."""

    bin_edges_tokens: Annotated[list[float], Field(min_length=2, max_length=1001)]
    counts: Annotated[list[Annotated[int, Field(ge=0)]], Field(min_length=1, max_length=1000)]


class Measurement(Strict):
    """One measured configuration of a model on a task (one JSON file)."""

    schema_version: SchemaVersion = Field(description="Format version; bump on breaking changes.")
    kind: Literal["llm", "mllm"] = Field(description="Task family: text LLM or multimodal LLM.")
    task: str = Field(pattern=TASK_ID_PATTERN)
    model_id: str = Field(pattern=MODEL_ID_PATTERN)
    gpu_model: str = Field(pattern=GPU_ID_PATTERN)
    num_gpus: Annotated[int, Field(gt=0, le=1024)]
    weight_precision: Precision
    serving: Serving
    repeat: Annotated[int, Field(ge=1, le=100)] = Field(
        default=1,
        description="1 for the first published measurement of these settings; 2, 3, ... for "
        "repeat runs of the same configuration published separately.",
    )
    metrics: TokenMetrics
    output_length_distribution: Histogram | None = None
    provenance: Provenance


# --- the flat record ---------------------------------------------------------------------


@quick_pickle
@dataclass(frozen=True, slots=True)
class Configuration:
    """One validated configuration, flat. Derived metrics are properties (see metrics.py)."""

    source: str  # path of the file it came from, relative to the data folder
    task: str
    model_id: str
    gpu_model: str
    num_gpus: int
    weight_precision: str
    max_num_seqs: int
    tensor_parallel: int
    expert_parallel: int
    data_parallel: int
    repeat: int
    energy_per_token_joules: float
    avg_power_watts: float
    output_throughput_tokens_per_sec: float
    energy_per_response_joules: float
    avg_output_len_tokens: float
    avg_batch_size: float | None  # None: no prometheus.json
    median_itl_ms: float
    p90_itl_ms: float
    p95_itl_ms: float
    p99_itl_ms: float
    output_length_bin_edges_tokens: tuple[float, ...] = ()
    output_length_counts: tuple[int, ...] = ()
    provenance: Provenance | None = None  # where the measurement comes from (model pages)
    serving_notes: str = ""  # serving.notes, shown beside the parallelism on model pages
    # Repeat runs folded into this configuration (loading/repeats.py): how many, and the
    # files behind it in repeat order (empty for a single run).
    runs: int = 1
    run_sources: tuple[str, ...] = ()
    concurrency: int | None = None  # serving.concurrency: the load level, when stated
    request_rate_per_sec: float | None = None  # serving.request_rate_per_sec

    @property
    def load(self) -> tuple[int, float] | None:
        """The load a benchmark offered (concurrency, requests/s; 0 where not stated), or
        None when the measurement states none (the ML.ENERGY data's saturating load)."""
        if self.concurrency is None and self.request_rate_per_sec is None:
            return None
        return (self.concurrency or 0, self.request_rate_per_sec or 0.0)

    @property
    def load_text(self) -> str:
        """``concurrency 8``, ``2.5 requests/s``, both, or "" when no load is stated."""
        parts = [f"concurrency {self.concurrency}"] if self.concurrency else []
        if self.request_rate_per_sec:
            parts.append(f"{self.request_rate_per_sec:g} requests/s")
        return ", ".join(parts)

    @property
    def tokens_per_joule(self) -> float:
        return metrics.tokens_per_joule(self.energy_per_token_joules)

    @property
    def energy_per_output_joules(self) -> float:
        """Energy per unit of output (here a token), J: what rankings minimise by default."""
        return self.energy_per_token_joules

    def latency_ms(self, percentile: Percentile) -> float:
        """The latency a deadline applies to: inter-token latency at ``percentile``."""
        return self.itl_ms(percentile)

    def tie_break(self) -> tuple[int | str, ...]:
        """The last keys of the ranking order (see rank.py)."""
        return (
            self.max_num_seqs,
            self.tensor_parallel,
            self.expert_parallel,
            self.data_parallel,
            self.weight_precision,
            self.repeat,
            self.source,
        )

    def itl_ms(self, percentile: Percentile) -> float:
        """Inter-token latency at ``percentile`` (p50 is the median), ms."""
        if percentile == "p50":
            return self.median_itl_ms
        value: float = getattr(self, f"{percentile}_itl_ms")
        return value

    @property
    def identity(self) -> tuple[object, ...]:
        """What makes two measurements the same configuration (duplicates are rejected): the
        load level is part of it where one is stated (a sweep is one configuration per
        level), and absent otherwise, so identities without one are as they always were."""
        base = (
            self.task,
            self.model_id,
            self.gpu_model,
            self.num_gpus,
            self.weight_precision,
            self.max_num_seqs,
            self.tensor_parallel,
            self.expert_parallel,
            self.data_parallel,
            self.repeat,
        )
        return base if self.load is None else (*base, self.load)

    @classmethod
    def from_measurement(cls, m: Measurement, source: str) -> Configuration:
        s, x, h = m.serving, m.metrics, m.output_length_distribution
        return cls(
            source=source,
            task=m.task,
            model_id=m.model_id,
            gpu_model=m.gpu_model,
            num_gpus=m.num_gpus,
            weight_precision=m.weight_precision,
            max_num_seqs=s.max_num_seqs,
            tensor_parallel=s.tensor_parallel,
            expert_parallel=s.expert_parallel,
            data_parallel=s.data_parallel,
            repeat=m.repeat,
            energy_per_token_joules=x.energy_per_token_joules,
            avg_power_watts=x.avg_power_watts,
            output_throughput_tokens_per_sec=x.output_throughput_tokens_per_sec,
            energy_per_response_joules=x.energy_per_response_joules,
            avg_output_len_tokens=x.avg_output_len_tokens,
            avg_batch_size=x.avg_batch_size,
            median_itl_ms=x.median_itl_ms,
            p90_itl_ms=x.p90_itl_ms,
            p95_itl_ms=x.p95_itl_ms,
            p99_itl_ms=x.p99_itl_ms,
            output_length_bin_edges_tokens=tuple(h.bin_edges_tokens) if h else (),
            output_length_counts=tuple(h.counts) if h else (),
            provenance=m.provenance,
            serving_notes=s.notes,
            concurrency=s.concurrency,
            request_rate_per_sec=s.request_rate_per_sec,
        )


# --- physical checks ---------------------------------------------------------------------


def throughput_problems(m: Measurement, shown: str) -> list[Problem]:
    """Output throughput must be near avg_batch_size / median ITL (bounds.throughput-
    inconsistent): a scaled throughput with a matching J/token passes every other rule."""
    x = m.metrics
    if x.avg_batch_size is None:  # a raw run without prometheus.json: nothing to tie it to
        return []
    implied = metrics.decode_throughput(x.avg_batch_size, x.median_itl_ms)
    ratio = x.output_throughput_tokens_per_sec / implied
    if THROUGHPUT_RATIO_MIN <= ratio <= THROUGHPUT_RATIO_MAX:
        return []
    return [
        Problem(
            shown,
            "/metrics/output_throughput_tokens_per_sec",
            "bounds.throughput-inconsistent",
            f"{x.output_throughput_tokens_per_sec:g} tokens/s is {ratio:.3g} x the "
            f"avg_batch_size / median ITL rate ({x.avg_batch_size:g} / {x.median_itl_ms:g} ms = "
            f"{implied:g} tokens/s)",
            f"the ratio must lie between {THROUGHPUT_RATIO_MIN:g} and {THROUGHPUT_RATIO_MAX:g}; "
            "check the units of throughput (tokens/s), batch size and ITL (ms)",
        )
    ]


def token_ceiling_problems(m: Measurement, shown: str, registry: Registry) -> list[Problem]:
    """tokens/J at most TOKENS_PER_JOULE_PER_BOARD_WATT x one GPU's board power."""
    gpu = registry.gpus.get(m.gpu_model)
    if gpu is None:
        return []
    ceiling = TOKENS_PER_JOULE_PER_BOARD_WATT * gpu.board_power_watts
    return ceiling_problem(
        shown,
        "/metrics/energy_per_token_joules",
        metrics.tokens_per_joule(m.metrics.energy_per_token_joules),
        ceiling,
        "tokens/J",
        f"{TOKENS_PER_JOULE_PER_BOARD_WATT:g} tokens/J per W of {m.gpu_model}'s "
        f"{gpu.board_power_watts:g} W board power, 10x the best measured",
    )


def check_physics(m: Measurement, shown: str, registry: Registry) -> list[Problem]:
    """Physical sanity bounds (docs/metrics.md): power, latency, linked metrics."""
    x, problems = m.metrics, []

    def add(where: str, rule: str, message: str, hint: str) -> None:
        problems.append(Problem(shown, where, rule, message, hint))

    problems += power_problems(m, shown, registry)
    percentiles = [
        ("median_itl_ms", x.median_itl_ms),
        ("p90_itl_ms", x.p90_itl_ms),
        ("p95_itl_ms", x.p95_itl_ms),
        ("p99_itl_ms", x.p99_itl_ms),
    ]
    for (lo_name, lo), (hi_name, hi) in itertools.pairwise(percentiles):
        if lo > hi:
            add(
                f"/metrics/{hi_name}",
                "bounds.percentile-order",
                f"{hi_name} ({hi:g}) is below {lo_name} ({lo:g})",
                "percentiles must satisfy median <= p90 <= p95 <= p99",
            )
    ttft = (x.median_ttft_ms, x.p99_ttft_ms)
    if ttft[0] is not None and ttft[1] is not None and ttft[0] > ttft[1]:
        add(
            "/metrics/p99_ttft_ms",
            "bounds.percentile-order",
            f"p99_ttft_ms ({ttft[1]:g}) is below median_ttft_ms ({ttft[0]:g})",
            "percentiles must satisfy median <= p99",
        )
    if x.median_itl_ms < MIN_MEDIAN_ITL_MS:
        add(
            "/metrics/median_itl_ms",
            "bounds.itl-implausible",
            f"median ITL of {x.median_itl_ms:g} ms is implausibly fast",
            "ITL fields are in milliseconds; was it given in seconds?",
        )
    for name, value in percentiles:
        if value > MAX_ITL_MS:
            add(
                f"/metrics/{name}",
                "bounds.itl-implausible",
                f"{value:g} ms per token is implausibly slow",
                "ITL fields are in milliseconds; was it given in microseconds?",
            )
    implied = x.avg_power_watts / x.output_throughput_tokens_per_sec
    if inconsistent(x.energy_per_token_joules, implied):
        add(
            "/metrics/energy_per_token_joules",
            "bounds.energy-inconsistent",
            f"{x.energy_per_token_joules:g} J/token but avg_power_watts / "
            f"output_throughput_tokens_per_sec = {implied:g}",
            f"the three must agree within {CONSISTENCY_TOLERANCE:.0%}; check units (J, W, "
            "tokens/s)",
        )
    problems += throughput_problems(m, shown) + token_ceiling_problems(m, shown, registry)
    response = metrics.energy_per_response(x.energy_per_token_joules, x.avg_output_len_tokens)
    if inconsistent(x.energy_per_response_joules, response):
        add(
            "/metrics/energy_per_response_joules",
            "bounds.response-energy-inconsistent",
            f"{x.energy_per_response_joules:g} J but energy_per_token_joules x "
            f"avg_output_len_tokens = {response:g}",
            f"the three must agree within {CONSISTENCY_TOLERANCE:.0%}",
        )
    if x.avg_batch_size is not None and x.avg_batch_size > m.serving.max_num_seqs * BATCH_MARGIN:
        add(
            "/metrics/avg_batch_size",
            "bounds.batch-above-cap",
            f"average batch {x.avg_batch_size:g} exceeds max_num_seqs {m.serving.max_num_seqs}",
            "check max_num_seqs and avg_batch_size",
        )
    s = m.serving
    if s.tensor_parallel * s.data_parallel > m.num_gpus or s.expert_parallel > m.num_gpus:
        add(
            "/serving",
            "bounds.parallelism-exceeds-gpus",
            f"tensor x data parallel ({s.tensor_parallel} x {s.data_parallel}) or expert "
            f"parallel ({s.expert_parallel}) exceeds num_gpus ({m.num_gpus})",
            "parallel degrees must fit on the configuration's GPUs",
        )
    h = m.output_length_distribution
    if h is not None and (
        len(h.bin_edges_tokens) != len(h.counts) + 1
        or any(a >= b for a, b in zip(h.bin_edges_tokens, h.bin_edges_tokens[1:], strict=False))
    ):
        add(
            "/output_length_distribution",
            "value.histogram-shape",
            "bin_edges_tokens must be increasing and one longer than counts",
            "give n+1 increasing edges for n counts",
        )
    return problems
