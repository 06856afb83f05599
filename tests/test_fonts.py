"""core/fonts.py: the digest of the fonts a chart drawn with the system's fonts sees changes
when a font is installed, removed or replaced in a folder vl-convert's font database loads,
and only then. Which folders those are, and how a name in fontconfig's files resolves, is
what fontdb 0.23 and fontconfig-parser 0.5 do (the crates vl-convert 1.9 draws with)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jouleboard.core import fonts
from jouleboard.core.fonts import system_fonts
from tests.in_time import in_time


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A machine of the test's own: its home, XDG folders and system configuration folder
    (fonts.SYSTEM_CONFIG) are empty folders under ``tmp_path``; no $FONTCONFIG_FILE."""
    for name in ("home", "config", "data", "etc-fonts", "work"):
        (tmp_path / name).mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("FONTCONFIG_FILE", raising=False)
    monkeypatch.setattr(fonts, "SYSTEM_CONFIG", str(tmp_path / "etc-fonts"))
    monkeypatch.chdir(tmp_path / "work")
    return tmp_path


def digest_in_time() -> str:
    """:func:`system_fonts`, which must end within 30 s."""
    return in_time(system_fonts, 30)


def each_font_counts(folders: list[Path]) -> None:
    """A font added to each of ``folders`` (made first) in turn gives a new digest."""
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
    digests = [system_fonts()]
    for folder in folders:
        (folder / "x.ttf").write_bytes(b"a font")
        digests.append(system_fonts())
    assert len(set(digests)) == len(digests), [str(f) for f in folders]


def no_font_counts(folders: list[Path]) -> None:
    """A font added to each of ``folders`` (made first) leaves the digest as it was."""
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
    before = system_fonts()
    for folder in folders:
        (folder / "x.ttf").write_bytes(b"a font")
    assert system_fonts() == before


def config(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'<?xml version="1.0"?>\n<fontconfig>{body}</fontconfig>\n')
    return path


def test_the_digest_follows_the_fonts_of_a_font_folder(home: Path) -> None:
    (home / "data" / "fonts").mkdir()
    first = system_fonts()
    assert system_fonts() == first  # nothing changed
    font = home / "data" / "fonts" / "noto" / "NotoSansCJK.ttc"
    font.parent.mkdir(parents=True)
    font.write_bytes(b"a font")
    installed = system_fonts()
    assert installed != first
    font.write_bytes(b"another font")  # replaced by one of another size
    assert system_fonts() not in (first, installed)
    font.unlink()
    font.parent.rmdir()
    assert system_fonts() == first


def test_fontdbs_own_folders_count_without_any_configuration(home: Path) -> None:
    """fontdb's folders when the configuration names none: ~/.fonts and
    ~/.local/share/fonts under $HOME, whatever $XDG_DATA_HOME says."""
    each_font_counts([home / "home" / ".fonts", home / "home" / ".local" / "share" / "fonts"])


def test_the_configuration_is_the_users_and_the_systems_unless_one_is_given(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fontdb reads $XDG_CONFIG_HOME/fontconfig/fonts.conf (even when no system file includes
    it), /etc/fonts/local.conf and fonts.conf; with $FONTCONFIG_FILE, that file alone."""
    folders = {name: home / name for name in ("users", "local", "systems", "given")}
    config(home / "config" / "fontconfig" / "fonts.conf", f"<dir>{folders['users']}</dir>")
    config(home / "etc-fonts" / "local.conf", f"<dir>{folders['local']}</dir>")
    config(home / "etc-fonts" / "fonts.conf", f"<dir>{folders['systems']}</dir>")
    each_font_counts([folders["users"], folders["local"], folders["systems"]])
    given = config(home / "given.conf", f"<dir>{folders['given']}</dir>")
    monkeypatch.setenv("FONTCONFIG_FILE", str(given))
    each_font_counts([folders["given"]])
    no_font_counts([folders["users"] / "more", folders["systems"] / "more"])


def test_the_folders_a_configuration_names_count(home: Path) -> None:
    """Each ``<dir>`` where fontconfig-parser finds it: a relative name under the working
    folder (no prefix, "default", "cwd"), beside the file as reached ("relative", here
    through a link to a file elsewhere), under $XDG_DATA_HOME ("xdg"); ~ is $HOME."""
    target = config(
        home / "dotfiles" / "fonts.conf",
        f"<dir>{home / 'absolute'}</dir><dir>plain</dir><dir prefix='default'>default</dir>"
        "<dir prefix='cwd'>cwd</dir><dir prefix='relative'>beside</dir>"
        "<dir prefix='xdg'>xdg</dir><dir>~/tilde</dir>",
    )
    link = home / "config" / "fontconfig" / "fonts.conf"
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    each_font_counts(
        [
            home / "absolute",
            home / "work" / "plain",
            home / "work" / "default",
            home / "work" / "cwd",
            home / "config" / "fontconfig" / "beside",
            home / "data" / "xdg",
            home / "home" / "tilde",
        ]
    )
    no_font_counts([home / "dotfiles" / "beside"])  # beside the link's target: not read


def test_the_files_a_configuration_includes_count(home: Path) -> None:
    """Each ``<include>`` where fontconfig-parser finds it: a relative name under /etc/fonts
    (no prefix), under $XDG_CONFIG_HOME ("xdg"), beside the file ("relative"), under the
    working folder ("cwd"). An included folder gives each file directly in it, whatever its
    name, and not its subfolders. Includes that name each other are read once each."""
    system = home / "etc-fonts"
    config(
        system / "fonts.conf",
        "<include ignore_missing='yes'>conf.d</include>"
        "<include prefix='xdg'>fontconfig/user.xml</include>"
        "<include prefix='relative'>beside.conf</include>"
        "<include prefix='cwd'>here.conf</include>",
    )
    config(system / "conf.d" / "10-a.conf", f"<dir>{home / 'a'}</dir>")
    config(system / "conf.d" / "99-no-extension", f"<dir>{home / 'b'}</dir>")
    config(system / "conf.d" / "sub" / "10-c.conf", f"<dir>{home / 'c'}</dir>")
    config(
        home / "config" / "fontconfig" / "user.xml",
        f"<dir>{home / 'd'}</dir><include>extra.conf</include>",  # /etc/fonts/extra.conf
    )
    config(system / "extra.conf", f"<dir>{home / 'g'}</dir>")
    config(home / "config" / "fontconfig" / "extra.conf", f"<dir>{home / 'h'}</dir>")
    config(system / "beside.conf", f"<dir>{home / 'e'}</dir><include>fonts.conf</include>")
    config(home / "work" / "here.conf", f"<dir>{home / 'f'}</dir>")
    first = digest_in_time()  # (the loop ends)
    assert first == system_fonts()
    each_font_counts([home / name for name in "abdefg"])
    no_font_counts([home / "c", home / "h"])


def test_what_fontdb_does_not_read_does_not_count(home: Path) -> None:
    """A ``<dir>`` in a comment, inside another element, or in a file that is not well-formed
    XML; a relative one with no prefix is not beside the file."""
    config(
        home / "etc-fonts" / "fonts.conf",
        f"<!-- <dir>{home / 'commented'}</dir> --><match><dir>{home / 'nested'}</dir></match>"
        "<dir>beside</dir>",
    )
    (home / "etc-fonts" / "local.conf").write_text(f"<fontconfig><dir>{home / 'broken'}</dir>")
    no_font_counts([home / n for n in ("commented", "nested", "broken")])
    no_font_counts([home / "etc-fonts" / "beside"])


def test_a_name_is_read_as_xml(home: Path) -> None:
    """Entities, character references and CDATA, as an XML parser reads them."""
    config(
        home / "etc-fonts" / "fonts.conf",
        f"<dir>{home}/a&amp;b</dir><dir>{home}/&#x63;</dir><dir><![CDATA[{home}/<d>]]></dir>",
    )
    each_font_counts([home / "a&b", home / "c", home / "<d>"])


def test_odd_files_and_folders_end_without_an_error(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pipe as the configuration (reading it would wait for ever), a folder that links to
    itself, a NUL in a name, a tree 1,200 folders deep, and configurations of 1 MiB that a
    backtracking pattern would take minutes over: each digest ends, in well under 30 s."""
    (home / "data" / "fonts").mkdir()
    (home / "data" / "fonts" / "loop").symlink_to(home / "data" / "fonts")
    deep = [home / "home" / ".fonts"]
    deep += [deep[0] / ("d/" * depth) for depth in range(1, 1201)]
    for folder in deep:  # (one by one: pathlib's and os's own ways recurse)
        folder.mkdir()
    try:
        pipe = home / "pipe.conf"
        os.mkfifo(pipe)
        monkeypatch.setenv("FONTCONFIG_FILE", str(pipe))
        assert len(digest_in_time()) == 64
        odd = home / "odd.conf"
        monkeypatch.setenv("FONTCONFIG_FILE", str(odd))
        for body in (b"<dir>/tmp/a\0b</dir>", b"<dir " * 200_000, b"<!--" * 250_000):
            odd.write_bytes(b"<fontconfig>" + body)
            assert len(digest_in_time()) == 64
    finally:  # (shutil.rmtree recurses too: the deepest first)
        for folder in reversed(deep):
            folder.rmdir()
