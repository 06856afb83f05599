"""SiteFiles past its memory limit: files go to disk as they are added, and the committed
site is the same as when everything was held in memory."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jouleboard.engine import assemble, outputs
from jouleboard.engine.build import build_site
from jouleboard.output import writer as write
from jouleboard.output.folder import MARKER, MARKER_TEXT
from jouleboard.output.writer import DuplicatePath, LastFile, OutputChanged, SiteFiles
from jouleboard.plan.views import Download

REPO = Path(__file__).resolve().parents[1]
GOLDEN_DATA = REPO / "tests" / "golden" / "data"


def _tree(site: Path) -> dict[str, str]:
    return {
        p.relative_to(site).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(site.rglob("*"))
        if p.is_file()
    }


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
    golden_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # golden_site (tests/conftest.py) is GOLDEN_DATA built in memory, with the default limit.
    monkeypatch.setattr(write, "_MEMORY_LIMIT", 0)
    summary = build_site(GOLDEN_DATA, tmp_path / "spooled", project=REPO)
    assert _tree(tmp_path / "spooled") == _tree(golden_site)
    assert summary.files == len(_tree(tmp_path / "spooled"))


def test_a_file_added_in_chunks_reaches_the_disk_chunk_by_chunk(tmp_path: Path) -> None:
    spool_dir = tmp_path / "spool"
    spool_dir.mkdir()
    files = SiteFiles(memory_limit=100_000, spool_dir=spool_dir)
    chunk = 64 * 1024  # bigger than a file's write buffer: each write reaches the disk
    on_disk: list[int] = []

    def chunks() -> Iterator[str]:
        for i in range(6):
            # What is on disk when chunk i is asked for: every chunk before it, once the
            # file is past the limit (chunk 0 alone fits; 0 + 1 do not).
            on_disk.append(sum(p.stat().st_size for p in spool_dir.rglob("*") if p.is_file()))
            yield str(i) * chunk

    files.add_chunks("big.json", chunks())
    files.add_chunks("small.txt", ["ab", b"c", "d\u00e9"])  # in memory: joined, UTF-8
    assert on_disk == [0, 0, 2 * chunk, 3 * chunk, 4 * chunk, 5 * chunk]
    whole = "".join(str(i) * chunk for i in range(6)).encode()
    assert files.content("big.json") == whole
    assert files.content("small.txt") == "abcd\u00e9".encode()
    assert files.total_bytes() == len(whole) + len("abcd\u00e9".encode())
    with pytest.raises(DuplicatePath):
        files.add_chunks("small.txt", ["x"])
    files.commit(tmp_path / "site")
    assert (tmp_path / "site" / "big.json").read_bytes() == whole


def test_charts_rendered_in_batches_make_the_same_site(
    golden_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Batches of 3 charts (the golden data has dozens), every file spooled: the site a
    # 100k build makes this way equals the one made in one go, in memory.
    monkeypatch.setattr(outputs, "CHART_BATCH", 3)
    monkeypatch.setattr(write, "_MEMORY_LIMIT", 0)
    batches: list[int] = []
    start_renders = outputs.start_renders

    def counted(specs: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        batches.append(len(specs))
        return start_renders(specs, *args, **kwargs)

    monkeypatch.setattr(outputs, "start_renders", counted)
    build_site(GOLDEN_DATA, tmp_path / "batched", project=REPO)
    assert _tree(tmp_path / "batched") == _tree(golden_site)
    assert len(batches) > 1 and max(batches) <= 2 * 3  # each chart and its phone render


def test_a_file_of_the_last_build_is_linked_into_the_new_site_unread(tmp_path: Path) -> None:
    out = tmp_path / "site"
    first = SiteFiles()
    first.add("kept.html", "kept")
    first.add("edited.html", "before")
    first.commit(out)
    inode = (out / "kept.html").stat().st_ino
    again = SiteFiles()
    kept = LastFile(out / "kept.html", hashlib.sha256(b"kept").hexdigest(), 4)
    again.add("kept.html", kept)
    again.add("edited.html", "after")
    assert (again.size("kept.html"), again.total_bytes()) == (4, 9)
    with pytest.raises(DuplicatePath):
        again.add("kept.html", kept)
    again.commit(out)
    assert (out / "kept.html").stat().st_ino == inode  # the same file, linked
    assert _tree(out) == {
        "kept.html": hashlib.sha256(b"kept").hexdigest(),
        "edited.html": hashlib.sha256(b"after").hexdigest(),
        MARKER: hashlib.sha256(MARKER_TEXT.encode()).hexdigest(),
    }


def test_a_file_of_the_last_build_edited_before_the_commit_fails_it_cleanly(
    tmp_path: Path,
) -> None:
    """Taken unread, a file is linked only while it is still as the manifest recorded it
    (size, mtime, inode), and copied only with the recorded digest: one someone edits in
    the output folder while the build runs fails the build, which writes nothing."""
    out = tmp_path / "site"
    first = SiteFiles()
    first.add("kept.html", "kept")
    first.commit(out)
    again = SiteFiles()
    again.add("kept.html", LastFile(out / "kept.html", hashlib.sha256(b"kept").hexdigest(), 4))
    again.add("new.html", "new")
    (out / "kept.html").write_text("edited by hand")
    with pytest.raises(OutputChanged, match=r"kept\.html changed while the build ran"):
        again.commit(out)
    assert (out / "kept.html").read_text() == "edited by hand"
    assert not (out / "new.html").exists()
    assert [p.name for p in tmp_path.iterdir() if "-new-" in p.name] == []  # no staging left


@pytest.mark.parametrize("limit", [1000, 0], ids=["held", "spooled"])
def test_a_copy_has_the_files_content_made_once(tmp_path: Path, limit: int) -> None:
    """add_copy gives a path the content of a file added before, held or spooled: the
    commit writes both, each equal to the original, and the next commit links both."""
    spool_dir = tmp_path / "spool"
    spool_dir.mkdir()
    made: list[int] = []

    def chunks() -> Iterator[str]:
        for i in range(3):
            made.append(i)
            yield f"row {i}\n"

    files = SiteFiles(memory_limit=limit, spool_dir=spool_dir)
    files.add_chunks("downloads/all.csv", chunks())
    files.add_copy("data/v1/all.csv", "downloads/all.csv")
    with pytest.raises(DuplicatePath):
        files.add_copy("data/v1/all.csv", "downloads/all.csv")
    text = b"row 0\nrow 1\nrow 2\n"
    assert made == [0, 1, 2]
    assert files.content("data/v1/all.csv") == files.content("downloads/all.csv") == text
    assert files.total_bytes() == 2 * len(text)
    stats = files.commit(tmp_path / "site")
    assert stats.written == 3  # both files, and the marker
    for path in ("downloads/all.csv", "data/v1/all.csv"):
        assert (tmp_path / "site" / path).read_bytes() == text
    assert list(spool_dir.iterdir()) == []
    again = SiteFiles(memory_limit=limit, spool_dir=spool_dir)
    again.add("downloads/all.csv", text)
    again.add_copy("data/v1/all.csv", "downloads/all.csv")
    assert again.commit(tmp_path / "site").linked == 3


def test_a_release_of_the_working_data_makes_each_download_text_once(
    golden_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A release's downloads of the working data hold the full data set's rows: each text is
    made once for both files, and both equal the full data set's download of a site that
    has no release (golden_site, the same data)."""
    data = tmp_path / "data"
    shutil.copytree(GOLDEN_DATA, data)
    (data / "releases.yaml").write_text(
        "releases:\n  - version: v3\n    date: '2026-02-16'\n    notes_md: First.\n"
    )
    started: list[str] = []
    real = assemble.download_chunks

    def counted(download: Download) -> Iterator[str]:
        started.append(download.path)  # (when its text is asked for, not when it is called)
        yield from real(download)

    monkeypatch.setattr(assemble, "download_chunks", counted)
    build_site(data, tmp_path / "site", project=REPO)
    full = sorted(p.name for p in (golden_site / "downloads").glob("configurations*"))
    assert full
    for name in full:
        both = [f"downloads/{name}", f"data/v3/{name}"]
        assert sum(started.count(path) for path in both) == 1, name
        for path in both:
            assert (tmp_path / "site" / path).read_bytes() == (
                golden_site / "downloads" / name
            ).read_bytes(), path
    assert len(started) == len(set(started))
