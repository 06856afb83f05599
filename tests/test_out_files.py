"""An ``--out`` file (``schema``, ``diff``) is written whole, and replaces only a file the
same command wrote: any other file there (a registry, a link, a file of the user's) is
refused with one line and left as it was, before any work is done."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from jouleboard.core.files import replace_text
from jouleboard.plan.schemas import SCHEMAS
from tests.cli_run import jouleboard

REPO = Path(__file__).resolve().parents[1]
GOLDEN_DATA = REPO / "tests" / "golden" / "data"


def refused(result: subprocess.CompletedProcess[str], shown: str, what: str) -> None:
    """``result`` is the one-line refusal of ``--out`` named ``shown`` (as the message names
    it: relative to the working folder)."""
    assert result.returncode == 2, result
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert f"--out {shown} is there and is not {what}" in result.stderr


def test_schema_refuses_to_replace_a_registry(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(GOLDEN_DATA, data)
    site = data / "site.yaml"
    before = site.read_bytes()
    result = jouleboard("schema", "site", "--out", str(site), cwd=tmp_path)
    refused(result, "data/site.yaml", "a JSON Schema of jouleboard's")
    assert site.read_bytes() == before
    assert sorted(p.name for p in data.iterdir()) == sorted(p.name for p in GOLDEN_DATA.iterdir())


def test_schema_replaces_the_schema_it_wrote_keeping_its_permissions(tmp_path: Path) -> None:
    out = tmp_path / "site.schema.json"
    out.write_text('{"$schema": "x", "title": "jouleboard site.yaml", "old": true}')
    out.chmod(0o600)
    result = jouleboard("schema", "site", "--out", str(out), cwd=tmp_path)
    assert result.returncode == 0, result
    assert out.read_text(encoding="utf-8") == jouleboard("schema", "site").stdout
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # no staged file left


def test_a_new_out_file_has_the_permissions_the_umask_gives(tmp_path: Path) -> None:
    before = os.umask(0o027)
    try:
        result = jouleboard("schema", "--out", str(tmp_path / "m.json"), cwd=tmp_path)
    finally:
        os.umask(before)
    assert result.returncode == 0, result
    assert stat.S_IMODE((tmp_path / "m.json").stat().st_mode) == 0o640


def test_schema_refuses_a_link_even_to_its_own_schema(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    target.write_text(jouleboard("schema", "site").stdout)
    link = tmp_path / "site.schema.json"
    link.symlink_to(target)
    result = jouleboard("schema", "site", "--out", str(link), cwd=tmp_path)
    refused(result, link.name, "a JSON Schema of jouleboard's")
    assert "(not a regular file (a symbolic link))" in result.stderr
    assert link.is_symlink() and link.readlink() == target


def test_schema_all_checks_every_file_before_writing_any(tmp_path: Path) -> None:
    files = sorted(file for file, _, _ in SCHEMAS.values())
    foreign = tmp_path / files[-1]
    foreign.write_text("my notes\n")
    result = jouleboard("schema", "all", "--out", str(tmp_path), cwd=tmp_path)
    refused(result, foreign.name, "a JSON Schema of jouleboard's")
    assert [p.name for p in tmp_path.iterdir()] == [foreign.name]
    assert foreign.read_text() == "my notes\n"
    # Into a copy of the repository's schema/ folder: every file is one it wrote, and each
    # comes out as the committed one.
    copy = tmp_path / "schema"
    shutil.copytree(REPO / "schema", copy)
    assert jouleboard("schema", "all", "--out", str(copy), cwd=tmp_path).returncode == 0
    for file in files:
        assert (copy / file).read_bytes() == (REPO / "schema" / file).read_bytes(), file


@pytest.mark.slow  # loads the golden data twice
def test_diff_refuses_a_file_not_its_report_and_replaces_its_own(tmp_path: Path) -> None:
    base = tmp_path / "base"
    shutil.copytree(GOLDEN_DATA, base)
    notes = tmp_path / "notes.md"
    notes.write_text("## My notes\n")
    args = ("diff", "--base", str(base), "--data", str(GOLDEN_DATA))
    result = jouleboard(*args, "--out", str(notes), cwd=tmp_path, timeout=120)
    refused(result, notes.name, "a report of jouleboard diff")
    assert result.stdout == ""  # refused before the work
    assert notes.read_text() == "## My notes\n"
    result = jouleboard(*args, "--out", str(tmp_path / "no" / "d.md"), cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""  # refused before the work
    assert "cannot write --out no/d.md: there is no folder no " in result.stderr
    report = tmp_path / "diff.md"
    report.write_text("## Leaderboard changes\n\nan older report\n")
    result = jouleboard(*args, "--out", str(report), cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result
    assert report.read_text(encoding="utf-8") == result.stdout
    assert result.stdout.startswith("## Leaderboard changes\n")


def test_a_file_written_over_a_link_is_a_new_file_not_the_links_mode(tmp_path: Path) -> None:
    """The importers' manifest is written with replace_text too: over a link it makes a
    regular file with the umask's permissions (a link's own mode is 0777), and the link's
    target is untouched."""
    target = tmp_path / "target.json"
    target.write_text("theirs")
    link = tmp_path / "manifest.json"
    link.symlink_to(target)
    before = os.umask(0o022)
    try:
        replace_text(link, "ours")
    finally:
        os.umask(before)
    assert not link.is_symlink() and link.read_text() == "ours"
    assert stat.S_IMODE(link.stat().st_mode) == 0o644
    assert target.read_text() == "theirs"
