"""Hostile inputs (tests/hostile/, manifest EXPECTED.yaml) are rejected with located problems.

Each file is dropped into a fresh copy of a small valid data folder and must trip the rule
its manifest entry names, at that pointer, naming that file; the valid measurement next to
it must not be blamed. The command line must report all of them without a traceback, and a
build on a data folder holding a hostile file must leave the previous site untouched.
"""

from __future__ import annotations

import hashlib
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

from jouleboard.dataset import load_dataset
from jouleboard.problems import Problem, ValidationFailed
from tests.test_validation_rules import MIB, VALID, make_data_dir, same_file, write_measurement

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(__file__).resolve().parent / "hostile"
MANIFEST: dict[str, dict[str, Any]] = yaml.safe_load(
    (CORPUS / "EXPECTED.yaml").read_text(encoding="utf-8"))
HOSTILE_DIR = Path("measurements/hostile")
LINE = re.compile(r"^(?P<file>[^:]+): (?P<pointer>/[^:]*): (?P<rule>[a-z]+\.[a-z0-9-]+): .+$")
# A handful of different layers for the (slow) build-leaves-the-site-alone check.
BUILD_SAMPLE = ["syntax-truncated.json", "nan.json", "model-id-path-traversal.json",
                "power-above-limit.json", "duplicate-of-base.json"]


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
    return [pytest.param(n, id=n, marks=[pytest.mark.xfail(strict=True, reason=e["xfail"])]
                         if (e := MANIFEST[n]).get("xfail") else []) for n in names]


def run(args: list[str], cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=cwd, text=True, capture_output=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, **kwargs)


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
    assert any(p.rule == expected["rule"] and p.pointer == expected["pointer"] for p in found), \
        f"expected {expected['rule']} at {expected['pointer']!r}, got:\n{report}"
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

    result = run(["-m", "jouleboard", "validate", "data"], cwd=tmp_path, timeout=60,
                 preexec_fn=limit_memory)
    assert "Traceback" not in result.stderr, result.stderr[-1000:]
    assert result.returncode == 1
    assert re.search(r"^data/measurements/hostile/endless\.json: /: file\.", result.stderr,
                     re.MULTILINE), result.stderr


# --- a hostile file never touches a previously built site --------------------------------


def tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A project folder (data/, templates/, content/) and its site, built once (a few s)."""
    project = tmp_path_factory.mktemp("project")
    shutil.copytree(REPO / "templates", project / "templates")
    shutil.copytree(REPO / "content", project / "content")
    valid_data(project)
    result = run([str(REPO / "build.py"), "--data", "data", "--out", "site"], cwd=project,
                 timeout=300)
    assert result.returncode == 0, result.stderr
    assert (project / "site" / "index.html").is_file()
    return project, project / "site"


@pytest.mark.parametrize("name", BUILD_SAMPLE)
def test_build_with_a_hostile_file_leaves_the_site_unchanged(
        built: tuple[Path, Path], name: str) -> None:
    project, site = built
    before, around = tree(site), sorted(p.name for p in project.iterdir())
    path = add_hostile(project / "data", name)
    try:
        result = run([str(REPO / "build.py"), "--data", "data", "--out", "site"], cwd=project,
                     timeout=120)
    finally:
        path.unlink()
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert result.stderr.splitlines()[-1] == "nothing was written"
    assert f"data/{HOSTILE_DIR.as_posix()}/{name}: " in result.stderr
    assert f": {MANIFEST[name]['rule']}: " in result.stderr
    assert tree(site) == before
    assert sorted(p.name for p in project.iterdir()) == around  # no staging folder left
