"""CLI output, the importer (round trip, determinism) and the published JSON Schema."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from jouleboard.dataset import load_dataset
from jouleboard.kinds.token import TokenKind
from jouleboard.plan.site import measurement_schema_text
from tests.test_rank import REFERENCE

RANK_COLUMNS = TokenKind.rank_columns

REPO = Path(__file__).resolve().parents[1]


def run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "jouleboard", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_rank_csv_prints_the_reference_table():
    out = run("rank", "--task", "gpqa", "--deadline-ms", "300", "--top", "7", "--format", "csv")
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    # The columns the [core] issue fixes, in order, then the two [quality] adds.
    assert tuple(rows[0].keys()) == (
        "rank", "model_id", "nickname", "gpu_model", "num_gpus", "weight_precision",
        "max_num_seqs", "median_itl_ms", "energy_per_token_joules", "tokens_per_joule",
        "energy_per_response_joules", "avg_power_watts", "output_throughput_tokens_per_sec",
        "accuracy_percent", "energy_per_correct_answer_joules") == RANK_COLUMNS
    got = [(r["nickname"], int(r["num_gpus"]), r["gpu_model"], r["weight_precision"],
            round(float(r["tokens_per_joule"]), 2), round(float(r["energy_per_token_joules"]), 4))
           for r in rows]
    assert got == REFERENCE
    assert [int(r["rank"]) for r in rows] == list(range(1, 8))


def test_rank_json_has_the_same_columns_in_order_at_full_precision():
    out = run("rank", "--task", "gpqa", "--top", "3", "--format", "json")
    records = json.loads(out.stdout)
    assert [list(r) for r in records] == [list(RANK_COLUMNS)] * 3
    first = records[0]
    assert first["tokens_per_joule"] == pytest.approx(1 / first["energy_per_token_joules"],
                                                      rel=1e-12)
    assert len(repr(first["energy_per_token_joules"])) > 8  # not rounded


def test_rank_percentile_and_gpu_options():
    p99 = json.loads(run("rank", "--task", "gpqa", "--percentile", "p99", "--deadline-ms",
                         "100", "--format", "json").stdout)
    p50 = json.loads(run("rank", "--task", "gpqa", "--deadline-ms", "100",
                         "--format", "json").stdout)
    assert len(p99) <= len(p50)
    h100 = json.loads(run("rank", "--task", "gpqa", "--gpu", "H100", "--format",
                          "json").stdout)
    assert h100 and {r["gpu_model"] for r in h100} == {"H100"}


@pytest.mark.parametrize(("args", "expected"), [
    (["--task", "nope"], "valid: gpqa, image-chat"),
    (["--task", "gpqa", "--gpu", "A100"], "valid: B200, H100"),
    (["--task", "gpqa", "--deadline-ms", "-5"], "positive"),
    (["--task", "gpqa", "--deadline-ms", "nan"], "positive"),
    (["--task", "gpqa", "--top", "0"], "--top"),
])
def test_rank_bad_arguments_give_one_line_and_nonzero_exit(args, expected):
    out = run("rank", *args)
    assert out.returncode != 0
    assert expected in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr


def test_rank_table_rounds_for_reading():
    out = run("rank", "--task", "gpqa", "--top", "2")
    assert "35.15" in out.stdout and "0.0284" in out.stdout


def test_validate_default_data_passes():
    out = run("validate")
    assert out.returncode == 0, out.stderr
    # The count is the data's own, not a pinned number: it grows with every release.
    total = len(load_dataset(REPO / "data").configurations)
    assert f"{total} configurations" in out.stdout


def test_published_json_schema_is_in_sync_with_the_models():
    committed = (REPO / "schema" / "measurement.schema.json").read_text()
    assert committed == measurement_schema_text(), (
        "regenerate with: python -m jouleboard schema --out schema/measurement.schema.json")


def test_committed_measurements_validate_against_the_published_schema():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((REPO / "schema" / "measurement.schema.json").read_text())
    for path in sorted((REPO / "data" / "measurements").rglob("*.json"))[:50]:
        jsonschema.validate(json.loads(path.read_text()), schema)
