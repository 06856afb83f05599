"""The shared ranking cases (tests/ranking_cases.json) through the Python ranking, and the
kinds' browser ranking orders checked against the ones the cases give Node and Chromium."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from jouleboard.kinds.diffusion import DiffusionConfiguration, DiffusionKind
from jouleboard.kinds.token import TokenKind
from jouleboard.kinds.token_records import Configuration
from jouleboard.rank.noise import UNKNOWN, Noise
from jouleboard.rank.ranking import Deadline, objective_for, rank

CASES = json.loads((Path(__file__).parent / "ranking_cases.json").read_text())


def configuration(fields: dict[str, Any]) -> Configuration:
    merged = {**CASES["defaults"], **fields}
    ept = merged["energy_per_token_joules"]
    merged.setdefault("energy_per_response_joules", ept * 1000)
    return Configuration(
        task="t",
        avg_power_watts=500.0,
        output_throughput_tokens_per_sec=500.0 / ept,
        avg_output_len_tokens=1000.0,
        avg_batch_size=1.0,
        **merged,
    )


def diffusion(fields: dict[str, Any]) -> DiffusionConfiguration:
    merged = {**CASES["diffusion_defaults"], **fields}
    energy = merged["energy_per_output_joules"]
    return DiffusionConfiguration(
        task="t", avg_power_watts=600.0, throughput_outputs_per_sec=600.0 / energy, **merged
    )


BUILD = {"token": configuration, "diffusion": diffusion}


def test_cases_cover_every_kind_objective_and_tie_breaks() -> None:
    kinds = {c.get("kind", "token") for c in CASES["cases"]}
    objectives = {c.get("objective", "energy_per_token") for c in CASES["cases"]}
    assert kinds == {"token", "diffusion"}
    assert objectives == {"energy_per_token", "energy_per_response", "energy_per_correct_answer"}
    assert sum("tie" in c["name"] for c in CASES["cases"]) >= 4
    assert sum("noise" in c for c in CASES["cases"]) >= 10


def noise_of(case: dict[str, Any]) -> Noise:
    """The case's noise as Python holds it: s, the confidence and the degrees of freedom,
    whose critical value must be the case's c (taken from a printed table, not from the
    code under test)."""
    given = case.get("noise")
    if given is None:
        return UNKNOWN
    noise = Noise(given["s"], given["confidence"], freedom=given["freedom"])
    assert noise.critical == pytest.approx(given["c"], rel=1e-12)
    return noise


def test_noise_cases_cover_t_with_few_and_many_degrees_and_the_normal() -> None:
    freedoms = {c["noise"]["freedom"] for c in CASES["cases"] if "noise" in c}
    assert {None, 1, 3, 30} <= freedoms


@pytest.mark.parametrize("case", CASES["separation"], ids=lambda c: f"ratio {c['ratio']}")
def test_runs_to_separate(case: dict[str, Any]) -> None:
    """The runs of each that would separate two configurations at a ratio, worked by hand
    in the case ("why"); Node checks the browser's copy against the same cases."""
    noise = Noise(case["s"], 0.95)
    assert noise.critical == pytest.approx(1.959963984540054)  # the cases give c directly:
    forced = Noise(case["s"], 0.95, freedom=None if case["c"] < 2 else 3)
    assert forced.critical == pytest.approx(case["c"], rel=1e-12)
    assert forced.runs_to_separate(case["ratio"]) == case["runs"]


@pytest.mark.parametrize(("name", "kind"), [("token", TokenKind()), ("diffusion", DiffusionKind())])
def test_browser_orders_are_the_kinds_own(name: str, kind: Any) -> None:
    """The order Node and Chromium rank the cases by is the one the site ships."""
    assert CASES["orders"][name] == kind.browser_order()


@pytest.mark.parametrize("case", CASES["cases"], ids=[c["name"] for c in CASES["cases"]])
def test_case(case: dict[str, Any]) -> None:
    build = BUILD[case.get("kind", "token")]
    accuracy = case.get("accuracy", {})
    rows = rank(
        [build(c) for c in case["configs"]],
        Deadline(case["deadline_ms"], case["percentile"]),
        gpus=case.get("gpus"),
        top=case.get("top"),
        energy_budget_joules_per_token=case.get("energy_budget"),
        precisions=case.get("precisions"),
        objective=objective_for(case.get("objective", "energy_per_token"), accuracy.get),
        noise=noise_of(case),
    )
    assert [r.config.source for r in rows] == case["expected"]
    exact = [[i, i] for i in range(1, len(rows) + 1)]
    assert [[r.rank_best, r.rank_worst] for r in rows] == case.get("expected_ranges", exact)
    assert all(math.isfinite(r.config.energy_per_output_joules) for r in rows)
