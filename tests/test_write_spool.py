"""SiteFiles past its memory limit: files go to disk as they are added, and the committed
site is the same as when everything was held in memory."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from jouleboard import write
from jouleboard.build import build_site
from jouleboard.write import DuplicatePath, SiteFiles

REPO = Path(__file__).resolve().parents[1]
GOLDEN_DATA = REPO / "tests" / "golden" / "data"


def _tree(site: Path) -> dict[str, str]:
    return {p.relative_to(site).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(site.rglob("*")) if p.is_file()}


def test_files_past_the_limit_are_on_disk_before_commit(tmp_path: Path) -> None:
    spool_dir = tmp_path / "spool"
    spool_dir.mkdir()
    files = SiteFiles(memory_limit=10, spool_dir=spool_dir)
    files.add("a.txt", "12345")  # 5 bytes: held
    files.add("b/c.txt", "678910")  # 5 + 6 > 10: spooled
    files.add("d.bin", b"\x00" * 100)  # spooled
    on_disk = sorted(p.read_bytes() for p in spool_dir.rglob("*") if p.is_file())
    assert on_disk == sorted([b"678910", b"\x00" * 100])
    assert (len(files), files.total_bytes()) == (3, 111)
    assert files.content("b/c.txt") == b"678910"
    with pytest.raises(DuplicatePath):
        files.add("d.bin", b"again")

    out = tmp_path / "site"
    stats = files.commit(out)
    assert (out / "a.txt").read_text() == "12345"
    assert (out / "b" / "c.txt").read_text() == "678910"
    assert (out / "d.bin").read_bytes() == b"\x00" * 100
    assert stats.written == 4  # and the marker
    assert list(spool_dir.iterdir()) == []  # the spool folder went with the commit
    assert files.content("d.bin") == b"\x00" * 100  # still readable, from the site

    again = SiteFiles(memory_limit=0, spool_dir=spool_dir)
    for name, text in (("a.txt", "12345"), ("b/c.txt", "changed"), ("d.bin", "\x00" * 100)):
        again.add(name, text)
    stats = again.commit(out)
    assert (stats.written, stats.linked) == (1, 3)  # unchanged spooled files hard-linked
    assert (out / "b" / "c.txt").read_text() == "changed"
    assert list(spool_dir.iterdir()) == []


def test_a_site_built_through_the_spool_equals_one_built_in_memory(
        golden_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # golden_site (tests/conftest.py) is GOLDEN_DATA built in memory, with the default limit.
    monkeypatch.setattr(write, "_MEMORY_LIMIT", 0)
    summary = build_site(GOLDEN_DATA, tmp_path / "spooled", project=REPO)
    assert _tree(tmp_path / "spooled") == _tree(golden_site)
    assert summary.files == len(_tree(tmp_path / "spooled"))
