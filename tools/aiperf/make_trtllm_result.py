"""A TensorRT-LLM ``benchmark_serving.py --save-result`` result file, made against the
simulated GPU server on 127.0.0.1.

    python tools/aiperf/make_trtllm_result.py OUT_FOLDER

Why not the real script: ``tensorrt_llm/serve/scripts/benchmark_serving.py`` imports the
``tensorrt_llm`` package (``tensorrt_llm.serve.scripts.*`` and ``tensorrt_llm.envs``), which
needs CUDA and TensorRT and has no wheel for this machine, and the repository (2.5 GB) cannot
be brought here. So this file does, step by step, what that script does on its result-writing
path, as read from NVIDIA/TensorRT-LLM at commit 0228a71223416496ff056a157936bad2e42c762f
(where the energy block exists): one test request; ``GET /energy_metrics`` before the run;
the requests, streamed as its ``openai-chat`` backend sends and times them (TTFT at the
first chunk with choices, one inter-token gap per later chunk); ``GET /energy_metrics``
after; ``calculate_metrics`` (numpy mean, median, std and linear percentiles, in ms; energy
= end - start, ``output_tps_per_w`` = output tokens / energy, ``total_gpu_power_w`` = energy
/ the servers' query-time difference); the result keys in the script's order; and ``main``'s
save (setup keys first, per-request lists dropped without --save-detailed, then
``request_rate``, ``burstiness``, ``max_concurrency``), ``json.dump`` into the script's file
name. It writes ``with-energy/`` (a server with ``enable_energy_metrics``) and
``no-energy/`` (one without: the endpoint answers 503, the script leaves ``energy`` out).

Runs under the AIPerf environment's Python (aiohttp and numpy).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import aiohttp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim_server import WORDS, SimulatedServer

MODEL = "sim-llm"
PERCENTILES = (90.0, 95.0, 99.0)  # --metric-percentiles 90,95,99


async def energy(session: aiohttp.ClientSession, base: str) -> dict[str, Any] | None:
    async with session.get(f"{base}/energy_metrics") as response:
        return await response.json() if response.status == 200 else None


async def chat(session: aiohttp.ClientSession, url: str, prompt: str, n: int) -> dict[str, Any]:
    """One streamed chat request, timed as the openai-chat backend times it."""
    payload = {
        "model": MODEL,
        "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}],
        "temperature": 0.0,
        "max_completion_tokens": n,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    out: dict[str, Any] = {"ttft": 0.0, "itl": [], "text": "", "tokens": 0, "success": False}
    start = last = time.perf_counter()
    async with session.post(url, json=payload) as response:
        async for raw in response.content:
            line = raw.strip().decode().removeprefix("data: ")
            if not line or line == "[DONE]":
                continue
            now = time.perf_counter()
            data = json.loads(line)
            if choices := data.get("choices"):
                if out["ttft"] == 0.0:
                    out["ttft"] = now - start
                else:
                    out["itl"].append(now - last)
                out["text"] += choices[0]["delta"].get("content") or ""
            elif usage := data.get("usage"):
                out["tokens"] = usage.get("completion_tokens")
            last = now
    out["success"], out["latency"] = True, last - start
    return out


def stats(name: str, values: list[float], scale: float = 1000.0) -> dict[str, float]:
    """``std_``, ``mean_``, ``median_`` and ``p<n>_<name>_ms`` in the script's key order."""
    found = {
        f"std_{name}_ms": float(np.std(values or 0) * scale),
        f"mean_{name}_ms": float(np.mean(values or 0) * scale),
        f"median_{name}_ms": float(np.median(values or 0) * scale),
    }
    for p in PERCENTILES:
        found[f"p{int(p)}_{name}_ms"] = float(np.percentile(values or 0, p) * scale)
    return found


async def benchmark(base: str, prompts: list[str], n: int, concurrency: int) -> dict[str, Any]:
    url = f"{base}/v1/chat/completions"
    async with aiohttp.ClientSession() as session:
        await chat(session, url, prompts[0], n)  # the initial single-prompt test run
        before = await energy(session, base)
        started = time.perf_counter()
        limit = asyncio.Semaphore(concurrency)

        async def limited(prompt: str) -> dict[str, Any]:
            async with limit:
                return await chat(session, url, prompt, n)

        outputs = await asyncio.gather(*(limited(p) for p in prompts))
        duration = time.perf_counter() - started
        after = await energy(session, base)
    lens = [o["tokens"] for o in outputs]
    total_in = sum(len(p.split()) for p in prompts)
    total_out = sum(lens)
    tpots = [
        (o["latency"] - o["ttft"]) / (k - 1) for o, k in zip(outputs, lens, strict=True) if k > 1
    ]
    itls = [gap for o in outputs for gap in o["itl"]]
    result: dict[str, Any] = {
        "duration": duration,
        "completed": len(outputs),
        "total_input_tokens": total_in,
        "total_output_tokens": total_out,
        "request_throughput": len(outputs) / duration,
        "request_goodput:": None,  # sic: the script's key
        "output_throughput": total_out / duration,
        "total_token_throughput": (total_in + total_out) / duration,
        "user_throughput": float(
            np.mean([k / o["latency"] for o, k in zip(outputs, lens, strict=True)])
        ),
        "avg_decoded_tokens_per_iter": {
            "mean": 0.0,
            "min": 0.0,
            "max": 0.0,
            "median": 0.0,
            "std": 0.0,
            "percentiles": {f"p{p}": 0.0 for p in PERCENTILES},
        },
    }
    if before is not None and after is not None:
        joules = after["total_energy_j"] - before["total_energy_j"]
        result["energy"] = {
            "total_energy_j": joules,
            "output_tps_per_w": total_out / joules,
            "total_gpu_power_w": joules / (after["query_time"] - before["query_time"]),
        }
    ttfts = [o["ttft"] for o in outputs]
    return {**result, **stats("ttft", ttfts), **stats("tpot", tpots), **stats("itl", itls)}


def save(folder: Path, result: dict[str, Any], num_prompts: int, concurrency: int) -> Path:
    """``main``'s --save-result: setup keys, the result, the traffic keys; the file name."""
    now = datetime.now().strftime("%Y%m%d-%H%M%S")
    doc = {
        "date": now,
        "backend": "openai-chat",
        "model_id": MODEL,
        "tokenizer_id": MODEL,
        "num_prompts": num_prompts,
        **result,
        "request_rate": "inf",
        "burstiness": 1.0,
        "max_concurrency": concurrency,
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"openai-chat-infqps-concurrency{concurrency}-{MODEL}-{now}.json"
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--prompts", type=int, default=240)
    p.add_argument("--concurrency", type=int, default=8)
    args = p.parse_args(argv)
    prompts = [
        " ".join(WORDS[(i + k) % len(WORDS)] for k in range(64)) for i in range(args.prompts)
    ]
    for name, enabled in (("with-energy", True), ("no-energy", False)):
        server = SimulatedServer()
        server.state.energy_endpoint = enabled
        try:
            result = asyncio.run(benchmark(server.api_url, prompts, 48, args.concurrency))
        finally:
            server.stop()
        print(save(args.out / name, result, args.prompts, args.concurrency))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
