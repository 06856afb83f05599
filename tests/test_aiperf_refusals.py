"""What import-aiperf refuses: real AIPerf runs that cannot be ranked (tests/fixtures/aiperf:
no telemetry, power integrated, failed requests, mixed GPUs, too short), and hostile or
malformed exports (a real export changed one way each). Every refusal is one located
problem (file, JSON pointer, rule), never a traceback."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from jouleboard.config.registry import Registry, load_registry
from jouleboard.core.problems import Problem, shown_path
from jouleboard.importers.aiperf import read_export, read_exports
from jouleboard.importers.serving_runs import ServingOptions, plan_runs
from jouleboard.kinds import task_kind_order

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "aiperf"
GOOD = FIXTURES / "sweep" / "concurrency_4" / "profile_export_aiperf.json"
OPTIONS = ServingOptions(task="chat", model="example-org/example-llm-8b", tensor_parallel=2)


def skeleton_data(tmp_path: Path) -> tuple[Path, Registry]:
    """A copy of the data folder `jouleboard init` writes, and its registries."""
    data = tmp_path / "data"
    shutil.copytree(REPO / "jouleboard" / "skeleton" / "data", data)
    registry, _ = load_registry(data, task_kind_order())
    assert registry is not None
    return data, registry


def one_problem(path: Path) -> Problem:
    got = read_export(path)
    assert isinstance(got, list), got
    assert len(got) == 1, got
    assert got[0].file == shown_path(path)
    return got[0]


@pytest.mark.parametrize(
    ("case", "rule", "where"),
    [
        ("no-telemetry", "aiperf.no-telemetry", "/telemetry_data/endpoints"),
        (
            "power-only",
            "aiperf.power-integrated",
            r"/telemetry_data/endpoints/[^/]+/gpus/gpu_0/metrics",
        ),
        ("errors", "aiperf.failed-requests", "/error_summary"),
        ("mixed-gpus", "aiperf.mixed-gpus", r"/telemetry_data/endpoints/[^/]+/gpus/gpu_1/gpu_name"),
        ("short", "aiperf.run-too-short", "/end_time"),
    ],
)
def test_real_runs_that_cannot_be_ranked(case: str, rule: str, where: str) -> None:
    problem = one_problem(FIXTURES / case / "profile_export_aiperf.json")
    assert problem.rule == rule
    assert re.fullmatch(where, problem.pointer), problem.pointer


def test_too_short_says_how_long_to_run() -> None:
    """AIPerf's defaults: scrapes 0.333 s apart, 0.666 s of grace: 100 s at least."""
    problem = one_problem(FIXTURES / "short" / "profile_export_aiperf.json")
    needed = int(re.search(r"run at least (\d+) s", problem.hint).group(1))  # type: ignore[union-attr]
    assert 99 <= needed <= 110
    lasted = float(re.search(r"lasted ([\d.]+) s", problem.message).group(1))  # type: ignore[union-attr]
    assert lasted < needed


def test_the_per_phase_copies_of_a_sweep_are_left_out(tmp_path: Path) -> None:
    """AIPerf also writes phases/<phase>/profile_export_aiperf.json, without telemetry."""
    run = tmp_path / "concurrency_4"
    shutil.copytree(FIXTURES / "sweep" / "concurrency_4", run)
    phase = run / "phases" / "profiling"
    phase.mkdir(parents=True)
    doc = json.loads(GOOD.read_text())
    doc.pop("telemetry_data")
    (phase / "profile_export_aiperf.json").write_text(json.dumps(doc))
    runs, skipped, problems = read_exports([tmp_path])
    assert len(runs) == 1 and not problems
    assert [s.why for s in skipped] == ["a per-phase copy of a run's export (no telemetry)"]


def changed(tmp_path: Path, change: Callable[[dict], object]) -> Path:
    doc = json.loads(GOOD.read_text())
    change(doc)
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(doc))  # the C encoder: the 10^6-GPU case in a second
    return path


def gpus(doc: dict) -> dict:
    return next(iter(doc["telemetry_data"]["endpoints"].values()))["gpus"]


def set_in(doc: dict, path: tuple, value: object) -> None:
    for key in path[:-1]:
        doc = doc[key]
    doc[path[-1]] = value


MUTATIONS: dict[str, tuple[Callable[[dict], object], str, str]] = {
    "missing energy": (
        lambda d: d.pop("nvidia_total_gpu_energy"),
        "aiperf.missing-metric",
        "/nvidia_total_gpu_energy",
    ),
    "energy per token in J": (
        lambda d: set_in(d, ("nvidia_energy_per_output_token", "unit"), "J/token"),
        "aiperf.wrong-unit",
        "/nvidia_energy_per_output_token/unit",
    ),
    "per-GPU energy in J, labelled MJ": (
        lambda d: [
            g["metrics"]["nvidia_energy_consumption"].update(
                avg=g["metrics"]["nvidia_energy_consumption"]["avg"] * 1e6
            )
            for g in gpus(d).values()
        ],
        "aiperf.energy-mismatch",
        "/nvidia_total_gpu_energy/avg",
    ),
    "a null figure (AIPerf writes null for NaN)": (
        lambda d: set_in(d, ("inter_token_latency", "p50"), None),
        "aiperf.missing-metric",
        "/inter_token_latency/p50",
    ),
    "true for a number": (
        lambda d: set_in(d, ("total_osl", "avg"), True),
        "aiperf.missing-metric",
        "/total_osl/avg",
    ),
    "negative counter change": (
        lambda d: set_in(gpus(d)["gpu_1"], ("metrics", "nvidia_energy_consumption", "avg"), -0.001),
        "aiperf.bad-energy",
        r"/telemetry_data/endpoints/[^/]+/gpus/gpu_1/metrics/nvidia_energy_consumption/avg",
    ),
    "zero throughput": (
        lambda d: set_in(d, ("output_token_throughput", "avg"), 0),
        "aiperf.not-positive",
        "/output_token_throughput/avg",
    ),
    "tokens per joule from another run": (
        lambda d: set_in(d, ("nvidia_output_tokens_per_joule", "avg"), 0.5),
        "aiperf.inconsistent",
        "/nvidia_output_tokens_per_joule/avg",
    ),
    "cancelled": (lambda d: d.update(was_cancelled=True), "aiperf.cancelled", "/was_cancelled"),
    "incomplete": (lambda d: d.update(is_complete=False), "aiperf.incomplete", "/is_complete"),
    "unknown schema": (
        lambda d: d.update(schema_version="2.0"),
        "aiperf.unknown-schema",
        "/schema_version",
    ),
    "two profiling phases": (
        lambda d: d["input_config"]["phases"].append(d["input_config"]["phases"][-1]),
        "aiperf.no-load-level",
        "/input_config/phases",
    ),
    "a fixed-schedule phase": (
        lambda d: set_in(d["input_config"]["phases"][-1], ("type",), "fixed_schedule"),
        "aiperf.no-load-level",
        "/input_config/phases/1",
    ),
    "two models": (
        lambda d: d["input_config"]["models"]["items"].append({"name": "other"}),
        "aiperf.several-models",
        "/input_config/models/items",
    ),
    "AMD telemetry": (
        lambda d: [g.update(platform="amd") for g in gpus(d).values()],
        "aiperf.unsupported-platform",
        r"/telemetry_data/endpoints/[^/]+/gpus/gpu_0/platform",
    ),
    "a window that ends before it starts": (
        lambda d: d.update(end_time="2020-01-01T00:00:00"),
        "aiperf.bad-window",
        "/end_time",
    ),
    "an unknown collector": (
        lambda d: set_in(d, ("input_config", "gpu_telemetry", "collector"), "csv"),
        "aiperf.unsupported-collector",
        "/input_config/gpu_telemetry/collector",
    ),
    "no power samples to count the scrapes by": (
        lambda d: [g["metrics"].pop("nvidia_power_usage") for g in gpus(d).values()],
        "aiperf.run-too-short",
        "/telemetry_data/endpoints",
    ),
    "10^6 GPUs": (
        lambda d: next(iter(d["telemetry_data"]["endpoints"].values())).update(
            gpus={f"gpu_{i}": {} for i in range(1_000_000)}
        ),
        "aiperf.too-many-gpus",
        "/telemetry_data/endpoints",
    ),
}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.slow) if name == "10^6 GPUs" else name  # 28 MB
        for name in sorted(MUTATIONS)
    ],
)
def test_malformed_exports_are_located(name: str, tmp_path: Path) -> None:
    change, rule, where = MUTATIONS[name]
    problem = one_problem(changed(tmp_path, change))
    assert problem.rule == rule, problem
    assert re.fullmatch(where, problem.pointer), problem.pointer


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "profile_export_aiperf.json"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        (GOOD.read_text().replace('"avg": 0.', '"avg": NaN, "x": 0.', 1), "json.non-finite"),
        ("[" * 40 + "]" * 40, "json.too-deep"),
        ('{"a": 1, "a": 2}', "json.duplicate-key"),
        ("[1, 2]", "schema.wrong-type"),
        (b"\xff\xfe{}", "file.not-utf8"),
        ("{", "json.syntax"),
    ],
)
def test_broken_json_is_located(text: str, rule: str, tmp_path: Path) -> None:
    got = read_export(write(tmp_path, text))
    assert isinstance(got, list) and got and {p.rule for p in got} == {rule}, got


def test_a_huge_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "profile_export_aiperf.json"
    with open(path, "wb") as f:
        f.truncate(65 * 1024 * 1024)  # sparse: no 65 MiB written
    assert one_problem(path).rule == "file.too-large"


def test_a_link_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "profile_export_aiperf.json"
    os.symlink(GOOD, link)
    assert one_problem(link).rule == "file.not-regular"


def test_an_unknown_gpu_is_named(tmp_path: Path) -> None:
    path = changed(
        tmp_path, lambda d: [g.update(gpu_name="NVIDIA GeForce RTX 5090") for g in gpus(d).values()]
    )
    data, registry = skeleton_data(tmp_path)
    runs, _, problems = read_exports([path])
    _, problems = plan_runs("import-aiperf", runs, OPTIONS, registry, data)
    assert [(p.rule, p.file) for p in problems] == [("registry.unknown-gpu", shown_path(path))]
    assert "'NVIDIA GeForce RTX 5090'" in problems[0].message
    assert "--gpu-map 'NVIDIA GeForce RTX 5090=ID'" in problems[0].hint


@pytest.mark.parametrize(
    ("degrees", "rules"),
    [
        ({}, ["serving.no-parallelism"]),  # two GPUs, no degree: TP1 EP1 DP1 had one idle
        ({"data_parallel": 2}, []),  # one degree given: the others are 1
        ({"tensor_parallel": 2}, []),
    ],
)
def test_two_gpus_need_the_servers_parallel_degrees(
    degrees: dict[str, int], rules: list[str], tmp_path: Path
) -> None:
    data, registry = skeleton_data(tmp_path)
    runs, _, problems = read_exports([GOOD])
    assert not problems and all(r.num_gpus == 2 for r in runs)  # the server's two GPUs
    options = ServingOptions(task="chat", model="example-org/example-llm-8b", **degrees)
    plan, problems = plan_runs("import-aiperf", runs, options, registry, data)
    assert [p.rule for p in problems] == rules * len(runs), problems
    if rules:
        assert "--tensor-parallel 2" in problems[0].hint
        return
    serving = [json.loads(text)["serving"] for text in plan.files.values()]
    want = {"tensor_parallel": 1, "expert_parallel": 1, "data_parallel": 1, **degrees}
    assert serving and all({k: s[k] for k in want} == want for s in serving)


def test_a_run_imported_again_with_other_options_is_refused(tmp_path: Path) -> None:
    """The same run imported under a second model (or with other parallel degrees) was
    written beside the first file: one run published as two configurations."""
    from jouleboard.loading.dataset import load_dataset

    data, registry = skeleton_data(tmp_path)
    runs, _, problems = read_exports([GOOD])
    assert not problems
    plan, problems = plan_runs("import-aiperf", runs, OPTIONS, registry, data)
    assert not problems
    for rel, text in plan.files.items():
        (data / rel).parent.mkdir(parents=True, exist_ok=True)
        (data / rel).write_text(text, encoding="utf-8")
    (first,) = plan.files
    existing = load_dataset(data).configurations
    # Again, as it was: the same file, nothing refused (an import is repeatable).
    _, problems = plan_runs("import-aiperf", runs, OPTIONS, registry, data, existing)
    assert problems == []
    # Again with other degrees: another file name, the same run.
    other = ServingOptions(task="chat", model="example-org/example-llm-8b", data_parallel=2)
    again, problems = plan_runs("import-aiperf", runs, other, registry, data, existing)
    assert list(again.files) != [first]
    assert [p.rule for p in problems] == ["serving.already-imported"], problems
    assert shown_path(data / first) in problems[0].message


@pytest.mark.parametrize(
    ("flags", "said", "hint"),
    [
        ({"gpu": "h100"}, "--gpu 'h100' is not in gpus.yaml", "did you mean 'H100'?"),
        (
            {"gpu_map": {"NVIDIA H100 80GB HBM3": "H10"}},
            "--gpu-map gives 'NVIDIA H100 80GB HBM3' the id 'H10', which is not in gpus.yaml",
            "did you mean 'H100'?",
        ),
        (
            {"model": "example-org/example-llm-8B"},
            "--model 'example-org/example-llm-8B'",
            "did you mean 'example-org/example-llm-8b'?",
        ),
    ],
)
def test_a_mistyped_flag_is_named_with_the_id_it_was_near(
    flags: dict[str, object], said: str, hint: str, tmp_path: Path
) -> None:
    """A typo in --gpu-map blamed the export ("GPU 'NVIDIA H100 80GB HBM3' is not in
    gpus.yaml ... map it with --gpu-map", which was given) and named neither the id given
    nor the one meant; --gpu and --model typos had no did-you-mean, as validate's have."""
    data, registry = skeleton_data(tmp_path)
    runs, _, problems = read_exports([GOOD])
    assert not problems
    options = ServingOptions(
        **{"task": "chat", "model": "example-org/example-llm-8b", "tensor_parallel": 2, **flags}  # type: ignore[arg-type]
    )
    _, problems = plan_runs("import-aiperf", runs, options, registry, data)
    assert len(problems) == 1, problems
    assert said in problems[0].message and problems[0].hint.startswith(hint), problems[0]
