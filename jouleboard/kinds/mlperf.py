"""MLPerf Inference power results: tasks that rank systems, not models.

In an MLPerf benchmark the model and the data are fixed and the submitted systems (hardware
and software stack) compete, so a benchmark page ranks one row per result, not each model's
best configuration under a deadline. A result's energy is the whole system at the wall
(power supplies, host CPUs, memory, fans and the accelerators) as an external analyzer
measures it, a different boundary from the GPU counters of token and diffusion tasks: the
two are never ranked together (docs/measurement-format.md, "Measurement boundary").

One JSON file per result in the data folder's ``mlperf/`` (written by ``jouleboard
import-mlperf``). The figures MLCommons publishes are throughput and average power; tokens
(or samples) per joule are derived here, and every page that shows one says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

from jouleboard.config.registry import Registry
from jouleboard.config.schema import (
    GPU_ID_PATTERN,
    HTTPS_URL_PATTERN,
    MODEL_ID_PATTERN,
    PositiveFloat,
    Provenance,
    SchemaVersion,
    ShortText,
    Strict,
    VisibleText,
)
from jouleboard.core.problems import Problem, pointer
from jouleboard.measure.formats import brief

MLPERF_DIR = "mlperf"  # in the data folder
SYSTEM_AC_INSTRUMENT = "SPEC PTDaemon power analyzer"
# Whole-system power per accelerator: below 50 W the file holds kW or a wrong count; above
# 5 kW per accelerator no server draws it (8x B200 systems draw about 1.3 kW per B200).
MIN_WATTS_PER_ACCELERATOR = 50.0
MAX_WATTS_PER_ACCELERATOR = 5000.0

Scenario = Literal["Offline", "Server"]
SCENARIOS: tuple[Scenario, ...] = ("Server", "Offline")
Output = Literal["token", "sample", "image"]


@dataclass(frozen=True, slots=True)
class Workload:
    """An MLPerf workload: what its results count and which model it runs."""

    name: str  # "Llama 2 70B"
    model_id: str  # the model as Hugging Face names it (a models.yaml id where registered)
    output: Output  # what throughput counts: tokens, samples (gptj), images
    data: str  # what it is asked: "OpenOrca questions"


# The workloads jouleboard's task kinds cover (LLM text generation and text-to-image). A
# benchmark is a workload with an optional accuracy target: llama2-70b-99, llama2-70b-99.9.
WORKLOADS: dict[str, Workload] = {
    "llama2-70b": Workload(
        "Llama 2 70B Chat", "meta-llama/Llama-2-70b-chat-hf", "token", "OpenOrca questions"
    ),
    "llama3.1-8b": Workload(
        "Llama 3.1 8B Instruct",
        "meta-llama/Llama-3.1-8B-Instruct",
        "token",
        "CNN/DailyMail summarisation",
    ),
    "llama3.1-405b": Workload(
        "Llama 3.1 405B Instruct",
        "meta-llama/Llama-3.1-405B-Instruct",
        "token",
        "long-context question answering, summarisation and code",
    ),
    "mixtral-8x7b": Workload(
        "Mixtral 8x7B Instruct",
        "mistralai/Mixtral-8x7B-Instruct-v0.1",
        "token",
        "OpenOrca, GSM8K and MBPP",
    ),
    "gptj": Workload("GPT-J 6B", "EleutherAI/gpt-j-6b", "sample", "CNN/DailyMail summarisation"),
    "stable-diffusion-xl": Workload(
        "Stable Diffusion XL",
        "stabilityai/stable-diffusion-xl-base-1.0",
        "image",
        "COCO 2014 captions",
    ),
}
BENCHMARK_PATTERN = r"^[a-z0-9][a-z0-9.-]{0,47}$"
ROUND_PATTERN = r"^v[0-9]{1,2}\.[0-9]{1,2}$"
# "5.1-0061"; v4.1's summary writes "v4.1-0049".
RESULT_ID_PATTERN = r"^(v?[0-9]{1,2}\.[0-9]{1,2}-[0-9]{4})?$"
# A submitter is a folder of mlperf/<round>/: one path segment of safe characters (not "",
# "..", "Evil/Nested"); a system's id is one already.
SUBMITTER_PATTERN = r"^[A-Za-z0-9](?:[A-Za-z0-9._+ -]{0,98}[A-Za-z0-9._+-])?$"


def workload_of(benchmark: str) -> tuple[str, str] | None:
    """(workload, accuracy target) of a benchmark name: ("llama2-70b", "99.9") for
    llama2-70b-99.9, ("gptj", "99") for gptj-99, ("llama3.1-8b", "") for llama3.1-8b."""
    for suffix in ("-99.9", "-99"):
        if benchmark.endswith(suffix) and benchmark[: -len(suffix)] in WORKLOADS:
            return benchmark[: -len(suffix)], suffix[1:]
    return (benchmark, "") if benchmark in WORKLOADS else None


# --- the result file -----------------------------------------------------------------------


class ServerLatency(Strict):
    """A Server result's 99th-percentile latencies and the constraints it had to meet, ms.
    Token workloads: time to first token and time per output token; sample workloads:
    the whole query."""

    ttft_p99_ms: PositiveFloat | None = None
    tpot_p99_ms: PositiveFloat | None = None
    query_p99_ms: PositiveFloat | None = None
    ttft_limit_ms: PositiveFloat | None = None
    tpot_limit_ms: PositiveFloat | None = None
    query_limit_ms: PositiveFloat | None = None


class System(Strict):
    """The submitted system, from systems/<system>.json."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}$", description="Folder name.")
    name: VisibleText
    accelerator: VisibleText = Field(description='As MLCommons names it: "NVIDIA B200-SXM-180GB".')
    gpu_model: str | None = Field(
        default=None,
        pattern=GPU_ID_PATTERN,
        description="The gpus.yaml id of the accelerator, where registered.",
    )
    accelerators: Annotated[int, Field(gt=0, le=100_000)]
    nodes: Annotated[int, Field(gt=0, le=10_000)] = 1
    host: ShortText = ""  # "2x Intel(R) Xeon(R) Platinum 8568Y+"
    software: ShortText = ""
    power_settings: ShortText = ""  # hw_notes and power_management: "B200 TGP 1000W"
    cooling: ShortText = ""


class Result(Strict):
    """One MLPerf Inference power result (one JSON file in mlperf/)."""

    schema_version: SchemaVersion
    kind: Literal["mlperf"]
    round: str = Field(pattern=ROUND_PATTERN, description='The round: "v5.1".')
    division: Literal["closed", "open"]
    availability: ShortText = ""  # available, preview, rdi
    submitter: str = Field(
        pattern=SUBMITTER_PATTERN,
        description="As MLCommons names it (a folder name: letters, digits, . _ + - and inner "
        "spaces).",
    )
    result_id: str = Field(
        default="",
        pattern=RESULT_ID_PATTERN,
        description='MLCommons\' result ID ("5.1-0061", "v4.1-0049"), where the round\'s summary '
        "gives it.",
    )
    benchmark: str = Field(pattern=BENCHMARK_PATTERN, description='"llama2-70b-99".')
    scenario: Scenario
    model_id: str = Field(pattern=MODEL_ID_PATTERN)
    system: System
    throughput_per_sec: PositiveFloat = Field(
        description="Tokens/s (token workloads) or samples/s, as MLCommons reports it."
    )
    avg_power_watts: PositiveFloat = Field(description="Average wall power over the run, W.")
    power_samples: Annotated[int, Field(gt=0)] | None = Field(
        default=None, description="Analyzer samples in the power window (raw logs only)."
    )
    latency: ServerLatency | None = None
    accuracy: ShortText = ""
    result_url: str = Field(pattern=HTTPS_URL_PATTERN, description="The result's folder.")
    provenance: Provenance

    @property
    def unique_id(self) -> str:
        """MLCommons' Unique ID of the system: datacenter/closed/Lenovo/SR680a_V3_B200SXMx8_TRT."""
        return f"datacenter/{self.division}/{self.submitter}/{self.system.id}"


# --- the flat record ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SystemResult:
    """A validated result and the file it came from."""

    source: str  # relative to the data folder
    result: Result

    @property
    def workload(self) -> Workload:
        found = workload_of(self.result.benchmark)
        assert found is not None  # checked on load
        return WORKLOADS[found[0]]

    @property
    def output(self) -> Output:
        return self.workload.output

    @property
    def per_joule(self) -> float:
        """Derived: outputs (tokens, samples, images) per joule = throughput / power."""
        return self.result.throughput_per_sec / self.result.avg_power_watts

    @property
    def joules_per_output(self) -> float:
        """Derived: joules per output = power / throughput."""
        return self.result.avg_power_watts / self.result.throughput_per_sec

    @property
    def system_key(self) -> tuple[str, str, str, str]:
        """One submitted system and software stack."""
        r = self.result
        return (r.round, r.submitter, r.system.id, r.system.software)

    @property
    def reference(self) -> str:
        """What a derived figure cites: the result ID, else the system's Unique ID."""
        r = self.result
        return f"result {r.result_id}" if r.result_id else f"Unique ID {r.unique_id}"

    @property
    def attribution(self) -> str:
        """The words every derived figure stands beside (as MLCommons asks)."""
        return (
            f"Derived from MLPerf Inference {self.result.round} {self.reference}; "
            "not verified by MLCommons."
        )


def check(r: Result, shown: str, registry: Registry) -> list[Problem]:
    """A schema-valid result's own rules (docs/measurement-format.md, "MLPerf results")."""
    problems = []

    def problem(where: tuple[str | int, ...], rule: str, message: str, hint: str) -> None:
        problems.append(Problem(shown, pointer(*where), rule, message, hint))

    found = workload_of(r.benchmark)
    if found is None:
        problem(
            ("benchmark",),
            "mlperf.unknown-benchmark",
            f"benchmark {r.benchmark!r} is not one jouleboard ranks",
            f"known workloads: {', '.join(WORKLOADS)} (with -99 or -99.9 where MLPerf has "
            "two accuracy targets)",
        )
    elif WORKLOADS[found[0]].model_id != r.model_id:
        problem(
            ("model_id",),
            "mlperf.wrong-model",
            f"{r.benchmark} runs {WORKLOADS[found[0]].model_id}, not {r.model_id}",
            "the model of an MLPerf benchmark is fixed: use its id",
        )
    if r.provenance.boundary != "system-ac":
        problem(
            ("provenance", "boundary"),
            "mlperf.boundary",
            f"MLPerf power is measured at the wall, not {r.provenance.boundary!r}",
            'set provenance.boundary to "system-ac"',
        )
    gpu = r.system.gpu_model
    if gpu is not None and gpu not in registry.gpus:
        problem(
            ("system", "gpu_model"),
            "registry.unknown-gpu",
            f"GPU {gpu!r} is not in gpus.yaml",
            "add it to gpus.yaml, or leave gpu_model out",
        )
    per = r.avg_power_watts / r.system.accelerators
    if not MIN_WATTS_PER_ACCELERATOR <= per <= MAX_WATTS_PER_ACCELERATOR:
        problem(
            ("avg_power_watts",),
            "mlperf.power-out-of-range",
            f"{brief(r.avg_power_watts)} W for {r.system.accelerators} accelerators is "
            f"{brief(per)} W each, outside {MIN_WATTS_PER_ACCELERATOR:g}–"
            f"{MAX_WATTS_PER_ACCELERATOR:g} W",
            "give the average wall power of the whole system in watts",
        )
    lat = r.latency
    if r.scenario == "Offline" and lat is not None:
        problem(
            ("latency",),
            "mlperf.offline-latency",
            "an Offline result has no latency constraint",
            "leave latency out of Offline results",
        )
    if lat is not None:
        for measured, limit in (("ttft", "ttft"), ("tpot", "tpot"), ("query", "query")):
            value = getattr(lat, f"{measured}_p99_ms")
            bound = getattr(lat, f"{limit}_limit_ms")
            if value is not None and bound is not None and value > bound:
                problem(
                    ("latency", f"{measured}_p99_ms"),
                    "mlperf.constraint-missed",
                    f"p99 {measured.upper()} {brief(value)} ms is over its limit "
                    f"{brief(bound)} ms: the result is not valid",
                    "import valid results only",
                )
    return problems
