"""Parity with the ML.ENERGY data toolkit (``mlenergy-data``, a test-only dependency).

A generated sweep in the toolkit's own layout (tests/runs_generator.py: write_sweep), with
every awkward case of real sweeps, is read by jouleboard (load_runs) and by the toolkit
(LLMRuns / DiffusionRuns.from_raw_results). Both must publish the same runs, and every
metric both compute must agree within 1e-9 relative. The toolkit is the oracle here; the
hand-made cases and the independent numpy computation live in tests/test_raw_runs.py.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from jouleboard.config.registry import Registry, load_registry
from jouleboard.importers.mlenergy_runs import RunOptions, RunPolicy, RunsReport, load_runs
from tests.runs_generator import MODEL_INFOS, sweep_cases, write_sweep
from tests.test_validation_rules import make_data_dir

REL = 1e-9
TASKS_YAML = """\
chat: {name: Chat, benchmark: Chat bench, kind: llm, default_deadline: {ms: 100.0}}
image-chat: {name: Image chat, benchmark: Image bench, kind: mllm, default_deadline: {ms: 100.0}}
text-to-image:
  {name: Text to image, benchmark: T2I, kind: diffusion, output_unit: image,
   response_unit: image, default_deadline: {ms: 30000.0}}
text-to-video:
  {name: Text to video, benchmark: T2V, kind: diffusion, output_unit: video,
   response_unit: video, default_deadline: {ms: 300000.0}}
"""
GPUS_YAML = """\
H100: {name: NVIDIA H100 SXM, vendor: NVIDIA, generation: Hopper, memory_gb: 80.0,
       board_power_watts: 700.0}
B200: {name: NVIDIA B200, vendor: NVIDIA, generation: Blackwell, memory_gb: 180.0,
       board_power_watts: 1000.0}
"""


def models_yaml() -> str:
    lines = []
    for model_id, info in MODEL_INFOS.items():
        lines.append(
            f"{model_id}:\n  nickname: {info['nickname']}\n  builder: Acme\n"
            f"  total_params_billions: {info['total_parameters_billion']}\n"
            f"  active_params_billions: {info['active_parameters_billion']}\n"
            # deliberately not model_info's precision: model_info.json must win
            "  weight_precision: float16\n"
        )
    return "".join(lines)


class Sweep:
    def __init__(self, root: Path, data: Path, registry: Registry) -> None:
        self.root, self.data, self.registry = root, data, registry
        self.cases = write_sweep(root / "bench")
        self.report = load_runs([root / "bench"], registry)
        from mlenergy.data import DiffusionRuns, LLMRuns  # the oracle (0.6 s to import)

        self.llm = LLMRuns.from_raw_results(root / "bench", n_workers=1)
        self.diffusion = DiffusionRuns.from_raw_results(root / "bench", n_workers=1)

    def ours(self, diffusion: bool) -> dict[str, dict[str, Any]]:
        """Published measurement documents by results.json path."""
        return {
            str((p.run.location.run_dir / "results.json").resolve()): p.measurement
            for p in self.report.published
            if (p.measurement["kind"] == "diffusion") == diffusion
        }


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Sweep:
    root = tmp_path_factory.mktemp("parity")
    data = make_data_dir(
        root, models_yaml=models_yaml(), gpus_yaml=GPUS_YAML, tasks_yaml=TASKS_YAML
    )
    registry, problems = load_registry(data)
    assert registry is not None, problems
    return Sweep(root, data, registry)


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=REL, abs_tol=0.0)


def test_the_sweep_reads_without_errors_and_covers_every_case(sweep: Sweep) -> None:
    assert sweep.report.errors == ()
    assert all(sweep.cases[name] for name in sweep_cases()), "a case wrote no run"
    assert len(sweep.cases) >= 18


def test_same_published_llm_and_mllm_runs(sweep: Sweep) -> None:
    toolkit = {str(Path(r._results_path).resolve()) for r in sweep.llm}
    assert set(sweep.ours(diffusion=False)) == toolkit
    assert {r.task for r in sweep.llm} == {"chat", "image-chat"}


LLM_FIELDS = [  # (toolkit field, path in our measurement document)
    ("energy_per_token_joules", "metrics.energy_per_token_joules"),
    ("avg_power_watts", "metrics.avg_power_watts"),
    ("output_throughput_tokens_per_sec", "metrics.output_throughput_tokens_per_sec"),
    ("energy_per_request_joules", "metrics.energy_per_response_joules"),
    ("avg_output_len", "metrics.avg_output_len_tokens"),
    ("median_itl_ms", "metrics.median_itl_ms"),
    ("p90_itl_ms", "metrics.p90_itl_ms"),
    ("p95_itl_ms", "metrics.p95_itl_ms"),
    ("p99_itl_ms", "metrics.p99_itl_ms"),
]
LLM_EXACT = [
    ("task", "task"),
    ("model_id", "model_id"),
    ("gpu_model", "gpu_model"),
    ("num_gpus", "num_gpus"),
    ("max_num_seqs", "serving.max_num_seqs"),
    ("tensor_parallel", "serving.tensor_parallel"),
    ("expert_parallel", "serving.expert_parallel"),
    ("data_parallel", "serving.data_parallel"),
    ("weight_precision", "weight_precision"),
]


def at(doc: dict[str, Any], dotted: str) -> Any:
    for part in dotted.split("."):
        doc = doc.get(part) if isinstance(doc, dict) else None  # type: ignore[assignment]
    return doc


def test_every_shared_llm_metric_agrees(sweep: Sweep) -> None:
    ours = sweep.ours(diffusion=False)
    compared = 0
    for run in sweep.llm:
        doc = ours[str(Path(run._results_path).resolve())]
        for theirs, mine in LLM_FIELDS:
            assert close(getattr(run, theirs), at(doc, mine)), (run._results_path, theirs)
            compared += 1
        assert close(run.avg_batch_size, at(doc, "metrics.avg_batch_size"))
        for theirs, mine in LLM_EXACT:
            assert getattr(run, theirs) == at(doc, mine), (run._results_path, theirs)
    assert compared == len(sweep.llm) * len(LLM_FIELDS) > 0


DIFFUSION_FIELDS = [
    ("energy_per_generation_joules", "metrics.energy_per_output_joules"),
    ("avg_power_watts", "metrics.avg_power_watts"),
    ("throughput_generations_per_sec", "metrics.throughput_outputs_per_sec"),
    ("batch_latency_s", "metrics.batch_latency_s"),
    ("fps", "output.fps"),
]
DIFFUSION_EXACT = [
    ("task", "task"),
    ("model_id", "model_id"),
    ("gpu_model", "gpu_model"),
    ("num_gpus", "num_gpus"),
    ("batch_size", "serving.batch_size"),
    ("ulysses_degree", "serving.ulysses_degree"),
    ("ring_degree", "serving.ring_degree"),
    ("inference_steps", "output.inference_steps"),
    ("height", "output.height_px"),
    ("width", "output.width_px"),
    ("num_frames", "output.num_frames"),
    ("weight_precision", "weight_precision"),
]


def test_same_published_diffusion_runs_and_every_shared_metric(sweep: Sweep) -> None:
    ours = sweep.ours(diffusion=True)
    assert set(ours) == {str(Path(r._results_path).resolve()) for r in sweep.diffusion}
    assert {r.task for r in sweep.diffusion} == {"text-to-image", "text-to-video"}
    for run in sweep.diffusion:
        doc = ours[str(Path(run._results_path).resolve())]
        for theirs, mine in DIFFUSION_FIELDS:
            assert close(getattr(run, theirs), at(doc, mine)), (run._results_path, theirs)
        for theirs, mine in DIFFUSION_EXACT:
            assert getattr(run, theirs) == at(doc, mine), (run._results_path, theirs)


def _dropped(report: RunsReport) -> dict[str, str]:
    return {
        w.file.split("/results.json")[0].split("/prometheus.json")[0]: w.rule
        for w in report.warnings
    }


def test_each_drop_names_its_rule_and_matches_the_toolkits_unstable_runs(sweep: Sweep) -> None:
    from mlenergy.data import LLMRuns

    everything = LLMRuns.from_raw_results(sweep.root / "bench", n_workers=1, stable_only=False)
    unstable = {
        str(Path(r._results_path).parent.resolve()): r.unstable_reason
        for r in everything
        if not r.is_stable
    }
    rules = {str(Path(k).resolve()): v for k, v in _dropped(sweep.report).items()}
    prefix = {
        "short_steady_state": "run.unstable-short-window",
        "invalid_energy_per_token": "run.unstable-nonpositive-energy",
        "low_batch_utilization": "run.unstable-low-batch",
        "cascade_from_unstable_batch": "run.dropped-after-unstable",
    }
    for run_dir, reason in unstable.items():
        assert rules.get(run_dir) == prefix[reason.split(":")[0]], (run_dir, reason)
    others = {k: v for k, v in rules.items() if k not in unstable}
    assert sorted(set(others.values())) == [
        "run.no-successful-request",
        "run.no-valid-iteration",
        "run.not-current-snapshot",
    ]


def test_the_run_without_prometheus_is_published_by_both_unless_required(sweep: Sweep) -> None:
    run_dirs = {
        str(p.resolve())
        for p in (
            *sweep.cases["missing prometheus.json"],
            *sweep.cases["prometheus.json without a batch metric"],
        )
    }
    published = {str(p.run.location.run_dir.resolve()) for p in sweep.report.published}
    toolkit = {str(Path(r._results_path).parent.resolve()) for r in sweep.llm}
    assert run_dirs <= published and run_dirs <= toolkit
    strict = load_runs(
        [sweep.root / "bench"],
        sweep.registry,
        RunOptions(policy=RunPolicy(require_prometheus=True)),
    )
    strict_published = {str(p.run.location.run_dir.resolve()) for p in strict.published}
    assert not run_dirs & strict_published
    assert len(strict.published) == len(sweep.report.published) - len(run_dirs)
    assert {w.rule for w in strict.warnings} >= {"run.unverifiable-no-prometheus"}


def test_summary_counts_runs_found_published_and_dropped_by_rule(sweep: Sweep) -> None:
    r = sweep.report
    text = r.summary()
    assert text.startswith(
        f"{r.found} runs found, {len(r.published)} published, {len(r.warnings)} dropped ("
    )
    assert r.found == len(r.published) + len(r.warnings) == sum(map(len, sweep.cases.values()))
