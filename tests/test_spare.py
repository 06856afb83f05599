"""The spare: the site a commit replaced, kept beside the output as its folders and the files
the new site shares with it (hard links), so that the next commit fills it instead of making
every folder and linking every unchanged file again (output/writer.py).

Whatever is in the spare, the published site is the one the build made: each test checks the
site against the files given, independently of the spare."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from jouleboard.output.folder import MARKER, MARKER_TEXT, OutputRefused
from jouleboard.output.writer import SiteFiles

SITE = {
    "index.html": "home",
    "models/a/index.html": "model a",
    "models/b/index.html": "model b",
    "tasks/t/index.html": "task t",
    "tasks/t/data.csv": "x,y\n1,2\n",
    "about/index.html": "about",
}


def commit(out: Path, files: dict[str, str]) -> tuple[int, int]:
    site = SiteFiles()
    for path, text in files.items():
        site.add(path, text)
    stats = site.commit(out)
    return stats.written, stats.linked


def tree(root: Path) -> dict[str, str]:
    """Every entry below ``root``: a file's text, "<folder>" or "<link to ...>"."""
    found = {}
    for folder, dirs, names in os.walk(root):
        for name in dirs + names:
            path = Path(folder) / name
            key = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[key] = f"<link to {os.readlink(path)}>"
            elif path.is_dir():
                found[key] = "<folder>"
            else:
                found[key] = path.read_text()
    return found


def expected(files: dict[str, str]) -> dict[str, str]:
    """The tree of a site holding ``files``: the files, their folders, the marker."""
    found = {**files, MARKER: MARKER_TEXT}
    for path in files:
        parts = path.split("/")[:-1]
        for n in range(1, len(parts) + 1):
            found["/".join(parts[:n])] = "<folder>"
    return found


def spare_of(out: Path) -> Path:
    return out.parent / f".{out.name}.spare"


def test_the_spare_holds_only_files_the_site_shares(tmp_path: Path) -> None:
    """After each commit the spare's files are the site's own (same inode at the same path:
    no disk of their own), the file an edit replaced is not among them, and the site is
    exactly the files given."""
    out = tmp_path / "site"
    commit(out, SITE)
    assert not spare_of(out).exists()  # a first build replaced no site
    edited = {**SITE, "models/a/index.html": "model a, edited"}
    del edited["about/index.html"]
    commit(out, edited)
    assert tree(out) == expected(edited)
    spare = spare_of(out)
    files = [p for p in spare.rglob("*") if p.is_file()]
    assert files, "no spare was kept"
    for path in files:
        assert path.stat().st_ino == (out / path.relative_to(spare)).stat().st_ino, path
    shared = {p.relative_to(spare).as_posix() for p in files}
    assert shared == set(edited) - {"models/a/index.html"} | {MARKER}


def test_a_rebuild_from_the_spare_makes_no_folder_and_links_only_what_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "site"
    commit(out, SITE)
    commit(out, {**SITE, "index.html": "home 2"})
    calls: list[str] = []
    real_makedirs, real_link = os.makedirs, os.link

    def makedirs(path: str, *args: object, **kwargs: object) -> None:
        calls.append(f"makedirs {path}")
        real_makedirs(path, *args, **kwargs)  # type: ignore[arg-type]

    def link(source: str, target: str, **kwargs: object) -> None:
        calls.append(f"link {target}")
        real_link(source, target, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "makedirs", makedirs)
    monkeypatch.setattr(os, "link", link)
    third = {**SITE, "index.html": "home 3", "tasks/t/data.csv": "x,y\n1,3\n"}
    # The two changed files written; the other four and the marker already in the spare.
    assert commit(out, third) == (2, len(SITE) - 1)
    monkeypatch.undo()
    assert calls == []
    assert tree(out) == expected(third)


def test_whatever_is_put_into_the_spare_never_reaches_the_site(tmp_path: Path) -> None:
    """A file added, a file replaced by another of the same name, links to a file and to a
    folder outside, a folder where the site has a file: none is published, nothing outside
    is touched through a link, and the site is the files given."""
    out = tmp_path / "site"
    commit(out, SITE)
    commit(out, {**SITE, "index.html": "home 2"})
    spare = spare_of(out)
    outside = tmp_path / "outside"
    (outside / "folder").mkdir(parents=True)
    (outside / "secret.txt").write_text("secret")
    (outside / "folder" / "kept.txt").write_text("kept")
    (spare / "planted.html").write_text("<script>alert(1)</script>")
    replaced = spare / "models" / "b" / "index.html"
    replaced.unlink()
    replaced.write_text("<script>alert(2)</script>")  # a new file: not the site's
    (spare / "tasks" / "t" / "data.csv").unlink()
    (spare / "tasks" / "t" / "data.csv").symlink_to(outside / "secret.txt")
    (spare / "models" / "c").symlink_to(outside / "folder", target_is_directory=True)
    (spare / "about" / "index.html").unlink()
    (spare / "about" / "index.html").mkdir()
    (spare / "about" / "index.html" / "x.html").write_text("<script>alert(3)</script>")
    third = {**SITE, "index.html": "home 3", "models/c/index.html": "model c"}
    commit(out, third)
    assert tree(out) == expected(third)
    assert (outside / "secret.txt").read_text() == "secret"
    assert tree(outside) == {
        "folder": "<folder>",
        "folder/kept.txt": "kept",
        "secret.txt": "secret",
    }
    assert "alert" not in "".join(tree(spare_of(out)).values())


def test_a_spare_whose_marker_is_not_the_sites_gets_a_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The marker replaced in one step, never deleted (a staging folder a killed build leaves
    is always recognisably a build's), nor written through a link into the live site."""
    out = tmp_path / "site"
    commit(out, SITE)
    commit(out, {**SITE, "index.html": "home 2"})
    marker = spare_of(out) / MARKER
    marker.unlink()
    marker.write_text(MARKER_TEXT)  # the same text, another file
    live = (out / MARKER).stat().st_ino
    unlinked: list[str] = []
    real_unlink = os.unlink

    def unlink(path: str, *args: object, **kwargs: object) -> None:
        real_unlink(path, *args, **kwargs)  # type: ignore[arg-type]
        unlinked.append(os.fspath(path))  # (not one that failed: there was nothing)

    monkeypatch.setattr(os, "unlink", unlink)
    commit(out, {**SITE, "index.html": "home 3"})
    monkeypatch.undo()
    assert not [p for p in unlinked if Path(p).name == MARKER]
    assert (out / MARKER).read_text() == MARKER_TEXT
    assert tree(out) == expected({**SITE, "index.html": "home 3"})
    assert live in {(out / MARKER).stat().st_ino, (spare_of(out) / MARKER).stat().st_ino}


def test_a_folder_of_that_name_that_is_not_a_builds_own_is_left_alone(tmp_path: Path) -> None:
    out = tmp_path / "site"
    mine = spare_of(out)
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    commit(out, SITE)
    commit(out, {**SITE, "index.html": "home 2"})
    commit(out, {**SITE, "index.html": "home 3"})
    assert tree(mine) == {"notes.txt": "mine"}
    assert tree(out) == expected({**SITE, "index.html": "home 3"})
    assert [p.name for p in tmp_path.iterdir() if "-new-" in p.name] == []


def test_the_spare_follows_a_site_whose_files_became_folders_and_back(tmp_path: Path) -> None:
    """A path that is a file in one site and a folder in the next, then a file again."""
    out = tmp_path / "site"
    steps = [
        {"a": "file a", "b/c.html": "c"},
        {"a/index.html": "a is a folder", "b/c.html": "c"},
        {"a": "file a again", "b": "b is a file"},
        {"a/index.html": "a is a folder again", "b/c.html": "c"},
    ]
    for files in steps:
        commit(out, files)
        assert tree(out) == expected(files)
        digests = {
            p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in out.rglob("*")
            if p.is_file()
        }
        assert len(digests) == len(files) + 1


@pytest.mark.parametrize("stuck", [False, True])
def test_a_spare_that_cannot_be_emptied_is_never_published(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stuck: bool
) -> None:
    """A planted file that cannot be deleted when the spare is emptied (as a file in a folder
    this user may not write): when it goes on a second try, the site is written afresh;
    when it stays, the build is refused in one message naming the folder, and the site
    before it is untouched. Either way the file is never published."""
    out = tmp_path / "site"
    commit(out, SITE)
    commit(out, {**SITE, "index.html": "home 2"})
    planted = spare_of(out) / "models" / "planted.html"
    planted.write_text("<script>alert(1)</script>")
    real_unlink = os.unlink
    refusals: list[str] = []

    def unlink(path: str, *args: object, **kwargs: object) -> None:
        if Path(path).name == "planted.html" and (stuck or not refusals):
            refusals.append(os.fspath(path))
            raise PermissionError(13, "Permission denied", os.fspath(path))
        real_unlink(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "unlink", unlink)
    third = {**SITE, "index.html": "home 3"}
    if stuck:
        with pytest.raises(
            OutputRefused, match=r"holds what cannot be deleted .*delete that folder"
        ):
            commit(out, third)
        assert tree(out) == expected({**SITE, "index.html": "home 2"})
    else:
        commit(out, third)
        assert tree(out) == expected(third)
    monkeypatch.undo()
    assert refusals
    commit(out, {**SITE, "index.html": "home 4"})  # the next build: no spare to take
    assert tree(out) == expected({**SITE, "index.html": "home 4"})


@pytest.mark.parametrize("name", [".site.spare", ".site-previous", ".site-new-k1ll3d00"])
def test_a_site_built_under_a_name_builds_use_is_never_taken(tmp_path: Path, name: str) -> None:
    """An output folder named as another output's spare, previous site or staging folder
    (``--out .site.spare``, with its own manifest beside it) is a site someone builds, not a
    build's own folder: builds into ``site`` neither take, restore nor delete it."""
    out = tmp_path / "site"
    other = tmp_path / name
    other_files = {"index.html": "the other site"}
    commit(other, other_files)
    commit(out, SITE)
    commit(out, {**SITE, "index.html": "home 2"})
    commit(out, {**SITE, "index.html": "home 3"})
    assert tree(out) == expected({**SITE, "index.html": "home 3"})
    assert tree(other) == expected(other_files)
