"""The real NVIDIA AIPerf, end to end (issue 38): it profiles a simulated GPU server on
127.0.0.1 (tools/aiperf/sim_server.py) at concurrency 1, 4 and 16 with --gpu-telemetry, and
once with telemetry that reports no GPU; jouleboard imports its exports.

Checked: the imported energy is AIPerf's own figure (tokens per joule to 1e-9), AIPerf's
figure is a change of the counters the server served and lies within the bias bound of the
energy the server's GPUs really drew; the ranking at a deadline picks the most efficient
level within it; the export without telemetry is refused with one located problem.

Not part of the README's test command: AIPerf is heavy (1.2 GB, its own environment from
tools/aiperf/requirements.txt) and this takes about three minutes. It runs when
JOULEBOARD_AIPERF_VENV names that environment (.ci/run makes it):

    JOULEBOARD_AIPERF_VENV=/path/to/venv python -m pytest tests/real_aiperf -n 0
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

import jouleboard
from jouleboard.config.registry import load_registry
from jouleboard.importers.aiperf import read_export, read_exports
from jouleboard.importers.contract import write_plan
from jouleboard.importers.serving_runs import ServingOptions, plan_runs
from jouleboard.kinds import task_kind_order
from tests.aiperf_oracle import Served

REPO = Path(__file__).resolve().parents[2]
VENV = os.environ.get("JOULEBOARD_AIPERF_VENV", "")
LEVELS = (1, 4, 16)
MODEL = "example-org/example-llm-8b"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not VENV, reason="set JOULEBOARD_AIPERF_VENV to AIPerf's environment"),
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The exports of real AIPerf runs (quick: 25 s per level, scrapes every 0.05 s), in
    ``runs/``; beside it, ``left-in-temp.json`` lists what they left in their temp folder.

    That folder is one of their own, so nothing else uses it meanwhile, and short: AIPerf
    makes its sockets in it, whose paths may not be longer than 107 bytes (a pytest temp
    path as TMPDIR made every run fail)."""
    root = tmp_path_factory.mktemp("aiperf")
    out = root / "runs"
    out.mkdir()
    temp = Path(tempfile.mkdtemp(prefix="ja-", dir="/tmp" if Path("/tmp").is_dir() else None))
    venv = Path(VENV)
    done = subprocess.run(
        [
            str(venv / "bin" / "python"),
            str(REPO / "tools" / "aiperf" / "make_exports.py"),
            str(out),
            "--aiperf",
            str(venv / "bin" / "aiperf"),
            "--quick",
            "--case",
            "sweep",
            "--case",
            "no-telemetry",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(temp)},
        timeout=1200,
        check=False,
    )
    left = sorted(p.name for p in temp.iterdir())
    shutil.rmtree(temp)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (root / "left-in-temp.json").write_text(json.dumps(left), encoding="utf-8")
    return out


def test_the_runs_leave_nothing_in_the_temp_folder(runs: Path) -> None:
    """AIPerf leaves in the temp folder every run's dataset (``aiperf_mmap_<id>``: 112 of
    them in this machine's /tmp) and its sockets' folders (``tmp*/aiperf``): make_exports.py
    gives each run a temp folder of its own inside the one it was given, removed after."""
    left = json.loads((runs.parent / "left-in-temp.json").read_text(encoding="utf-8"))
    assert left == []


def export(runs: Path, level: int) -> dict:
    path = runs / "sweep" / f"concurrency_{level}" / "profile_export_aiperf.json"
    return json.loads(path.read_text())


@pytest.mark.parametrize("level", LEVELS)
def test_the_energy_is_aiperfs_and_within_the_counters_bias_bound(runs: Path, level: int) -> None:
    doc = export(runs, level)
    run = read_export(runs / "sweep" / f"concurrency_{level}" / "profile_export_aiperf.json")
    assert not isinstance(run, list), run
    assert run.energy_joules == doc["nvidia_total_gpu_energy"]["avg"]
    assert math.isclose(
        run.output_tokens / run.energy_joules,
        doc["nvidia_output_tokens_per_joule"]["avg"],
        rel_tol=1e-9,
    )
    Served.read(runs / "sweep" / "served.json").check(doc)
    # make_exports.py runs AIPerf's synthetic prompts with a fixed --osl: the import says so.
    (dataset,) = doc["input_config"]["datasets"]
    assert dataset["type"] == "synthetic"
    (warning,) = run.warnings
    assert warning.rule == "aiperf.synthetic-workload"
    answers = dataset["prompts"]["osl"]["mean"]
    assert run.workload == f"synthetic prompts, {answers:.0f}-token answers"


def test_a_leaderboard_ranks_each_level_under_its_deadline(runs: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(REPO / "jouleboard" / "skeleton" / "data", data)
    for example in (data / "measurements").rglob("*.json"):
        example.unlink()
    registry, problems = load_registry(data, task_kind_order())
    assert registry is not None, problems
    found, _, problems = read_exports([runs / "sweep"])
    assert not problems
    plan, problems = plan_runs(
        "import-aiperf",
        found,
        ServingOptions(task="chat", model=MODEL, tensor_parallel=2),
        registry,
        data,
    )
    assert not problems
    assert len(write_plan(plan, data).written) == 3
    board = jouleboard.load(data)
    itl = {c: export(runs, c)["inter_token_latency"]["p50"] for c in LEVELS}
    efficiency = {c: export(runs, c)["nvidia_output_tokens_per_joule"]["avg"] for c in LEVELS}
    for deadline in sorted({math.ceil(v) + 1 for v in itl.values()}):
        meeting = [c for c in LEVELS if itl[c] <= deadline]
        best = max(meeting, key=efficiency.__getitem__)
        (row,) = board.rank("chat", deadline_ms=deadline).records
        assert row["max_num_seqs"] == best
        assert math.isclose(row["tokens_per_joule"], efficiency[best], rel_tol=1e-9)


def test_the_run_without_telemetry_is_refused(runs: Path) -> None:
    got = read_export(runs / "no-telemetry" / "profile_export_aiperf.json")
    assert isinstance(got, list) and [p.rule for p in got] == ["aiperf.no-telemetry"]
