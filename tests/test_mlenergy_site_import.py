"""The ML.ENERGY site-data importer on a small committed excerpt (tests/fixtures/mlenergy-site):
deterministic, byte-identical to the committed data it produced, every source value kept."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from jouleboard.kinds.token_records import Configuration
from jouleboard.loading.dataset import load_dataset
from tests.cli_run import jouleboard as jouleboard_here

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "mlenergy-site"
UNITS = {"text-to-image": "image", "text-to-video": "video"}


def _tree_hash(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _import(out: Path) -> None:
    done = jouleboard_here("import-mlenergy", FIXTURE, "--out", out, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("import") / "data"
    _import(out)
    return out


def _sources() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((FIXTURE / "models").glob("*.json"))]


def test_import_is_deterministic(imported: Path, tmp_path: Path) -> None:
    again = tmp_path / "data"
    _import(again)
    _import(again)  # a re-import over its own output changes nothing
    assert _tree_hash(again) == _tree_hash(imported)


def test_imported_files_equal_the_committed_data(imported: Path) -> None:
    """The committed data/ came from this importer: the excerpt's files are byte-identical."""
    measured = {k: v for k, v in _tree_hash(imported).items() if k.startswith("measurements/")}
    expected = sum(len(m["configurations"]) for m in _sources())
    assert len(measured) == expected
    committed = REPO / "data"
    for path, digest in measured.items():
        assert hashlib.sha256((committed / path).read_bytes()).hexdigest() == digest, path


def test_importer_keeps_every_token_value(imported: Path) -> None:
    data = load_dataset(imported)
    tokens = [c for c in data.configurations if isinstance(c, Configuration)]
    index = json.loads((FIXTURE / "index.json").read_text())
    ours = {
        (
            c.task,
            c.model_id,
            c.gpu_model,
            c.num_gpus,
            c.max_num_seqs,
            c.tensor_parallel,
            c.expert_parallel,
            c.data_parallel,
        ): c
        for c in tokens
    }
    count = 0
    for model in _sources():
        if model["task"] in UNITS:
            continue
        for src in model["configurations"]:
            par = src["parallelization"]
            c = ours[
                (
                    model["task"],
                    model["model_id"],
                    src["gpu_model"],
                    src["num_gpus"],
                    src["max_num_seqs"],
                    par["tensor_parallel"],
                    par["expert_parallel"],
                    par["data_parallel"],
                )
            ]
            assert (
                c.energy_per_token_joules,
                c.avg_power_watts,
                c.output_throughput_tokens_per_sec,
                c.energy_per_response_joules,
                c.avg_output_len_tokens,
                c.avg_batch_size,
                c.median_itl_ms,
                c.p90_itl_ms,
                c.p95_itl_ms,
                c.p99_itl_ms,
            ) == (
                src["energy_per_token_joules"],
                src["avg_power_watts"],
                src["output_throughput_tokens_per_sec"],
                src["energy_per_request_joules"],
                src["avg_output_len"],
                src["avg_batch_size"],
                src["median_itl_ms"],
                src["p90_itl_ms"],
                src["p95_itl_ms"],
                src["p99_itl_ms"],
            )
            assert list(c.output_length_counts) == src["output_length_distribution"]["counts"]
            assert (
                list(c.output_length_bin_edges_tokens) == src["output_length_distribution"]["bins"]
            )
            assert c.weight_precision == index["models"][model["model_id"]]["weight_precision"]
            count += 1
    assert count == len(tokens) > 0


@pytest.mark.parametrize(("task", "unit"), sorted(UNITS.items()))
def test_importer_keeps_every_diffusion_value(imported: Path, task: str, unit: str) -> None:
    data = load_dataset(imported)
    configs = [c for c in data.configurations if c.task == task]
    count = 0
    for model in _sources():
        if model["task"] != task:
            continue
        for src in model["configurations"]:
            par = src["parallelization"]
            match = [
                c
                for c in configs
                if (
                    c.model_id,
                    c.gpu_model,
                    c.num_gpus,
                    c.batch_size,
                    c.ulysses_degree,
                    c.ring_degree,
                    c.inference_steps,
                )
                == (
                    model["model_id"],
                    src["gpu_model"],
                    src["num_gpus"],
                    src["batch_size"],
                    par["ulysses_degree"],
                    par["ring_degree"],
                    src["inference_steps"],
                )
            ]
            assert len(match) == 1
            c = match[0]
            assert (
                c.energy_per_output_joules,
                c.avg_power_watts,
                c.throughput_outputs_per_sec,
                c.batch_latency_s,
                c.width_px,
                c.height_px,
            ) == (
                src[f"energy_per_{unit}_joules"],
                src["avg_power_watts"],
                src[f"throughput_{unit}s_per_sec"],
                src["batch_latency_s"],
                src[f"{unit}_width"],
                src[f"{unit}_height"],
            )
            if unit == "video":
                assert (c.num_frames, c.fps) == (src["num_frames"], src["fps"])
            count += 1
    assert count == len(configs) > 0
