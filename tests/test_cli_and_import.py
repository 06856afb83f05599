"""CLI output, the importer (round trip, determinism) and the published JSON Schema."""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess
from pathlib import Path

import pytest

from jouleboard.kinds import registered
from jouleboard.kinds.token import TokenKind
from jouleboard.loading.dataset import load_dataset
from jouleboard.plan.site import measurement_schema_text
from tests.cli_run import jouleboard as jouleboard_here
from tests.conftest import ScipyQuantiles
from tests.test_rank import REFERENCE

# The kind's columns, then the measurement-noise columns every ranking download appends
# (issue 27: appended, so readers of the older columns keep working).
NOISE_COLUMNS = (
    "runs",
    "relative_uncertainty",
    "rank_best",
    "rank_worst",
    # issue 37: the critical value the places and intervals used, and the degrees of freedom
    # of s behind it.
    "critical_value",
    "degrees_of_freedom",
    "energy_per_token_joules_low",
    "energy_per_token_joules_high",
    "tokens_per_joule_low",
    "tokens_per_joule_high",
)
# Then what the energy includes (issue 28: gpu, or system-ac for wall power).
RANK_COLUMNS = (*TokenKind.rank_columns, *NOISE_COLUMNS, "energy_boundary", "energy_window")

REPO = Path(__file__).resolve().parents[1]


def run(*args: str, cwd: Path = REPO, **env: str) -> subprocess.CompletedProcess[str]:
    return jouleboard_here(*args, cwd=cwd, env=env, timeout=120)


def test_rank_csv_prints_the_reference_table():
    out = run("rank", "--task", "gpqa", "--deadline-ms", "300", "--top", "7", "--format", "csv")
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    # The columns the [core] issue fixes, in order, then the two [quality] adds.
    assert (
        tuple(rows[0].keys())
        == (
            "rank",
            "model_id",
            "nickname",
            "gpu_model",
            "num_gpus",
            "weight_precision",
            "max_num_seqs",
            "median_itl_ms",
            "energy_per_token_joules",
            "tokens_per_joule",
            "energy_per_response_joules",
            "avg_power_watts",
            "output_throughput_tokens_per_sec",
            "accuracy_percent",
            "energy_per_correct_answer_joules",
            *NOISE_COLUMNS,
            "energy_boundary",
            "energy_window",
        )
        == RANK_COLUMNS
    )
    got = [
        (
            r["nickname"],
            int(r["num_gpus"]),
            r["gpu_model"],
            r["weight_precision"],
            round(float(r["tokens_per_joule"]), 2),
            round(float(r["energy_per_token_joules"]), 4),
        )
        for r in rows
    ]
    assert got == REFERENCE
    assert [int(r["rank"]) for r in rows] == list(range(1, 8))
    # Places past the point order (shared where the noise allows): checked against the rule
    # in test_rank_noise_columns_follow_the_documented_rule.
    assert all(int(r["rank_best"]) <= int(r["rank"]) <= int(r["rank_worst"]) for r in rows)


def test_rank_noise_columns_follow_the_documented_rule():
    """Every model's interval and places, re-derived here from the rule
    (docs/measurement-format.md, "Repeat runs and measurement noise") and the rows' own
    figures: s = 8.37% per run from the bundled repeat pairs, 3 degrees of freedom, so the
    critical value is Student's t(0.975, 3) (SciPy: 3.1824), not the normal 1.96."""
    rows = json.loads(run("rank", "--task", "gpqa", "--format", "json").stdout)
    z = ScipyQuantiles().t(0.975, 3)
    assert all(r["critical_value"] == pytest.approx(z, rel=1e-12) for r in rows)
    assert all(r["degrees_of_freedom"] == 3 for r in rows)
    u = [r["relative_uncertainty"] for r in rows]
    e = [r["energy_per_token_joules"] for r in rows]
    for r, ui, ei in zip(rows, u, e, strict=True):
        assert ui == pytest.approx(0.08374 / math.sqrt(r["runs"]), abs=1e-5)
        assert r["energy_per_token_joules_low"] == pytest.approx(ei * math.exp(-z * ui))
        assert r["energy_per_token_joules_high"] == pytest.approx(ei * math.exp(z * ui))
        assert r["tokens_per_joule_low"] == pytest.approx(math.exp(-z * ui) / ei)
        assert r["tokens_per_joule_high"] == pytest.approx(math.exp(z * ui) / ei)

    def surely(a: int, b: int) -> bool:  # model a surely uses less energy than model b
        return math.log(e[b] / e[a]) > z * math.hypot(u[a], u[b])

    n = len(rows)
    others = [[j for j in range(n) if j != i] for i in range(n)]
    assert [r["rank_best"] for r in rows] == [
        1 + sum(surely(j, i) for j in others[i]) for i in range(n)
    ]
    assert [r["rank_worst"] for r in rows] == [
        n - sum(surely(i, j) for j in others[i]) for i in range(n)
    ]
    assert any(r["rank_best"] != r["rank_worst"] for r in rows)  # the data shares places


def test_rank_json_has_the_same_columns_in_order_at_full_precision():
    out = run("rank", "--task", "gpqa", "--top", "3", "--format", "json")
    records = json.loads(out.stdout)
    assert [list(r) for r in records] == [list(RANK_COLUMNS)] * 3
    first = records[0]
    assert first["tokens_per_joule"] == pytest.approx(
        1 / first["energy_per_token_joules"], rel=1e-12
    )
    assert len(repr(first["energy_per_token_joules"])) > 8  # not rounded


def test_rank_percentile_and_gpu_options():
    p99 = json.loads(
        run(
            "rank",
            "--task",
            "gpqa",
            "--percentile",
            "p99",
            "--deadline-ms",
            "100",
            "--format",
            "json",
        ).stdout
    )
    p50 = json.loads(
        run("rank", "--task", "gpqa", "--deadline-ms", "100", "--format", "json").stdout
    )
    assert len(p99) <= len(p50)
    h100 = json.loads(run("rank", "--task", "gpqa", "--gpu", "H100", "--format", "json").stdout)
    assert h100 and {r["gpu_model"] for r in h100} == {"H100"}


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--task", "nope"], "valid: gpqa, image-chat"),
        (["--task", "gpqa", "--gpu", "A100"], "valid: B200, H100"),
        (["--task", "gpqa", "--deadline-ms", "-5"], "positive"),
        (["--task", "gpqa", "--deadline-ms", "nan"], "positive"),
        (["--task", "gpqa", "--top", "0"], "--top"),
    ],
)
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
    assert committed == measurement_schema_text(registered()), (
        "regenerate with: python -m jouleboard schema --out schema/measurement.schema.json"
    )


def test_committed_measurements_validate_against_the_published_schema():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((REPO / "schema" / "measurement.schema.json").read_text())
    checker = jsonschema.validators.validator_for(schema)
    checker.check_schema(schema)
    valid = checker(schema)  # one validator (jsonschema.validate makes one per file: 25 ms)
    for path in sorted((REPO / "data" / "measurements").rglob("*.json"))[:50]:
        valid.validate(json.loads(path.read_text()))


# --- the importer contract (importers/contract.py), on a tiny site-data folder ----------------


def _site_config(max_num_seqs: int, power: float) -> dict:
    itl_ms = 20.0
    energy_per_token = power / (0.8 * 0.9 * max_num_seqs / (itl_ms / 1000))  # W / (tokens/s)
    return {
        "gpu_model": "H100",
        "num_gpus": 1,
        "max_num_seqs": max_num_seqs,
        "parallelization": {"tensor_parallel": 1, "expert_parallel": 1, "data_parallel": 1},
        "energy_per_token_joules": energy_per_token,
        "avg_power_watts": power,
        "output_throughput_tokens_per_sec": power / energy_per_token,
        "energy_per_request_joules": energy_per_token * 500.0,
        "avg_output_len": 500.0,
        "avg_batch_size": 0.9 * max_num_seqs,
        "median_itl_ms": itl_ms,
        "p90_itl_ms": 30.0,
        "p95_itl_ms": 35.0,
        "p99_itl_ms": 50.0,
        "output_length_distribution": {"bins": [0.0, 500.0, 1000.0], "counts": [3, 2]},
    }


def write_site_data(src: Path, configs: list[dict]) -> Path:
    """The three kinds of files the ML.ENERGY web app reads, for one model on one task."""
    (src / "tasks").mkdir(parents=True, exist_ok=True)
    (src / "models").mkdir(exist_ok=True)
    (src / "index.json").write_text(
        json.dumps(
            {
                "architectures": {"llm": ["gpqa"]},
                "last_updated": "2026-01-05",
                "models": {
                    "openai/gpt-oss-20b": {
                        "nickname": "GPT OSS 20B",
                        "total_params_billions": 21.0,
                        "activated_params_billions": 3.6,
                        "architecture": "MoE",
                        "weight_precision": "mxfp4",
                    }
                },
            }
        )
    )
    (src / "tasks" / "gpqa.json").write_text(json.dumps({"task_display_name": "GPQA"}))
    (src / "models" / "openai__gpt-oss-20b__gpqa.json").write_text(
        json.dumps(
            {
                "task": "gpqa",
                "model_id": "openai/gpt-oss-20b",
                "weight_precision": "mxfp4",
                "configurations": configs,
            }
        )
    )
    return src


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_import_mlenergy_keeps_files_it_did_not_write_and_drops_only_its_own_stale_ones(
    tmp_path: Path,
) -> None:
    src, out = tmp_path / "src", tmp_path / "data"
    write_site_data(src, [_site_config(64, 400.0), _site_config(128, 450.0)])
    first = run("import-mlenergy", str(src), "--out", str(out))
    assert first.returncode == 0, first.stderr
    assert "2 configurations found, 2 published, 0 dropped" in first.stdout
    folder = out / "measurements" / "gpqa" / "openai" / "gpt-oss-20b"
    assert len(list(folder.glob("*.json"))) == 2
    # The ML.ENERGY Benchmark measures each run's steady state (content/about.md,
    # docs/raw-runs.md): so say the files, and a site built from them.
    for f in folder.glob("*.json"):
        assert json.loads(f.read_text())["provenance"]["window"] == "steady-state"
    mine = folder / "README.md"  # a person's notes beside the imported files
    mine.write_text("notes", encoding="utf-8")
    write_site_data(src, [_site_config(64, 400.0)])  # upstream dropped the 128 configuration
    assert run("import-mlenergy", str(src), "--out", str(out)).returncode == 0
    assert sorted(p.name for p in folder.iterdir()) == [
        "H100-x1-mxfp4-tp1-ep1-dp1-seqs64.json",
        "README.md",
    ]
    assert mine.read_text() == "notes"


def test_import_mlenergy_names_the_counters_zeus_read_on_each_vendors_gpu(
    tmp_path: Path,
) -> None:
    """Every imported file named "NVML energy counters (Zeus)", whatever the GPU. Zeus reads
    AMD GPUs through AMD SMI; the vendor is the data folder's gpus.yaml's (an init folder's
    lists an MI300X, vendor AMD)."""
    src, site = tmp_path / "src", tmp_path / "site"
    assert run("init", str(site)).returncode == 0
    amd = {**_site_config(64, 400.0), "gpu_model": "MI300X"}
    write_site_data(src, [amd, _site_config(128, 450.0)])
    done = run("import-mlenergy", str(src), "--out", str(site / "data"))
    assert done.returncode == 0, done.stderr
    folder = site / "data" / "measurements" / "gpqa" / "openai" / "gpt-oss-20b"
    docs = [json.loads(f.read_text()) for f in folder.glob("*.json")]
    assert {d["gpu_model"]: d["provenance"]["instrument"] for d in docs} == {
        "MI300X": "AMD SMI energy counters (Zeus)",
        "H100": "NVML energy counters (Zeus)",
    }


def test_import_mlenergy_validates_everything_before_writing_anything(tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "data"
    write_site_data(src, [_site_config(64, 400.0)])
    assert run("import-mlenergy", str(src), "--out", str(out)).returncode == 0
    before = _files(out)
    bad = _site_config(128, 450.0)
    bad["avg_power_watts"] = 90_000.0  # over the board limit: the whole import must stop
    write_site_data(src, [_site_config(32, 350.0), bad])
    result = run("import-mlenergy", str(src), "--out", str(out))
    assert result.returncode == 1 and "bounds.power-above-limit" in result.stderr
    assert _files(out) == before  # not even the valid 32 configuration was written


def test_import_mlenergy_refuses_to_replace_a_file_it_did_not_write(tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "data"
    write_site_data(src, [_site_config(64, 400.0)])
    assert run("import-mlenergy", str(src), "--out", str(out)).returncode == 0
    target = next((out / "measurements").rglob("*.json"))
    doc = json.loads(target.read_text())
    doc["provenance"]["source"] = "our own lab run"  # someone's file at the same path
    target.write_text(json.dumps(doc))
    (out / ".jouleboard-imports.json").unlink()
    result = run("import-mlenergy", str(src), "--out", str(out))
    assert result.returncode == 1 and "import.would-replace" in result.stderr
    assert json.loads(target.read_text())["provenance"]["source"] == "our own lab run"


@pytest.mark.parametrize("command", ["import-runs", "import-mlenergy"])
def test_an_out_folder_that_is_not_a_data_folder_says_how_to_make_one(
    tmp_path: Path, command: str
) -> None:
    out = tmp_path / "somewhere"
    out.mkdir()
    (out / "notes.txt").write_text("not data")
    src = write_site_data(tmp_path / "src", [_site_config(64, 400.0)])
    result = run(command, str(src), "--out", str(out))
    assert result.returncode == 2, result.stderr
    assert (
        f"{out} is not a jouleboard data folder (no gpus.yaml/models.yaml/tasks.yaml): "
        f"create one with `jouleboard init {out}` or pass --out to an existing data "
        "folder"
    ) in result.stderr
    assert "Traceback" not in result.stderr and _files(out) == {"notes.txt": b"not data"}


def test_rank_table_prints_diffusion_units_as_the_site_does() -> None:
    """text-to-image reads in images per kJ and kJ per image on the site; the CLI table says
    the same, re-derived here from the CSV's joules (full precision, per joule)."""

    def rank(fmt: str) -> str:
        out = run("rank", "--task", "text-to-image", "--top", "3", "--format", fmt, COLUMNS="200")
        assert out.returncode == 0, out.stderr
        return out.stdout

    rows = list(csv.DictReader(io.StringIO(rank("csv"))))
    lines = rank("table").splitlines()
    header = lines[0].split()
    assert "Images/kJ" in header and "kJ/image" in header and "images/s" in header
    assert "outputs/J" not in header and "J/output" not in header
    for row, line in zip(rows, lines[1:], strict=True):
        joules = float(row["energy_per_output_joules"])
        assert f"{1000 / joules:.3g}" in line.split()
        assert f"{joules / 1000:.3g}" in line.split()
