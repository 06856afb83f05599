"""Hostile raw run trees: each attack of issue 25 on import-runs, validate RUN_DIR and
build --runs is refused with one located line, no traceback, no hang and nothing written.

Every case runs the command line under a timeout in a process of its own under an
address-space limit (RLIMIT_AS; tests/cli_run.py's Bounded runs the cases one after another
in one such process), so a regression that hangs or eats memory fails here instead of
stalling the machine. The run trees are written by tests/runs_generator.py, then broken on
purpose.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.cli_run import Bounded
from tests.runs_generator import DiffusionSpec, RunSpec, write_diffusion_run, write_run
from tests.test_raw_runs import GPUS_YAML, MODELS_YAML, TASKS_YAML
from tests.test_validation_rules import make_data_dir

REPO = Path(__file__).resolve().parents[1]
MEMORY_LIMIT_BYTES = 1536 * 1024 * 1024  # 1.5 GB: the attacks took 8-12 GB before
TIMEOUT_S = 60


@pytest.fixture(scope="module", autouse=True)
def _bounded() -> Iterator[None]:
    yield
    _BOUNDED.close()


_BOUNDED = Bounded(MEMORY_LIMIT_BYTES)  # one process for the module's cases, as they come


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """``jouleboard ARGS`` from the repository, bounded in time and memory."""
    return _BOUNDED(*args, cwd=REPO, timeout=TIMEOUT_S)


def replace_text(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def relink(path: Path, target: Path | str) -> None:
    path.unlink()
    path.symlink_to(target)


def llm_run(runs: Path, **spec: object) -> Path:
    return write_run(runs, RunSpec(num_requests=3, text_chars=20, **spec))  # type: ignore[arg-type]


# Each case: (run tree root) -> the file the error must name (relative to the root), the
# rule id, and the JSON pointer (None: not checked).
Case = Callable[[Path], tuple[Path, str, str | None]]


def deep_results(runs: Path) -> tuple[Path, str, str | None]:
    path = llm_run(runs) / "results.json"
    path.write_text('{"results": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    return path, "json.too-deep", "/results" + "/0" * 31


def unclosed_results(runs: Path) -> tuple[Path, str, str | None]:
    path = llm_run(runs) / "results.json"
    path.write_text("[" * 100_000, encoding="utf-8")
    return path, "json.too-deep", None


def deep_prometheus(runs: Path) -> tuple[Path, str, str | None]:
    path = llm_run(runs) / "prometheus.json"
    path.write_text('{"timeline": ' + "[" * 10_000 + "]" * 10_000 + "}", encoding="utf-8")
    return path, "json.too-deep", None


def fifo_prometheus(runs: Path) -> tuple[Path, str, str | None]:
    path = llm_run(runs) / "prometheus.json"
    path.unlink()
    os.mkfifo(path)
    return path, "file.not-regular", ""


def fifo_results(runs: Path) -> tuple[Path, str, str | None]:
    path = llm_run(runs) / "results.json"
    path.unlink()
    os.mkfifo(path)
    return path, "file.not-regular", ""


def results_linked_outside(runs: Path) -> tuple[Path, str, str | None]:
    outside = llm_run(runs.parent / "elsewhere") / "results.json"
    path = llm_run(runs) / "results.json"
    relink(path, outside)
    return path, "file.not-regular", ""


def results_linked_to_passwd(runs: Path) -> tuple[Path, str, str | None]:
    path = llm_run(runs) / "results.json"
    relink(path, "/etc/passwd")
    return path, "file.not-regular", ""


def results_linked_to_zero(runs: Path) -> tuple[Path, str, str | None]:
    path = llm_run(runs) / "results.json"
    relink(path, "/dev/zero")
    return path, "file.not-regular", ""


def linked_run_folder(runs: Path) -> tuple[Path, str, str | None]:
    """The GPU folder of a run is a link to a folder outside the tree."""
    run_dir = llm_run(runs.parent / "elsewhere")
    llm_run(runs, gpu_model="B200")  # a real run beside it, so the tree is a run tree
    gpu_folder = runs / run_dir.relative_to(runs.parent / "elsewhere").parent
    gpu_folder.parent.mkdir(parents=True, exist_ok=True)
    gpu_folder.symlink_to(run_dir.parent, target_is_directory=True)
    return gpu_folder, "file.symlinked-folder", ""


def model_info_linked_to_passwd(runs: Path) -> tuple[Path, str, str | None]:
    root = runs / "llm" / "h100" / "current"
    llm_run(root)
    path = runs / "configs" / "vllm" / "chat" / "acme" / "tiny-1b" / "model_info.json"
    path.parent.mkdir(parents=True)
    path.symlink_to("/etc/passwd")
    return path, "file.not-regular", ""


def results_too_large(runs: Path) -> tuple[Path, str, str | None]:
    path = llm_run(runs) / "results.json"
    os.truncate(path, 4 * 1024**3 + 1)  # sparse: nothing is written, nothing may be read
    return path, "file.too-large", ""


def prometheus_too_large(runs: Path) -> tuple[Path, str, str | None]:
    path = llm_run(runs) / "prometheus.json"
    os.truncate(path, 1024**3 + 1)
    return path, "file.too-large", ""


def long_string(runs: Path) -> tuple[Path, str, str | None]:
    path = llm_run(runs) / "results.json"
    with path.open("r+", encoding="utf-8") as f:
        text = f.read()
        f.seek(0)
        f.write('{"note": "' + "x" * (64 * 1024 * 1024) + '", ' + text[1:])
    return path, "json.value-too-long", "/note"


def duplicate_energy(runs: Path) -> tuple[Path, str, str | None]:
    path = llm_run(runs) / "results.json"
    replace_text(path, '{"model_id"', '{"steady_state_energy": 1.0, "model_id"')
    return path, "json.duplicate-key", "/steady_state_energy"


def duplicate_batch(runs: Path) -> tuple[Path, str, str | None]:
    path = llm_run(runs) / "prometheus.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    text = json.dumps(doc).replace(
        '"steady_state_stats": {', '"steady_state_stats": {"vllm:num_requests_running": 1.0, '
    )
    path.write_text(text, encoding="utf-8")
    return path, "json.duplicate-key", "/steady_state_stats/vllm:num_requests_running"


def impossible_date(runs: Path) -> tuple[Path, str, str | None]:
    run_dir = llm_run(runs, top_overrides={"date": "2026-13-45"})
    return run_dir / "results.json", "run.bad-date", "/date"


def future_date(runs: Path) -> tuple[Path, str, str | None]:
    run_dir = llm_run(runs, top_overrides={"date": "29991231-120000"})
    return run_dir / "results.json", "run.future-date", "/date"


def negative_completed(runs: Path) -> tuple[Path, str, str | None]:
    run_dir = llm_run(runs, top_overrides={"completed": -5})
    return run_dir / "results.json", "run.bad-value", "/completed"


def negative_duration(runs: Path) -> tuple[Path, str, str | None]:
    run_dir = llm_run(runs, top_overrides={"steady_state_duration": -3.0})
    return run_dir / "results.json", "run.bad-value", "/steady_state_duration"


def diffusion_duplicate(runs: Path) -> tuple[Path, str, str | None]:
    path = write_diffusion_run(runs, DiffusionSpec()) / "results.json"
    replace_text(path, '"batch_size": 4', '"batch_size": 4, "batch_size": 2')
    return path, "json.duplicate-key", "/batch_size"


def diffusion_deep(runs: Path) -> tuple[Path, str, str | None]:
    path = write_diffusion_run(runs, DiffusionSpec()) / "results.json"
    path.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    return path, "json.too-deep", None


CASES: dict[str, Case] = {
    f.__name__: f
    for f in (
        deep_results,
        unclosed_results,
        deep_prometheus,
        fifo_prometheus,
        fifo_results,
        results_linked_outside,
        results_linked_to_passwd,
        results_linked_to_zero,
        linked_run_folder,
        model_info_linked_to_passwd,
        results_too_large,
        prometheus_too_large,
        long_string,
        duplicate_energy,
        duplicate_batch,
        impossible_date,
        future_date,
        negative_completed,
        negative_duration,
        diffusion_duplicate,
        diffusion_deep,
    )
}


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def assert_refused(
    result: subprocess.CompletedProcess[str], runs: Path, file: Path, rule: str, where: str | None
) -> None:
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Traceback" not in output
    shown = file.relative_to(runs.parent).as_posix()
    lines = [line for line in result.stderr.splitlines() if f": {rule}: " in line]
    assert len(lines) == 1, output
    assert shown in lines[0], output
    if where is not None:
        assert lines[0].split(shown, 1)[1].startswith(f": {where or '/'}: {rule}: "), output
    assert "root:" not in output  # a refused file's bytes are never echoed


@pytest.mark.parametrize("case", CASES)
def test_import_runs_refuses_with_one_located_line(tmp_path: Path, case: str) -> None:
    data = make_data_dir(
        tmp_path, models_yaml=MODELS_YAML, gpus_yaml=GPUS_YAML, tasks_yaml=TASKS_YAML
    )
    runs = tmp_path / "runs"
    file, rule, where = CASES[case](runs)
    before = listing(data)
    # cwd is the repository: files are shown by absolute path, relative to tmp_path here
    result = run_cli("import-runs", runs, "--out", data)
    assert_refused(result, runs, file, rule, where)
    assert listing(data) == before


@pytest.mark.parametrize("command", ["validate", "build"])
@pytest.mark.parametrize("case", ["deep_results", "fifo_prometheus", "duplicate_energy"])
def test_validate_and_build_refuse_too(tmp_path: Path, command: str, case: str) -> None:
    data = make_data_dir(
        tmp_path, models_yaml=MODELS_YAML, gpus_yaml=GPUS_YAML, tasks_yaml=TASKS_YAML
    )
    runs = tmp_path / "runs"
    file, rule, where = CASES[case](runs)
    out = tmp_path / "site"
    args = (
        ("validate", runs, "--data", data)
        if command == "validate"
        else ("build", "--data", data, "--out", out, "--runs", runs)
    )
    result = run_cli(*args)
    assert_refused(result, runs, file, rule, where)
    assert not out.exists()
