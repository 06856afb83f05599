"""Run the real AIPerf against the simulated GPU server and keep its exports.

    python tools/aiperf/make_exports.py OUT [--aiperf /path/to/venv/bin/aiperf] [--quick]

Needs the AIPerf environment of tools/aiperf/requirements.txt (its ``aiperf`` command and its
Python, which has ``tokenizers`` and ``transformers``); run this file with that Python. Every
run is on 127.0.0.1 and offline: the tokenizer is a word-level one built here from AIPerf's
own prompt corpus, so no model hub is reached.

What it makes in OUT (each case a folder holding AIPerf's ``profile_export_aiperf.json`` and
``served.json``: the counters the simulated GPUs served at every scrape and the load log, so
the energy of any window is known):

- ``sweep/concurrency_{1,4,16}``: one ``aiperf profile --concurrency 1,4,16`` sweep, each
  level long enough for its energy to be rankable (AIPerf's default scrape settings);
- ``short``: concurrency 4 for about 15 s (too short: one scrape can move its energy >1 %);
- ``no-telemetry``: the metrics endpoint answers but reports no GPU (AIPerf writes
  ``telemetry_data.endpoints`` empty, as in public runs without DCGM);
- ``power-only``: the endpoint reports power but no energy counter (AIPerf integrates power);
- ``errors``: the server fails every 7th request;
- ``mixed-gpus``: GPU 1 reports another model name than GPU 0.

``--quick`` shortens every run and scrapes faster (AIPERF_GPU_COLLECTION_INTERVAL=0.05 s,
AIPERF_GPU_FINAL_SCRAPE_GRACE_NS=0.1 s), for tests/real_aiperf.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim_server import WORDS, GpuModel, SimulatedServer

SERVED_NAME = "sim-llm"
EXPORT = "profile_export_aiperf.json"
FAST_SCRAPE = {
    "AIPERF_GPU_COLLECTION_INTERVAL": "0.05",
    "AIPERF_GPU_FINAL_SCRAPE_GRACE_NS": "100000000",
}


@dataclass(frozen=True)
class Case:
    """One AIPerf invocation: its load and how the simulated server behaves."""

    name: str
    concurrency: str  # one level, or a comma-separated sweep
    duration_s: float
    model: GpuModel = field(default_factory=GpuModel)
    gpu_samples: bool = True
    energy_counter: bool = True
    fail_every: int = 0


def cases(quick: bool) -> list[Case]:
    # Default scrapes: 0.333 s apart and 0.666 s of grace, so a rankable run lasts >= 100 s.
    long_s = 25.0 if quick else 110.0
    mixed = GpuModel(gpu_names=("NVIDIA H100 80GB HBM3", "NVIDIA H200"))
    return [
        Case("sweep", "1,4,16", long_s),
        Case("short", "4", 5.0 if quick else 15.0),
        Case("no-telemetry", "4", 10.0, gpu_samples=False),
        Case("power-only", "4", 10.0, energy_counter=False),
        Case("errors", "4", 10.0, fail_every=7),
        Case("mixed-gpus", "4", 10.0, model=mixed),
    ]


def make_tokenizer(folder: Path) -> None:
    """A word-level tokenizer over AIPerf's prompt corpus and the server's words: every word
    the server streams is one token, so AIPerf counts the tokens the server meant."""
    import aiperf
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    corpus = Path(aiperf.__file__).parent / "dataset" / "generator" / "assets" / "shakespeare.txt"
    words = sorted(set(re.findall(r"\w+|[^\w\s]", corpus.read_text(encoding="utf-8"))) | set(WORDS))
    vocab = {"[UNK]": 0, **{w: i + 1 for i, w in enumerate(words)}}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]").save_pretrained(folder)


def profile_command(aiperf: str, server: SimulatedServer, case: Case, tokenizer: Path,
                    artifacts: Path) -> list[str]:  # fmt: skip
    return [
        aiperf, "profile",
        "--model", SERVED_NAME,
        "--url", server.api_url,
        "--endpoint-type", "chat",
        "--streaming",
        "--tokenizer", str(tokenizer),
        "--concurrency", case.concurrency,
        "--benchmark-duration", f"{case.duration_s:g}",
        "--warmup-request-count", "4",
        "--isl", "64",
        "--osl", "48",
        "--random-seed", "7",
        "--gpu-telemetry", server.metrics_url,
        "--no-server-metrics",
        "--ui-type", "none",
        "--artifact-dir", str(artifacts),
    ]  # fmt: skip


def run_case(aiperf: str, case: Case, tokenizer: Path, out: Path, quick: bool) -> list[Path]:
    """Run one case; copy each export and the served counters into ``out/<case>/...``."""
    server = SimulatedServer(case.model, SERVED_NAME)
    server.state.gpu_samples = case.gpu_samples
    server.state.energy_counter = case.energy_counter
    server.state.fail_every = case.fail_every
    with tempfile.TemporaryDirectory(prefix="aiperf-") as tmp:
        # AIPerf leaves in the temp folder each run's dataset (aiperf_mmap_<id>) and the
        # folders of its sockets (tmp*/aiperf): its temp folder is this one, removed with
        # them. (Its sockets' paths must stay under 108 bytes: this folder is short.)
        env = {
            **os.environ,
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "TMPDIR": tmp,
            "AIPERF_DATASET_MMAP_CACHE_DIR": str(Path(tmp) / "mmap-cache"),
            **(FAST_SCRAPE if quick else {}),
        }
        artifacts = Path(tmp) / "artifacts"
        command = profile_command(aiperf, server, case, tokenizer, artifacts)
        started = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        server.stop()
        if done.returncode != 0:
            sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
            raise SystemExit(f"aiperf failed on case {case.name} ({done.returncode})")
        print(f"{case.name}: aiperf ran {time.monotonic() - started:.0f} s", file=sys.stderr)
        exports = sorted(
            p for p in artifacts.rglob(EXPORT) if "phases" not in p.relative_to(artifacts).parts
        )
        kept = []
        for export in exports:
            level = export.parent.relative_to(artifacts)
            target = out / case.name / level
            target.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(export, target / EXPORT)
            kept.append(target / EXPORT)
        served = {
            "gpu_model": {
                "idle_watts": case.model.idle_watts,
                "watts_per_request": case.model.watts_per_request,
            },
            "scrapes": server.state.scrapes,
            "loads": server.state.loads,
        }
        (out / case.name / "served.json").write_text(json.dumps(served) + "\n", encoding="utf-8")
        return kept


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--aiperf", default=shutil.which("aiperf") or "aiperf")
    p.add_argument("--quick", action="store_true", help="short runs, fast scrapes (tests)")
    p.add_argument("--case", action="append", help="only these cases (default: all)")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="aiperf-tokenizer-") as tok:
        make_tokenizer(Path(tok))
        for case in cases(args.quick):
            if args.case and case.name not in args.case:
                continue
            for export in run_case(args.aiperf, case, Path(tok), args.out, args.quick):
                print(export)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
