"""`jouleboard import-mlenergy` on hostile site data (issue 25, items 8 and 12).

Each case damages one file of the small committed excerpt (tests/fixtures/mlenergy-site) or
of the data folder it merges into, runs the command under a timeout (tests/cli_run.py: a hang
fails the test), and expects a non-zero exit, a located line ``file: /pointer: rule: ...``
naming the damaged file, no traceback, and the --out folder exactly as it was.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli_run import jouleboard as jouleboard_here
from tests.test_out_safety import everything

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "mlenergy-site"
TOKEN_MODEL = "models/Qwen__Qwen3-14B__gpqa.json"
IMAGE_MODEL = "models/Efficient-Large-Model__SANA1.5_1.6B_1024px_diffusers__text-to-image.json"
SOURCE_CAP = 16 * 1024 * 1024  # mlenergy_site.SOURCE_CAP, as documented
TIMEOUT_S = 60


def _run(cwd: Path) -> subprocess.CompletedProcess[str]:
    return jouleboard_here("import-mlenergy", "src", "--out", "out", cwd=cwd, timeout=TIMEOUT_S)


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder an earlier, clean import wrote: each case imports over a copy of it."""
    work = tmp_path_factory.mktemp("clean")
    shutil.copytree(FIXTURE, work / "src")
    done = _run(work)
    assert done.returncode == 0, done.stderr
    return work / "out"


# --- ways to damage the source -------------------------------------------------------------


def _edit_json(rel: str, change: Callable[[Any], object]) -> Callable[[Path], None]:
    def damage(src: Path) -> None:
        doc = json.loads((src / rel).read_text())
        change(doc)
        (src / rel).write_text(json.dumps(doc, indent=1))

    return damage


def _raw_value(rel: str, key: str, raw: str) -> Callable[[Path], None]:
    """Set ``configurations[0][key]`` of a model file to ``raw`` written as is (NaN...)."""

    def damage(src: Path) -> None:
        doc = json.loads((src / rel).read_text())
        doc["configurations"][0][key] = "@RAW@"
        (src / rel).write_text(json.dumps(doc, indent=1).replace('"@RAW@"', raw))

    return damage


def _fifo(rel: str) -> Callable[[Path], None]:
    def damage(src: Path) -> None:
        (src / rel).unlink()
        os.mkfifo(src / rel)

    return damage


def _symlink(rel: str) -> Callable[[Path], None]:
    """The file replaced by a link to an intact copy of itself outside the source."""

    def damage(src: Path) -> None:
        outside = src.parent / ("outside-" + Path(rel).name)
        shutil.copyfile(src / rel, outside)
        (src / rel).unlink()
        (src / rel).symlink_to(outside)

    return damage


def _write(rel: str, data: bytes | Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def damage(src: Path) -> None:
        old = (src / rel).read_bytes()
        (src / rel).write_bytes(data(old) if callable(data) else data)

    return damage


def _symlinked_models(src: Path) -> None:
    shutil.move(src / "models", src.parent / "models-elsewhere")
    (src / "models").symlink_to(src.parent / "models-elsewhere")


def _folder_for_index(src: Path) -> None:
    (src / "index.json").unlink()
    (src / "index.json").mkdir()


def _duplicate_task(src: Path) -> None:
    text = (src / TOKEN_MODEL).read_text()
    (src / TOKEN_MODEL).write_text(
        text.replace('"task": "gpqa"', '"task": "image-chat", "task": "gpqa"')
    )


def _first_config(change: Callable[[dict[str, Any]], object]) -> Callable[[Any], object]:
    return lambda doc: change(doc["configurations"][0])


CASES: list[tuple[str, Callable[[Path], None], str, str, str]] = [
    # (case, damage to src/, file named, JSON pointer, rule)
    ("fifo-index", _fifo("index.json"), "src/index.json", "/", "file.not-regular"),
    ("fifo-model", _fifo(TOKEN_MODEL), f"src/{TOKEN_MODEL}", "/", "file.not-regular"),
    ("fifo-task", _fifo("tasks/gpqa.json"), "src/tasks/gpqa.json", "/", "file.not-regular"),
    ("fifo-provenance", _fifo("PROVENANCE.md"), "src/PROVENANCE.md", "/", "file.not-regular"),
    ("symlinked-index", _symlink("index.json"), "src/index.json", "/", "file.not-regular"),
    ("symlinked-model", _symlink(TOKEN_MODEL), f"src/{TOKEN_MODEL}", "/", "file.not-regular"),
    ("symlinked-models-folder", _symlinked_models, "src/models", "/", "file.symlinked-folder"),
    ("index-is-a-folder", _folder_for_index, "src/index.json", "/", "file.not-regular"),
    (
        "oversized-model",
        _write(TOKEN_MODEL, lambda old: old + b" " * SOURCE_CAP),
        f"src/{TOKEN_MODEL}",
        "/",
        "file.too-large",
    ),
    (
        "deep-nesting-100000",
        _write(TOKEN_MODEL, b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
        f"src/{TOKEN_MODEL}",
        "/",
        "json.too-deep",
    ),
    (
        "unclosed-nesting",
        _write("index.json", b"[" * 100_000),
        "src/index.json",
        "/",
        "json.too-deep",
    ),
    (
        "invalid-utf8",
        _write(TOKEN_MODEL, lambda old: old.replace(b"Dense", b"D\xffnse")),
        f"src/{TOKEN_MODEL}",
        "/",
        "file.not-utf8",
    ),
    (
        "truncated-json",
        _write("index.json", lambda old: old[: len(old) // 2]),
        "src/index.json",
        "/",
        "json.syntax",
    ),
    (
        "nan",
        _raw_value(TOKEN_MODEL, "energy_per_token_joules", "NaN"),
        f"src/{TOKEN_MODEL}",
        "/configurations/0/energy_per_token_joules",
        "json.non-finite",
    ),
    (
        "1e400",
        _raw_value(TOKEN_MODEL, "energy_per_token_joules", "1e400"),
        f"src/{TOKEN_MODEL}",
        "/configurations/0/energy_per_token_joules",
        "json.non-finite",
    ),
    (
        "5000-digit-integer",
        _raw_value(TOKEN_MODEL, "max_num_seqs", "9" * 5000),
        f"src/{TOKEN_MODEL}",
        "/configurations/0/max_num_seqs",
        "json.number-too-long",
    ),
    ("duplicate-key", _duplicate_task, f"src/{TOKEN_MODEL}", "/task", "json.duplicate-key"),
    (
        "list-for-object",
        _edit_json("index.json", lambda d: d.update(models=[])),
        "src/index.json",
        "/models",
        "schema.wrong-type",
    ),
    (
        "number-for-configuration",
        _edit_json(TOKEN_MODEL, lambda d: d.update(configurations=[5])),
        f"src/{TOKEN_MODEL}",
        "/configurations/0",
        "schema.wrong-type",
    ),
    (
        "string-for-number",
        _edit_json(TOKEN_MODEL, _first_config(lambda c: c.update(energy_per_token_joules="1.3"))),
        f"src/{TOKEN_MODEL}",
        "/configurations/0/energy_per_token_joules",
        "schema.wrong-type",
    ),
    (
        "bool-for-integer",
        _edit_json(IMAGE_MODEL, _first_config(lambda c: c.update(batch_size=True))),
        f"src/{IMAGE_MODEL}",
        "/configurations/0/batch_size",
        "schema.wrong-type",
    ),
    (
        "missing-metric",
        _edit_json(TOKEN_MODEL, _first_config(lambda c: c.pop("energy_per_token_joules"))),
        f"src/{TOKEN_MODEL}",
        "/configurations/0/energy_per_token_joules",
        "schema.missing-field",
    ),
    (
        "missing-parallelization-field",
        _edit_json(IMAGE_MODEL, _first_config(lambda c: c["parallelization"].pop("ring_degree"))),
        f"src/{IMAGE_MODEL}",
        "/configurations/0/parallelization/ring_degree",
        "schema.missing-field",
    ),
    (
        "missing-index-field",
        _edit_json("index.json", lambda d: d.pop("last_updated")),
        "src/index.json",
        "/last_updated",
        "schema.missing-field",
    ),
    (
        "missing-display-name",
        _edit_json("tasks/gpqa.json", lambda d: d.clear()),
        "src/tasks/gpqa.json",
        "/task_display_name",
        "schema.missing-field",
    ),
    (
        "missing-task-file",
        lambda src: (src / "tasks/gpqa.json").unlink(),
        "src/tasks/gpqa.json",
        "/",
        "file.missing",
    ),
    (
        "model-not-in-index",
        _edit_json("index.json", lambda d: d["models"].pop("Qwen/Qwen3-14B")),
        f"src/{TOKEN_MODEL}",
        "/model_id",
        "mlenergy.model-not-in-index",
    ),
    (
        "task-id-leaves-the-folder",
        _edit_json("index.json", lambda d: d["architectures"].update(llm=["../../../etc/passwd"])),
        "src/index.json",
        "/architectures/llm/0",
        "value.bad-identifier",
    ),
    (
        "gpu-id-with-slash",
        _edit_json(TOKEN_MODEL, _first_config(lambda c: c.update(gpu_model="B200/../../../x"))),
        f"src/{TOKEN_MODEL}",
        "/configurations/0/gpu_model",
        "value.bad-identifier",
    ),
    (
        "diffusion-field-in-token-task",
        _edit_json(TOKEN_MODEL, _first_config(lambda c: c.update(batch_size=1))),
        f"src/{TOKEN_MODEL}",
        "/configurations/0",
        "schema.invalid",
    ),
    (
        "impossible-date",
        _edit_json("index.json", lambda d: d.update(last_updated="2026-13-45")),
        "src/index.json",
        "/last_updated",
        "value.bad-date",
    ),
]


@pytest.mark.parametrize(
    ("damage", "file", "where", "rule"), [pytest.param(*case[1:], id=case[0]) for case in CASES]
)
def test_hostile_source_is_refused_with_its_location(
    imported: Path, tmp_path: Path, damage: Callable[[Path], None], file: str, where: str, rule: str
) -> None:
    shutil.copytree(FIXTURE, tmp_path / "src")
    shutil.copytree(imported, tmp_path / "out", symlinks=True)
    damage(tmp_path / "src")
    before = everything(tmp_path / "out")
    done = _run(tmp_path)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    assert any(
        line.startswith(f"{file}: {where}: {rule}: ") for line in done.stderr.splitlines()
    ), done.stderr
    assert everything(tmp_path / "out") == before


def _broken_yaml(out: Path) -> None:
    (out / "models.yaml").write_text("a: [unclosed\n")


def _fifo_in_measurements(out: Path) -> None:
    folder = out / "measurements" / "gpqa"
    os.mkfifo(folder / "planted.json")


def _manifest_linked_outside(out: Path) -> None:
    """The manifest a link to a file outside the data folder (which a write would replace)."""
    (out.parent / "elsewhere.json").write_text("{}\n")
    (out / ".jouleboard-imports.json").unlink()
    (out / ".jouleboard-imports.json").symlink_to(out.parent / "elsewhere.json")


@pytest.mark.parametrize(
    ("damage", "file", "rule"),
    [
        pytest.param(_broken_yaml, "out/models.yaml", "yaml.syntax", id="broken-registry"),
        pytest.param(
            lambda out: _fifo(".jouleboard-imports.json")(out),
            "out/.jouleboard-imports.json",
            "file.not-regular",
            id="fifo-manifest",
        ),
        pytest.param(
            _manifest_linked_outside,
            "out/.jouleboard-imports.json",
            "file.not-regular",
            id="manifest-link",
        ),
        pytest.param(
            lambda out: _fifo("site.yaml")(out),
            "out/site.yaml",
            "file.not-regular",
            id="fifo-site-yaml",
        ),
    ],
)
def test_hostile_data_folder_is_refused(
    imported: Path, tmp_path: Path, damage: Callable[[Path], None], file: str, rule: str
) -> None:
    """The data folder the import merges into is read with the same care as the source."""
    shutil.copytree(FIXTURE, tmp_path / "src")
    shutil.copytree(imported, tmp_path / "out", symlinks=True)
    damage(tmp_path / "out")
    before = everything(tmp_path / "out")
    done = _run(tmp_path)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    assert any(line.startswith(f"{file}: /: {rule}: ") for line in done.stderr.splitlines()), (
        done.stderr
    )
    assert everything(tmp_path / "out") == before
    if (tmp_path / "elsewhere.json").exists():
        assert (tmp_path / "elsewhere.json").read_text() == "{}\n"


def test_a_pipe_among_earlier_imports_does_not_hang(imported: Path, tmp_path: Path) -> None:
    """A FIFO named like a measurement in the data folder is not read (it would block): the
    import goes on and leaves it in place."""
    shutil.copytree(FIXTURE, tmp_path / "src")
    shutil.copytree(imported, tmp_path / "out", symlinks=True)
    _fifo_in_measurements(tmp_path / "out")
    done = _run(tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "measurements" / "gpqa" / "planted.json").is_fifo()
