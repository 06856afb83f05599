"""`jouleboard rank` when no model qualifies: one line saying which condition left none and
the figure that would let one in, in every format, never a traceback (it was a TypeError in
the text table). Figures are read from the sample measurement files, not from the code."""

from __future__ import annotations

import csv
import io
import json
import subprocess

import pytest
import yaml

from tests.cli_run import jouleboard as jouleboard_here
from tests.golden.tree import DATA


def measured(task: str, key: str) -> list[float]:
    """``key`` of every measurement of ``task`` on the sample's default GPUs."""
    gpus = set(yaml.safe_load((DATA / "site.yaml").read_text())["default_gpus"])
    docs = [json.loads(p.read_text()) for p in (DATA / "measurements" / task).rglob("*.json")]
    return [d["metrics"][key] for d in docs if d["gpu_model"] in gpus]


def rank(*args: str) -> subprocess.CompletedProcess[str]:
    return jouleboard_here("rank", "--data", DATA, *args, timeout=120)


def reason(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    [line] = [x for x in done.stderr.splitlines() if x.startswith("nothing to rank: ")]
    return line.removeprefix("nothing to rank: ")


def test_a_deadline_below_the_fastest_names_the_fastest() -> None:
    fastest = min(measured("gpqa", "median_itl_ms"))
    why = reason(rank("--task", "gpqa", "--deadline-ms", "1"))
    assert why == (
        f"no configuration meets median inter-token latency ≤ 1 ms; the fastest "
        f"takes {float(f'{fastest:.3g}'):g} ms"
    )


def test_a_diffusion_deadline_says_its_unit() -> None:
    fastest_s = min(measured("text-to-image", "batch_latency_s"))
    why = reason(rank("--task", "text-to-image", "--deadline-ms", "30"))
    assert why.startswith("no configuration meets batch latency ≤ 0.03 s; the fastest takes ")
    assert f"{float(f'{fastest_s * 1000:.3g}') / 1000:g} s" in why
    assert why.endswith("(--deadline-ms is in ms)")


def test_an_energy_budget_below_the_lowest_names_the_lowest() -> None:
    within = [
        j
        for j, itl in zip(
            measured("gpqa", "energy_per_token_joules"),
            measured("gpqa", "median_itl_ms"),
            strict=True,
        )
        if itl <= 300
    ]
    why = reason(rank("--task", "gpqa", "--energy-budget", "0.0001"))
    assert why.endswith(f"the lowest uses {min(within):.3g} J per token")


def test_ranking_by_accuracy_without_any_says_so() -> None:
    why = reason(rank("--task", "image-chat", "--by", "energy_per_correct_answer"))
    assert why.startswith("no model has a published accuracy for image-chat")


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_every_format_stays_parseable_and_empty(fmt: str) -> None:
    done = rank("--task", "gpqa", "--deadline-ms", "1", "--format", fmt)
    reason(done)
    if fmt == "json":
        assert json.loads(done.stdout) == []
    elif fmt == "csv":
        rows = list(csv.reader(io.StringIO(done.stdout)))
        assert len(rows) == 1 and rows[0][0] == "rank"  # the header only
    else:
        assert done.stdout.splitlines()[0].startswith("#")
        assert len(done.stdout.splitlines()) == 1
