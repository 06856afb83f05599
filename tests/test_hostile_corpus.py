"""Hostile inputs (tests/hostile/, manifest EXPECTED.yaml) are rejected with located problems.

Each file is dropped into a fresh copy of a small valid data folder and must trip the rule
its manifest entry names, at that pointer, naming that file; the valid measurement next to
it must not be blamed. The command line must report all of them without a traceback, and a
build on a data folder holding a hostile file must leave the previous site untouched.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from jouleboard.core.problems import Problem, ValidationFailed
from jouleboard.loading.dataset import load_dataset
from tests.cli_run import jouleboard as jouleboard_here
from tests.golden.tree import tree
from tests.test_validation_rules import (
    GPUS_YAML,
    MIB,
    TASKS_YAML,
    VALID,
    make_data_dir,
    same_file,
    write_measurement,
)

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(__file__).resolve().parent / "hostile"
MANIFEST: dict[str, dict[str, Any]] = yaml.safe_load(
    (CORPUS / "EXPECTED.yaml").read_text(encoding="utf-8")
)
HOSTILE_DIR = Path("measurements/hostile")
LINE = re.compile(r"^(?P<file>[^:]+): (?P<pointer>/[^:]*): (?P<rule>[a-z]+\.[a-z0-9-]+): .+$")
# A handful of different layers for the (slow) build-leaves-the-site-alone check.
BUILD_SAMPLE = [
    "syntax-truncated.json",
    "nan.json",
    "model-id-path-traversal.json",
    "power-above-limit.json",
    "duplicate-of-base.json",
]


def generated(kind: str) -> bytes:
    if kind == "deep-nesting":  # 100000 levels: far past Python's recursion limit
        return b"[" * 100_000 + b"]" * 100_000
    if kind == "over-size-cap":  # valid JSON, one byte over the 1 MiB cap
        text = json.dumps(VALID, indent=2).encode()
        return text + b" " * (MIB + 1 - len(text))
    raise AssertionError(f"unknown generator {kind!r} in EXPECTED.yaml")


def hostile_bytes(name: str) -> bytes:
    kind = MANIFEST[name].get("generate")
    return generated(kind) if kind else (CORPUS / name).read_bytes()


def add_hostile(data: Path, name: str) -> Path:
    path = data / HOSTILE_DIR / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(hostile_bytes(name))
    return path


def valid_data(root: Path) -> tuple[Path, Path]:
    """A fresh valid data folder with one measurement; returns (data folder, that file)."""
    data = make_data_dir(root)
    return data, write_measurement(data, VALID)


def params(names: list[str]) -> list[Any]:
    return [
        pytest.param(
            n,
            id=n,
            marks=[pytest.mark.xfail(strict=True, reason=e["xfail"])]
            if (e := MANIFEST[n]).get("xfail")
            else [],
        )
        for n in names
    ]


def run(args: list[str], cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        text=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        **kwargs,
    )


def test_manifest_lists_every_file_and_only_known_rules() -> None:
    on_disk = {p.name for p in CORPUS.iterdir()} - {"EXPECTED.yaml"}
    committed = {n for n, e in MANIFEST.items() if not e.get("generate")}
    assert on_disk == committed, on_disk ^ committed
    assert len(MANIFEST) >= 40
    source = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "jouleboard").rglob("*.py"))
    for name, entry in MANIFEST.items():
        assert set(entry) <= {"rule", "pointer", "generate", "xfail"}, name
        assert f'"{entry["rule"]}"' in source, f"{name}: no rule {entry['rule']!r} in jouleboard"
        assert entry["pointer"] == "" or entry["pointer"].startswith("/"), name


@pytest.mark.parametrize("name", params(sorted(MANIFEST)))
def test_hostile_file_is_rejected(tmp_path: Path, name: str) -> None:
    expected = MANIFEST[name]
    data, base = valid_data(tmp_path)
    path = add_hostile(data, name)
    with pytest.raises(ValidationFailed) as info:
        load_dataset(data)
    found: list[Problem] = info.value.problems
    report = "\n".join(map(str, found))
    assert all(same_file(p.file, path) for p in found), f"other files blamed:\n{report}"
    assert any(p.rule == expected["rule"] and p.pointer == expected["pointer"] for p in found), (
        f"expected {expected['rule']} at {expected['pointer']!r}, got:\n{report}"
    )
    assert all(p.message and p.hint for p in found), report
    assert base.exists()


def test_cli_reports_the_whole_corpus_at_once_without_traceback(tmp_path: Path) -> None:
    data, _ = valid_data(tmp_path)
    names = sorted(n for n, e in MANIFEST.items() if not e.get("xfail"))
    for name in names:
        add_hostile(data, name)
    result = run(["-m", "jouleboard", "validate", "data"], cwd=tmp_path, timeout=60)
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert lines[-1] == "validation failed"
    assert lines[-2].endswith(f"in {len(names)} file(s)")
    reported = {(m["file"], m["pointer"], m["rule"]) for line in lines if (m := LINE.match(line))}
    for name in names:
        shown = f"data/{HOSTILE_DIR.as_posix()}/{name}"
        entry = MANIFEST[name]
        assert (shown, entry["pointer"] or "/", entry["rule"]) in reported, name


def test_symlink_to_an_endless_device_is_rejected(tmp_path: Path) -> None:
    data, _ = valid_data(tmp_path)
    link = data / HOSTILE_DIR / "endless.json"
    link.parent.mkdir(parents=True)
    link.symlink_to("/dev/zero")

    def limit_memory() -> None:  # keep the child from eating the machine's memory
        resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))

    result = run(
        ["-m", "jouleboard", "validate", "data"], cwd=tmp_path, timeout=60, preexec_fn=limit_memory
    )
    assert "Traceback" not in result.stderr, result.stderr[-1000:]
    assert result.returncode == 1
    assert re.search(
        r"^data/measurements/hostile/endless\.json: /: file\.", result.stderr, re.MULTILINE
    ), result.stderr


# --- a hostile file never touches a previously built site --------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A project folder (data/, templates/, content/) and its site, built once (a few s)."""
    project = tmp_path_factory.mktemp("project")
    shutil.copytree(REPO / "templates", project / "templates")
    shutil.copytree(REPO / "content", project / "content")
    valid_data(project)
    result = jouleboard_here("build", "--data", "data", "--out", "site", cwd=project)
    assert result.returncode == 0, result.stderr
    assert (project / "site" / "index.html").is_file()
    return project, project / "site"


@pytest.mark.parametrize("name", BUILD_SAMPLE)
def test_build_with_a_hostile_file_leaves_the_site_unchanged(
    built: tuple[Path, Path], name: str
) -> None:
    project, site = built
    before, around = tree(site), sorted(p.name for p in project.iterdir())
    path = add_hostile(project / "data", name)
    try:
        result = jouleboard_here(
            "build", "--data", "data", "--out", "site", cwd=project, timeout=120
        )
    finally:
        path.unlink()
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert result.stderr.splitlines()[-1] == "nothing was written"
    assert f"data/{HOSTILE_DIR.as_posix()}/{name}: " in result.stderr
    assert f": {MANIFEST[name]['rule']}: " in result.stderr
    assert tree(site) == before
    assert sorted(p.name for p in project.iterdir()) == around  # no staging folder left


# --- hostile data folders: registries, file names and the file system (issue 14) -----------
#
# Each case turns a fresh valid data folder into a hostile one. validate must refuse it at
# the located place (file shown relative to the data folder's parent, JSON pointer, rule),
# the CLI without a traceback, and a build without touching the previous site. Before these
# rules, validate said ok on every case here, and build crashed on the clashing ids and the
# file name that is not UTF-8 (chart ids and an unencodable path).


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def _model(model_id: str, nickname: str) -> str:
    return (
        f"{model_id}:\n  nickname: {json.dumps(nickname)}\n  builder: Acme\n"
        "  total_params_billions: 1.0\n  active_params_billions: 1.0\n"
        "  weight_precision: bfloat16\n"
    )


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def _measurement_named(data: Path, name: str | bytes) -> None:
    folder = os.fsencode(data / "measurements" / "extra")
    os.makedirs(folder, exist_ok=True)
    raw = name if isinstance(name, bytes) else name.encode("utf-8")
    with open(os.path.join(folder, raw), "wb") as f:
        f.write(json.dumps({**VALID, "repeat": 2}).encode())


def _names_too_long(data: Path) -> None:
    # lengths--<194-character model slug>--<48-character task>.csv is 263 bytes: before the
    # rule, build failed writing it after validate had said ok.
    model, task = "o" * 96 + "/" + "n" * 96, "t" * 48
    _append(data / "models.yaml", _model(model, "Long"))
    _append(data / "tasks.yaml", TASKS_YAML.replace("chat:", f"{task}:"))
    write_measurement(data, {**VALID, "model_id": model, "task": task}, name="long.json")


def _symlinked_folder(data: Path) -> None:
    elsewhere = data.parent / "elsewhere"
    write_measurement(elsewhere, {**VALID, "repeat": 2}, folder=Path("."))
    (data / "measurements" / "linked").symlink_to(elsewhere, target_is_directory=True)


def _measurements_root_is_a_link(data: Path) -> None:
    (data / "measurements").rename(data.parent / "real-measurements")
    (data / "measurements").symlink_to(data.parent / "real-measurements")


def _too_long(data: Path) -> None:
    # 17 folders of 250 characters: the 17th is past 4,096 bytes from the data folder's
    # parent, and a valid measurement at the bottom must not vanish from the count.
    folder = data / "measurements"
    fd = os.open(folder, os.O_RDONLY)
    try:
        for _ in range(17):
            os.mkdir("d" * 250, dir_fd=fd)
            fd, old = os.open("d" * 250, os.O_RDONLY, dir_fd=fd), fd
            os.close(old)
        out = os.open("deep.json", os.O_WRONLY | os.O_CREAT, dir_fd=fd)
        os.write(out, json.dumps({**VALID, "repeat": 2}).encode())
        os.close(out)
    finally:
        os.close(fd)


def _deepest_listed(data: Path) -> str:
    """The first folder on _too_long's chain that cannot be listed: validate is run on
    ``data`` from its parent, and a path of 4,096 bytes (with its NUL, over PATH_MAX) fails."""
    path = Path("data/measurements")
    while len(os.fsencode(path)) < 4096:
        path = path / ("d" * 250)
    return path.as_posix()


FOLDER_CASES: dict[str, tuple[Any, str, str, str]] = {
    # name: (mutate the data folder, file shown, pointer, rule)
    "model-ids-equal-but-for-case": (
        lambda d: _append(d / "models.yaml", _model("Acme/Tiny-1B", "Big tiny")),
        "data/models.yaml",
        "/Acme~1Tiny-1B",
        "registry.identity-clash",
    ),
    "model-ids-with-one-slug": (
        lambda d: _append(
            d / "models.yaml", _model("acme--tiny/x", "One") + _model("acme/tiny--x", "Two")
        ),
        "data/models.yaml",
        "/acme~1tiny--x",
        "registry.identity-clash",
    ),
    "gpu-ids-equal-but-for-case": (
        lambda d: _append(d / "gpus.yaml", GPUS_YAML.replace("H100:", "h100:")),
        "data/gpus.yaml",
        "/h100",
        "registry.identity-clash",
    ),
    "task-id-with-the-separator": (
        lambda d: _append(d / "tasks.yaml", TASKS_YAML.replace("chat:", "chat--x:")),
        "data/tasks.yaml",
        "/chat--x",
        "value.bad-identifier",
    ),
    "gpu-id-that-names-another-download": (
        lambda d: _append(d / "gpus.yaml", GPUS_YAML.replace("H100:", "x-p50-300ms-y:")),
        "data/gpus.yaml",
        "/x-p50-300ms-y",
        "value.bad-identifier",
    ),
    "preset-deadlines-printed-alike": (
        lambda d: _append(d / "tasks.yaml", "  preset_deadlines_ms: [50.0, 50.0000001]\n"),
        "data/tasks.yaml",
        "/chat/preset_deadlines_ms/1",
        "registry.deadline-clash",
    ),
    "nickname-taken-by-a-second-model": (
        lambda d: _append(d / "models.yaml", _model("evil/tiny-1b", " TINY\u00a0  1b")),
        "data/models.yaml",
        "/evil~1tiny-1b/nickname",
        "registry.duplicate-nickname",
    ),
    "nickname-with-bidi-override": (
        lambda d: _replace(d / "models.yaml", "nickname: Tiny 1B", 'nickname: "Tiny \\u202e1B"'),
        "data/models.yaml",
        "/acme~1tiny-1b/nickname",
        "value.hidden-character",
    ),
    "link-host-with-bidi-isolate": (
        lambda d: _append(
            d / "models.yaml",
            '  links:\n  - label: Card\n    url: "https://hugging\\u2066face.co/acme"\n',
        ),
        "data/models.yaml",
        "/acme~1tiny-1b/links/0/url",
        "value.hidden-character",
    ),
    "gpu-name-with-zero-width-space": (
        lambda d: _replace(
            d / "gpus.yaml", "name: NVIDIA H100 SXM", 'name: "NVIDIA\\u200bH100 SXM"'
        ),
        "data/gpus.yaml",
        "/H100/name",
        "value.hidden-character",
    ),
    "task-name-with-byte-order-mark": (
        lambda d: _replace(d / "tasks.yaml", "name: Chat", 'name: "Chat\\ufeff"'),
        "data/tasks.yaml",
        "/chat/name",
        "value.hidden-character",
    ),
    "yaml-unhashable-key": (
        lambda d: _append(d / "models.yaml", "? [a, b]\n: 1\n"),
        "data/models.yaml",
        "",
        "yaml.unhashable-key",
    ),
    "yaml-merge-key": (
        lambda d: (d / "gpus.yaml").write_text(
            GPUS_YAML.replace("H100:", "H100: &h100") + "B200:\n  <<: *h100\n  name: NVIDIA B200\n",
            encoding="utf-8",
        ),
        "data/gpus.yaml",
        "",
        "yaml.merge-key",
    ),
    "registry-is-a-folder": (
        lambda d: ((d / "tasks.yaml").unlink(), (d / "tasks.yaml").mkdir()),
        "data/tasks.yaml",
        "",
        "file.not-regular",
    ),
    "file-name-with-newline": (
        lambda d: _measurement_named(d, "x.json\nforged.json: ok"),
        "data/measurements/extra/x.json\\nforged.json: ok",
        "",
        "file.bad-name",
    ),
    "file-name-not-utf8": (
        lambda d: _measurement_named(d, b"caf\xe9.json"),
        "data/measurements/extra/caf\\xe9.json",
        "",
        "file.bad-name",
    ),
    "folder-name-with-bidi-override": (
        lambda d: (d / "measurements" / "a\u202eb").mkdir(),
        "data/measurements/a\\u202eb",
        "",
        "file.bad-name",
    ),
    "measurements-in-a-linked-folder": (
        _symlinked_folder,
        "data/measurements/linked",
        "",
        "file.symlinked-folder",
    ),
    "measurements-folder-is-a-link": (
        _measurements_root_is_a_link,
        "data/measurements",
        "",
        "file.symlinked-folder",
    ),
    "symlink-loop-file": (
        lambda d: (d / "measurements" / "loop.json").symlink_to("loop.json"),
        "data/measurements/loop.json",
        "",
        "file.not-regular",
    ),
    "symlink-loop-folder": (
        lambda d: (d / "measurements" / "up").symlink_to("..", target_is_directory=True),
        "data/measurements/up",
        "",
        "file.symlinked-folder",
    ),
    "path-over-4096-bytes": (_too_long, "<deepest>", "", "file.unreadable"),
    "model-and-task-ids-too-long-for-file-names": (
        _names_too_long,
        "data/measurements/chat/acme/tiny-1b/long.json",
        "/model_id",
        "value.name-too-long",
    ),
}


def folder_case(root: Path, name: str) -> tuple[Path, str, str, str]:
    """A valid data folder below ``root`` made hostile by case ``name``; returns the data
    folder and the expected (file shown from ``root``, pointer, rule)."""
    mutate, shown, where, rule = FOLDER_CASES[name]
    data, _ = valid_data(root)
    mutate(data)
    if shown == "<deepest>":
        shown = _deepest_listed(data)
    return data, shown, where, rule


@pytest.mark.parametrize("name", sorted(FOLDER_CASES))
def test_hostile_folder_is_refused_at_its_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.chdir(tmp_path)
    _, shown, where, rule = folder_case(tmp_path, name)
    with pytest.raises(ValidationFailed) as info:
        load_dataset(Path("data"))
    found = [(p.file, p.pointer, p.rule) for p in info.value.problems]
    assert found == [(shown, where, rule)], found
    assert all(p.message and p.hint for p in info.value.problems)


@pytest.mark.parametrize("name", sorted(FOLDER_CASES))
def test_hostile_folder_cli_and_build_fail_cleanly(built: tuple[Path, Path], name: str) -> None:
    project, site = built
    before, around = tree(site), sorted(p.name for p in project.iterdir())
    backup = project.parent / f"{project.name}-data-backup"
    shutil.copytree(project / "data", backup, symlinks=True)
    try:
        shutil.rmtree(project / "data")
        _, shown, where, rule = folder_case(project, name)
        results = [
            jouleboard_here("validate", "data", cwd=project, timeout=60),
            jouleboard_here("build", "--data", "data", "--out", "site", cwd=project, timeout=120),
        ]
    finally:
        for leftover in ("data", "elsewhere", "real-measurements"):
            if (project / leftover).is_symlink() or (project / leftover).exists():
                shutil.rmtree(project / leftover)
        backup.rename(project / "data")
    for result, last in zip(results, ["validation failed", "nothing was written"], strict=True):
        out = result.stdout + result.stderr
        assert result.returncode == 1 and "Traceback" not in out, out[-3000:]
        lines = result.stderr.splitlines()
        assert lines[-1] == last
        assert lines[-2] == "1 problem(s) in 1 file(s)", result.stderr[-3000:]
        assert lines[0].startswith(f"{shown}: {where or '/'}: {rule}: "), lines[0][:300]
    assert tree(site) == before
    assert sorted(p.name for p in project.iterdir()) == around
