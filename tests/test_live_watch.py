"""What serve's file watch reports (jouleboard/engine/watch.py): inotify on Linux, a poll of
modification times elsewhere; both see edits in nested and new folders, and neither reports
hidden files or the preview folder."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from jouleboard.engine.watch import InotifyWatch, PollWatch, watch


def make(root: Path) -> tuple[Path, Path, Path]:
    data, templates, out = root / "data", root / "templates", root / "data" / "preview"
    (data / "measurements" / "a").mkdir(parents=True)
    (data / "measurements" / "a" / "one.json").write_text("{}")
    (root / "content").mkdir()
    out.mkdir()
    return data, templates, out


def kinds() -> list[type]:
    return [PollWatch, InotifyWatch] if sys.platform.startswith("linux") else [PollWatch]


def start(kind: type, roots: list[Path], skip: Path) -> InotifyWatch | PollWatch:
    return kind(roots, skip, 0.05) if kind is PollWatch else kind(roots, skip)


@pytest.mark.parametrize("kind", kinds(), ids=lambda k: k.__name__)
def test_edits_are_seen_and_hidden_files_and_the_preview_are_not(
    kind: type, tmp_path: Path
) -> None:
    data, templates, out = make(tmp_path)
    w = start(kind, [data, templates, tmp_path / "content"], out)
    try:
        one = data / "measurements" / "a" / "one.json"
        tmp = one.with_name(".one.json.tmp")  # an editor's save: a hidden file moved over
        tmp.write_text('{"x": 1}')
        os.replace(tmp, one)
        assert w.changes(5) == {str(one)}
        (out / "index.html").write_text("x")  # serve's own output
        (data / ".lock").write_text("x")
        assert w.changes(0.3) == set()
        new = data / "measurements" / "b" / "c"
        new.mkdir(parents=True)  # a new folder, then a file in it
        w.changes(1)
        (new / "two.json").write_text("{}")
        assert str(new / "two.json") in w.changes(5)
        templates.mkdir()  # a root that did not exist when the watch started
        w.changes(1)
        (templates / "base.html").write_text("x")
        assert str(templates / "base.html") in w.changes(5)
        content = tmp_path / "content"  # a root watched from the start, deleted and made
        shutil.rmtree(content)  # again (a checkout of another branch)
        w.changes(1)
        content.mkdir()
        w.changes(1)
        (content / "about.md").write_text("y")
        assert str(content / "about.md") in w.changes(5)
    finally:
        w.close()


def test_inotify_is_used_on_linux(tmp_path: Path) -> None:
    data, templates, out = make(tmp_path)
    w = watch([data, templates], out, 0.1)
    try:
        assert isinstance(w, InotifyWatch) == sys.platform.startswith("linux")
    finally:
        w.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
def test_a_new_file_is_reported_once_it_is_written_and_closed(tmp_path: Path) -> None:
    """An editor saving a new measurement creates it, then writes it: the watch reported
    it at its creation, and serve's rebuild read it empty ("json.syntax: not valid JSON:
    Expecting value at line 1 column 1") before the next one read it whole."""
    import threading
    import time

    data, _, out = make(tmp_path)
    new = data / "measurements" / "a" / "two.json"
    text = '{"schema_version": 1}'
    w = InotifyWatch([data], out)

    def save() -> None:
        with new.open("w") as file:
            time.sleep(0.4)  # created, not yet written
            file.write(text)

    writer = threading.Thread(target=save)
    try:
        writer.start()
        changed = w.changes(timeout=5)
        assert str(new) in changed and new.read_text() == text
    finally:
        writer.join()
        w.close()
