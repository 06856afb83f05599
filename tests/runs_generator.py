"""Realistic ML.ENERGY Benchmark v3 run directories, written for tests and benchmarks.

No raw run is published openly, so tests make their own (shared docs/raw-run-format.md):
``write_run(root, RunSpec(...))`` writes
``root/run/{kind}/{task}/results/{org}/{model}/{gpu}/{params}/`` with results.json,
prometheus.json (unless ``avg_batch_fraction`` is None), driver.log and server.log.

The numbers agree with each other the way a real run's do: energy per token = power /
throughput, steady energy = power x window, completed = successful requests. Requests carry
streamed ITL with chunked zeros (and leading zeros now and then), failed requests, and prompt
and output text with quotes, newlines and non-ASCII. results.json is written one request at a
time, so a file of hundreds of MB never sits in memory.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

DELETE = object()  # in RunSpec.top_overrides: leave the field out of results.json
_WORDS = ("the", "energy", "token", "\"quoted\"", "GPU", "naïve", "résumé", "→", "batch",
          "latency\n", "joule", "model", "answer:", "\\path", "step", "Ω")


@dataclass(frozen=True)
class RunSpec:
    model_id: str = "acme/tiny-1b"
    task: str = "chat"
    kind: str = "llm"
    gpu_model: str = "H100"
    num_gpus: int = 1
    max_num_seqs: int = 64
    extra_params: tuple[tuple[str, str], ...] = (("seed", "48"),)
    folder_name: str | None = None  # the runtime-params folder, instead of the generated one
    # generated requests
    num_requests: int = 40
    output_len_range: tuple[int, int] = (20, 120)
    itl_s: float = 0.02  # typical gap between chunks
    chunk_probability: float = 0.15  # a token arrives in the chunk of the previous one
    leading_zeros_every: int = 7  # every n-th request starts with zeros (0: never)
    failed_every: int = 0  # every n-th request fails (0: never)
    text_chars: int = 300  # prompt and output text of each request, each
    requests: Sequence[Mapping[str, Any]] | None = None  # hand-made requests instead
    # run-level numbers
    steady_state_duration_s: float = 60.0
    avg_power_watts: float = 500.0
    throughput_tokens_per_sec: float = 5000.0
    avg_batch_fraction: float | None = 0.95  # avg batch / max_num_seqs; None: no prometheus
    top_overrides: Mapping[str, Any] = field(default_factory=dict)
    prometheus_overrides: Mapping[str, Any] | None = None  # steady_state_stats, replaced
    results_first: bool = False  # write "results" before the scalars
    seed: int = 0

    @property
    def params_folder(self) -> str:
        if self.folder_name is not None:
            return self.folder_name
        pairs = [("num_gpus", str(self.num_gpus)), ("max_num_seqs", str(self.max_num_seqs)),
                 *self.extra_params]
        return "+".join(f"{k}+{v}" for k, v in pairs)

    def run_dir(self, root: Path) -> Path:
        org, model = self.model_id.split("/")
        return (root / "run" / self.kind / self.task / "results" / org / model / self.gpu_model
                / self.params_folder)


def text(rng: random.Random, chars: int) -> str:
    """Prose-like text of ``chars`` characters (JSON escapes and non-ASCII included)."""
    phrase = " ".join(rng.choice(_WORDS) for _ in range(64)) + " "
    return (phrase * (chars // len(phrase) + 1))[:chars]


def streamed_itl(rng: random.Random, tokens: int, typical_s: float, chunk_probability: float,
                 leading_zeros: int) -> list[float]:
    """One gap per token after the first: chunk gaps around ``typical_s``, zeros for tokens
    that came in the same chunk, optionally ``leading_zeros`` zeros first."""
    leading = min(leading_zeros, max(tokens - 1, 0))
    gaps = [0.0] * leading
    while len(gaps) < tokens - 1:
        if len(gaps) > leading and rng.random() < chunk_probability:
            gaps.append(0.0)
        else:
            gaps.append(typical_s * rng.lognormvariate(0.0, 0.5))
    return gaps


def generated_requests(spec: RunSpec) -> Iterator[dict[str, Any]]:
    rng = random.Random(spec.seed)
    lo, hi = spec.output_len_range
    for i in range(spec.num_requests):
        failed = spec.failed_every > 0 and i % spec.failed_every == spec.failed_every - 1
        tokens = rng.randint(lo, hi)
        leading = 2 if spec.leading_zeros_every and i % spec.leading_zeros_every == 0 else 0
        itl = streamed_itl(rng, tokens, spec.itl_s, spec.chunk_probability, leading)
        if failed:  # a failed request stops early; its gaps (huge here) must not count
            itl = [5.0 + g for g in itl[: tokens // 3]]
        ttft = 0.05 + rng.random() * 0.2
        yield {
            "input_len": rng.randint(50, 500),
            "output_len": 0 if failed else tokens,
            "ttft": ttft,
            "itl": itl,
            "latency": ttft + sum(itl),
            "energy": 0.1 * tokens,
            "success": not failed,
            "error": "Server disconnected" if failed else "",
            "prompt": text(rng, spec.text_chars),
            "output": text(rng, spec.text_chars),
        }


def completed_requests(spec: RunSpec) -> list[dict[str, Any]] | None:
    """Hand-made requests with the fields a test left out filled in."""
    if spec.requests is None:
        return None
    out = []
    for req in spec.requests:
        itl = req.get("itl", [])
        numbers = [g for g in itl if isinstance(g, float | int)] if isinstance(itl, list) else []
        out.append({"input_len": 100, "output_len": len(numbers) + 1, "ttft": 0.1,
                    "latency": 0.1 + sum(numbers), "energy": 1.0, "success": True, "error": "",
                    "prompt": "hand-made prompt", "output": "hand-made output", **req})
    return out


def _results_scalars(spec: RunSpec, completed: int, output_tokens: int) -> dict[str, Any]:
    energy_per_token = spec.avg_power_watts / spec.throughput_tokens_per_sec
    energy = spec.avg_power_watts * spec.steady_state_duration_s
    scalars: dict[str, Any] = {
        "model_id": spec.model_id, "gpu_model": spec.gpu_model, "num_gpus": spec.num_gpus,
        "max_num_seqs": spec.max_num_seqs, "num_prompts": spec.num_requests,
        "completed": completed, "duration": spec.steady_state_duration_s * 1.4,
        "steady_state_duration": spec.steady_state_duration_s,
        "steady_state_energy": energy, "steady_state_energy_per_token": energy_per_token,
        "output_throughput": spec.throughput_tokens_per_sec * 0.9,
        "total_output_tokens": output_tokens,
        "steady_state_measurement": {
            "gpu_energy": {str(g): energy / spec.num_gpus for g in range(spec.num_gpus)},
            "gpu_temperature": {str(g): 61.5 for g in range(spec.num_gpus)},
        },
    }
    for key, value in spec.top_overrides.items():
        if value is DELETE:
            scalars.pop(key, None)
        else:
            scalars[key] = value
    return scalars


def _write_results(f: TextIO, spec: RunSpec, scalars: dict[str, Any],
                   requests: Iterator[dict[str, Any]]) -> None:
    body = ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in scalars.items()
                     if k != "results")

    def write_requests() -> None:
        if "results" in scalars:  # an override replaced the list (with a wrong type, say)
            f.write('"results": ' + json.dumps(scalars["results"]))
            return
        f.write('"results": [')
        for i, req in enumerate(requests):
            f.write((",\n" if i else "\n") + json.dumps(req, ensure_ascii=False))
        f.write("]")

    with_requests = "results" in scalars or "results" not in spec.top_overrides
    f.write("{")
    if not spec.results_first and body:
        f.write(body + (", " if with_requests else ""))
    if with_requests:
        write_requests()
    if spec.results_first and body:
        f.write((", " if with_requests else "") + body)
    f.write("}\n")


def write_run(root: Path, spec: RunSpec) -> Path:
    """Write the run directory of ``spec`` below ``root``; return it."""
    run_dir = spec.run_dir(root)
    run_dir.mkdir(parents=True, exist_ok=True)
    hand_made = completed_requests(spec)
    # Totals need one pass over the requests before the file is written: generate twice
    # (seeded, so identically) rather than hold them.
    source = (lambda: iter(hand_made)) if hand_made is not None else \
        (lambda: generated_requests(spec))
    completed = output_tokens = 0
    for req in source():
        if req.get("success") is True:
            completed += 1
            output_tokens += int(req.get("output_len", 0))
    scalars = _results_scalars(spec, completed, output_tokens)
    with (run_dir / "results.json").open("w", encoding="utf-8") as f:
        _write_results(f, spec, scalars, source())
    if spec.avg_batch_fraction is not None:
        write_prometheus(run_dir, spec)
    (run_dir / "driver.log").write_text("INFO benchmark finished\n", encoding="utf-8")
    (run_dir / "server.log").write_text("INFO vLLM server ready\n", encoding="utf-8")
    return run_dir


def write_prometheus(run_dir: Path, spec: RunSpec) -> None:
    assert spec.avg_batch_fraction is not None
    avg_batch = spec.avg_batch_fraction * spec.max_num_seqs
    stats: Mapping[str, Any] = spec.prometheus_overrides if spec.prometheus_overrides \
        is not None else {"vllm:num_requests_running": avg_batch,
                          "vllm:num_requests_waiting": 3.0, "vllm:kv_cache_usage_perc": 0.42}
    snapshot = ("# HELP vllm:num_requests_running Number of requests in model execution.\n"
                "# TYPE vllm:num_requests_running gauge\n"
                f'vllm:num_requests_running{{model_name="{spec.model_id}"}} {avg_batch}\n')
    doc = {"collection_interval": 1.0, "steady_state_start_time": 1000.0,
           "steady_state_end_time": 1000.0 + spec.steady_state_duration_s,
           "timeline": [{"timestamp": 1000.0 + t, "metrics": snapshot} for t in range(5)],
           "steady_state_stats": stats}
    (run_dir / "prometheus.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
