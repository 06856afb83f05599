"""core/fonts.py: the digest of the fonts a chart drawn with the system's fonts sees changes
when a font is installed, removed or replaced where fontconfig looks, and only then."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from jouleboard.core.fonts import system_fonts


@pytest.fixture()
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An XDG data folder of the test's own: its fonts/ is one of the font folders."""
    folder = tmp_path / "xdg"
    (folder / "fonts").mkdir(parents=True)
    monkeypatch.setenv("XDG_DATA_HOME", str(folder))
    return folder


def digest_in_time() -> str:
    """:func:`system_fonts`, which must end within 30 s (a test that would wait for ever
    fails instead)."""
    found: list[str] = []
    reader = threading.Thread(target=lambda: found.append(system_fonts()), daemon=True)
    reader.start()
    reader.join(timeout=30)
    assert not reader.is_alive(), "system_fonts() did not end"
    return found[0]


def test_the_digest_follows_the_fonts_of_a_font_folder(xdg: Path) -> None:
    first = system_fonts()
    assert system_fonts() == first  # nothing changed
    font = xdg / "fonts" / "noto" / "NotoSansCJK.ttc"
    font.parent.mkdir()
    font.write_bytes(b"a font")
    installed = system_fonts()
    assert installed != first
    font.write_bytes(b"another font")  # replaced by one of another size
    assert system_fonts() not in (first, installed)
    font.unlink()
    assert system_fonts() == first  # the empty folder noto/ adds nothing


def test_the_folders_a_configuration_names_count_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, xdg: Path
) -> None:
    """Each folder a <dir> names, where fontconfig (fonts-conf(5)) looks for it; a relative
    name with no prefix, "cwd" or "default" is under the working folder."""
    work, system_data = tmp_path / "work", tmp_path / "share"
    named = {
        str(tmp_path / "named"): tmp_path / "named",
        '<dir prefix="relative">mine</dir>': tmp_path / "conf" / "mine",
        "<dir>here</dir>": work / "here",
        '<dir prefix="cwd">there</dir>': work / "there",
        '<dir prefix="xdg">more</dir>': xdg / "more",
        '<dir prefix="xdg">more</dir> (a system one)': system_data / "more",
        '<remap-dir as-path="/usr/share/fonts">mapped</remap-dir>': work / "mapped",
    }
    for folder in named.values():
        folder.mkdir(parents=True)
    config = tmp_path / "conf" / "fonts.conf"
    config.write_text(
        f"<fontconfig><dir>{tmp_path / 'named'}</dir>"
        '<dir prefix="relative">mine</dir><dir>here</dir><dir prefix="cwd">there</dir>'
        '<dir prefix="xdg">more</dir>'
        '<remap-dir prefix="cwd" as-path="/usr/share/fonts">mapped</remap-dir></fontconfig>'
    )
    monkeypatch.setenv("FONTCONFIG_FILE", str(config))
    monkeypatch.setenv("XDG_DATA_DIRS", f"{tmp_path / 'empty'}:{system_data}")
    monkeypatch.chdir(work)
    digests = {"none": system_fonts()}
    for what, folder in named.items():
        (folder / "x.ttf").write_bytes(b"a font")
        digests[what] = system_fonts()
    assert len(set(digests.values())) == len(digests), digests


def test_a_folder_named_in_a_comment_or_beside_the_file_by_accident_does_not_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, xdg: Path
) -> None:
    """A commented-out <dir> is not read by fontconfig, and a relative name with no prefix
    is not beside the configuration (unless the working folder is)."""
    commented, beside = tmp_path / "old", tmp_path / "conf" / "here"
    for folder in (commented, beside):
        folder.mkdir(parents=True)
    config = tmp_path / "conf" / "fonts.conf"
    config.write_text(
        f"<fontconfig><!-- <dir>{commented}</dir>\n<dir>{commented}</dir> -->"
        "<dir>here</dir></fontconfig>"
    )
    monkeypatch.setenv("FONTCONFIG_FILE", str(config))
    monkeypatch.chdir(tmp_path)
    before = system_fonts()
    for folder in (commented, beside):
        (folder / "x.ttf").write_bytes(b"a font")
    assert system_fonts() == before


def test_the_files_a_configuration_includes_count_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, xdg: Path
) -> None:
    """A user's own configuration (Debian's 50-user.conf includes
    $XDG_CONFIG_HOME/fontconfig/fonts.conf and conf.d/) can name a font folder of its own:
    an edit of it, and a font in the folder it names, change the digest. Includes that name
    each other are read once each."""
    config_home, mine, theirs = tmp_path / "config", tmp_path / "mine", tmp_path / "theirs"
    for folder in (config_home / "fontconfig" / "conf.d", mine, theirs):
        folder.mkdir(parents=True)
    system = tmp_path / "etc" / "fonts.conf"
    system.parent.mkdir()
    system.write_text(
        '<fontconfig><include ignore_missing="yes" prefix="xdg">fontconfig/fonts.conf</include>'
        '<include prefix="xdg">fontconfig/conf.d</include></fontconfig>'
    )
    user = config_home / "fontconfig" / "fonts.conf"
    user.write_text(f"<fontconfig><include>{system}</include></fontconfig>")  # a loop
    monkeypatch.setenv("FONTCONFIG_FILE", str(system))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))
    digests = [digest_in_time()]  # (the loop ends)
    user.write_text(f"<fontconfig><include>{system}</include><dir>{mine}</dir></fontconfig>")
    digests.append(system_fonts())
    (mine / "x.ttf").write_bytes(b"a font")
    digests.append(system_fonts())
    (config_home / "fontconfig" / "conf.d" / "90-theirs.conf").write_text(
        f"<fontconfig><dir>{theirs}</dir></fontconfig>"
    )
    digests.append(system_fonts())
    (theirs / "y.otf").write_bytes(b"another font")
    digests.append(system_fonts())
    assert len(set(digests)) == len(digests)


def test_a_pipe_as_the_configuration_and_a_folder_that_links_to_itself_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, xdg: Path
) -> None:
    pipe = tmp_path / "fonts.conf"
    os.mkfifo(pipe)  # nobody writes to it: reading it would wait for ever
    monkeypatch.setenv("FONTCONFIG_FILE", str(pipe))
    (xdg / "fonts" / "loop").symlink_to(xdg / "fonts")
    assert len(digest_in_time()) == 64
