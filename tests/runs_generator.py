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
_WORDS = (
    "the",
    "energy",
    "token",
    '"quoted"',
    "GPU",
    "naïve",
    "résumé",
    "→",
    "batch",
    "latency\n",
    "joule",
    "model",
    "answer:",
    "\\path",
    "step",
    "Ω",
)


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
    # None: what the batch and gap allow (0.8 x avg batch / itl_s), as in a real run
    throughput_tokens_per_sec: float | None = None
    avg_batch_fraction: float | None = 0.95  # avg batch / max_num_seqs; None: no prometheus
    top_overrides: Mapping[str, Any] = field(default_factory=dict)
    prometheus_overrides: Mapping[str, Any] | None = None  # steady_state_stats, replaced
    results_first: bool = False  # write "results" before the scalars
    seed: int = 0

    @property
    def params_folder(self) -> str:
        if self.folder_name is not None:
            return self.folder_name
        pairs = [
            ("num_gpus", str(self.num_gpus)),
            ("max_num_seqs", str(self.max_num_seqs)),
            *self.extra_params,
        ]
        return "+".join(f"{k}+{v}" for k, v in pairs)

    @property
    def throughput(self) -> float:
        """Output tokens/s of the steady window."""
        if self.throughput_tokens_per_sec is not None:
            return self.throughput_tokens_per_sec
        return 0.8 * (self.avg_batch_fraction or 0.95) * self.max_num_seqs / self.itl_s

    def run_dir(self, root: Path) -> Path:
        org, model = self.model_id.split("/")
        return (
            root
            / "run"
            / self.kind
            / self.task
            / "results"
            / org
            / model
            / self.gpu_model
            / self.params_folder
        )


def text(rng: random.Random, chars: int) -> str:
    """Prose-like text of ``chars`` characters (JSON escapes and non-ASCII included)."""
    phrase = " ".join(rng.choice(_WORDS) for _ in range(64)) + " "
    return (phrase * (chars // len(phrase) + 1))[:chars]


def streamed_itl(
    rng: random.Random, tokens: int, typical_s: float, chunk_probability: float, leading_zeros: int
) -> list[float]:
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
        out.append(
            {
                "input_len": 100,
                "output_len": len(numbers) + 1,
                "ttft": 0.1,
                "latency": 0.1 + sum(numbers),
                "energy": 1.0,
                "success": True,
                "error": "",
                "prompt": "hand-made prompt",
                "output": "hand-made output",
                **req,
            }
        )
    return out


def _results_scalars(spec: RunSpec, completed: int, output_tokens: int) -> dict[str, Any]:
    energy_per_token = spec.avg_power_watts / spec.throughput
    energy = spec.avg_power_watts * spec.steady_state_duration_s
    scalars: dict[str, Any] = {
        "model_id": spec.model_id,
        "gpu_model": spec.gpu_model,
        "num_gpus": spec.num_gpus,
        "max_num_seqs": spec.max_num_seqs,
        "num_prompts": spec.num_requests,
        "completed": completed,
        "duration": spec.steady_state_duration_s * 1.4,
        "steady_state_duration": spec.steady_state_duration_s,
        "steady_state_energy": energy,
        "steady_state_energy_per_token": energy_per_token,
        "output_throughput": spec.throughput * 0.9,
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


def _write_results(
    f: TextIO, spec: RunSpec, scalars: dict[str, Any], requests: Iterator[dict[str, Any]]
) -> None:
    body = ", ".join(
        f"{json.dumps(k)}: {json.dumps(v)}" for k, v in scalars.items() if k != "results"
    )

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


HOLD_BYTES = 16 * 1024 * 1024  # of generated requests held in memory, estimated by _size


def _size(spec: RunSpec) -> int:
    """About how many bytes ``spec``'s generated requests take in memory at most."""
    per_request = 2 * spec.text_chars + 32 * spec.output_len_range[1] + 1024
    return spec.num_requests * per_request


def write_run(root: Path, spec: RunSpec) -> Path:
    """Write the run directory of ``spec`` below ``root``; return it."""
    run_dir = spec.run_dir(root)
    run_dir.mkdir(parents=True, exist_ok=True)
    # Totals need one pass over the requests before the file is written. A run small enough
    # to hold (a test's) is generated once; a larger one (a benchmark's) is generated twice,
    # seeded so identically, rather than held.
    held = completed_requests(spec)
    if held is None and _size(spec) <= HOLD_BYTES:
        held = list(generated_requests(spec))
    source = (lambda: iter(held)) if held is not None else (lambda: generated_requests(spec))
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
    stats: Mapping[str, Any] = (
        spec.prometheus_overrides
        if spec.prometheus_overrides is not None
        else {
            "vllm:num_requests_running": avg_batch,
            "vllm:num_requests_waiting": 3.0,
            "vllm:kv_cache_usage_perc": 0.42,
        }
    )
    snapshot = (
        "# HELP vllm:num_requests_running Number of requests in model execution.\n"
        "# TYPE vllm:num_requests_running gauge\n"
        f'vllm:num_requests_running{{model_name="{spec.model_id}"}} {avg_batch}\n'
    )
    doc = {
        "collection_interval": 1.0,
        "steady_state_start_time": 1000.0,
        "steady_state_end_time": 1000.0 + spec.steady_state_duration_s,
        "timeline": [{"timestamp": 1000.0 + t, "metrics": snapshot} for t in range(5)],
        "steady_state_stats": stats,
    }
    (run_dir / "prometheus.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")


# --- the toolkit's benchmark root: llm/{gpu}/current/..., diffusion/{gpu}/current/, configs/ ---


def benchmark_llm_base(root: Path, spec: RunSpec, snapshot: str = "current") -> Path:
    """The folder that holds ``run/`` for ``spec`` in a benchmark root."""
    return root / "llm" / spec.gpu_model.lower() / snapshot


def write_model_info(
    root: Path, engine: str, task: str, model_id: str, info: Mapping[str, Any]
) -> Path:
    """configs/{engine}/{task}/{model_id}/model_info.json (engine: vllm or xdit)."""
    path = root / "configs" / engine / task / model_id / "model_info.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dict(info), indent=1), encoding="utf-8")
    return path


def write_monolithic(
    root: Path, task: str, model_id: str, gpu_model: str, settings: Mapping[str, Any]
) -> Path:
    """configs/vllm/{task}/{model_id}/{gpu_model}/monolithic.config.yaml (vLLM flags)."""
    path = root / "configs" / "vllm" / task / model_id / gpu_model / "monolithic.config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"{k}: {json.dumps(v)}" for k, v in settings.items()]
    path.write_text(
        "# vLLM server flags\nmax-model-len: 32768\n" + "\n".join(lines) + "\n", encoding="utf-8"
    )
    return path


@dataclass(frozen=True)
class DiffusionSpec:
    """One raw diffusion run: ``diffusion/{gpu}/current/run/diffusion/{task}/{org}/{model}/
    {config}/results.json``; the config folder is ``batch-B+size-HxW+steps-S+uly-U+ring-R+tc-X``
    unless ``folder_name`` is given."""

    model_id: str = "acme/painter-2b"
    task: str = "text-to-image"
    gpu_model: str = "H100"
    batch_size: int = 4
    height: int = 1024
    width: int = 1024
    steps: int = 20
    ulysses: int = 1
    ring: int = 1
    torch_compile: bool = False
    num_frames: int | None = None
    fps: float | None = None
    iterations: int = 6
    latency_s: float = 3.0  # per batch
    power_watts_per_gpu: float = 550.0
    untimed_iterations: tuple[int, ...] = ()  # indices whose time is 0 or negative
    folder_name: str | None = None
    results_overrides: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0

    @property
    def num_gpus(self) -> int:
        return self.ulysses * self.ring

    @property
    def config_folder(self) -> str:
        if self.folder_name is not None:
            return self.folder_name
        return (
            f"batch-{self.batch_size}+size-{self.height}x{self.width}+steps-{self.steps}"
            f"+uly-{self.ulysses}+ring-{self.ring}+tc-{self.torch_compile}"
        )

    def run_dir(self, root: Path, snapshot: str = "current") -> Path:
        return (
            root
            / "diffusion"
            / self.gpu_model.lower()
            / snapshot
            / "run"
            / "diffusion"
            / self.task
            / self.model_id
            / self.config_folder
        )


def diffusion_results(spec: DiffusionSpec) -> dict[str, Any]:
    rng = random.Random(spec.seed)
    iterations = []
    for i in range(spec.iterations):
        t = spec.latency_s * rng.uniform(0.9, 1.1)
        energy = {
            str(g): spec.power_watts_per_gpu * t * rng.uniform(0.95, 1.05)
            for g in range(spec.num_gpus)
        }
        if i in spec.untimed_iterations:
            t = -0.5 if i % 2 else 0.0  # a failed timer: the toolkit skips it
        iterations.append({"time": t, "gpu_energy": energy})
    doc: dict[str, Any] = {
        "model": spec.model_id,
        "batch_size": spec.batch_size,
        "ulysses_degree": spec.ulysses,
        "ring_degree": spec.ring,
        "height": spec.height,
        "width": spec.width,
        "iteration_energy_measurements": iterations,
    }
    if spec.num_frames is not None:
        doc["num_frames"] = spec.num_frames
    if spec.fps is not None:
        doc["fps"] = spec.fps
    for key, value in spec.results_overrides.items():
        if value is DELETE:
            doc.pop(key, None)
        else:
            doc[key] = value
    return doc


def write_diffusion_run(root: Path, spec: DiffusionSpec, snapshot: str = "current") -> Path:
    run_dir = spec.run_dir(root, snapshot)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "results.json").write_text(
        json.dumps(diffusion_results(spec), indent=1), encoding="utf-8"
    )
    return run_dir


# --- a sweep with every awkward case of real sweeps (the parity oracle's input) ----------------

MODEL_INFOS: dict[str, dict[str, Any]] = {
    "acme/tiny-1b": {
        "nickname": "Tiny 1B",
        "total_parameters_billion": 1.0,
        "active_parameters_billion": 1.0,
        "architecture": "Dense",
        "weight_precision": "bfloat16",
    },
    "acme/moe-16b": {
        "nickname": "MoE 16B A2B",
        "total_parameters_billion": 16.0,
        "active_parameters_billion": 2.0,
        "architecture": "MoE",
        "weight_precision": "fp8",
    },
    "acme/vision-2b": {
        "nickname": "Vision 2B",
        "total_parameters_billion": 2.0,
        "active_parameters_billion": 2.0,
        "weight_precision": "bfloat16",
    },
    "acme/painter-2b": {
        "nickname": "Painter 2B",
        "total_parameters_billion": 2.0,
        "active_parameters_billion": 2.0,
        "weight_precision": "bfloat16",
    },
    "acme/film-5b": {
        "nickname": "Film 5B",
        "total_parameters_billion": 5.0,
        "active_parameters_billion": 5.0,
        "weight_precision": "bfloat16",
    },
}


def _llm(**kw: Any) -> RunSpec:
    base: dict[str, Any] = {
        "num_requests": 24,
        "text_chars": 40,
        "chunk_probability": 0.3,
        "leading_zeros_every": 3,
    }
    return RunSpec(**(base | kw))


def sweep_cases() -> dict[str, list[RunSpec | DiffusionSpec]]:
    """Every edge case the parity oracle covers, by name, and the runs that make it."""

    def seeds(s: int) -> tuple[tuple[str, str], ...]:
        return (("seed", str(s)),)

    tiny: dict[str, Any] = {"model_id": "acme/tiny-1b", "task": "chat"}
    moe: dict[str, Any] = {"model_id": "acme/moe-16b", "task": "chat", "gpu_model": "B200"}
    img: dict[str, Any] = {"model_id": "acme/painter-2b", "task": "text-to-image"}
    return {
        "chunked ITL zeros": [_llm(**tiny, max_num_seqs=16, chunk_probability=0.6, seed=1)],
        "zeros before the first token": [
            _llm(**tiny, max_num_seqs=8, leading_zeros_every=1, seed=2)
        ],
        "failed requests": [_llm(**tiny, max_num_seqs=32, failed_every=4, seed=3)],
        "all requests failed (no ITL)": [_llm(**tiny, max_num_seqs=4, failed_every=1, seed=4)],
        "short steady window + cascade": [
            _llm(**tiny, gpu_model="B200", max_num_seqs=m, steady_state_duration_s=d, seed=5 + i)
            for i, (m, d) in enumerate(((16, 60.0), (32, 15.0), (64, 60.0)))
        ],
        "low batch utilisation + cascade": [
            _llm(**tiny, max_num_seqs=m, avg_batch_fraction=f, seed=8 + i)
            for i, (m, f) in enumerate(((64, 0.95), (128, 0.7), (256, 0.95)))
        ],
        "non-positive energy per token + cascade": [
            _llm(**tiny, num_gpus=2, max_num_seqs=m, seed=11 + m, top_overrides=o)
            for m, o in ((48, {"steady_state_energy_per_token": 0.0}), (96, {}))
        ],
        "missing prometheus.json": [
            _llm(**tiny, max_num_seqs=24, avg_batch_fraction=None, seed=12)
        ],
        "prometheus.json without a batch metric": [
            _llm(
                **tiny,
                max_num_seqs=12,
                seed=13,
                prometheus_overrides={"vllm:kv_cache_usage_perc": 0.3},
            )
        ],
        "multi-GPU groups (tp, ep, dp from configs)": [
            _llm(**moe, num_gpus=n, max_num_seqs=64, seed=14 + n, avg_power_watts=400.0 * n)
            for n in (2, 4, 8)
        ],
        "repeats differing only in seed": [
            _llm(**moe, num_gpus=1, max_num_seqs=32, extra_params=seeds(s), seed=20 + s)
            for s in (48, 49)
        ],
        "a repeat unstable at the same max_num_seqs": [
            _llm(
                **moe,
                num_gpus=1,
                max_num_seqs=128,
                extra_params=seeds(s),
                seed=30 + s,
                avg_batch_fraction=f,
            )
            for s, f in ((48, 0.95), (49, 0.5))
        ],
        "multimodal (mllm) runs": [
            _llm(
                model_id="acme/vision-2b",
                task="image-chat",
                kind="mllm",
                max_num_seqs=m,
                seed=40 + m,
            )
            for m in (8, 16)
        ],
        "not the current snapshot": [],  # written by write_sweep
        "diffusion: Ulysses and ring degrees": [
            DiffusionSpec(**img, batch_size=1, ulysses=u, ring=r, seed=50 + 2 * u + r)
            for u, r in ((1, 1), (2, 1), (1, 2), (2, 2))
        ],
        "diffusion: sizes and batches": [
            DiffusionSpec(**img, batch_size=b, height=h, width=w, seed=60 + b)
            for b, h, w in ((2, 512, 512), (8, 768, 1344))
        ],
        "diffusion: video frames and fps": [
            DiffusionSpec(
                model_id="acme/film-5b",
                task="text-to-video",
                batch_size=1,
                height=480,
                width=832,
                steps=40,
                num_frames=81,
                fps=16.0,
                ulysses=2,
                ring=2,
                latency_s=120.0,
                seed=70,
            )
        ],
        "diffusion: iterations with a non-positive time": [
            DiffusionSpec(**img, batch_size=4, untimed_iterations=(0, 3), seed=80)
        ],
        "diffusion: no timed iteration": [
            DiffusionSpec(**img, batch_size=16, iterations=2, untimed_iterations=(0, 1), seed=81)
        ],
    }


def write_sweep(root: Path) -> dict[str, list[Path]]:
    """Write :func:`sweep_cases` as the toolkit's benchmark root (runs and configs/)."""
    written: dict[str, list[Path]] = {}
    for case, specs in sweep_cases().items():
        paths = written.setdefault(case, [])
        for spec in specs:
            if isinstance(spec, DiffusionSpec):
                paths.append(write_diffusion_run(root, spec))
                write_model_info(root, "xdit", spec.task, spec.model_id, MODEL_INFOS[spec.model_id])
            else:
                paths.append(write_run(benchmark_llm_base(root, spec), spec))
                write_model_info(root, "vllm", spec.task, spec.model_id, MODEL_INFOS[spec.model_id])
    old = _llm(model_id="acme/tiny-1b", task="chat", max_num_seqs=512, seed=90)
    written["not the current snapshot"].append(
        write_run(benchmark_llm_base(root, old, snapshot="2025-06"), old)
    )
    write_monolithic(root, "chat", "acme/tiny-1b", "H100", {"tensor-parallel-size": 1})
    # B200 tiny-1b has no monolithic.config.yaml in real sweeps either? It must for the
    # toolkit, which skips runs without one: give it the defaults.
    write_monolithic(root, "chat", "acme/tiny-1b", "B200", {})
    write_monolithic(
        root,
        "chat",
        "acme/moe-16b",
        "B200",
        {"enable-expert-parallel": True, "data-parallel-size": 0},
    )
    write_monolithic(root, "image-chat", "acme/vision-2b", "H100", {"tensor-parallel-size": 1})
    return written
