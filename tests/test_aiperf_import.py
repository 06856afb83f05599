"""import-aiperf against exports the real AIPerf 0.13.0 wrote (tests/fixtures/aiperf, made by
tools/aiperf/make_exports.py against a simulated GPU server on 127.0.0.1; its README).

The oracles are independent of the importer: AIPerf's own figures in each export, and the
counters the simulated server served (``served.json``: every scrape's counters as sent, and
the load log, from which the energy of any window is known exactly)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from jouleboard.config.registry import load_registry
from jouleboard.importers.aiperf import read_export, read_exports
from jouleboard.importers.serving_runs import ServingOptions, plan_runs
from jouleboard.kinds import check_measurement, task_kind_order
from tests.aiperf_oracle import Served, seconds

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "aiperf"
SWEEP = FIXTURES / "sweep"
LEVELS = (1, 4, 16)
MODEL = "example-org/example-llm-8b"
# The simulated server stands for a model split over its two GPUs (TP2).
OPTIONS = ServingOptions(task="chat", model=MODEL, engine="simulated 1.0", tensor_parallel=2)


def export(level: int) -> dict:
    return json.loads((SWEEP / f"concurrency_{level}" / "profile_export_aiperf.json").read_text())


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    shutil.copytree(REPO / "jouleboard" / "skeleton" / "data", folder)
    return folder


def registry(data: Path):  # type: ignore[no-untyped-def]
    found, problems = load_registry(data, task_kind_order())
    assert found is not None, problems
    return found


@pytest.mark.parametrize("level", LEVELS)
def test_energy_is_aiperfs_own_and_its_gpus_counters(level: int) -> None:
    run = read_export(SWEEP / f"concurrency_{level}" / "profile_export_aiperf.json")
    assert not isinstance(run, list), run
    doc = export(level)
    assert run.energy_joules == doc["nvidia_total_gpu_energy"]["avg"]
    per_gpu = [
        g["metrics"]["nvidia_energy_consumption"]["avg"] * 1e6
        for ep in doc["telemetry_data"]["endpoints"].values()
        for g in ep["gpus"].values()
    ]
    assert math.isclose(math.fsum(per_gpu), run.energy_joules, rel_tol=1e-9)
    tokens_per_joule = run.output_tokens / run.energy_joules
    assert math.isclose(
        tokens_per_joule, doc["nvidia_output_tokens_per_joule"]["avg"], rel_tol=1e-9
    )
    # mJ per token in the export, J per token in the measurement
    assert math.isclose(
        run.energy_joules / run.output_tokens * 1000,
        doc["nvidia_energy_per_output_token"]["avg"],
        rel_tol=1e-9,
    )
    assert run.itl_ms == tuple(doc["inter_token_latency"][p] for p in ("p50", "p90", "p95", "p99"))
    assert run.load.concurrency == level
    assert (run.gpu_name, run.num_gpus) == ("NVIDIA H100 80GB HBM3", 2)


@pytest.mark.parametrize("level", LEVELS)
def test_energy_is_a_change_of_the_served_counters_within_the_bias_bound(level: int) -> None:
    """AIPerf's total is the served counters' change between two scrapes, and lies within
    (the longest scrape gap + the grace period) x the GPUs' power of the window's energy."""
    Served.read(SWEEP / "served.json").check(export(level))


def test_the_scrape_interval_in_provenance_is_the_servers(data: Path) -> None:
    run = read_export(SWEEP / "concurrency_4" / "profile_export_aiperf.json")
    assert not isinstance(run, list)
    times = [t for t, _ in Served.read(SWEEP / "served.json").scrapes]
    doc = export(4)
    inside = [t for t in times if seconds(doc["start_time"]) <= t <= seconds(doc["end_time"])]
    mean_gap = (inside[-1] - inside[0]) / (len(inside) - 1)
    stated = float(run.instrument.split("scrapes ")[1].split(" s")[0])
    assert abs(stated - mean_gap) / mean_gap < 0.05, (stated, mean_gap)
    assert run.instrument.startswith("DCGM energy counter via AIPerf 0.13.0")


def test_a_sweep_is_one_configuration_per_level(data: Path) -> None:
    runs, skipped, problems = read_exports([SWEEP])
    assert not problems and not skipped
    plan, problems = plan_runs("import-aiperf", runs, OPTIONS, registry(data), data)
    assert not problems
    docs = [json.loads(t) for t in plan.files.values()]
    assert sorted(d["serving"]["concurrency"] for d in docs) == list(LEVELS)
    records = [
        check_measurement(d, "x", rel, registry(data))[0]
        for rel, d in zip(plan.files, docs, strict=True)
    ]
    assert len({r.identity for r in records if r is not None}) == 3
    for d in docs:
        level = d["serving"]["concurrency"]
        assert d["serving"]["max_num_seqs"] == level  # the batch cap in effect
        assert d["provenance"]["boundary"] == "gpu"
        # The engine given, then the workload the export records it asked for (--osl 48).
        _, _, osl = requested(export(level))
        assert d["serving"]["notes"] == f"simulated 1.0; synthetic prompts, {osl:.0f}-token answers"
        tokens_per_joule = 1 / d["metrics"]["energy_per_token_joules"]
        assert math.isclose(
            tokens_per_joule, export(level)["nvidia_output_tokens_per_joule"]["avg"], rel_tol=1e-9
        )


def test_a_server_batch_cap_smaller_than_the_load_is_the_cap_in_effect(data: Path) -> None:
    runs, _, _ = read_exports([SWEEP])
    options = ServingOptions(task="chat", model=MODEL, max_num_seqs=8, tensor_parallel=2)
    plan, problems = plan_runs("import-aiperf", runs, options, registry(data), data)
    assert not problems
    caps = sorted(
        (d["serving"]["concurrency"], d["serving"]["max_num_seqs"])
        for d in map(json.loads, plan.files.values())
    )
    assert caps == [(1, 1), (4, 4), (16, 8)]


def test_the_same_export_twice_is_one_run(data: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(SWEEP / "concurrency_4", copy)
    runs, _, _ = read_exports([SWEEP / "concurrency_4", copy])
    _plan, problems = plan_runs("import-aiperf", runs, OPTIONS, registry(data), data)
    assert [p.rule for p in problems] == ["serving.same-run"]


def test_a_measurement_without_a_load_level_keeps_the_identity_it_had(data: Path) -> None:
    """Existing data (no load level) is one configuration per file as before, with the same
    identity (the chart sample hashes it); a load level adds one part to it."""
    example = next((data / "measurements").rglob("*.json"))
    doc = json.loads(example.read_text())
    plain, _ = check_measurement(doc, "x", "a.json", registry(data))
    doc["serving"]["concurrency"] = 8
    loaded, _ = check_measurement(doc, "x", "b.json", registry(data))
    assert plain is not None and loaded is not None
    assert plain.identity == (
        "chat", MODEL, "H100", 1, "bfloat16", 64, 1, 1, 1, 1,
    )  # fmt: skip
    assert loaded.identity == (*plain.identity, (8, 0.0))


def requested(doc: dict) -> tuple[str, float, float]:
    """What the run asked AIPerf for, as its ``input_config`` records it: the data set's type
    and the prompt and answer lengths (``--isl`` and ``--osl``)."""
    (dataset,) = doc["input_config"]["datasets"]
    prompts = dataset["prompts"]
    return dataset["type"], prompts["isl"]["mean"], prompts["osl"]["mean"]


@pytest.mark.parametrize("level", LEVELS)
def test_a_synthetic_run_says_what_its_requests_were(level: int) -> None:
    """The sweep ran AIPerf's synthetic prompts with --isl 64 --osl 48 (the fixtures' README):
    the run is imported, with a warning, and its source and serving notes say so, with the
    lengths the requests had (measured), which are the ones asked for (input_config)."""
    run = read_export(SWEEP / f"concurrency_{level}" / "profile_export_aiperf.json")
    assert not isinstance(run, list), run
    kind, isl, osl = requested(export(level))
    assert (kind, isl, osl) == ("synthetic", 64, 48)
    (warning,) = run.warnings
    assert (warning.pointer, warning.rule) == (
        "/input_config/datasets/0/type",
        "aiperf.synthetic-workload",
    )
    said = (
        f"synthetic prompts AIPerf generated ({isl:.0f} tokens on average), "
        f"each answered in exactly {osl:.0f} tokens"
    )
    assert f"the run's requests were {said}: its energy per response" in warning.message
    assert "energy per token" in warning.hint
    assert run.source.endswith(f"; requests: {said})")
    assert run.workload == f"synthetic prompts, {osl:.0f}-token answers"


def edited(tmp_path: Path, kind: str, lengths: tuple[float, float], count: int = 282) -> Path:
    """A copy of a real export whose data set type and answer lengths (min, max) are changed
    (avg, which the figures use, is kept)."""
    doc = export(4)
    doc["input_config"]["datasets"][0]["type"] = kind
    spread = doc["output_sequence_length"]
    spread["min"], spread["max"], spread["count"] = *lengths, count
    spread["std"] = 0.0 if lengths[0] == lengths[1] else 4.0
    path = tmp_path / kind / "profile_export_aiperf.json"
    path.parent.mkdir()
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(
    ("kind", "lengths", "count", "pointer", "label"),
    [
        # The task's own prompts, answers of the model's own lengths: nothing to say.
        ("file", (31.0, 77.0), 282, None, ""),
        # One answer alone says nothing of a fixed length.
        ("file", (48.0, 48.0), 1, None, ""),
        # A length no request has (a hand-edited export): not named, so no source overflows.
        ("file", (1e300, 1e300), 282, None, ""),
        ("file", (48.0, 48.0), 282, "/output_sequence_length", "48-token answers"),
        ("synthetic", (31.0, 77.0), 282, "/input_config/datasets/0/type", "synthetic prompts"),
    ],
)
def test_a_run_is_called_synthetic_only_for_what_its_export_shows(
    tmp_path: Path,
    kind: str,
    lengths: tuple[float, float],
    count: int,
    pointer: str | None,
    label: str,
) -> None:
    run = read_export(edited(tmp_path, kind, lengths, count))
    assert not isinstance(run, list), run
    assert run.workload == label
    assert [w.pointer for w in run.warnings] == ([pointer] if pointer else [])
    assert ("; requests: " in run.source) == bool(pointer)
    if kind == "file" and pointer:
        assert (
            "requests were prompts each answered in exactly 48 tokens:" in run.warnings[0].message
        )


def test_the_engine_keeps_the_notes_when_both_would_not_fit(data: Path) -> None:
    runs, _, _ = read_exports([SWEEP / "concurrency_4"])
    engine = "e" * 190  # serving.notes holds 200 characters
    options = ServingOptions(task="chat", model=MODEL, engine=engine, tensor_parallel=2)
    plan, problems = plan_runs("import-aiperf", runs, options, registry(data), data)
    assert not problems
    (doc,) = map(json.loads, plan.files.values())
    assert doc["serving"]["notes"] == engine
