"""import-bench: TensorRT-LLM benchmark_serving results with an energy block
(tests/fixtures/trtllm: made by tools/aiperf/make_trtllm_result.py against the simulated GPU
server, following the script's own result-writing code; its README says why the script
itself could not run here). The oracle is the result's own energy block."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from jouleboard.config.registry import load_registry
from jouleboard.core.problems import shown_path
from jouleboard.importers.serving_runs import ServingOptions, plan_runs
from jouleboard.importers.trtllm_bench import read_result, read_results
from jouleboard.kinds import task_kind_order

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "trtllm"
WITH_ENERGY = next((FIXTURES / "with-energy").glob("*.json"))
NO_ENERGY = next((FIXTURES / "no-energy").glob("*.json"))
OPTIONS = ServingOptions(
    task="chat",
    model="example-org/example-llm-8b",
    gpu="H100",
    num_gpus=2,
    tensor_parallel=2,
    engine="TensorRT-LLM",
)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    shutil.copytree(REPO / "jouleboard" / "skeleton" / "data", folder)
    return folder


def plan(data: Path, paths: list[Path], options: ServingOptions = OPTIONS):  # type: ignore[no-untyped-def]
    registry, problems = load_registry(data, task_kind_order())
    assert registry is not None, problems
    runs, _, read_problems = read_results(paths)
    made, problems = plan_runs("import-bench", runs, options, registry, data)
    return made, read_problems + problems


def test_a_result_with_energy_imports_with_its_own_figures(data: Path) -> None:
    made, problems = plan(data, [WITH_ENERGY])
    assert not problems
    (doc,) = [json.loads(t) for t in made.files.values()]
    result = json.loads(WITH_ENERGY.read_text())
    energy = result["energy"]
    # "output_tps_per_w" is output tokens per joule
    assert math.isclose(
        1 / doc["metrics"]["energy_per_token_joules"], energy["output_tps_per_w"], rel_tol=1e-9
    )
    assert math.isclose(
        doc["metrics"]["energy_per_token_joules"] * result["total_output_tokens"],
        energy["total_energy_j"],
        rel_tol=1e-9,
    )
    assert doc["metrics"]["avg_power_watts"] == energy["total_gpu_power_w"]
    assert doc["metrics"]["median_itl_ms"] == result["median_itl_ms"]
    assert doc["metrics"]["p99_itl_ms"] == result["p99_itl_ms"]
    assert doc["metrics"]["mean_ttft_ms"] == result["mean_ttft_ms"]
    assert doc["serving"]["concurrency"] == result["max_concurrency"]
    assert (doc["gpu_model"], doc["num_gpus"]) == ("H100", 2)
    assert doc["provenance"]["date"] == "-".join(
        (result["date"][:4], result["date"][4:6], result["date"][6:8])
    )
    # Its energy spans the benchmark's whole duration (energy / duration is its average
    # power), and the file says so: no steady state is claimed for it.
    assert math.isclose(
        energy["total_energy_j"] / result["duration"], energy["total_gpu_power_w"], rel_tol=1e-3
    )
    assert doc["provenance"]["window"] == "whole-run"


def test_without_energy_it_is_refused_in_one_line(data: Path) -> None:
    got = read_result(NO_ENERGY)
    assert isinstance(got, list) and len(got) == 1
    assert (got[0].file, got[0].pointer, got[0].rule) == (
        shown_path(NO_ENERGY),
        "/energy",
        "bench.no-energy",
    )
    assert got[0].message.startswith("no energy recorded")


def test_the_gpus_must_be_named(data: Path) -> None:
    options = ServingOptions(task="chat", model="example-org/example-llm-8b")
    _, problems = plan(data, [WITH_ENERGY], options)
    assert sorted(p.rule for p in problems) == ["serving.no-gpu", "serving.no-gpu-count"]


def changed(tmp_path: Path, change) -> Path:  # type: ignore[no-untyped-def]
    doc = json.loads(WITH_ENERGY.read_text())
    change(doc)
    path = tmp_path / "result.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(
    ("change", "rule", "where"),
    [
        (lambda d: d.pop("p90_itl_ms"), "bench.missing-field", "/p90_itl_ms"),
        (
            lambda d: d["energy"].update(total_energy_j=None),
            "bench.missing-field",
            "/energy/total_energy_j",
        ),
        (
            lambda d: d["energy"].update(output_tps_per_w=d["energy"]["output_tps_per_w"] / 1000),
            "bench.inconsistent",
            "/energy/output_tps_per_w",
        ),
        (lambda d: d.update(completed=d["completed"] - 3), "bench.failed-requests", "/completed"),
        (
            lambda d: d.update(duration=d["duration"] / 2),
            "bench.window-mismatch",
            "/energy/total_gpu_power_w",
        ),
    ],
)
def test_broken_results_are_located(tmp_path: Path, change, rule: str, where: str) -> None:  # type: ignore[no-untyped-def]
    got = read_result(changed(tmp_path, change))
    assert isinstance(got, list) and len(got) == 1, got
    assert (got[0].rule, got[0].pointer) == (rule, where)


def test_a_folder_of_results_leaves_pytorch_copies_out(tmp_path: Path) -> None:
    shutil.copy(WITH_ENERGY, tmp_path / WITH_ENERGY.name)
    (tmp_path / WITH_ENERGY.name.replace(".json", ".pytorch.json")).write_text("[]")
    runs, skipped, problems = read_results([tmp_path])
    assert len(runs) == 1 and not problems
    assert [s.why for s in skipped] == ["a PyTorch-format copy"]
