"""The data folder and the output folder (issue 25 items 7, 9, 13 and 17): nothing of the data
folder is read before it is checked, nothing beside or inside the output is lost without a
word, static/ publishes files as they are, and odd paths get one clear line.

Every command runs under a timeout, so a hang fails instead of stalling: in the test's own
process (tests/cli_run.py), or in a new one where it needs a memory limit.
"""

from __future__ import annotations

import io
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

import jouleboard
from jouleboard.output import writer as write
from jouleboard.output.folder import MARKER, OutputRefused
from jouleboard.output.writer import SiteFiles, manifest_path
from tests.cli_run import jouleboard as jouleboard_here
from tests.test_validation_rules import VALID, make_data_dir, write_measurement

TIMEOUT_S = 120  # a build of one measurement takes seconds; a hang fails here
# The subprocesses run the jouleboard these tests import (this checkout), wherever they run.
CHECKOUT = str(Path(jouleboard.__file__).resolve().parents[1])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A site folder holding a valid data folder of one measurement."""
    root = tmp_path / "project"
    root.mkdir()
    write_measurement(make_data_dir(root), VALID)
    return root


def jouleboard_env(**env: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": CHECKOUT, **env}


def run(
    project: Path, *args: str, memory_bytes: int | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """``jouleboard ARGS`` in ``project`` (``memory_bytes``: its address-space limit, in a
    process of its own)."""
    if memory_bytes is None:
        return jouleboard_here(*args, cwd=project, env=env, timeout=TIMEOUT_S)

    def limit() -> None:
        if memory_bytes is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    return subprocess.run(
        [sys.executable, "-m", "jouleboard", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env=jouleboard_env(**env),
        preexec_fn=limit,
    )


def build(project: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run(project, "build", "--data", "data", "--out", "site", *args, **env)


def built(project: Path, *args: str) -> Path:
    result = build(project, *args)
    assert result.returncode == 0, result.stderr
    return project / "site"


# --- item 7: nothing of the data folder is read before it is checked -----------------------


def test_build_refuses_a_fifo_site_yaml_instead_of_hanging(project: Path) -> None:
    site_yaml = project / "data" / "site.yaml"
    site_yaml.unlink()
    os.mkfifo(site_yaml)
    result = build(project)  # before: the freshness check waited on the pipe forever
    assert result.returncode == 1
    assert (
        "data/site.yaml: /: file.not-regular: not a regular file (a pipe (FIFO))" in result.stderr
    )
    assert "Traceback" not in result.stderr and not (project / "site").exists()


def test_build_refuses_site_yaml_linked_to_dev_zero(project: Path) -> None:
    site_yaml = project / "data" / "site.yaml"
    site_yaml.unlink()
    site_yaml.symlink_to("/dev/zero")
    # Before: read until MemoryError, a traceback (bounded here so it cannot take the machine).
    result = build(project, memory_bytes=2 * 1024**3)
    assert result.returncode == 1
    assert (
        "data/site.yaml: /: file.not-regular: not a regular file (a symbolic link)" in result.stderr
    )
    assert "Traceback" not in result.stderr and not (project / "site").exists()


@pytest.mark.parametrize("command", ["validate", "build"])
def test_a_stray_oversized_file_in_the_data_folder_is_refused(project: Path, command: str) -> None:
    stray = project / "data" / "dump.bin"
    with stray.open("wb") as f:
        f.truncate(64 * 1024 * 1024)  # sparse: costs no disk; before, read whole every build
    args = ("--out", "site") if command == "build" else ()
    result = run(project, command, "--data", "data", *args)
    assert result.returncode == 1, result.stderr
    assert (
        "data/dump.bin: /: file.too-large: file has 67,108,864 bytes, over the "
        "4,194,304-byte cap" in result.stderr
    )
    assert not (project / "site").exists()


# --- item 9: nothing beside or inside the output lost --------------------------------------


@pytest.mark.slow  # builds a site
def test_a_users_previous_folder_beside_the_output_is_kept(project: Path) -> None:
    built(project)
    mine = project / ".site-previous" / "notes.txt"
    mine.parent.mkdir()
    mine.write_text("mine\n")
    built(project, "--base-url", "/board/")  # other inputs: the site is replaced
    assert mine.read_text() == "mine\n"  # before: deleted


@pytest.mark.slow  # builds a site
def test_a_users_previous_folder_is_not_moved_into_a_missing_output(project: Path) -> None:
    mine = project / ".site-previous" / "notes.txt"
    mine.parent.mkdir()
    mine.write_text("mine\n")
    site = built(project)
    assert mine.read_text() == "mine\n"  # before: moved to site/, then deleted
    assert not (site / "notes.txt").exists() and (site / MARKER).is_file()


@pytest.mark.slow  # builds a site
def test_a_users_folder_named_like_a_staging_folder_is_kept(project: Path) -> None:
    built(project)
    mine = project / ".site-new-abcd1234" / "notes.txt"
    mine.parent.mkdir()
    mine.write_text("mine\n")
    built(project, "--base-url", "/board/")
    assert mine.read_text() == "mine\n"  # before: deleted


@pytest.mark.slow  # builds a site
def test_files_added_inside_the_output_are_refused_not_deleted(project: Path) -> None:
    site = built(project)
    (site / "CNAME").write_text("energy.example.org\n")
    (site / ".well-known").mkdir()
    (site / ".well-known" / "security.txt").write_text("Contact: mailto:a@example.org\n")
    index = (site / "index.html").read_bytes()
    result = build(project)  # before: both removed, exit 0, not a word
    assert result.returncode == 1
    assert (
        "refusing to write into site/: it holds files the last build did not make "
        "(.well-known/security.txt, CNAME)" in result.stderr
    )
    assert "static/" in result.stderr
    assert (site / "CNAME").read_text() == "energy.example.org\n"
    assert (site / ".well-known" / "security.txt").is_file()
    assert (site / "index.html").read_bytes() == index


@pytest.mark.slow  # builds a site
def test_static_files_are_published_as_they_are(project: Path) -> None:
    static = project / "static"
    (static / ".well-known").mkdir(parents=True)
    (static / "CNAME").write_text("energy.example.org\n")
    (static / ".nojekyll").write_bytes(b"")
    (static / ".well-known" / "security.txt").write_text("Contact: mailto:a@example.org\n")
    (static / "google0123456789abcdef.html").write_text("google-site-verification: x\n")
    site = built(project)
    for name in ("CNAME", ".nojekyll", ".well-known/security.txt", "google0123456789abcdef.html"):
        assert (site / name).read_bytes() == (static / name).read_bytes(), name
    # static/ is an input of the freshness check: an edit is published by the next build.
    (static / "CNAME").write_text("board.example.org\n")
    built(project)
    assert (site / "CNAME").read_text() == "board.example.org\n"


def test_a_static_file_named_like_a_generated_file_is_refused(project: Path) -> None:
    (project / "static").mkdir()
    (project / "static" / "index.html").write_text("<p>mine</p>\n")
    result = build(project)
    assert result.returncode == 1
    assert "static/index.html: /: static.name-clash:" in result.stderr
    assert not (project / "site").exists()


def test_a_static_symlink_is_refused(project: Path) -> None:
    (project / "static").mkdir()
    (project / "static" / "CNAME").symlink_to("/etc/passwd")
    result = build(project)
    assert result.returncode == 1
    assert (
        "static/CNAME: /: file.not-regular: not a regular file (a symbolic link)" in result.stderr
    )
    assert not (project / "site").exists()


@pytest.mark.slow  # builds a site
def test_the_swap_without_exchange_refuses_a_foreign_previous_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where renameat2 is missing the previous site waits in .<out>-previous: a folder of
    that name that is not a build's own is refused, never deleted."""
    monkeypatch.setattr(write, "_exchange", lambda a, b: False)
    out = tmp_path / "site"
    first = SiteFiles()
    first.add("index.html", "one")
    first.commit(out)
    mine = tmp_path / ".site-previous" / "notes.txt"
    mine.parent.mkdir()
    mine.write_text("mine\n")
    second = SiteFiles()
    second.add("index.html", "two")
    with pytest.raises(OutputRefused, match=r"\.site-previous is in the way"):
        second.commit(out)
    assert mine.read_text() == "mine\n"  # before: removed with rmtree
    assert (out / "index.html").read_text() == "one"


# --- item 13: the manifest's temporary file ------------------------------------------------


@pytest.mark.slow  # builds a site
def test_the_manifest_temporary_file_does_not_follow_a_planted_link(tmp_path: Path) -> None:
    out = tmp_path / "site"
    victim = tmp_path / "precious.txt"
    victim.write_text("precious\n")
    planted = manifest_path(out).with_suffix(f".tmp{os.getpid()}")
    planted.symlink_to(victim)
    files = SiteFiles()
    files.add("index.html", "hello")
    files.commit(out)
    assert victim.read_text() == "precious\n"  # before: overwritten with the manifest
    assert (out / "index.html").read_text() == "hello"


def test_a_manifest_edited_in_place_is_read_again(tmp_path: Path) -> None:
    """A build reads its manifest once however often it looks (writer._manifest); an edit
    that keeps the file's size and modification time is still seen, by its change time."""
    out = tmp_path / "site"
    files = SiteFiles()
    files.add("index.html", "hello")
    files.commit(out, {"pages": 1})
    assert write.last_record(out) == {"pages": 1}
    manifest = manifest_path(out)
    before = os.stat(manifest)
    text = manifest.read_text()
    with open(manifest, "r+", encoding="utf-8") as f:  # the same file, not a new one
        f.write(text.replace('"pages": 1', '"pages": 2'))
    os.utime(manifest, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(manifest)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )
    assert write.last_record(out) == {}  # its checksum no longer holds: no last build


# --- item 17: odd paths and settings get one clear line ------------------------------------


@pytest.mark.parametrize("value", ["nan", "-1", "inf", "ten"])
def test_a_lock_timeout_that_is_not_a_number_of_seconds_is_refused(
    project: Path, value: str
) -> None:
    result = build(project, JOULEBOARD_LOCK_TIMEOUT=value)  # before: nan waited forever
    assert result.returncode == 1
    assert f"JOULEBOARD_LOCK_TIMEOUT={value!r} is not a number of seconds" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (project / "site").exists()


@pytest.mark.parametrize(
    ("make", "what"),
    [(os.mkfifo, "a pipe (FIFO)"), (lambda p: p.symlink_to("/dev/zero"), "a symbolic link")],
)
def test_validate_says_what_a_path_that_is_not_a_file_is(
    project: Path, make: object, what: str
) -> None:
    path = project / "odd.json"
    make(path)  # type: ignore[operator]
    result = run(project, "validate", "--data", "data", "odd.json")
    assert result.returncode == 1
    assert f"odd.json: /: file.not-regular: not a regular file ({what})" in result.stderr
    assert "no such file" not in result.stderr  # before: "no such file or folder"


def test_validate_names_a_device(project: Path) -> None:
    result = run(project, "validate", "--data", "data", "/dev/zero")
    assert result.returncode == 1
    assert "/dev/zero: /: file.not-regular: not a regular file (a device)" in result.stderr


def test_init_refuses_a_symlink_to_an_empty_folder(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    link = tmp_path / "board"
    link.symlink_to(empty)
    result = jouleboard_here("init", str(link), timeout=TIMEOUT_S)
    assert result.returncode == 2
    assert f"{link} is a symbolic link" in result.stderr  # before: "Not a directory"
    assert link.is_symlink() and not any(empty.iterdir())


def test_hidden_measurement_files_and_folders_are_reported(project: Path) -> None:
    data = project / "data"
    write_measurement(data, VALID, name=".draft.json")
    write_measurement(data, VALID, folder=Path("measurements/chat/.wip"))
    (data / "measurements" / ".gitkeep").write_text("")  # not a measurement: quiet
    result = run(project, "validate", "--data", "data")
    assert result.returncode == 1  # before: "ok: 1 configuration valid"
    lines = [line for line in result.stderr.splitlines() if "file.hidden" in line]
    assert [line.split(":")[0] for line in lines] == [
        "data/measurements/chat/.wip",
        "data/measurements/chat/acme/tiny-1b/.draft.json",
    ]
    assert ".gitkeep" not in result.stderr


class Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs, no handler catches it."""


def test_a_build_killed_while_deleting_a_stale_folder_leaves_it_recognisable(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The marker is deleted last: a kill midway leaves a folder the next build still owns
    (before, rmtree took the marker early and the half-deleted folder stayed for good).
    No site is built: the folders are made here (not in tmp_path, which the fast-test guard
    would take for a build's)."""
    tmp_path = tmp_path_factory.mktemp("killed")
    out = tmp_path / "site"
    out.mkdir()
    (out / MARKER).write_text("site\n")
    stale = tmp_path / ".site-new-k1ll3d00"
    for name in ("about", "charts", "gpus", "models"):
        (stale / name).mkdir(parents=True)
        (stale / name / "index.html").write_text(name)
    (stale / MARKER).write_text("site\n")
    real_rmtree = write.shutil.rmtree
    calls = []

    def rmtree_then_killed(path: object, *args: object, **kwargs: object) -> None:
        calls.append(path)
        real_rmtree(path)  # type: ignore[arg-type]
        raise Killed

    monkeypatch.setattr(write.shutil, "rmtree", rmtree_then_killed)
    with pytest.raises(Killed):
        write._recover(out)
    assert len(calls) == 1 and (stale / MARKER).is_file()
    monkeypatch.setattr(write.shutil, "rmtree", real_rmtree)
    write._recover(out)  # the next build
    assert not stale.exists() and (out / MARKER).is_file()


@pytest.mark.slow  # builds a site
def test_an_up_to_date_build_still_cleans_up_after_a_killed_one(project: Path) -> None:
    """A build killed while staging leaves a staging folder; the next build may find the
    output up to date and write nothing, but it still removes what the killed one left
    (before: only a build that wrote did, so kill -9 tests ended with an empty .site-new-*)."""
    built(project)
    empty = project / ".site-new-k1ll3d01"
    marked = project / ".site-new-k1ll3d02"
    empty.mkdir()
    (marked / "about").mkdir(parents=True)
    (marked / MARKER).write_text("site\n")
    (marked / "about" / "index.html").write_text("half a site\n")
    done = build(project)
    assert done.returncode == 0 and "up to date" in done.stdout + done.stderr, done.stderr
    assert not empty.exists() and not marked.exists()


def _archive(tmp: Path, *members: tuple[str, bytes | None, str | None]) -> Path:
    """A tar of (name, file bytes, or None with a link target)."""
    import io
    import tarfile

    path = tmp / "a.tar"
    with tarfile.open(path, "w") as tar:
        for name, data, link in members:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
            else:
                assert data is not None
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize("with_data_filter", [True, False])
def test_archives_unpack_plain_files_only_on_every_python_311(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_data_filter: bool
) -> None:
    """init --example and older releases unpack archives; Python 3.11 before 3.11.4 (Debian
    12's 3.11.2) has no "data" filter, where extractall(filter=...) was a TypeError."""
    import tarfile

    from jouleboard.core.safe_read import extract_tar

    if not with_data_filter:
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    good = _archive(tmp_path, ("data/a.json", b"{}", None), ("NOTICE", b"n", None))
    with tarfile.open(good) as tar:
        extract_tar(tar, tmp_path / "out")
    assert (tmp_path / "out" / "data" / "a.json").read_bytes() == b"{}"
    for i, bad in enumerate((("../x", b"x", None), ("/x", b"x", None), ("ln", None, "/x"))):
        path = _archive(tmp_path, bad)
        target = tmp_path / f"bad{i}"
        try:
            with tarfile.open(path) as tar:
                extract_tar(tar, target)
        except (ValueError, tarfile.TarError):
            pass  # refused (the filter strips a leading '/' instead: inside target)
        else:
            assert with_data_filter, bad  # the fallback refuses every one of these
        assert not (tmp_path / "x").exists() and not Path("/x").exists()
        assert not any(p.is_symlink() for p in target.rglob("*"))


class _StaleSize(io.BufferedReader):
    """A file whose size, as ``fstat`` gives it, is another file's: one that grew since."""

    def __init__(self, path: Path, stale: Path) -> None:
        super().__init__(io.FileIO(path, "rb"))
        self._stale = os.open(stale, os.O_RDONLY)

    def fileno(self) -> int:
        return self._stale

    def close(self) -> None:
        os.close(self._stale)
        super().close()


def test_a_bounded_read_returns_the_file_or_one_byte_past_its_cap(tmp_path: Path) -> None:
    """read_bounded reads a file to its end, or to one byte past the cap (which is how its
    callers tell a file over the cap), also when the file grew after its size was taken; and
    it never holds the cap in memory for a small file (a 4 MiB buffer a data file was 45 ms of
    an edit rebuild's input check)."""
    import tracemalloc

    from jouleboard.core.safe_read import read_bounded

    ten = tmp_path / "ten"
    ten.write_bytes(b"0123456789")
    for cap, expected in ((20, b"0123456789"), (10, b"0123456789"), (9, b"0123456789")):
        with ten.open("rb") as f:
            assert read_bounded(f, cap) == expected, cap
    with ten.open("rb") as f:
        assert read_bounded(f, 4) == b"01234"
    (tmp_path / "three").write_bytes(b"012")
    for cap, expected in ((20, b"0123456789"), (6, b"0123456")):
        with _StaleSize(ten, tmp_path / "three") as f:
            assert read_bounded(f, cap) == expected, cap

    tracemalloc.start()
    try:
        with ten.open("rb") as f:
            read_bounded(f, 64 * 1024 * 1024)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024, peak
