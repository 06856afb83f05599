"""--require-prometheus is one policy for raw runs wherever they are read: import-runs,
validate and build --runs drop a run without prometheus.json (a warning) and nothing else."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from jouleboard.cli import main
from tests.test_raw_runs import GPUS_YAML, MODELS_YAML, TASKS_YAML, sweep
from tests.test_validation_rules import make_data_dir

RULE = "run.unverifiable-no-prometheus"


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    data = make_data_dir(
        tmp_path, models_yaml=MODELS_YAML, gpus_yaml=GPUS_YAML, tasks_yaml=TASKS_YAML
    )
    runs = tmp_path / "runs"
    sweep(runs, {16: {"avg_batch_fraction": None}})  # max_num_seqs 16 has no prometheus.json
    return data, runs


def test_validate_keeps_the_run_by_default_and_drops_it_when_asked(
    folders: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data, runs = folders
    assert main(["validate", str(runs), "--data", str(data)]) == 0
    out = capsys.readouterr()
    # The runs given are counted apart from the data folder's (which has no measurement).
    assert out.out.startswith("ok: 4 measurements valid in the files and runs given")
    assert RULE not in out.err
    assert main(["validate", str(runs), "--data", str(data), "--require-prometheus"]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("ok: 3 measurements valid in the files and runs given")
    assert out.out.rstrip().endswith("(no other measurement) (1 run dropped: see the warnings)")
    assert out.err.count(RULE) == 1
    assert (
        main(["validate", str(runs), "--data", str(data), "--require-prometheus", "--strict"]) == 1
    )
    assert RULE in capsys.readouterr().err


def test_build_with_runs_drops_the_run_when_asked(
    folders: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, runs = folders
    out = tmp_path / "site"
    assert (
        main(
            [
                "build",
                "--data",
                str(data),
                "--out",
                str(out),
                "--runs",
                str(runs),
                "--require-prometheus",
            ]
        )
        == 0
    )
    assert capsys.readouterr().err.count(RULE) == 1
    with (out / "downloads" / "configurations.csv").open(encoding="utf-8") as f:
        seqs = sorted(int(row["max_num_seqs"]) for row in csv.DictReader(f))
    assert seqs == [8, 32, 64]
