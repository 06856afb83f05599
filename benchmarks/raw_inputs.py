"""Raw-run inputs, ordinary and hostile: time and peak memory of reading each. Not a test.

    python benchmarks/raw_inputs.py [--mb 200] [--string-mb 64] [--source DIR]
                                    [--memory-limit-gb 4] [--keep DIR]

Writes, under a temporary folder: a text-heavy results.json of about --mb MB (long prompts
and outputs, tests/runs_generator.py), an ITL-heavy one of the same size (millions of
tokens), a results.json with one --string-mb MB string field, one nested 100,000 levels deep
(290 KB) and an unclosed 100 KB ``[[[[...``. Each is read by ``read_results`` of the
jouleboard in --source (default: this checkout; give an older worktree for "before"
figures) in a fresh process under an address-space limit, and the script prints its wall
time, peak RSS and outcome (a rule id when refused). Issue 25 item 17.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_CHILD = """
import json, resource, sys, time
from pathlib import Path
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from jouleboard.importers.run_results import read_results
start = time.perf_counter()
try:
    results, problems = read_results(Path(sys.argv[1]), sys.argv[1])
    gaps = results.itl.gaps if results and results.itl else 0
    outcome = problems[0].rule if problems else f"read ({gaps:,} gaps)"
except MemoryError:
    outcome = "MemoryError"
except RecursionError:
    outcome = "RecursionError"
seconds = time.perf_counter() - start
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "peak_rss_mb": peak_mb, "outcome": outcome}))
"""


def measure(path: Path, source: Path, limit_bytes: int, timeout_s: float) -> str:
    """One line: time, peak RSS and outcome of reading ``path`` in a fresh process."""
    start = time.perf_counter()
    try:
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, str(path), str(limit_bytes)],
            cwd=source,
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    except subprocess.TimeoutExpired:
        return f"over the {timeout_s:.0f} s timeout"
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["?"])[-1]
        return f"exit {out.returncode} after {time.perf_counter() - start:.1f} s: {last[:100]}"
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    return (
        f"{figures['seconds']:7.2f} s  peak RSS {figures['peak_rss_mb']:7.0f} MB  "
        f"{figures['outcome']}"
    )


def write_inputs(root: Path, mb: float, string_mb: float) -> dict[str, Path]:
    sys.path.insert(0, str(REPO))
    from tests.runs_generator import RunSpec, write_run

    paths: dict[str, Path] = {}
    text_requests = max(1, int(mb * 2**20 / 105_000))  # ~100 kB a request
    paths[f"text-heavy ~{mb:.0f} MB"] = (
        write_run(
            root / "text",
            RunSpec(
                num_requests=text_requests,
                output_len_range=(500, 1500),
                text_chars=40_000,
                failed_every=50,
            ),
        )
        / "results.json"
    )
    itl_requests = max(1, int(mb * 2**20 / 44_000))  # ~2000 tokens x 22 bytes a request
    paths[f"ITL-heavy ~{mb:.0f} MB"] = (
        write_run(
            root / "itl",
            RunSpec(num_requests=itl_requests, output_len_range=(1500, 2500), text_chars=20),
        )
        / "results.json"
    )
    one = write_run(root / "string", RunSpec(num_requests=3, text_chars=20)) / "results.json"
    body = one.read_text(encoding="utf-8")
    one.write_text('{"note": "' + "x" * int(string_mb * 2**20) + '", ' + body[1:], encoding="utf-8")
    paths[f"one {string_mb:.0f} MB string"] = one
    deep = root / "deep.json"
    deep.write_text('{"results": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    paths["depth 100,000"] = deep
    unclosed = root / "unclosed.json"
    unclosed.write_text("[" * 100_000, encoding="utf-8")
    paths["unclosed 100 KB [[[["] = unclosed
    return paths


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mb", type=float, default=200.0, help="size of the large files (MB)")
    p.add_argument("--string-mb", type=float, default=64.0, help="the long string field (MB)")
    p.add_argument(
        "--source",
        type=Path,
        default=REPO,
        help="checkout whose jouleboard reads the files (default: this one)",
    )
    p.add_argument(
        "--memory-limit-gb",
        type=float,
        default=4.0,
        help="address-space limit of each reading process",
    )
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per file")
    p.add_argument("--keep", type=Path, default=None, help="write the inputs here, keep them")
    p.add_argument("--write", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.write:
        paths = write_inputs(args.write, args.mb, args.string_mb)
        print(json.dumps({k: str(v) for k, v in paths.items()}))
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        # Written by another process: a child's peak RSS counts from its parent's size.
        written = subprocess.run(
            [
                sys.executable,
                __file__,
                "--write",
                str(root),
                "--mb",
                str(args.mb),
                "--string-mb",
                str(args.string_mb),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        paths = {k: Path(v) for k, v in json.loads(written.stdout).items()}
        print(f"reader: {args.source}; limit {args.memory_limit_gb:g} GB per process")
        for label, path in paths.items():
            size_mb = path.stat().st_size / 2**20
            result = measure(path, args.source, int(args.memory_limit_gb * 2**30), args.timeout)
            print(f"{label:24} {size_mb:8.1f} MB  {result}")


if __name__ == "__main__":
    main()
