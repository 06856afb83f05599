"""One digest of everything a build's output depends on.

A build records it in the output's manifest; the next build with the same digest, into an
output folder still exactly as that build left it, has nothing to do (``jouleboard build``
after no change returns in a fraction of a second). The digest covers the content of every
file of the data folder, the site's and the packaged templates and content, the package's
own code, registered task kinds, the raw run trees (by size, inode and times: they can be
large) and the files a runs build reads above them, the commits the older releases' git
refs name, the system's fonts (a chart that vl-convert's own font cannot draw is drawn with
them: core/fonts.py), the versions that shape the output (jouleboard, Python and the
libraries of :data:`OUTPUT_LIBRARIES`), the build's options and, for a site with kinds,
whether their code may run. Anything it cannot see (a kind imported by name from
site.yaml, a release's ref that git cannot resolve) disables the shortcut. It does not see
what a kind file of the data folder imports from elsewhere (README: keep a kind's code in
the data folder), nor the code of a kind an older release's site.yaml names by import path
(a kind file of a release is in the commit its ref names).

A build records the digest only if every file and folder it listed still has the status it
had (:meth:`Statuses.unchanged`, at the commit): an input edited while the build ran, even
one put back afterwards as it was, makes the next build run.

Nothing is read before it is checked: a link, pipe, device or a file over its cap in the
data folder or static/ (or a file over the cap anywhere else) is never opened; the digest is
then None and the build runs, reporting the file as validation does.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import stat
import struct
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from jouleboard.core.consent import kind_code_allowed
from jouleboard.core.fonts import system_fonts
from jouleboard.core.resources import content_dir, templates_dir
from jouleboard.core.safe_read import (
    DATA_FILE_CAP,
    STATIC_FILE_CAP,
    STATIC_HIDDEN_PUBLISHED,
    STATIC_TOTAL_CAP,
    read_bounded,
    stat_refusal,
)

if TYPE_CHECKING:
    from jouleboard.kinds.base import TaskKind

_PACKAGE = Path(__file__).resolve().parents[1]  # jouleboard/, from jouleboard/engine/


def _raise(error: OSError) -> None:
    raise error


class Statuses:
    """The status of each file and folder a digest listed, in order, to be compared with
    what they are later (:meth:`unchanged`): each path, whether its link is followed, and
    its mode, device, inode, size, modification and status-change times packed into 48
    bytes. Packed, the 106,603 entries of 100,000 measurement files take 26 MB, most of it
    their paths; kept as os.stat_result objects until the build's commit, they took 95 MB."""

    _PACKED = struct.Struct("=4Q2q")

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.followed = bytearray()  # 1: the status of a link's target, 0: of the entry
        self.packed = bytearray()

    def add(self, path: str, followed: bool, st: os.stat_result) -> None:
        self.paths.append(path)
        self.followed.append(followed)
        self.packed += self._pack(st)

    def unchanged(self) -> bool:
        """Whether every file and folder listed still has the status it had: none written
        (its times, a write that puts the modification time back included), replaced,
        added to or removed from a folder since. A build that read an input edited after
        its digest was taken must not record that digest: an undo would bring the inputs
        back to it, and the next build would call its output up to date."""
        now = bytearray()
        try:
            for path, followed in zip(self.paths, self.followed, strict=True):
                now += self._pack(os.stat(path) if followed else os.lstat(path))
        except OSError:  # gone
            return False
        return now == self.packed

    @classmethod
    def _pack(cls, st: os.stat_result) -> bytes:
        return cls._PACKED.pack(
            st.st_mode, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns
        )


@dataclass
class Seen:
    """What :func:`inputs_digest` read on its way: the sha256 of each data-folder file (by
    absolute path) and the digest of the package's code, for what a build keeps between
    processes (jouleboard/engine/kept.py); and the status of every file and folder it
    listed, for :meth:`Statuses.unchanged`."""

    files: dict[str, bytes] = field(default_factory=dict)
    code: str = ""
    statuses: Statuses = field(default_factory=Statuses)


class _Unseen(Exception):
    """A file the digest does not read (a link, pipe, device or one over its cap)."""


def _entries(root: Path, hidden: frozenset[str] = frozenset()) -> Iterable[tuple[str, str, bool]]:
    """``(path, path relative to root, whether its content counts)`` of every file and folder
    below ``root`` in a stable order, but Python's byte-code caches (rewritten by merely
    running the code; no build reads one). A hidden name (but those in ``hidden``: static/
    publishes .nojekyll) is an entry whose content does not count and whose folder is not
    entered: no build reads it, but some refuse or warn about it by its name and type (a
    hidden measurement file, a hidden file in static/ under --strict, a link in a run).
    Folders count too (an empty one with a bad name fails a build); a link to a folder is
    an entry, not followed; a folder that cannot be listed raises OSError. Paths are
    strings: a Path per entry cost more than reading and hashing the files (10,000 files)."""
    top = os.fspath(root)
    skip = len(top) if top.endswith(os.sep) else len(top) + 1
    for folder, dirs, names in os.walk(top, onerror=_raise):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        inside = folder[skip:] + os.sep if folder != top else ""
        for name in sorted([*dirs, *names]):
            read = name in hidden or not name.startswith(".")
            yield os.path.join(folder, name), inside + name, read
        dirs[:] = [d for d in dirs if d in hidden or not d.startswith(".")]  # listed, not entered


# The entries of a tree as the digest lists them before it reads one: (path, path relative
# to the tree, status without following a link).
Listing = list[tuple[str, str, os.stat_result]]


def _add_tree(
    digest: hashlib._Hash,
    label: str,
    root: Path,
    by_content: bool = True,
    cap: int = DATA_FILE_CAP,
    supplied: bool = False,
    hidden: frozenset[str] = frozenset(),
    total_cap: int | None = None,
    seen: dict[str, bytes] | None = None,
    listed: Callable[[Listing], object] | None = None,
    statuses: Statuses | None = None,
) -> None:
    """Add ``root``'s names and files to ``digest``. ``supplied`` (the data folder, static/):
    every entry must be a folder or a regular file of at most ``cap`` bytes, checked before
    it is opened, else :class:`_Unseen`; elsewhere links are followed and only a file over
    ``cap`` is :class:`_Unseen`; so are files over ``total_cap`` bytes in all. ``seen``
    gets each file's sha256 by its absolute path; ``listed`` every entry but hidden ones,
    once they are listed and before any is read; ``statuses`` the status of ``root`` and of
    every entry (a link's own, and its target's when followed), as :attr:`Seen.statuses`."""
    digest.update(f"\0tree {label} {root}\0".encode("utf-8", "surrogateescape"))
    if not root.exists():
        return
    statuses = statuses if statuses is not None else Statuses()
    if not root.is_dir():  # one file (a run's provenance file, above the runs given)
        st = os.stat(root)
        statuses.add(os.fspath(root), True, st)
        digest.update(f"file {_status_line(st)}".encode())
        return
    statuses.add(os.fspath(root), True, os.stat(root))
    entries: Listing = []
    unread: Listing = []
    for path, relative, read in _entries(root, hidden):
        st = os.lstat(path)
        statuses.add(path, False, st)
        (entries if read else unread).append((path, relative, st))
    if listed is not None:
        listed(entries)
    for _, relative, st in unread:  # a hidden name: its name and type, never its content
        digest.update(os.fsencode(relative) + f"\0hidden {stat.S_IFMT(st.st_mode)}\0".encode())
    total = 0
    for path, relative, st in entries:
        digest.update(os.fsencode(relative) + b"\0")
        if supplied and not stat.S_ISDIR(st.st_mode) and stat_refusal(st, cap) is not None:
            raise _Unseen(path)
        total += st.st_size if stat.S_ISREG(st.st_mode) else 0
        if total_cap is not None and total > total_cap:
            raise _Unseen(path)
        if stat.S_ISLNK(st.st_mode):
            digest.update(b"link " + os.fsencode(os.readlink(path)) + b"\0")
            st = os.stat(path)
            statuses.add(path, True, st)
        if stat.S_ISDIR(st.st_mode):
            digest.update(b"folder\0")
        elif not stat.S_ISREG(st.st_mode):  # a pipe or device: never read (it could block)
            digest.update(f"special {st.st_mode} {st.st_ino}\0".encode())
        elif by_content:
            sha = _file_digest(path, cap)
            digest.update(sha)
            if seen is not None:
                seen[os.path.abspath(path)] = sha
        else:
            digest.update(_status_line(st).encode())


def _status_line(st: os.stat_result) -> str:
    """A file read by its status, not its bytes (a run's): size, inode, modification time and
    status-change time, which any write moves, also one that puts the modification time
    back (``touch -d``, a copy that keeps times)."""
    return f"{st.st_size} {st.st_ino} {st.st_mtime_ns} {st.st_ctime_ns}\0"


def _file_digest(path: str | Path, cap: int) -> bytes:
    """The sha256 of a regular file of at most ``cap`` bytes (else :class:`_Unseen`, also
    when it grew past the cap since the look), opened without waiting on a pipe."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > cap:
            raise _Unseen(path)
        data = read_bounded(f, cap)
    if len(data) > cap:
        raise _Unseen(path)
    return hashlib.sha256(data).digest()


def _kinds_declared(data_dir: Path) -> list[object]:
    """The entries of site.yaml's ``kinds`` list (none when it cannot be read: the build
    reports that, and its output cannot be up to date anyway)."""
    from jouleboard.core.yamlio import read_yaml

    doc, error, _ = read_yaml(data_dir / "site.yaml")  # capped; no link, pipe or device
    entries = doc.get("kinds") if error is None and isinstance(doc, dict) else None
    return list(entries) if isinstance(entries, list) else []


def _release_commits(data_dir: Path) -> tuple[str, ...] | None:
    """What git says the older releases' refs in releases.yaml name now (core/git.py), or
    None when it cannot say: a build takes a release's data from the commit its ref names
    then, and a ref can move while every file stays the same (a branch that advances, a
    tag made again, a tag fetched into a shallow clone). Nothing to ask without such refs."""
    from jouleboard.core.yamlio import read_yaml

    doc, error, _ = read_yaml(data_dir / "releases.yaml")  # capped; no link, pipe or device
    entries = doc.get("releases") if error is None and isinstance(doc, dict) else None
    if not isinstance(entries, list):
        return ()  # none, or not a list: the build reports it
    # The first release is the working data: its ref is not read (plan/releases.py).
    refs = [
        ref for e in entries[1:] if isinstance(e, dict) and isinstance(ref := e.get("ref"), str)
    ]
    if not refs:
        return ()
    from jouleboard.core.git import commits_of

    return commits_of(refs, data_dir)


# The libraries whose versions shape what a build publishes: another version of any of them
# and the build runs, as after an edit (a Markdown or nh3 upgrade changes a description's
# HTML, an Altair upgrade a chart's spec, a pydantic upgrade the published JSON schema).
# Every runtime dependency is here but ruamel.yaml, which only the importers use
# (tests/test_unchanged_rebuild.py checks the list against pyproject.toml's).
OUTPUT_LIBRARIES = (
    "altair",
    "ijson",
    "jinja2",
    "markdown",
    "markupsafe",  # Jinja2's escaping
    "nh3",
    "pydantic",
    "pydantic-core",
    "pyyaml",
    "vl-convert-python",
)


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "-"


def inputs_digest(
    data_dir: Path,
    project: Path,
    runs: Sequence[Path],
    options: Mapping[str, object],
    seen: Seen | None = None,
    listed: Callable[[Listing], object] | None = None,
) -> str | None:
    """The hex digest of a build's inputs, or None when they cannot all be seen (then the
    build always runs). ``options``: every build option that shapes the output. ``seen``
    gets what was read on the way (complete only when the digest is not None); ``listed``
    the data folder's entries, before any file of it is read."""
    seen = seen if seen is not None else Seen()
    releases, kinds = _release_commits(data_dir), _kinds_declared(data_dir)
    # A kind named by import path is code outside every folder hashed here.
    if releases is None or any(not (isinstance(k, str) and k.endswith(".py")) for k in kinds):
        return None
    digest = hashlib.sha256()
    versions = (_version("jouleboard"), *map(_version, OUTPUT_LIBRARIES), sys.version)
    where = (str(data_dir.resolve()), str(project.resolve()))
    # Whether a site's kinds may run: without consent, its build fails (kinds.not-allowed).
    consent = kind_code_allowed() if kinds else None
    machine = (releases, system_fonts(), consent)
    digest.update(repr((versions, sorted(options.items()), where, machine)).encode())
    statuses = seen.statuses
    try:
        _add_tree(
            digest,
            "data",
            data_dir,
            supplied=True,
            seen=seen.files,
            listed=listed,
            statuses=statuses,
        )
        _add_tree(
            digest,
            "static",
            project / "static",
            cap=STATIC_FILE_CAP,
            supplied=True,
            hidden=STATIC_HIDDEN_PUBLISHED,
            total_cap=STATIC_TOTAL_CAP,
            statuses=statuses,
        )
        for label, root in (
            ("site templates", project / "templates"),
            ("site content", project / "content"),
            ("templates", templates_dir()),
            ("content", content_dir()),
        ):
            _add_tree(digest, label, root, statuses=statuses)
        code = hashlib.sha256()
        _add_tree(code, "code", _PACKAGE, statuses=statuses)
        seen.code = code.hexdigest()
        digest.update(code.digest())
        if runs:  # (the importers only for --runs)
            from jouleboard.importers.run_layout import read_outside
        for run in runs:
            for root in (run, *read_outside(run)):
                _add_tree(digest, "runs", root, by_content=False, statuses=statuses)
        for kind in registered_elsewhere():
            source = inspect.getsourcefile(type(kind))
            digest.update(f"\0kind {type(kind).__module__}.{type(kind).__qualname__}\0".encode())
            if source is not None:
                digest.update(_file_digest(Path(source), DATA_FILE_CAP))
    except (OSError, TypeError, RuntimeError, _Unseen):  # unreadable or refused input, a link
        return None  # loop: the build runs and says what is wrong
    return digest.hexdigest()


def registered_elsewhere() -> list[TaskKind]:
    """The kinds registered in this process from outside the package (whose own kinds are
    in its code, hashed with it). None without jouleboard.kinds imported: ``register()``
    lives there, so nothing was registered, and a build with nothing to do need not
    import the kinds."""
    module = sys.modules.get("jouleboard.kinds")
    if module is None:
        return []
    return [k for k in module.kinds() if not in_package(inspect.getsourcefile(type(k)))]


def in_package(source: str | None) -> bool:
    return source is not None and Path(source).resolve().is_relative_to(_PACKAGE)


def render_digest(themes: Sequence[Path], code: str) -> str:
    """The hex digest of what turns a page's view into HTML: the template folders (first
    match wins, so their order counts), the package's code (``code``:
    :func:`code_digest`), and the versions of Python, Jinja2 and MarkupSafe. An unreadable
    file gives a digest no build matches."""
    digest = hashlib.sha256(
        repr((_version("jinja2"), _version("markupsafe"), sys.version)).encode()
    )
    try:
        for root in themes:
            _add_tree(digest, "render", root)
    except (OSError, RuntimeError, _Unseen):
        return "unreadable " + os.urandom(16).hex()
    digest.update(f"\0code {code}\0".encode())
    return digest.hexdigest()


def code_digest(seen: Seen) -> str:
    """The digest of the package's code: the one the inputs digest took (``seen.code``),
    else this process's, taken once (the code a process runs is the code it loaded; a
    build's key for its pages and charts hashed the package's ~150 files twice, 12 ms
    each)."""
    return seen.code or _code_now()


@functools.cache
def _code_now() -> str:
    """:attr:`Seen.code` as :func:`inputs_digest` takes it (an unreadable file: a digest
    no build matches)."""
    code = hashlib.sha256()
    try:
        _add_tree(code, "code", _PACKAGE)
    except (OSError, RuntimeError, _Unseen):
        return "unreadable " + os.urandom(16).hex()
    return code.hexdigest()
