"""Raw-run reader benchmark: runs/s and peak memory on large synthetic runs. Not a test.

    python benchmarks/raw_runs.py [--text-mb 200] [--itl-mtokens 5] [--tree-runs 100]
                                  [--json-load] [--keep DIR]

Writes synthetic runs (tests/runs_generator.py) under a temporary folder, then prints:
- for one large text-heavy results.json (long prompts and outputs) and one ITL-heavy one
  (millions of tokens, little text): file size, read time, and the peak memory of a fresh
  process reading it: RSS growth (ru_maxrss after - before, everything the process touched,
  C buffers included) and the Python heap peak (tracemalloc, a separate process because
  tracing slows the read);
- with --json-load, the same figures for json.load of the text-heavy file, for contrast;
- for a tree of ordinary runs (a sweep of models x GPUs x max_num_seqs), runs/s and MB/s
  through load_runs: find, read, stability filter, measurement checks.
The registries are the repository's data/ folder (real model ids, B200/H100, task gpqa).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from jouleboard.config.registry import load_registry  # noqa: E402
from jouleboard.importers.mlenergy_runs import find_run_dirs, load_runs  # noqa: E402
from tests.runs_generator import RunSpec, write_run  # noqa: E402

MODELS = (
    "Qwen/Qwen3-8B",
    "Qwen/Qwen3-14B",
    "meta-llama/Llama-3.1-8B-Instruct",
    "google/gemma-3-12b-it",
    "nvidia/NVIDIA-Nemotron-Nano-12B-v2",
)
SEQS = (8, 16, 32, 64, 96, 128, 192, 256, 384, 512)


def measure(path: Path, mode: str) -> dict[str, float]:
    """In this (fresh) process: read ``path`` once and report time and memory growth."""
    import tracemalloc

    from jouleboard.importers.run_results import read_results

    before_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if mode == "tracemalloc":
        tracemalloc.start()
    start = time.perf_counter()
    if mode == "json":
        with path.open("rb") as f:
            json.load(f)
        gaps = 0
    else:
        results, problems = read_results(path, str(path))
        assert results is not None and results.itl is not None, problems
        gaps = results.itl.gaps
    seconds = time.perf_counter() - start
    heap_peak = tracemalloc.get_traced_memory()[1] if mode == "tracemalloc" else 0
    after_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "seconds": seconds,
        "rss_growth_mb": (after_kib - before_kib) / 1024,
        "heap_peak_mb": heap_peak / 2**20,
        "gaps": gaps,
    }


def in_fresh_process(path: Path, mode: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--measure", str(path), "--mode", mode],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    figures: dict[str, float] = json.loads(out.stdout)
    return figures


def large_file(root: Path, label: str, spec: RunSpec, json_load: bool) -> None:
    start = time.perf_counter()
    run_dir = write_run(root / label, spec)
    path = run_dir / "results.json"
    size_mb = path.stat().st_size / 2**20
    made = time.perf_counter() - start
    stream = in_fresh_process(path, "stream")
    traced = in_fresh_process(path, "tracemalloc")
    print(
        f"\n{label}: results.json {size_mb:.0f} MB, {spec.num_requests} requests, "
        f"{stream['gaps']:,.0f} ITL gaps kept (written in {made:.1f} s)"
    )
    print(
        f"  streaming read   {stream['seconds']:6.2f} s  {size_mb / stream['seconds']:6.1f} MB/s"
        f"  peak RSS growth {stream['rss_growth_mb']:6.1f} MB "
        f"({stream['rss_growth_mb'] / size_mb:.1%} of the file)"
        f"  Python heap peak {traced['heap_peak_mb']:6.1f} MB "
        f"({traced['heap_peak_mb'] / size_mb:.1%})"
    )
    if json_load:
        loaded = in_fresh_process(path, "json")
        print(
            f"  json.load        {loaded['seconds']:6.2f} s  "
            f"{size_mb / loaded['seconds']:6.1f} MB/s  peak RSS growth "
            f"{loaded['rss_growth_mb']:6.1f} MB ({loaded['rss_growth_mb'] / size_mb:.0%})"
        )


def tree(root: Path, count: int) -> None:
    registry, problems = load_registry(REPO / "data")
    assert registry is not None, problems
    written = 0
    for i in range(count):
        model = MODELS[i // (2 * len(SEQS)) % len(MODELS)]
        gpu = ("H100", "B200")[i // len(SEQS) % 2]
        seqs = SEQS[i % len(SEQS)]
        write_run(
            root,
            RunSpec(
                model_id=model,
                task="gpqa",
                gpu_model=gpu,
                max_num_seqs=seqs,
                extra_params=(("seed", str(i // (10 * len(SEQS)))),),
                num_requests=200,
                output_len_range=(200, 800),
                text_chars=2000,
                itl_s=0.01 + seqs / 10_000,
                seed=i,
            ),
        )
        written += 1
    size_mb = sum(p.stat().st_size for p in root.rglob("*.json")) / 2**20
    found, _ = find_run_dirs([root])
    start = time.perf_counter()
    report = load_runs([root], registry)
    seconds = time.perf_counter() - start
    print(
        f"\ntree: {len(found)} runs, {size_mb:.0f} MB of JSON -> {len(report.published)} "
        f"published, {len(report.warnings)} dropped, {len(report.errors)} errors"
    )
    print(
        f"  load_runs        {seconds:6.2f} s  {written / seconds:6.1f} runs/s  "
        f"{size_mb / seconds:6.1f} MB/s"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--text-mb",
        type=float,
        default=200.0,
        help="approximate size of the text-heavy results.json (MB)",
    )
    p.add_argument(
        "--itl-mtokens",
        type=float,
        default=5.0,
        help="millions of generated tokens in the ITL-heavy results.json",
    )
    p.add_argument("--tree-runs", type=int, default=100)
    p.add_argument("--json-load", action="store_true", help="also time json.load")
    p.add_argument("--keep", type=Path, default=None, help="write the runs here, keep them")
    p.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--mode", default="stream", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.mode)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        # ~100 kB per request: 1000 tokens of ITL (~20 kB) + 2 x 40k characters of text.
        text_requests = max(1, int(args.text_mb * 2**20 / 105_000))
        large_file(
            root,
            "text-heavy",
            RunSpec(
                model_id="Qwen/Qwen3-8B",
                task="gpqa",
                num_requests=text_requests,
                output_len_range=(500, 1500),
                text_chars=40_000,
                failed_every=50,
            ),
            args.json_load,
        )
        tokens = int(args.itl_mtokens * 1e6)
        large_file(
            root,
            "itl-heavy",
            RunSpec(
                model_id="Qwen/Qwen3-8B",
                task="gpqa",
                num_requests=max(1, tokens // 4000),
                output_len_range=(2000, 6000),
                text_chars=200,
                failed_every=50,
            ),
            False,
        )
        tree(root / "tree", args.tree_runs)


if __name__ == "__main__":
    main()
