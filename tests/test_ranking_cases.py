"""The shared ranking cases (tests/ranking_cases.json) through the Python ranking."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jouleboard.rank import Deadline, rank
from jouleboard.records import Configuration

CASES = json.loads((Path(__file__).parent / "ranking_cases.json").read_text())


def configuration(fields: dict[str, Any]) -> Configuration:
    merged = {**CASES["defaults"], **fields}
    ept = merged["energy_per_token_joules"]
    return Configuration(task="t", avg_power_watts=500.0,
                         output_throughput_tokens_per_sec=500.0 / ept,
                         energy_per_response_joules=ept * 1000, avg_output_len_tokens=1000.0,
                         avg_batch_size=1.0, **merged)


@pytest.mark.parametrize("case", CASES["cases"], ids=[c["name"] for c in CASES["cases"]])
def test_case(case: dict[str, Any]) -> None:
    rows = rank([configuration(c) for c in case["configs"]],
                Deadline(case["deadline_ms"], case["percentile"]), gpus=case.get("gpus"),
                top=case.get("top"), energy_budget_joules_per_token=case.get("energy_budget"),
                precisions=case.get("precisions"))
    assert [r.config.source for r in rows] == case["expected"]
