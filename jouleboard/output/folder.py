"""Where a build may write, and the lock that keeps two builds of one output apart.

A build writes only into a folder that is missing, empty, or marked as a jouleboard site by
an earlier build (the :data:`MARKER` file every build writes), and never into, around or
inside a folder it reads (data, templates, content, raw runs, chart cache) or around a
project checkout. Anything else is refused with :class:`OutputRefused` before any work is
done, and again under the lock just before the new site replaces the old one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import stat
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from jouleboard.core.safe_read import FileRefused, read_capped

MARKER = ".jouleboard-site"
MARKER_TEXT = (
    "This folder is a site built by jouleboard. A build into it replaces everything in it.\n"
)
_PROJECT_SIGNS = (".git", "pyproject.toml")
LOCK_TIMEOUT_ENV = "JOULEBOARD_LOCK_TIMEOUT"
_DEFAULT_LOCK_TIMEOUT_S = 600.0
_HOW = "choose an empty or new folder for the site, e.g. --out site"


class OutputRefused(Exception):
    """The output folder is not one a build may replace: one line, what, why, how to fix."""


def real_path(path: Path) -> Path:
    """Absolute, with symlinks and ``..`` resolved as far as the path exists (never raises
    on loops, unlike Path.resolve)."""
    return Path(os.path.realpath(path))


def _within(child: Path, parent: Path) -> bool:
    """True if ``child`` is ``parent`` or below it (both resolved)."""
    return child == parent or parent in child.parents


def _shown(path: Path) -> str:
    text = str(path)
    return text if text.endswith("/") else text + "/"


def project_roots(folders: Iterable[Path]) -> list[Path]:
    """The nearest folder at or above each of ``folders`` that holds .git or
    pyproject.toml (a project checkout)."""
    roots = []
    for folder in folders:
        for candidate in (folder, *folder.parents):
            if any(os.path.lexists(candidate / sign) for sign in _PROJECT_SIGNS):
                roots.append(candidate)
                break
    return roots


@dataclass(frozen=True)
class OutputFolder:
    """The resolved output folder and the folders it must keep away from."""

    given: str  # as the user wrote it, for messages
    path: Path  # resolved
    inputs: tuple[tuple[str, Path], ...] = ()  # (what, folder): never equal, inside, around
    projects: tuple[Path, ...] = field(default=())  # never equal or around

    def check(self) -> None:
        """Raise :class:`OutputRefused` unless a build may replace :attr:`path`."""
        given = Path(self.given)
        shown = self.given if os.path.isfile(self.path) else _shown(given)
        where = f"refusing to write into {shown}"
        for what, folder in self.inputs:
            if self.path == folder:
                raise OutputRefused(f"{where}: it is the {what}; {_HOW}")
            if _within(self.path, folder):
                raise OutputRefused(
                    f"{where}: it is inside the {what} {_shown(folder)}; "
                    "choose a new folder outside it"
                )
            if _within(folder, self.path):
                raise OutputRefused(f"{where}: it contains the {what} {_shown(folder)}; {_HOW}")
        for root in self.projects:
            if _within(root, self.path):
                what = "is" if root == self.path else "contains"
                raise OutputRefused(
                    f"{where}: it {what} the project folder {_shown(root)} "
                    f"(templates/, .git or pyproject.toml); {_HOW}"
                )
        self._check_contents(where)

    def _check_contents(self, where: str) -> None:
        for ancestor in self.path.parents:
            if os.path.lexists(ancestor):
                if not ancestor.is_dir():
                    raise OutputRefused(f"{where}: {ancestor} is a file, not a folder; {_HOW}")
                break
        try:
            mode = os.lstat(self.path).st_mode
        except FileNotFoundError:
            return  # a new folder
        if not stat.S_ISDIR(mode):
            raise OutputRefused(f"{where}: it is a file, not a folder; {_HOW}")
        try:
            with os.scandir(self.path) as entries:
                names = [entry.name for entry in entries]
        except OSError as e:
            raise OutputRefused(f"{where}: cannot list it ({e.strerror}); {_HOW}") from None
        if names and not is_marked(self.path) and not _unmarked_old_site(self.path):
            raise OutputRefused(
                f"{where}: it is not empty and was not made by jouleboard "
                f"(no {MARKER} marker); {_HOW}"
            )


def is_marked(folder: Path) -> bool:
    """True if ``folder`` holds the marker as a regular file (not a link to one)."""
    try:
        return stat.S_ISREG(os.lstat(folder / MARKER).st_mode)
    except OSError:
        return False


# Bytes of a manifest read: the default site's (1,219 files) is 0.35 MB, about 290 bytes a
# file. Past this it is not a manifest a build wrote (a link to /dev/zero, say): unread.
MANIFEST_CAP = 256 * 1024 * 1024


def _unmarked_old_site(folder: Path) -> bool:
    """A site built before builds wrote the marker: every file in it is listed, with the
    size and mtime recorded then, by that build's manifest beside it (format 1)."""
    try:
        manifest = folder.parent / f".{folder.name}.manifest.json"
        listed = json.loads(read_capped(manifest, MANIFEST_CAP).decode("utf-8"))["files"]
        seen = 0
        for root, dirs, names in os.walk(folder):
            if any(os.path.islink(os.path.join(root, d)) for d in dirs):
                return False
            for name in names:
                path = os.path.join(root, name)
                st = os.lstat(path)
                _digest, size, mtime_ns = listed[os.path.relpath(path, folder)]
                if not stat.S_ISREG(st.st_mode) or (st.st_size, st.st_mtime_ns) != (size, mtime_ns):
                    return False
                seen += 1
        return seen > 0
    except (OSError, FileRefused, ValueError, KeyError, TypeError):
        return False


def output_folder(
    out: Path, *, data: Path, project: Path, cache: Path | None = None, runs: Iterable[Path] = ()
) -> OutputFolder:
    """Check ``out`` against the folders a build of ``data`` with ``project`` reads and
    return it resolved; raises :class:`OutputRefused`."""
    inputs = [
        ("data folder (--data)", real_path(data)),
        ("templates folder", real_path(project / "templates")),
        ("content folder", real_path(project / "content")),
        ("static folder", real_path(project / "static")),
    ]
    inputs += [("raw runs folder (--runs)", real_path(run)) for run in runs]
    if cache is not None:
        inputs.append(("chart cache", real_path(cache)))
    checkout = Path(__file__).resolve().parents[2]  # this package's own checkout, if any
    projects = {
        real_path(project),
        *project_roots([real_path(data), real_path(project), real_path(Path.cwd()), checkout]),
    }
    folder = OutputFolder(str(out), real_path(out), tuple(inputs), tuple(sorted(projects)))
    folder.check()
    refuse_unwritable(folder.path, folder.given)
    lock_timeout()  # a bad $JOULEBOARD_LOCK_TIMEOUT is refused before any work, too
    return folder


def refuse_unwritable(path: Path, given: str) -> None:
    """Refuse, before any work, an output whose folder cannot be made or written (/proc/x,
    a read-only disk): a file is made and removed where the build's first file (its lock,
    beside the output) or folder would go, the nearest folder that exists."""
    where = path.parent
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        fd, probe = tempfile.mkstemp(dir=where, prefix=".jouleboard-probe-")
    except OSError as e:
        raise OutputRefused(
            f"refusing to write into {given}: cannot create files in {where} "
            f"({e.strerror or e}); choose an --out on a writable disk"
        ) from None
    os.close(fd)
    os.unlink(probe)


def lock_timeout() -> float:
    """Seconds a build waits for the output's lock: $JOULEBOARD_LOCK_TIMEOUT (a finite
    number, 0 or more) or 600; anything else is refused (nan and inf would wait forever)."""
    text = os.environ.get(LOCK_TIMEOUT_ENV)
    if text is None or not text.strip():
        return _DEFAULT_LOCK_TIMEOUT_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds < 0:
        raise OutputRefused(
            f"{LOCK_TIMEOUT_ENV}={text!r} is not a number of seconds: set it "
            f"to 0 or more (e.g. 600, the default) or unset it"
        )
    return seconds


@contextlib.contextmanager
def locked(out: Path, timeout_s: float | None = None) -> Iterator[None]:
    """Hold the lock of output folder ``out`` (``.<name>.lock`` beside it): a second build
    into the same folder waits here, saying so on stderr, and gives up after ``timeout_s``
    ($JOULEBOARD_LOCK_TIMEOUT, default 600 s) with :class:`OutputRefused`."""
    timeout_s = lock_timeout() if timeout_s is None else timeout_s
    lock_path = out.parent / f".{out.name}.lock"
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as e:
        raise OutputRefused(
            f"refusing to write into {_shown(out)}: cannot open its lock file "
            f"{lock_path} ({e.strerror}); remove or fix it"
        ) from None
    try:
        _acquire(fd, out, lock_path, timeout_s)
        yield
    finally:
        os.close(fd)  # releases the lock


def _acquire(fd: int, out: Path, lock_path: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    said = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        if time.monotonic() >= deadline:
            raise OutputRefused(
                f"another build is still writing {_shown(out)} (lock "
                f"{lock_path.name} held for over {timeout_s:g} s); try again "
                f"when it has finished, or set {LOCK_TIMEOUT_ENV}"
            )
        if not said:
            print(
                f"waiting for another build to finish writing {_shown(out)} "
                f"(lock {lock_path.name})",
                file=sys.stderr,
                flush=True,
            )
            said = True
        time.sleep(0.05)
