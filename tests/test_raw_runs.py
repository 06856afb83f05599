"""Raw ML.ENERGY run directories: ITL maths, stability, every error, and a round trip.

Runs are written by tests/runs_generator.py into tmp_path. Expected values are computed here
with independent code (json.load + numpy), never with the reader's own functions.
"""

from __future__ import annotations

import json
import math
import random
import shutil
import tracemalloc
from array import array
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from jouleboard.commands.import_runs import import_runs
from jouleboard.config.registry import Registry, load_registry
from jouleboard.core.problems import Problem, ValidationFailed
from jouleboard.importers import itl as itl_module
from jouleboard.importers.contract import MANIFEST
from jouleboard.importers.itl import order_statistics, percentiles, smooth_itl
from jouleboard.importers.mlenergy_runs import (
    RunOptions,
    RunPolicy,
    RunsReport,
    RuntimeParamsError,
    find_run_dirs,
    is_run_tree,
    load_runs,
    parse_runtime_params,
)
from jouleboard.importers.run_provenance import RunProvenance
from jouleboard.importers.run_results import read_results
from jouleboard.loading.dataset import load_dataset
from jouleboard.rank.ranking import Deadline, rank
from tests.cli_run import jouleboard as jouleboard_here
from tests.runs_generator import (
    DELETE,
    DiffusionSpec,
    RunSpec,
    write_diffusion_run,
    write_model_info,
    write_monolithic,
    write_run,
)
from tests.test_validation_rules import VALID, make_data_dir, write_measurement

REPO = Path(__file__).resolve().parents[1]

MODELS_YAML = """\
acme/tiny-1b:
  nickname: Tiny 1B
  builder: Acme
  total_params_billions: 1.0
  active_params_billions: 1.0
  weight_precision: bfloat16
acme/big-8b:
  nickname: Big 8B
  builder: Acme
  total_params_billions: 8.0
  active_params_billions: 8.0
  weight_precision: fp8
acme/vision-2b:
  nickname: Vision 2B
  builder: Acme
  total_params_billions: 2.0
  active_params_billions: 2.0
  weight_precision: bfloat16
"""
GPUS_YAML = """\
H100:
  name: NVIDIA H100 SXM
  vendor: NVIDIA
  generation: Hopper
  memory_gb: 80.0
  board_power_watts: 700.0
B200:
  name: NVIDIA B200
  vendor: NVIDIA
  generation: Blackwell
  memory_gb: 180.0
  board_power_watts: 1000.0
"""
TASKS_YAML = """\
chat:
  name: Chat
  benchmark: Chat bench
  kind: llm
  default_deadline:
    ms: 100.0
image-chat:
  name: Image chat
  benchmark: Image bench
  kind: mllm
  default_deadline:
    ms: 100.0
"""
BATCH_POINTER = "/steady_state_stats/vllm:num_requests_running"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return make_data_dir(
        tmp_path, models_yaml=MODELS_YAML, gpus_yaml=GPUS_YAML, tasks_yaml=TASKS_YAML
    )


@pytest.fixture
def registry(data: Path) -> Registry:
    reg, problems = load_registry(data)
    assert reg is not None, problems
    return reg


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    return tmp_path / "runs"


# --- independent reference computations ---------------------------------------------------


def expand_chunks(itl: list[float]) -> list[float]:
    """The smoothing rule, written differently: find each chunk [i, j) and share its gap."""
    out: list[float] = []
    i = 0
    while i < len(itl) and itl[i] == 0:  # leading zeros: part of the first chunk, dropped
        i += 1
    while i < len(itl):
        j = i + 1
        while j < len(itl) and itl[j] == 0:
            j += 1
        out += [itl[i] / (j - i)] * (j - i)
        i = j
    return out


def expected_metrics(run_dir: Path) -> dict[str, float]:
    results = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    prometheus = json.loads((run_dir / "prometheus.json").read_text(encoding="utf-8"))
    gaps = [g for r in results["results"] if r["success"] for g in expand_chunks(r["itl"])]
    p50, p90, p95, p99 = np.percentile(np.asarray(gaps), [50, 90, 95, 99]) * 1000
    energy, duration = results["steady_state_energy"], results["steady_state_duration"]
    ept = results["steady_state_energy_per_token"]
    avg_len = results["total_output_tokens"] / results["completed"]
    return {
        "energy_per_token_joules": ept,
        "avg_power_watts": energy / duration,
        "output_throughput_tokens_per_sec": energy / ept / duration,
        "avg_output_len_tokens": avg_len,
        "energy_per_response_joules": ept * avg_len,
        "avg_batch_size": prometheus["steady_state_stats"]["vllm:num_requests_running"],
        "median_itl_ms": p50,
        "p90_itl_ms": p90,
        "p95_itl_ms": p95,
        "p99_itl_ms": p99,
    }


def only(report: RunsReport) -> dict[str, Any]:
    assert not report.errors, "\n".join(map(str, report.errors))
    assert len(report.published) == 1
    return report.published[0].measurement


def the_error(report: RunsReport, rule: str) -> Problem:
    hits = [p for p in report.errors if p.rule == rule]
    assert len(hits) == 1, f"expected one {rule}, got:\n" + "\n".join(map(str, report.errors))
    assert hits[0].message and hits[0].hint
    return hits[0]


def same(shown: str, path: Path) -> bool:
    return Path(shown).resolve() == path.resolve()


# --- ITL smoothing and percentiles ---------------------------------------------------------


@pytest.mark.parametrize(
    ("itl", "expected"),
    [
        ([0.01, 0, 0, 0.03], [0.01 / 3, 0.01 / 3, 0.01 / 3, 0.03]),
        ([0.02, 0.04], [0.02, 0.04]),
        ([0.01, 0, 0.02, 0, 0, 0], [0.005, 0.005, 0.005, 0.005, 0.005, 0.005]),
        ([0, 0, 0.02, 0], [0.01, 0.01]),  # leading zeros came with the first token: dropped
        ([0, 0], []),
        ([], []),
    ],
)
def test_smoothing_hand_made_cases(itl: list[float], expected: list[float]) -> None:
    assert smooth_itl(itl) == pytest.approx(expected, rel=1e-15)
    assert expand_chunks(itl) == pytest.approx(expected, rel=1e-15)


def test_smoothing_agrees_with_the_independent_rule_on_random_streams() -> None:
    rng = random.Random(3)
    for _ in range(300):
        itl = [0.0 if rng.random() < 0.4 else rng.random() for _ in range(rng.randint(0, 30))]
        assert smooth_itl(itl) == expand_chunks(itl)


def _values(kind: str, n: int) -> array[float]:
    """``n`` gaps of a shape, drawn by numpy (Python's own draws took 0.5 s per million)."""
    rng = np.random.default_rng(n)
    if kind == "lognormal":
        drawn = rng.lognormal(-4, 0.8, n)
    elif kind == "constant":
        drawn = np.full(n, 0.02)
    elif kind == "two-values":
        drawn = np.where(rng.random(n) < 0.7, 0.01, 0.05)
    elif kind == "ascending":
        drawn = np.arange(n) / n
    elif kind == "descending":
        drawn = (n - np.arange(n)) / n
    else:  # periodic
        drawn = (np.arange(n) % 97).astype(float)
    return array("d", drawn.astype(np.float64).tobytes())


@pytest.mark.parametrize(
    "kind", ["lognormal", "constant", "two-values", "ascending", "descending", "periodic"]
)
@pytest.mark.parametrize("n", [1, 2, 3, 10, 999, 70_001, 250_000])
def test_percentiles_equal_numpy_bit_for_bit(kind: str, n: int) -> None:
    values = _values(kind, n)
    qs = [0, 1, 50, 90, 95, 99, 99.9, 100]
    expected = [float(x) for x in np.percentile(np.asarray(values), qs)]
    assert list(percentiles(values, qs)) == expected


def test_order_statistics_sort_only_narrow_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes: list[int] = []

    def spy(values: Any) -> list[float]:
        items = list(values)
        sizes.append(len(items))
        return sorted(items)

    monkeypatch.setattr(itl_module, "sorted", spy, raising=False)
    values = _values("lognormal", 1_000_000)
    got = order_statistics(values, [0, 499_999, 500_000, 899_999, 949_999, 989_999, 999_999])
    reference = np.sort(np.asarray(values))
    assert got == {r: float(reference[r]) for r in got}
    assert max(sizes) < len(values) // 10, sizes  # never a sorted copy of all values


def test_order_statistics_falls_back_to_a_full_sort_when_the_sample_misleads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sizes: list[int] = []

    def spy(values: Any) -> list[float]:
        items = list(values)
        sizes.append(len(items))
        return sorted(items)

    monkeypatch.setattr(itl_module, "sorted", spy, raising=False)
    values = _values("lognormal", 100_000)
    ranks = [49_999, 50_000, 89_999, 98_999]
    got = order_statistics(values, ranks, sort_limit=10, sample_size=5_000, margin_sigmas=0.0)
    reference = np.sort(np.asarray(values))
    assert got == {r: float(reference[r]) for r in ranks}
    assert len(values) in sizes  # the windows missed, so everything was sorted: still exact


# --- runtime-params folder names -----------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "tp_ep_dp", "extra"),
    [
        ("num_gpus+1+max_num_seqs+128", (1, 1, 1), {}),
        (
            "num_gpus+4+max_num_seqs+64+max_num_batched_tokens+2048+num_request_repeats+1+seed+48",
            (4, 1, 1),
            {"max_num_batched_tokens": "2048", "num_request_repeats": "1", "seed": "48"},
        ),
        ("num_gpus+8+max_num_seqs+256+ep+8", (1, 8, 1), {}),
        ("num_gpus+8+max_num_seqs+256+ep+8+dp+8", (1, 8, 8), {}),
        ("num_gpus+4+max_num_seqs+32+data_parallel+2", (2, 1, 2), {}),
        ("num_gpus+4+max_num_seqs+32+tensor_parallel_size+2+dp+2+mode+x", (2, 1, 2), {"mode": "x"}),
    ],
)
def test_runtime_params(name: str, tp_ep_dp: tuple[int, int, int], extra: dict[str, str]) -> None:
    p = parse_runtime_params(name)
    assert (p.tensor_parallel, p.expert_parallel, p.data_parallel) == tp_ep_dp
    assert p.extra == extra
    assert p.num_gpus == int(name.split("+")[1])


@pytest.mark.parametrize(
    ("name", "rule", "says"),
    [
        ("max_num_seqs+128", "run.params-missing", "num_gpus"),
        ("num_gpus+1+seed+48", "run.params-missing", "max_num_seqs"),
        ("num_gpus+1+max_num_seqs", "run.params-malformed", "key+value"),
        ("num_gpus++max_num_seqs+8", "run.params-malformed", "key+value"),
        ("num_gpus+one+max_num_seqs+8", "run.params-malformed", "'one'"),
        ("num_gpus+0+max_num_seqs+8", "run.params-malformed", "positive"),
        ("num_gpus+1+max_num_seqs+8+num_gpus+2", "run.params-malformed", "twice"),
        ("num_gpus+2+max_num_seqs+8+tp+2+tensor_parallel+2", "run.params-malformed", "both"),
    ],
)
def test_runtime_params_errors(name: str, rule: str, says: str) -> None:
    with pytest.raises(RuntimeParamsError) as info:
        parse_runtime_params(name)
    assert info.value.rule == rule
    assert says in str(info.value)


# --- reading runs ------------------------------------------------------------------------------


@pytest.mark.parametrize("results_first", [False, True])
def test_a_realistic_run_matches_an_independent_reading(
    runs: Path, registry: Registry, results_first: bool
) -> None:
    run_dir = write_run(
        runs,
        RunSpec(
            num_requests=60,
            failed_every=7,
            chunk_probability=0.3,
            leading_zeros_every=3,
            results_first=results_first,
        ),
    )
    doc = only(load_runs([runs], registry))
    assert doc["metrics"] == pytest.approx(expected_metrics(run_dir), rel=1e-12)
    assert doc["metrics"]["median_itl_ms"] == expected_metrics(run_dir)["median_itl_ms"]
    assert doc["provenance"]["source"] == (
        "run/llm/chat/results/acme/tiny-1b/H100/num_gpus+1+max_num_seqs+64+seed+48"
    )
    assert (
        doc["kind"],
        doc["task"],
        doc["model_id"],
        doc["gpu_model"],
        doc["num_gpus"],
        doc["weight_precision"],
    ) == ("llm", "chat", "acme/tiny-1b", "H100", 1, "bfloat16")
    assert doc["serving"] == {
        "max_num_seqs": 64,
        "tensor_parallel": 1,
        "expert_parallel": 1,
        "data_parallel": 1,
        "notes": "",
    }


def test_configuration_carries_the_same_numbers_and_keeps_unknown_keys(
    runs: Path, registry: Registry
) -> None:
    run_dir = write_run(
        runs,
        RunSpec(
            model_id="acme/big-8b",
            gpu_model="B200",
            num_gpus=4,
            max_num_seqs=128,
            avg_power_watts=2400.0,
            extra_params=(("ep", "4"), ("seed", "7")),
        ),
    )
    report = load_runs([run_dir], registry)
    doc = only(report)
    (published,) = report.published
    c = published.configuration
    assert (
        c.weight_precision,
        c.num_gpus,
        c.max_num_seqs,
        c.tensor_parallel,
        c.expert_parallel,
        c.data_parallel,
    ) == ("fp8", 4, 128, 1, 4, 1)
    assert c.energy_per_token_joules == doc["metrics"]["energy_per_token_joules"]
    assert c.p99_itl_ms == doc["metrics"]["p99_itl_ms"]
    assert c.source == doc["provenance"]["source"]
    assert published.run.params.extra == {"seed": "7"}


def test_multimodal_runs_are_kind_mllm(runs: Path, registry: Registry) -> None:
    write_run(runs, RunSpec(kind="mllm", task="image-chat", model_id="acme/vision-2b"))
    assert only(load_runs([runs], registry))["kind"] == "mllm"


def test_failed_requests_do_not_count(runs: Path, registry: Registry) -> None:
    requests = [
        {"itl": [0.01, 0.0, 0.01]},
        {"itl": [0.02]},
        {"itl": [9.0, 9.0, 9.0], "success": False, "error": "timeout"},
    ]
    write_run(runs, RunSpec(requests=requests))
    m = only(load_runs([runs], registry))["metrics"]
    expected = np.percentile([0.005, 0.005, 0.01, 0.02], [50, 90, 95, 99]) * 1000
    assert [m["median_itl_ms"], m["p90_itl_ms"], m["p95_itl_ms"], m["p99_itl_ms"]] == pytest.approx(
        list(expected), rel=1e-12
    )


def test_energy_per_token_from_steady_output_tokens_when_not_given(
    runs: Path, registry: Registry
) -> None:
    write_run(
        runs,
        RunSpec(
            top_overrides={
                "steady_state_energy_per_token": DELETE,
                "steady_state_output_tokens": 250_000,
            }
        ),
    )
    m = only(load_runs([runs], registry))["metrics"]
    assert m["energy_per_token_joules"] == pytest.approx(500.0 * 60.0 / 250_000, rel=1e-15)
    assert m["output_throughput_tokens_per_sec"] == pytest.approx(250_000 / 60.0, rel=1e-12)


@pytest.mark.slow  # measures memory on large inputs
def test_large_text_and_large_arrays_stream_in_little_memory(runs: Path) -> None:
    run_dir = write_run(
        runs,
        RunSpec(
            num_requests=40, output_len_range=(4_000, 6_000), text_chars=600_000, failed_every=9
        ),
    )
    path = run_dir / "results.json"
    size = path.stat().st_size
    assert size > 40_000_000
    tracemalloc.start()
    try:
        results, problems = read_results(path, "results.json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert not problems and results is not None and results.itl is not None
    assert peak < 0.25 * size, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.0f} MB file"
    expected = expected_metrics(run_dir)
    assert results.itl.median_ms == expected["median_itl_ms"]
    assert results.itl.p99_ms == expected["p99_itl_ms"]
    assert results.failed_requests == 4


# --- finding runs ------------------------------------------------------------------------


def test_a_path_at_any_level_finds_the_runs_below_it(runs: Path) -> None:
    dirs = [write_run(runs, RunSpec(max_num_seqs=s)) for s in (8, 16)]
    other = write_run(runs, RunSpec(model_id="acme/big-8b", gpu_model="B200"))
    run_dir = dirs[0]
    model_dir = run_dir.parent.parent
    levels = {
        runs / "run": 3,
        runs / "run" / "llm": 3,
        runs / "run" / "llm" / "chat": 3,
        runs / "run/llm/chat/results": 3,
        runs / "run/llm/chat/results/acme": 3,
        model_dir: 2,
        run_dir.parent: 2,
        run_dir: 1,
        run_dir / "results.json": 1,
    }
    for path, count in levels.items():
        found, problems = find_run_dirs([path])
        assert not problems, (path, problems)
        assert len(found) == count, path
    found, _ = find_run_dirs([runs, run_dir, other])  # overlapping paths: each run once
    assert [f.run_dir for f in found] == sorted([*dirs, other])


def test_two_copies_of_one_run_are_an_error(runs: Path, registry: Registry, tmp_path: Path) -> None:
    import shutil

    write_run(runs, RunSpec())
    shutil.copytree(runs, tmp_path / "copy")
    report = load_runs([runs, tmp_path / "copy"], registry)
    p = the_error(report, "run.duplicate-run")  # the later path is the copy
    assert same(p.file, RunSpec().run_dir(runs))
    assert str(RunSpec().run_dir(tmp_path / "copy")) in p.message
    assert len(report.published) == 1


def test_run_trees_are_told_apart_from_measurement_files(runs: Path, data: Path) -> None:
    run_dir = write_run(runs, RunSpec())
    path = write_measurement(data, VALID)
    for p in (runs, runs / "run", run_dir, run_dir / "results.json", run_dir.parent):
        assert is_run_tree(p), p
    for p in (data, data / "measurements", path):
        assert not is_run_tree(p), p


# --- stability -----------------------------------------------------------------------------


def sweep(
    runs: Path,
    specs: dict[int, dict[str, Any]] | None = None,
    seqs: tuple[int, ...] = (8, 16, 32, 64),
    **common: Any,
) -> dict[int, Path]:
    specs = specs or {}
    return {
        s: write_run(runs, RunSpec(max_num_seqs=s, **{**common, **specs.get(s, {})})) for s in seqs
    }


def published_seqs(report: RunsReport) -> list[int]:
    return sorted(p.configuration.max_num_seqs for p in report.published)


def test_low_batch_drops_the_run_and_every_larger_max_num_seqs(
    runs: Path, registry: Registry
) -> None:
    dirs = sweep(runs, {32: {"avg_batch_fraction": 0.5}})
    report = load_runs([runs], registry)
    assert not report.errors
    assert published_seqs(report) == [8, 16]
    low, after = report.warnings
    assert (low.rule, low.pointer) == ("run.unstable-low-batch", BATCH_POINTER)
    assert same(low.file, dirs[32] / "prometheus.json")
    assert "50%" in low.message and "max_num_seqs 32" in low.message
    assert after.rule == "run.dropped-after-unstable" and same(after.file, dirs[64])
    assert "above 32" in after.message and "run.unstable-low-batch" in after.message
    assert dirs[32].name in after.hint


@pytest.mark.parametrize(
    ("change", "rule", "where"),
    [
        ({"steady_state_duration_s": 19.5}, "run.unstable-short-window", "/steady_state_duration"),
        (
            {"top_overrides": {"steady_state_energy_per_token": 0.0}},
            "run.unstable-nonpositive-energy",
            "/steady_state_energy_per_token",
        ),
        (
            {"top_overrides": {"steady_state_energy_per_token": -0.1}},
            "run.unstable-nonpositive-energy",
            "/steady_state_energy_per_token",
        ),
    ],
)
def test_unstable_runs_cascade(
    runs: Path, registry: Registry, change: dict[str, Any], rule: str, where: str
) -> None:
    dirs = sweep(runs, {16: change})
    report = load_runs([runs], registry)
    assert not report.errors
    assert published_seqs(report) == [8]
    first, *cascade = report.warnings
    assert (first.rule, first.pointer) == (rule, where)
    assert same(first.file, dirs[16] / "results.json")
    assert [w.rule for w in cascade] == ["run.dropped-after-unstable"] * 2
    assert sorted(Path(w.file).name for w in cascade) == sorted([dirs[32].name, dirs[64].name])


def test_thresholds_are_inclusive(runs: Path, registry: Registry) -> None:
    # 17 / 20 is exactly the 85% bound; 20 s exactly the minimum window.
    write_run(runs, RunSpec(max_num_seqs=20, avg_batch_fraction=0.85, steady_state_duration_s=20.0))
    report = load_runs([runs], registry)
    assert published_seqs(report) == [20] and not report.warnings


def test_the_cascade_stays_in_its_model_task_gpu_and_gpu_count(
    runs: Path, registry: Registry
) -> None:
    sweep(runs, {16: {"avg_batch_fraction": 0.2}})
    sweep(runs, gpu_model="B200")
    sweep(runs, num_gpus=2, avg_power_watts=900.0)
    sweep(runs, model_id="acme/big-8b")
    report = load_runs([runs], registry)
    assert not report.errors
    assert len(report.published) == 4 * 4 - 3
    assert sorted(w.rule for w in report.warnings) == [
        "run.dropped-after-unstable",
        "run.dropped-after-unstable",
        "run.unstable-low-batch",
    ]


def test_a_run_without_prometheus_is_kept_as_the_toolkit_keeps_it(
    runs: Path, registry: Registry
) -> None:
    sweep(runs, {16: {"avg_batch_fraction": None}})
    report = load_runs([runs], registry)
    assert not report.errors and not report.warnings
    assert published_seqs(report) == [8, 16, 32, 64]
    (kept,) = [p for p in report.published if p.configuration.max_num_seqs == 16]
    assert "avg_batch_size" not in kept.measurement["metrics"]
    assert kept.configuration.avg_batch_size is None


def test_require_prometheus_drops_it_but_nothing_else(runs: Path, registry: Registry) -> None:
    dirs = sweep(runs, {16: {"avg_batch_fraction": None}})
    report = load_runs([runs], registry, RunOptions(policy=RunPolicy(require_prometheus=True)))
    assert not report.errors
    assert published_seqs(report) == [8, 32, 64]
    (warning,) = report.warnings
    assert warning.rule == "run.unverifiable-no-prometheus"
    assert same(warning.file, dirs[16] / "prometheus.json")


def test_a_repeat_at_the_unstable_max_num_seqs_is_dropped_too(
    runs: Path, registry: Registry
) -> None:
    # The toolkit's cascade: every run at or above the smallest unstable max_num_seqs.
    write_run(runs, RunSpec(max_num_seqs=32, extra_params=(("seed", "1"),)))
    write_run(runs, RunSpec(max_num_seqs=32, extra_params=(("seed", "2"),), avg_batch_fraction=0.5))
    write_run(runs, RunSpec(max_num_seqs=16))
    report = load_runs([runs], registry)
    assert published_seqs(report) == [16]
    assert sorted(w.rule for w in report.warnings) == [
        "run.dropped-after-unstable",
        "run.unstable-low-batch",
    ]


def test_an_unstable_run_with_no_successful_request_is_a_warning_not_an_error(
    runs: Path, registry: Registry
) -> None:
    write_run(runs, RunSpec(failed_every=1, steady_state_duration_s=0.0))
    report = load_runs([runs], registry)
    assert not report.errors and not report.published
    assert [w.rule for w in report.warnings] == ["run.unstable-short-window"]


# --- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "field",
    [
        "model_id",
        "gpu_model",
        "num_gpus",
        "max_num_seqs",
        "completed",
        "total_output_tokens",
        "steady_state_duration",
        "steady_state_energy",
        "steady_state_energy_per_token",
        "results",
    ],
)
def test_missing_required_field(runs: Path, registry: Registry, field: str) -> None:
    run_dir = write_run(runs, RunSpec(top_overrides={field: DELETE}))
    report = load_runs([runs], registry)
    p = the_error(report, "run.missing-field")
    assert (p.pointer, same(p.file, run_dir / "results.json")) == (f"/{field}", True)
    assert not report.published


@pytest.mark.parametrize(
    ("field", "value", "where"),
    [
        ("num_gpus", "1", "/num_gpus"),
        ("completed", 12.5, "/completed"),
        ("steady_state_energy", None, "/steady_state_energy"),
        ("model_id", {"org": "acme"}, "/model_id"),
        ("results", {"0": {}}, "/results"),
    ],
)
def test_wrong_types(runs: Path, registry: Registry, field: str, value: Any, where: str) -> None:
    write_run(runs, RunSpec(top_overrides={field: value}))
    assert the_error(load_runs([runs], registry), "run.wrong-type").pointer == where


def test_missing_results_json(runs: Path, registry: Registry) -> None:
    run_dir = write_run(runs, RunSpec())
    (run_dir / "results.json").unlink()
    p = the_error(load_runs([runs], registry), "run.missing-results")
    assert same(p.file, run_dir) and p.pointer == ""


def test_no_successful_request_is_a_drop(runs: Path, registry: Registry) -> None:
    # The toolkit skips a run without ITL values; jouleboard drops it and says why.
    run_dir = write_run(runs, RunSpec(failed_every=1))
    report = load_runs([runs], registry)
    assert not report.errors and not report.published
    (p,) = report.warnings
    assert (p.rule, p.pointer, same(p.file, run_dir / "results.json")) == (
        "run.no-successful-request",
        "/results",
        True,
    )
    assert "40 failed" in p.message


def test_no_itl_values_is_a_drop(runs: Path, registry: Registry) -> None:
    write_run(runs, RunSpec(requests=[{"itl": []}, {"itl": [0.0, 0.0]}]))
    report = load_runs([runs], registry)
    assert not report.errors and not report.published
    assert [(w.rule, w.pointer) for w in report.warnings] == [("run.no-itl", "/results")]


@pytest.mark.parametrize(
    ("folder", "says"),
    [
        ("max_num_seqs+64+seed+1", "num_gpus"),
        ("num_gpus+1+seed+1", "max_num_seqs"),
    ],
)
def test_folder_name_without_num_gpus_or_max_num_seqs(
    runs: Path, registry: Registry, folder: str, says: str
) -> None:
    run_dir = write_run(runs, RunSpec(folder_name=folder))
    p = the_error(load_runs([runs], registry), "run.params-missing")
    assert same(p.file, run_dir) and says in p.message and "num_gpus+1" in p.hint


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("model_id", "acme/other-1b"),
        ("gpu_model", "B200"),
        ("num_gpus", 2),
        ("max_num_seqs", 128),
    ],
)
def test_path_and_results_json_disagree(
    runs: Path, registry: Registry, field: str, value: Any
) -> None:
    write_run(runs, RunSpec(top_overrides={field: value}))
    p = the_error(load_runs([runs], registry), "run.path-mismatch")
    assert p.pointer == f"/{field}" and repr(value) in p.message


def test_unknown_model(runs: Path, registry: Registry) -> None:
    run_dir = write_run(runs, RunSpec(model_id="acme/unknown-3b"))
    p = the_error(load_runs([runs], registry), "registry.unknown-model")
    assert (p.pointer, same(p.file, run_dir / "results.json")) == ("/model_id", True)
    assert "models.yaml" in p.hint


@pytest.mark.parametrize(
    ("spec", "rule", "where"),
    [
        (RunSpec(avg_power_watts=900.0), "bounds.power-above-limit", "/metrics/avg_power_watts"),
        (RunSpec(gpu_model="A100"), "registry.unknown-gpu", "/gpu_model"),
        (RunSpec(kind="mllm"), "registry.kind-mismatch", "/kind"),
        (RunSpec(task="summaries"), "registry.unknown-task", "/task"),
        (RunSpec(itl_s=0.0001), "bounds.itl-implausible", "/metrics/median_itl_ms"),
    ],
)
def test_raw_runs_get_the_measurement_checks(
    runs: Path, registry: Registry, spec: RunSpec, rule: str, where: str
) -> None:
    run_dir = write_run(runs, spec)
    p = the_error(load_runs([runs], registry), rule)
    assert p.pointer == where and same(p.file, run_dir)


@pytest.mark.parametrize("text", ['{"model_id": "acme/tiny-1b", ', '{"completed": NaN}', ""])
def test_results_json_that_is_not_json(runs: Path, registry: Registry, text: str) -> None:
    run_dir = write_run(runs, RunSpec())
    (run_dir / "results.json").write_text(text, encoding="utf-8")
    assert "not valid JSON" in the_error(load_runs([runs], registry), "run.json-syntax").message


@pytest.mark.parametrize(
    ("request_", "rule", "where"),
    [
        ({"itl": [0.01, -0.002]}, "run.bad-itl", "/results/1/itl"),
        ({"itl": [0.01, "0.02"]}, "run.wrong-type", "/results/1/itl/1"),
        ({"itl": 0.01}, "run.wrong-type", "/results/1/itl"),
        ({"itl": [0.01], "success": "yes"}, "run.wrong-type", "/results/1/success"),
    ],
)
def test_bad_requests_are_located(
    runs: Path, registry: Registry, request_: dict[str, Any], rule: str, where: str
) -> None:
    write_run(runs, RunSpec(requests=[{"itl": [0.01, 0.02]}, request_]))
    assert the_error(load_runs([runs], registry), rule).pointer == where


def test_a_request_without_success_flag(runs: Path, registry: Registry) -> None:
    run_dir = write_run(runs, RunSpec(requests=[{"itl": [0.01, 0.02]}]))
    text = (run_dir / "results.json").read_text(encoding="utf-8")
    (run_dir / "results.json").write_text(text.replace('"success": true, ', ""), encoding="utf-8")
    assert (
        the_error(load_runs([runs], registry), "run.missing-field").pointer == "/results/0/success"
    )


def test_many_bad_requests_are_summarised(runs: Path, registry: Registry) -> None:
    write_run(runs, RunSpec(requests=[{"itl": [-1.0]}] * 50))
    report = load_runs([runs], registry)
    assert [p.rule for p in report.errors].count("run.bad-itl") == 5
    assert "45 more" in the_error(report, "run.more-problems").message


def test_prometheus_without_the_batch_size_is_like_no_prometheus(
    runs: Path, registry: Registry
) -> None:
    write_run(runs, RunSpec(prometheus_overrides={"vllm:kv_cache_usage_perc": 0.3}))
    report = load_runs([runs], registry)
    assert not report.errors and not report.warnings
    assert "avg_batch_size" not in only(report)["metrics"]


def test_layout_errors(runs: Path, registry: Registry, tmp_path: Path) -> None:
    stray = runs / "misc" / "results.json"
    stray.parent.mkdir(parents=True)
    stray.write_text("{}", encoding="utf-8")
    p = the_error(load_runs([runs], registry), "run.bad-layout")
    assert same(p.file, stray) and "run/{llm,mllm}/" in p.hint
    (tmp_path / "empty").mkdir()
    the_error(load_runs([tmp_path / "empty"], registry), "run.none-found")
    the_error(load_runs([tmp_path / "nowhere"], registry), "file.missing")


def test_every_error_is_reported_in_one_pass(runs: Path, registry: Registry) -> None:
    write_run(runs, RunSpec(max_num_seqs=8, top_overrides={"completed": DELETE}))
    write_run(runs, RunSpec(folder_name="num_gpus+1"))
    write_run(runs, RunSpec(model_id="acme/unknown-3b"))
    write_run(runs, RunSpec(max_num_seqs=16))  # fine
    report = load_runs([runs], registry)
    assert sorted(p.rule for p in report.errors) == [
        "registry.unknown-model",
        "run.missing-field",
        "run.params-missing",
    ]
    assert published_seqs(report) == [16]


# --- import and round trip -------------------------------------------------------------------


def ranking(configs: Any, deadline: Deadline) -> list[tuple[Any, ...]]:
    return [
        (
            r.rank,
            r.config.model_id,
            r.config.gpu_model,
            r.config.num_gpus,
            r.config.max_num_seqs,
            r.config.energy_per_token_joules,
            r.config.median_itl_ms,
            r.config.p99_itl_ms,
        )
        for r in rank(configs, deadline)
    ]


def realistic_tree(runs: Path) -> None:
    """Three models, two GPUs, sweeps whose latency and energy trade off, some unstable."""
    for model, gpu, power, base_itl in [
        ("acme/tiny-1b", "H100", 450.0, 0.012),
        ("acme/tiny-1b", "B200", 700.0, 0.008),
        ("acme/big-8b", "B200", 900.0, 0.02),
        ("acme/big-8b", "H100", 650.0, 0.03),
    ]:
        for i, seqs in enumerate((8, 16, 32, 64, 128)):
            write_run(
                runs,
                RunSpec(
                    model_id=model,
                    gpu_model=gpu,
                    max_num_seqs=seqs,
                    avg_power_watts=power,
                    itl_s=base_itl * (1.6**i),
                    seed=seqs,
                    num_requests=20,
                    avg_batch_fraction=0.6
                    if (model, gpu, seqs) == ("acme/big-8b", "H100", 64)
                    else 0.97,
                ),
            )
    write_run(runs, RunSpec(kind="mllm", task="image-chat", model_id="acme/vision-2b"))


def test_import_then_load_ranks_like_the_raw_runs(
    runs: Path, data: Path, registry: Registry
) -> None:
    import jsonschema

    realistic_tree(runs)
    report = load_runs([runs], registry)
    assert not report.errors
    assert len(report.published) == 4 * 5 - 2 + 1 and len(report.warnings) == 2

    summary = import_runs([runs], data)
    assert len(summary.written) == len(report.published)
    assert summary.warnings == report.warnings
    schema = json.loads((REPO / "schema" / "measurement.schema.json").read_text())
    checker = jsonschema.validators.validator_for(schema)
    checker.check_schema(schema)
    valid = checker(schema)  # one validator (jsonschema.validate makes one per file: 25 ms)
    for rel in summary.written:
        doc = json.loads((data / rel).read_text(encoding="utf-8"))
        valid.validate(doc)
        assert doc["provenance"]["source"].startswith("run/")
    assert "measurements/chat/acme/big-8b/B200-x1-fp8-tp1-ep1-dp1-seqs32.json" in summary.written

    dataset = load_dataset(data)
    assert len(dataset.configurations) == len(report.published)
    for task in ("chat", "image-chat"):
        raw = [c for c in report.configurations if c.task == task]
        for deadline in (
            Deadline(15.0),
            Deadline(40.0),
            Deadline(1000.0),
            Deadline(60.0, "p99"),
            Deadline(25.0, "p90"),
        ):
            from_files = ranking(dataset.for_task(task), deadline)
            assert from_files == ranking(raw, deadline)
            if deadline.ms == 1000.0:
                assert from_files, "the round trip should compare a non-empty ranking"

    before = {rel: (data / rel).read_bytes() for rel in summary.written}
    assert import_runs([runs], data).written == summary.written  # idempotent
    assert {rel: (data / rel).read_bytes() for rel in summary.written} == before


def test_repeat_runs_are_numbered(runs: Path, data: Path) -> None:
    write_run(runs, RunSpec(extra_params=(("seed", "1"),)))
    write_run(runs, RunSpec(extra_params=(("seed", "2"),), seed=5))
    summary = import_runs([runs], data)
    assert [Path(p).name for p in summary.written] == [
        "H100-x1-bfloat16-tp1-ep1-dp1-seqs64-r2.json",
        "H100-x1-bfloat16-tp1-ep1-dp1-seqs64.json",
    ]
    load_dataset(data)


def test_import_refuses_to_replace_or_duplicate_and_writes_nothing(runs: Path, data: Path) -> None:
    write_run(runs, RunSpec())
    hand_named = write_measurement(data, VALID)  # the same configuration, another file
    with pytest.raises(ValidationFailed) as info:
        import_runs([runs], data)
    assert [p.rule for p in info.value.problems] == ["dataset.duplicate-configuration"]
    assert list((data / "measurements").rglob("*.json")) == [hand_named]

    hand_named.unlink()
    summary = import_runs([runs], data)
    (written,) = summary.written
    doc = json.loads((data / written).read_text(encoding="utf-8"))
    doc["provenance"]["source"] = "somewhere else"
    (data / written).write_text(json.dumps(doc), encoding="utf-8")
    (data / MANIFEST).unlink()  # now nothing says import-runs wrote it
    with pytest.raises(ValidationFailed) as info:
        import_runs([runs], data)
    (p,) = info.value.problems  # not in the manifest (as if a person had put it there)
    assert (p.rule, same(p.file, data / written)) == ("import.would-replace", True)
    assert json.loads((data / written).read_text())["provenance"]["source"] == "somewhere else"


def test_import_fails_on_any_run_error(runs: Path, data: Path) -> None:
    write_run(runs, RunSpec(max_num_seqs=8))
    write_run(runs, RunSpec(max_num_seqs=16, top_overrides={"completed": DELETE}))
    with pytest.raises(ValidationFailed):
        import_runs([runs], data)
    assert not list((data / "measurements").rglob("*.json"))


def test_numbers_stay_finite(runs: Path, registry: Registry) -> None:
    write_run(runs, RunSpec(requests=[{"itl": [1e-3] * 10}]))
    m = only(load_runs([runs], registry))["metrics"]
    assert all(math.isfinite(v) for v in m.values())


def test_a_reimport_replaces_its_own_files_and_keeps_everything_else(
    runs: Path, data: Path
) -> None:
    write_run(runs, RunSpec())
    (written,) = import_runs([runs], data).written
    assert json.loads((data / MANIFEST).read_text()) == {"import-runs": [written]}
    doc = json.loads((data / written).read_text())
    doc["serving"]["notes"] = "edited by hand"  # import-runs' own file, edited
    (data / written).write_text(json.dumps(doc), encoding="utf-8")
    notes = data / "NOTES.md"  # a person's file in the data folder
    notes.write_text("mine", encoding="utf-8")
    # The re-import would drop the note: refused, naming it, with nothing written (issue 39:
    # an importer never replaces its own file with less than it holds).
    with pytest.raises(ValidationFailed) as lost:
        import_runs([runs], data)
    (problem,) = lost.value.problems
    assert problem.rule == "import.would-lose" and problem.pointer == "/serving/notes"
    assert json.loads((data / written).read_text())["serving"]["notes"] == "edited by hand"
    (data / written).unlink()  # as its hint says: remove it to replace it with less
    assert import_runs([runs], data).written == (written,)
    assert json.loads((data / written).read_text())["serving"]["notes"] == ""
    assert notes.read_text() == "mine"


# --- provenance, configs/ and unknown models, diffusion errors ------------------------------


def test_provenance_is_the_runs_own_never_the_sites(runs: Path, registry: Registry) -> None:
    write_run(runs, RunSpec(max_num_seqs=8, top_overrides={"date": "20260301-142233"}))
    write_run(runs, RunSpec(max_num_seqs=16))
    docs = {
        p.configuration.max_num_seqs: p.measurement["provenance"]
        for p in load_runs([runs], registry).published
    }
    assert docs[8]["date"] == "2026-03-01" and docs[16]["date"] == "unknown"
    assert registry.site.data_date not in (docs[8]["date"], docs[16]["date"])
    assert (docs[16]["dataset"], docs[16]["version"], docs[16]["license"]) == (
        "ML.ENERGY Benchmark run",
        "unknown",
        "NOASSERTION",
    )
    (runs / "jouleboard-provenance.yaml").write_text(
        "dataset: Acme sweep\nversion: '2'\ndate: 2026-02-02\nlicense: CC-BY-4.0\n"
    )
    options = RunOptions(
        provenance=RunProvenance(citation="Acme 2026"), explicit=frozenset({"citation"})
    )
    docs = {
        p.configuration.max_num_seqs: p.measurement["provenance"]
        for p in load_runs([runs], registry, options).published
    }
    assert docs[8]["date"] == "2026-03-01"  # the run's own date beats the file's
    assert docs[16] | {"source": ""} == {
        "dataset": "Acme sweep",
        "version": "2",
        "date": "2026-02-02",
        "license": "CC-BY-4.0",
        "citation": "Acme 2026",
        "source": "",
        # Raw runs are the ML.ENERGY toolkit's: GPU energy in each run's steady window
        # (docs/raw-runs.md), whatever the provenance file says.
        "boundary": "gpu",
        "instrument": "NVML energy counters (Zeus)",
        "window": "steady-state",
    }


def test_a_run_on_an_amd_gpu_names_the_counters_zeus_read_there(tmp_path: Path) -> None:
    """Zeus reads AMD GPUs through AMD SMI, not NVML: a run on an MI300X was published as
    measured by "NVML energy counters (Zeus)". A GPU of a vendor Zeus has no reader for
    named here is said to be read by its counters, without naming a library."""
    amd = "MI300X:\n  name: AMD Instinct MI300X\n  vendor: AMD\n  generation: CDNA 3\n"
    other = "X1:\n  name: Example X1\n  vendor: Example Corp\n  generation: One\n"
    board = "  memory_gb: 192.0\n  board_power_watts: 750.0\n"
    data = make_data_dir(
        tmp_path,
        models_yaml=MODELS_YAML,
        gpus_yaml=GPUS_YAML + amd + board + other + board,
        tasks_yaml=TASKS_YAML,
    )
    reg, problems = load_registry(data)
    assert reg is not None, problems
    runs = tmp_path / "runs"
    for gpu in ("MI300X", "X1", "H100"):
        write_run(runs, RunSpec(gpu_model=gpu))
    instruments = {
        p.measurement["gpu_model"]: p.measurement["provenance"]["instrument"]
        for p in load_runs([runs], reg).published
    }
    assert instruments == {
        "MI300X": "AMD SMI energy counters (Zeus)",
        "X1": "GPU energy counters (Zeus)",
        "H100": "NVML energy counters (Zeus)",
    }


def test_a_bad_provenance_file_is_an_error(runs: Path, registry: Registry) -> None:
    write_run(runs, RunSpec())
    (runs / "jouleboard-provenance.yaml").write_text("licence: MIT\ndate: March\n")
    report = load_runs([runs], registry)
    assert sorted((p.rule, p.pointer) for p in report.errors) == [
        ("run.provenance-invalid", "/date"),
        ("run.provenance-invalid", "/licence"),
    ]


def test_configs_give_parallelism_and_precision(runs: Path, registry: Registry) -> None:
    spec = RunSpec(num_gpus=4, max_num_seqs=64, avg_power_watts=1600.0)
    write_run(runs, spec)
    write_monolithic(
        runs,
        "chat",
        "acme/tiny-1b",
        "H100",
        {"enable-expert-parallel": True, "data-parallel-size": 2},
    )
    write_model_info(
        runs,
        "vllm",
        "chat",
        "acme/tiny-1b",
        {"total_parameters_billion": 1.0, "weight_precision": "fp8"},
    )
    doc = only(load_runs([runs], registry))
    assert doc["serving"] | {"notes": ""} == {
        "max_num_seqs": 64,
        "tensor_parallel": 1,
        "expert_parallel": 4,
        "data_parallel": 2,
        "notes": "",
    }
    assert doc["weight_precision"] == "fp8"  # model_info.json, not models.yaml's bfloat16


def test_an_unknown_model_error_prints_its_models_yaml_entry_and_add_models_adds_it(
    runs: Path, data: Path, tmp_path: Path
) -> None:
    write_run(runs, RunSpec(model_id="newco/fresh-7b"))
    write_model_info(
        runs,
        "vllm",
        "chat",
        "newco/fresh-7b",
        {
            "nickname": "Fresh 7B",
            "total_parameters_billion": 7.0,
            "active_parameters_billion": 7.0,
            "weight_precision": "bfloat16",
        },
    )
    # The report shows a problem on one line: the entry printed on several came out with
    # literal "\n"s, which no one could paste. Pasted as printed, it is now a valid entry.
    out = jouleboard_here("import-runs", str(runs), "--out", str(data), timeout=120)
    (line,) = [ln for ln in out.stderr.splitlines() if "registry.unknown-model" in ln]
    assert out.returncode == 1 and "--add-models" in line and "\\n" not in line, out.stderr
    pasted = tmp_path / "pasted"
    shutil.copytree(data, pasted)
    with (pasted / "models.yaml").open("a", encoding="utf-8") as models:
        models.write(line.split("as one line: ", 1)[1].removesuffix(")") + "\n")
    registry, problems = load_registry(pasted)
    assert problems == [] and registry is not None, problems
    fresh = registry.models["newco/fresh-7b"]
    assert (fresh.nickname, fresh.total_params_billions) == ("Fresh 7B", 7.0)
    summary = import_runs([runs], data, RunOptions(add_models=True))
    assert summary.added_models == ("newco/fresh-7b",) and len(summary.written) == 1
    assert load_dataset(data).registry.models["newco/fresh-7b"].nickname == "Fresh 7B"


@pytest.mark.parametrize(
    ("change", "rule"),
    [
        ({"folder_name": "batch-2+size-1024+steps-20+uly-1+ring-1"}, "run.params-malformed"),
        ({"folder_name": "batch-2+size-64x64+uly-1+ring-1"}, "run.params-missing"),
        ({"results_overrides": {"batch_size": 3}}, "run.path-mismatch"),
        ({"results_overrides": {"iteration_energy_measurements": DELETE}}, "run.missing-field"),
        (
            {"results_overrides": {"iteration_energy_measurements": [{"time": "1"}]}},
            "run.wrong-type",
        ),
    ],
)
def test_diffusion_errors_name_the_rule(
    runs: Path, registry: Registry, change: dict[str, Any], rule: str
) -> None:
    write_diffusion_run(runs, DiffusionSpec(model_id="acme/tiny-1b", task="chat", **change))
    assert the_error(load_runs([runs], registry), rule)
