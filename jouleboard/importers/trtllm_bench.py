"""TensorRT-LLM ``benchmark_serving.py --save-result`` results into runs (``import-bench``).

The result is one JSON object (read from tensorrt_llm/serve/scripts/benchmark_serving.py, in
NVIDIA/TensorRT-LLM since the energy metrics were added; docs/aiperf.md lists every field):
vLLM's benchmark fields (``duration`` s, ``completed``, ``total_output_tokens``,
``output_throughput`` tokens/s, ``median_itl_ms``, ``p<n>_itl_ms`` for each
``--metric-percentiles``, ``mean_ttft_ms``, ...; ``num_prompts``, ``request_rate`` (a number
or "inf"), ``max_concurrency``, ``model_id``, ``date`` YYYYMMDD-HHMMSS) and, when the server
runs with ``enable_energy_metrics``, ``energy``: ``total_energy_j`` (the change of the
server's NVML energy counters, summed over its GPUs, between a query before the requests
and one after them), ``output_tps_per_w`` (despite its name, output tokens per joule:
total_output_tokens / total_energy_j) and ``total_gpu_power_w`` (energy / the time between
the two queries). Its inter-token latencies are the gaps between streamed chunks.

Refused, one located problem each: no ``energy`` (nothing to rank), failed requests, figures
that disagree (a unit changed), no p90/p95/p99 ITL, or an energy window more than 1 % longer
than the run.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from pathlib import Path

from jouleboard.core.jsonio import parse_strict
from jouleboard.core.problems import Problem, pointer, shown_path
from jouleboard.core.safe_read import FileRefused, read_capped
from jouleboard.core.shapes import JsonObject
from jouleboard.importers.contract import Skipped
from jouleboard.importers.run_provenance import run_date
from jouleboard.importers.serving_runs import Load, RunResult, read_each, source_name

RESULT_CAP = 256 * 1024 * 1024  # with --save-detailed it holds every generated text
PARITY = 1e-9
MAX_WINDOW_BIAS = 0.01
INSTRUMENT = "NVML energy counters via trtllm-serve /energy_metrics (benchmark_serving)"
HINT = "run benchmark_serving.py again (it writes the result; do not edit it)"
FIGURES = (
    "duration",
    "completed",
    "total_output_tokens",
    "output_throughput",
    "median_itl_ms",
    "p90_itl_ms",
    "p95_itl_ms",
    "p99_itl_ms",
    "mean_ttft_ms",
)
ENERGY = ("total_energy_j", "output_tps_per_w", "total_gpu_power_w")


def _number(doc: JsonObject, *path: str) -> float | None:
    value = doc.get(path[0]) if len(path) == 1 else None
    if len(path) == 2 and isinstance(inner := doc.get(path[0]), dict):
        value = inner.get(path[1])
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def read_result(path: Path) -> RunResult | list[Problem]:
    """One result file as a run, or why it cannot be ranked."""
    shown = shown_path(path)
    try:
        raw = read_capped(path, RESULT_CAP)
        doc, issues = parse_strict(raw.decode("utf-8"))
    except FileRefused as e:
        return [Problem(shown, "", e.rule, e.message, e.hint)]
    except UnicodeDecodeError:
        return [Problem(shown, "", "file.not-utf8", "not UTF-8 text", HINT)]
    if issues:
        return [Problem(shown, i.pointer, i.rule, i.message, i.hint) for i in issues]
    if not isinstance(doc, dict):
        return [Problem(shown, "", "schema.wrong-type", "not a JSON object", HINT)]

    def refuse(where: str, rule: str, message: str, hint: str = HINT) -> list[Problem]:
        return [Problem(shown, where, rule, message, hint)]

    if not isinstance(doc.get("energy"), dict):
        return refuse(
            "/energy",
            "bench.no-energy",
            "no energy recorded (the result has no energy block)",
            "serve with enable_energy_metrics: true (trtllm-serve --config) and run "
            "benchmark_serving.py again",
        )
    found = {name: _number(doc, name) for name in FIGURES}
    for name in ENERGY:
        found[name] = _number(doc, "energy", name)
    missing = [name for name, value in found.items() if value is None or value <= 0]
    if missing:
        name = missing[0]
        where = pointer("energy", name) if name in ENERGY else pointer(name)
        hint = (
            "run with --metric-percentiles 90,95,99 (and the default --percentile-metrics)"
            if name.startswith("p9")
            else HINT
        )
        return refuse(where, "bench.missing-field", f"no positive number {name}", hint)
    f = {k: float(v or 0) for k, v in found.items()}
    prompts = doc.get("num_prompts")
    if isinstance(prompts, int) and prompts > f["completed"]:
        return refuse(
            "/completed",
            "bench.failed-requests",
            f"{prompts - int(f['completed'])} of {prompts} requests failed",
            "fix the failures and run again: their energy would be charged to the others",
        )
    per_joule = f["total_output_tokens"] / f["total_energy_j"]
    if abs(f["output_tps_per_w"] - per_joule) > PARITY * per_joule:
        return refuse(
            "/energy/output_tps_per_w",
            "bench.inconsistent",
            f"{f['output_tps_per_w']:g} tokens/J, but total_output_tokens / total_energy_j "
            f"gives {per_joule:g}",
        )
    window = f["total_energy_j"] / f["total_gpu_power_w"]  # the energy queries' interval, s
    if abs(window - f["duration"]) > MAX_WINDOW_BIAS * f["duration"]:
        return refuse(
            "/energy/total_gpu_power_w",
            "bench.window-mismatch",
            f"the energy covers {window:.2f} s but the run lasted {f['duration']:.2f} s",
            "run long enough that the two energy queries add under 1 % to it",
        )
    return _run(shown, source_name(path), doc, f, hashlib.sha256(raw).hexdigest()[:12])


def _run(shown: str, name: str, doc: JsonObject, f: dict[str, float], digest: str) -> RunResult:
    rate, cap, prompts = doc.get("request_rate"), doc.get("max_concurrency"), doc.get("num_prompts")
    per_sec = None
    if isinstance(rate, int | float) and not isinstance(rate, bool) and 0 < rate < math.inf:
        per_sec = float(rate)  # "inf" (a string) when every request was sent at once
    concurrency = cap if isinstance(cap, int) and not isinstance(cap, bool) and cap > 0 else None
    if concurrency is None and per_sec is None and isinstance(prompts, int) and prompts > 0:
        concurrency = prompts  # request_rate inf, no cap: every request sent at once
    date = str(doc.get("date") or "")
    stamp = "".join(c for c in date if c.isdigit())[:14]
    model = doc.get("model_id")
    return RunResult(
        shown=shown,
        run_id=stamp if len(stamp) == 14 else digest,
        source=f"{name[-200:]} (benchmark_serving {doc.get('backend', '?')!s:.20}, {date[:20]})",
        instrument=INSTRUMENT,
        date=run_date(date) or "unknown",
        served_model=model[:200] if isinstance(model, str) else "",
        gpu_name=None,
        num_gpus=None,
        load=Load(concurrency, per_sec),
        energy_joules=f["total_energy_j"],
        output_tokens=f["total_output_tokens"],
        avg_output_len_tokens=f["total_output_tokens"] / f["completed"],
        throughput_tokens_per_sec=f["output_throughput"],
        avg_power_watts=f["total_gpu_power_w"],
        itl_ms=(f["median_itl_ms"], f["p90_itl_ms"], f["p95_itl_ms"], f["p99_itl_ms"]),
        ttft_ms=(f["mean_ttft_ms"], _number(doc, "median_ttft_ms"), _number(doc, "p99_ttft_ms")),
    )


def read_results(paths: Sequence[Path]) -> tuple[list[RunResult], list[Skipped], list[Problem]]:
    """Every result file of ``paths`` (a file, or the ``*.json`` files of a folder, not the
    ``*.pytorch.json`` copies benchmark_serving writes beside them)."""
    files: list[Path] = []
    skipped: list[Skipped] = []
    problems: list[Problem] = []
    for path in paths:
        if not path.is_dir():
            files.append(path)  # a missing file or a link is reported where it is read
            continue
        inside = sorted(p for p in path.glob("*.json") if not p.is_symlink())
        copies = [p for p in inside if p.name.endswith(".pytorch.json")]
        skipped += [Skipped(shown_path(p), "a PyTorch-format copy") for p in copies]
        files += [p for p in inside if p not in copies]
        if len(inside) == len(copies):
            problems.append(
                Problem(
                    shown_path(path),
                    "",
                    "bench.no-results",
                    "no result .json in this folder",
                    "give benchmark_serving's --result-dir or its files",
                )
            )
    runs, more = read_each(files, read_result)
    return runs, skipped, problems + more
