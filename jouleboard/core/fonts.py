"""Which fonts a chart drawn with the system's fonts sees, as one digest.

vl-convert draws a chart whose text its own Liberation Sans cannot draw with the system's
fonts (render/chart_files.py ``bundled_font_suffices``). A font installed or removed changes
such a chart's SVG (the width of a label, and so where the plot starts), so the chart
cache's key for such a chart, each chart's key in a build and the inputs digest hold
:func:`system_fonts`. It reads the names, sizes and times of the configuration's and the
font folders' files, not the fonts, and parses the configuration files that can name a
folder: on a Debian machine with Chromium (38 fonts, 3 of its 35 configuration files
parsed) it takes about 1.2 ms (1.6 ms the first time in a process).

The folders are the ones vl-convert 1.9's font database (the Rust crate fontdb 0.23, which
reads fontconfig's files with fontconfig-parser 0.5) loads, found as it finds them:

- the configuration is ``$FONTCONFIG_FILE``, else the user's
  (``$XDG_CONFIG_HOME/fontconfig/fonts.conf``) and the system's (/etc/fonts/local.conf and
  fonts.conf), with what their ``<include>`` elements name: a file, or each file directly
  in a folder (conf.d);
- the font folders are what its ``<dir>`` elements name, and fontdb's own when none is named
  (:data:`_FONT_FOLDERS` and ``$XDG_DATA_HOME/fonts``, always read here), each with
  everything below it.

A relative name is resolved as fontconfig-parser resolves it: a ``<dir>`` under the working
folder (``prefix="relative"``: beside the file, as reached; ``"xdg"``: under
``$XDG_DATA_HOME``), an ``<include>`` under /etc/fonts (``"relative"``: beside the file;
``"xdg"``: under ``$XDG_CONFIG_HOME``; ``"cwd"``: under the working folder).
"""

from __future__ import annotations

import hashlib
import os
import stat
import xml.parsers.expat
from collections.abc import Iterator

from jouleboard.core.safe_read import read_bounded

# Where fontdb looks when the configuration names no folder, and where macOS and Windows keep
# fonts: always read (a folder that does not exist adds only its name).
_FONT_FOLDERS = (
    "/usr/share/fonts",
    "/usr/local/share/fonts",
    "~/.fonts",
    "~/.local/share/fonts",
    "/System/Library/Fonts",
    "/Library/Fonts",
    "~/Library/Fonts",
)
SYSTEM_CONFIG = "/etc/fonts"  # the system's configuration folder (tests put another here)
_CONFIG_CAP = 1024 * 1024  # bytes of a configuration file read for what it names
# A file that holds none of these names nothing (an element comes from its tag, or from an
# entity the file declares), and is not parsed: most of conf.d.
_NAMING = (b"<dir", b"<include", b"<!ENTITY")


def system_fonts() -> str:
    """The hex digest of the fonts the system offers now: the files of the configuration and
    of every font folder (see the module's notes), each by path, size and modification
    time. Read anew at each call."""
    digest = hashlib.sha256()
    folders = [*_FONT_FOLDERS, _xdg("XDG_DATA_HOME", "~/.local/share", "fonts")]
    folders += _windows_folders()
    configs, parsed = _roots(), set[tuple[int, int]]()
    for given in configs:  # (configs grows by what its files include)
        for path, info in _configuration(given):
            digest.update(_line(path, info))
            # Each file once, whatever its name: an include may name its includer.
            if info is not None and (info.st_dev, info.st_ino) not in parsed:
                parsed.add((info.st_dev, info.st_ino))
                named, included = _named(path)
                folders += named
                configs += included
    seen: set[tuple[int, int]] = set()
    for top in dict.fromkeys(folders):  # (each once, in order)
        for line in _files(os.path.expanduser(top), seen):
            digest.update(line)
    return digest.hexdigest()


def _roots() -> list[str]:
    """The configuration files fontdb starts from (both of the system's, where fontdb reads
    local.conf only when the user has no configuration of their own)."""
    given = os.environ.get("FONTCONFIG_FILE")
    if given:
        return [os.path.expanduser(given)]
    user = _xdg("XDG_CONFIG_HOME", "~/.config", os.path.join("fontconfig", "fonts.conf"))
    return [user, *(os.path.join(SYSTEM_CONFIG, n) for n in ("local.conf", "fonts.conf"))]


def _configuration(given: str) -> Iterator[tuple[str, os.stat_result | None]]:
    """``(path, status)`` of the configuration file ``given``, or of each file directly in
    the folder ``given`` (not its subfolders), in name order, as an include reads them
    (status None: missing or unreadable)."""
    info = _status(given)
    if info is None or not stat.S_ISDIR(info.st_mode):
        yield given, info
        return
    try:
        with os.scandir(given) as listing:
            names = sorted(entry.name for entry in listing)
    except OSError:
        yield given, None
        return
    for name in names:
        path = os.path.join(given, name)
        info = _status(path)
        if info is None or not stat.S_ISDIR(info.st_mode):
            yield path, info


def _files(top: str, seen: set[tuple[int, int]]) -> Iterator[bytes]:
    """A line for ``top`` and for each file below it, in a stable order, with its path, size
    and time (a link is followed; a folder seen already, under this name or another, is
    passed over). Walked with a list, not by recursion: a tree of any depth ends."""
    waiting = [top]
    while waiting:
        path = waiting.pop()
        info = _status(path)
        if info is None or not stat.S_ISDIR(info.st_mode):
            yield _line(path, info)
            continue
        if (info.st_dev, info.st_ino) in seen:
            continue
        seen.add((info.st_dev, info.st_ino))
        try:
            with os.scandir(path) as listing:
                names = sorted(entry.name for entry in listing)
        except OSError:
            yield os.fsencode(path) + b"\0unreadable\n"
            continue
        waiting += (os.path.join(path, name) for name in reversed(names))


def _status(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):  # missing, unreadable, a dangling link, a NUL in the name
        return None


def _line(path: str, info: os.stat_result | None) -> bytes:
    if info is None:
        return os.fsencode(path) + b"\0missing\n"
    return os.fsencode(path) + f"\0{info.st_size}\0{info.st_mtime_ns}\n".encode()


def _named(config: str) -> tuple[list[str], list[str]]:
    """The font folders (``<dir>``) and the configuration files or folders (``<include>``)
    the fontconfig file ``config`` names, resolved as fontconfig-parser resolves them."""
    try:  # a pipe is not waited on
        fd = os.open(config, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return [], []
            text = read_bounded(f, _CONFIG_CAP)
    except (OSError, ValueError):
        return [], []
    folders: list[str] = []
    included: list[str] = []
    if not any(name in text for name in _NAMING):
        return folders, included
    for tag, prefix, name in _children(text):
        if tag not in ("dir", "include") or not name:
            continue
        path = os.path.expanduser(name)
        if tag == "dir":
            if prefix == "xdg":
                path = _xdg("XDG_DATA_HOME", "~/.local/share", path)
            elif prefix == "relative":
                path = os.path.join(os.path.dirname(config), path)
            folders.append(os.path.abspath(path))
        else:
            if prefix == "xdg":
                path = _xdg("XDG_CONFIG_HOME", "~/.config", path)
            elif prefix == "relative":
                path = os.path.join(os.path.dirname(config), path)
            elif prefix != "cwd":
                path = os.path.join(SYSTEM_CONFIG, path)
            included.append(os.path.abspath(path))
    return folders, included


def _children(text: bytes) -> list[tuple[str, str, str]]:
    """``(tag, prefix attribute, text)`` of each element directly in the root element of the
    XML document ``text``, its text stripped; none if it is not well-formed, as for fontdb.
    expat reads it in linear time, fetches nothing and expands entities within its limits."""
    children: list[tuple[str, str, str]] = []
    depth, tag, prefix, chunks = 0, "", "", list[str]()

    def start(name: str, attributes: dict[str, str]) -> None:
        nonlocal depth, tag, prefix
        depth += 1
        if depth == 2:
            tag, prefix = name, attributes.get("prefix", "default")
            chunks.clear()

    def end(name: str) -> None:
        nonlocal depth
        if depth == 2:
            children.append((tag, prefix, "".join(chunks).strip()))
        depth -= 1

    def data(chunk: str) -> None:
        if depth == 2:
            chunks.append(chunk)

    parser = xml.parsers.expat.ParserCreate()
    parser.StartElementHandler, parser.EndElementHandler = start, end
    parser.CharacterDataHandler = data
    try:
        parser.Parse(text, True)
    except xml.parsers.expat.ExpatError:
        return []
    return children


def _xdg(variable: str, default: str, name: str) -> str:
    """``name`` under the XDG folder ``$variable`` (``default`` when it is unset or empty)."""
    return os.path.join(os.path.expanduser(os.environ.get(variable) or default), name)


def _windows_folders() -> list[str]:
    windows, local = os.environ.get("WINDIR"), os.environ.get("LOCALAPPDATA")
    return [
        *([os.path.join(windows, "Fonts")] if windows else []),
        *([os.path.join(local, "Microsoft", "Windows", "Fonts")] if local else []),
    ]
