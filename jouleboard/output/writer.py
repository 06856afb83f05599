"""The only code that writes the output folder.

Files are collected in memory, or past a size limit in a spool folder on disk;
:meth:`SiteFiles.commit` writes them into a fresh sibling
folder and swaps it with the output folder in one step, so a reader (or a build killed at
any moment) sees either the previous complete site or the new one, never a mix.

The site a commit replaces is kept beside the output as its spare (``.<out>.spare``): its
folders, and the files the new site shares with it (hard links, so no disk of its own). The
next commit moves the spare in as its staging folder and empties it of all but the files still
the site's, so a rebuild after an edit makes no folder and links only what changed: making
the 240 folders of the default site again took 20-100 ms of a one-second rebuild, and
deleting the replaced site 45 ms.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import itertools
import json
import os
import posixpath
import re
import shutil
import stat
import tempfile
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from jouleboard.core.files import replace_text
from jouleboard.core.safe_read import FileRefused, open_regular, read_bounded
from jouleboard.output.folder import (
    MANIFEST_CAP,
    MARKER,
    MARKER_TEXT,
    OutputFolder,
    OutputRefused,
    is_marked,
    locked,
    real_path,
)

_MANIFEST_FORMAT = 2
_DIGEST = re.compile(r"[0-9a-f]{64}")
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


class DuplicatePath(Exception):
    pass


_MEMORY_LIMIT = 32 * 1024 * 1024  # bytes of file content held in memory before spilling


class SiteFiles:
    """Output files by relative POSIX path; two producers may not claim one path.

    Content stays in memory up to ``memory_limit`` bytes in all; every file added after that
    goes straight to a spool folder on disk (in ``spool_dir``, default the system's temporary
    folder), so a big site is never held in memory whole. :meth:`commit` moves spooled files
    into the staging folder (a rename on one file system) and writes the rest.
    """

    def __init__(self, memory_limit: int | None = None, spool_dir: Path | None = None) -> None:
        self._files: dict[str, bytes | _Spooled | LastFile] = {}
        self._memory_limit = _MEMORY_LIMIT if memory_limit is None else memory_limit
        self._spool_dir = spool_dir
        self._in_memory = 0
        self._spool: Path | None = None
        self._committed: Path | None = None  # where spooled files live after commit
        self._cleanup: Callable[[], object] | None = None

    def add(self, path: str, content: str | bytes | LastFile) -> None:
        """Add the file at ``path``: its content, or a file of the last build taken as it is
        (never read: :meth:`commit` links it into the new site)."""
        if isinstance(content, LastFile):
            self._claim(path)
            self._files[path] = content
        else:
            self.add_chunks(path, (content,))

    def add_chunks(self, path: str, chunks: Iterable[str | bytes]) -> None:
        """Add the file made of ``chunks`` (text is UTF-8 encoded) in order. Once the memory
        limit is reached, each chunk goes to the spool file as it comes, so a file much
        bigger than one chunk (a download of every configuration) is never whole in memory.
        """
        self._claim(path)
        held: deque[bytes] = deque()
        size = 0
        encoded = (c.encode("utf-8") if isinstance(c, str) else c for c in chunks)
        for data in encoded:
            held.append(data)
            size += len(data)
            if self._in_memory + size > self._memory_limit:
                self._files[path] = self._spooled(itertools.chain(_drain(held), encoded))
                return
        self._files[path] = held[0] if len(held) == 1 else b"".join(held)
        self._in_memory += size

    def add_copy(self, path: str, of: str) -> None:
        """Add the file at ``path`` with the content of the file added at ``of``, made once
        for both (a release's download of the working data is the full data set's): the
        same bytes held, or a link to (else a copy of) the same spool file."""
        self._claim(path)
        entry = self._files[of]
        if isinstance(entry, _Spooled):
            assert self._spool is not None and self._committed is None
            number = len(self._files)
            source, copy = entry.location(self._spool), _spool_file(self._spool, number)
            try:
                os.link(source, copy)
            except OSError:  # (no hard links here)
                shutil.copyfile(source, copy)
            entry = _Spooled(entry.digest, entry.size, number)
        self._files[path] = entry

    def _claim(self, path: str) -> None:
        """Refuse ``path`` unless it is a new relative path inside the site."""
        pure = PurePosixPath(path)
        if pure.is_absolute() or ".." in pure.parts or not pure.parts:
            raise ValueError(f"output path {path!r} must be relative and inside the site")
        if path in self._files:
            raise DuplicatePath(f"two outputs claim {path!r}")

    def _spooled(self, chunks: Iterable[bytes]) -> _Spooled:
        """Write ``chunks`` to a new spool file (its digest computed on the way)."""
        number, digest, size = len(self._files), hashlib.sha256(), 0
        with open(_spool_file(self._spool_folder(), number), "wb") as spool:
            for data in chunks:
                digest.update(data)
                size += len(data)
                spool.write(data)
        return _Spooled(digest.hexdigest(), size, number)

    def _spool_folder(self) -> Path:
        if self._spool is None:
            self._spool = Path(tempfile.mkdtemp(prefix="jouleboard-spool-", dir=self._spool_dir))
            # Removed after commit, or when this object goes if it never is.
            self._cleanup = weakref.finalize(self, shutil.rmtree, self._spool, ignore_errors=True)
        return self._spool

    def paths(self) -> list[str]:
        """Every output path added so far, sorted."""
        return sorted(self._files)

    def __contains__(self, path: str) -> bool:
        return path in self._files

    def __len__(self) -> int:
        return len(self._files)

    def content(self, path: str) -> bytes:
        """The bytes of one file (read back from disk when it was spooled)."""
        entry = self._files[path]
        if isinstance(entry, bytes):
            return entry
        if self._committed is not None:
            return (self._committed / path).read_bytes()
        if isinstance(entry, LastFile):
            return entry.read()
        assert self._spool is not None
        return entry.location(self._spool).read_bytes()

    def items(self) -> list[tuple[str, bytes]]:
        """Every file and its bytes, by path (spooled ones are read back: prefer len())."""
        return [(path, self.content(path)) for path in sorted(self._files)]

    def size(self, path: str) -> int:
        """The bytes of one file."""
        entry = self._files[path]
        return len(entry) if isinstance(entry, bytes) else entry.size

    def total_bytes(self) -> int:
        return sum(map(self.size, self._files))

    def commit(
        self, out: Path | OutputFolder, record: dict[str, object] | None = None
    ) -> WriteStats:
        """Write every file and atomically replace the output folder with the result.

        ``out`` is checked (see :mod:`jouleboard.output.folder`) before anything is written
        and again under the folder's lock, which a concurrent build into the same folder waits for;
        files added to it by hand are looked for under the lock (:func:`refuse_added_files`: a
        build looks for them before it starts too, and a walk of the site costs 10-15 ms).
        Incremental: a manifest beside the folder records the digest and file status of what
        the previous build wrote; a file whose bytes are unchanged is hard-linked from the
        previous site instead of written again, or found in the spare (see the module's
        notes). The result is the same bytes as a clean build.
        """
        folder = out if isinstance(out, OutputFolder) else OutputFolder(str(out), real_path(out))
        folder.check()
        path = folder.path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._files.setdefault(MARKER, MARKER_TEXT.encode("utf-8"))
        with locked(path):
            folder.check()  # again: another build or a person may have changed it meanwhile
            refuse_added_files(path, folder.given)
            _recover(path)
            manifest = manifest_path(path)
            previous = read_manifest(manifest, path)
            staging = Path(tempfile.mkdtemp(prefix=f".{path.name}-new-", dir=path.parent))
            try:
                staging.chmod(0o755)  # mkdtemp makes it private; a site is for reading
                digests = self._digests()
                same = {
                    p: previous[p][1]
                    for p, d in digests.items()
                    if p in previous and previous[p][0] == d
                }
                kept = _take_spare(path, staging, same, self._folders())
                stats, written = self._write(staging, path, digests, same, kept)
                os.sync()  # on disk before the swap makes it visible (one call, not per file)
                folder_inode = staging.stat().st_ino  # the inode the output has after the swap
                _swap_into_place(staging, path)
                if previous:  # staging now holds the last site, every file of it listed
                    # A file of it the new site does not have, or has anew, is its alone.
                    unshared = [
                        p for p in previous if p not in written or written[p][3] != previous[p][1]
                    ]
                    _keep_spare(staging, path, unshared)
            finally:
                _remove_own(staging)  # this build's own staging only (if not kept as the spare)
            write_manifest(manifest, path, folder_inode, written, record)
        self._committed = path
        if self._cleanup is not None:
            self._cleanup()  # the spooled files are in the site now
        return stats

    def _digests(self) -> dict[str, str]:
        """The sha256 (hex) of every file's content."""
        return {
            path: hashlib.sha256(entry).hexdigest() if isinstance(entry, bytes) else entry.digest
            for path, entry in self._files.items()
        }

    def _folders(self) -> set[str]:
        """Every folder of the site, by relative path (not the site's own, "")."""
        folders: set[str] = set()
        for path in self._files:
            folder = posixpath.dirname(path)
            while folder and folder not in folders:
                folders.add(folder)
                folder = posixpath.dirname(folder)
        return folders

    def _write(
        self,
        staging: Path,
        out: Path,
        digests: dict[str, str],
        same: dict[str, int],
        kept: Kept,
    ) -> tuple[WriteStats, dict[str, list[object]]]:
        """Fill ``staging``: a file in ``same`` (unchanged since the last build) is linked from
        it, unless ``kept`` (the spare's) has it already; returns the stats and, per file, what
        the manifest records (digest, size, mtime in ns, inode) as this build wrote it."""
        stats = WriteStats()
        written: dict[str, list[object]] = {}
        # Paths as strings, each folder made once: a Path and a mkdir per file cost more
        # than the links (9,218 files at 10,000 configurations).
        top, last = os.fspath(staging), os.fspath(out)
        made = {top, *(os.path.join(top, folder) for folder in kept.folders)}
        # The marker first: a staging folder left by a killed build is recognisably a site.
        for path in sorted(self._files, key=lambda p: (p != MARKER, p)):
            entry = self._files[path]
            target = os.path.join(top, path)
            folder = os.path.dirname(target)
            if folder not in made:
                os.makedirs(folder, exist_ok=True)
                made.add(folder)
            if path in kept.files or (path in same and _link(os.path.join(last, path), target)):
                stats.linked += 1
            elif isinstance(entry, bytes):
                with open(target, "wb") as f:
                    f.write(entry)
                stats.written += 1
            elif isinstance(entry, LastFile):  # changed since it was taken, or no hard links
                with open(target, "wb") as f:
                    f.write(entry.read())
                stats.written += 1
            elif self._committed is not None:  # committed before: its spool is gone
                shutil.copyfile(self._committed / path, target)
                stats.written += 1
            else:
                assert self._spool is not None
                _move(entry.location(self._spool), target)
                stats.written += 1
            st = os.lstat(target)
            written[path] = [digests[path], st.st_size, st.st_mtime_ns, st.st_ino]
        return stats, written


@dataclass(frozen=True)
class LastFile:
    """A file of the last build, taken into this one as it is: ``source`` (in the output
    folder), whose ``digest`` and ``size`` its manifest recorded. It is never read unless
    the commit cannot link it (see :meth:`SiteFiles._write`), and then only with the
    recorded digest."""

    source: Path
    digest: str  # sha256 of the content, hex
    size: int  # bytes

    def read(self) -> bytes:
        """The content; OutputChanged if it is no longer what the manifest recorded."""
        try:
            content = self.source.read_bytes()
        except OSError as error:
            raise OutputChanged(self.source, str(error.strerror or error)) from error
        if hashlib.sha256(content).hexdigest() != self.digest:
            raise OutputChanged(self.source, "its content changed")
        return content


class OutputChanged(OutputRefused):
    """A file of the last build, taken into this one, was changed or removed while the
    build ran."""

    def __init__(self, path: Path, what: str) -> None:
        super().__init__(
            f"{path} changed while the build ran ({what}); nothing was written: build again, "
            "and leave the output folder alone while a build runs"
        )


@dataclass(frozen=True)
class _Spooled:
    """A file written to the spool folder at :meth:`SiteFiles.add` time."""

    digest: str  # sha256 of the content, hex
    size: int  # bytes
    number: int  # its name in the spool folder (paths may be long; numbers are not)

    def location(self, spool: Path) -> Path:
        return _spool_file(spool, self.number)


def _spool_file(spool: Path, number: int) -> Path:
    return spool / str(number)


def _drain(held: deque[bytes]) -> Iterator[bytes]:
    """``held``'s items, each let go of as it is taken."""
    while held:
        yield held.popleft()


def _move(source: Path, target: str) -> None:
    """Rename ``source`` to ``target``; copy when they are on different file systems."""
    try:
        os.replace(source, target)
    except OSError as error:
        if error.errno != errno.EXDEV:
            raise
        shutil.copyfile(source, target)


@dataclass
class WriteStats:
    written: int = 0
    linked: int = 0  # unchanged since the previous build: hard-linked, not rewritten


def _link(source: str, target: str) -> bool:
    try:
        os.link(source, target)
        return True
    except OSError:  # no previous file, or a file system without hard links
        return False


def _manifest_checksum(body: dict[str, object]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode("utf-8")).hexdigest()


def manifest_path(out: Path) -> Path:
    return out.parent / f".{out.name}.manifest.json"


def write_manifest(
    path: Path,
    out: Path,
    folder_inode: int,
    files: dict[str, list[object]],
    record: dict[str, object] | None = None,
) -> None:
    """Record what this build wrote into ``out`` (whose inode is ``folder_inode``), with a
    checksum, so a damaged, edited or foreign manifest is recognised."""
    body: dict[str, object] = {
        "format": _MANIFEST_FORMAT,
        "folder": str(out),
        "folder_inode": folder_inode,
        "files": files,
        "build": record or {},
    }
    # A new file of its own (never a name planted beside the output, nor a link's target).
    fd, tmp = tempfile.mkstemp(prefix=f"{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            os.fchmod(f.fileno(), 0o644)  # as readable as the site it describes
            f.write(json.dumps({**body, "checksum": _manifest_checksum(body)}, sort_keys=True))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _intact(path: Path, out: Path) -> dict[str, object] | None:
    """The manifest at ``path`` if it is intact and was written for this very folder (not
    to be changed: the same file is read once, see :func:`_manifest`)."""
    try:
        doc = _manifest(path)
        if (
            doc is None
            or doc["format"] != _MANIFEST_FORMAT
            or doc["folder"] != str(out)
            or doc["folder_inode"] != os.lstat(out).st_ino
            or not isinstance(doc["files"], dict)
        ):
            return None
    except (OSError, FileRefused, ValueError, KeyError, TypeError, AttributeError):
        return None
    return doc


_last_manifest: tuple[tuple[int, ...], dict[str, object] | None] | None = None


def _manifest(path: Path) -> dict[str, object] | None:
    """The manifest at ``path`` without its checksum, or None if the checksum is wrong. A
    build looks at it seven times (~7 ms each for 1,200 files); the same file (device,
    inode, size, modification and change times: a build writes a new file, and any edit
    moves the change time) is parsed once."""
    global _last_manifest
    # A regular file, not a link (a pull request can commit one beside --out), pipe or
    # device, of at most MANIFEST_CAP bytes: else FileRefused, and no manifest is trusted.
    with open_regular(path, MANIFEST_CAP) as f:
        st = os.fstat(f.fileno())
        seen = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if _last_manifest is not None and _last_manifest[0] == seen:
            return _last_manifest[1]
        raw = read_bounded(f, MANIFEST_CAP)
    doc = json.loads(raw.decode("utf-8")) if len(raw) <= MANIFEST_CAP else None
    intact = None
    if isinstance(doc, dict) and doc.pop("checksum", None) == _manifest_checksum(doc):
        intact = doc
    _last_manifest = (seen, intact)
    return intact


def added_files(out: Path) -> list[str]:
    """Files in ``out`` that the last build did not write (by its intact manifest), sorted:
    a CNAME or .well-known/ file someone put there by hand. Without an intact manifest
    nothing is known to be added."""
    doc = _intact(manifest_path(out), out)
    if doc is None:
        return []
    files = doc["files"]
    assert isinstance(files, dict)
    added = []
    top = os.fspath(out)
    for folder, dirs, names in os.walk(top):
        links = [d for d in dirs if os.path.islink(os.path.join(folder, d))]
        # The folder's path relative to out, once per folder (os.walk joins each folder to
        # ``top``: its text after top's is the relative path), so a file's is one join.
        below = folder[len(top) :].lstrip(os.sep).replace(os.sep, "/")
        prefix = below + "/" if below else ""
        added += [prefix + name for name in (*names, *links) if prefix + name not in files]
    return sorted(added)


def refuse_added_files(out: Path, shown: str | None = None) -> None:
    """Raise :class:`OutputRefused` if ``out`` holds files the last build did not write: a
    build would delete them. The fix is static/, whose files every build publishes."""
    added = added_files(out)
    if not added:
        return
    listed = ", ".join(added[:5]) + (f" and {len(added) - 5} more" if len(added) > 5 else "")
    where = shown or str(out)
    where = where if where.endswith("/") else where + "/"
    raise OutputRefused(
        f"refusing to write into {where}: it holds files the last build did "
        f"not make ({listed}), which a build would delete; to publish them "
        "with the site, move them into the static/ folder beside data/ "
        "(copied into every build as they are), or delete them"
    )


@dataclass(frozen=True)
class LastBuild:
    """What :func:`unchanged_build` tells of the last build into a folder."""

    pages: int
    files: int
    bytes: int
    site_url: str


def unchanged_build(out: Path, inputs: str) -> LastBuild | None:
    """The last build into ``out`` if it was made from ``inputs`` (a digest of
    :mod:`jouleboard.engine.fingerprint`) and the folder is still exactly what it wrote: every file
    it lists unchanged (size, mtime, inode), no file or folder added. Else None: build."""
    path = out.resolve()
    doc = _intact(manifest_path(path), path)
    record = doc.get("build") if doc is not None else None
    if doc is None or not isinstance(record, dict) or record.get("inputs") != inputs:
        return None
    files = doc["files"]
    assert isinstance(files, dict)
    try:
        implied = {"."}  # the folders of the files it lists, and theirs: no other folder
        for name, entry in files.items():
            _trusted_digest(path, name, entry)
            folder = posixpath.dirname(name) or "."
            while folder not in implied:
                implied.add(folder)
                folder = posixpath.dirname(folder) or "."
        found = 0
        for folder, _dirs, names in os.walk(path):
            below = Path(os.path.relpath(folder, path)).as_posix()  # once per folder
            if below not in implied:  # a folder added (an empty one a full build removes)
                return None
            prefix = "" if below == "." else below + "/"
            for name in names:
                if prefix + name not in files:
                    return None
                found += 1
        if found != len(files):
            return None
        return LastBuild(
            pages=int(record["pages"]),
            files=len(files),
            bytes=sum(int(entry[1]) for entry in files.values()),
            site_url=str(record["site_url"]),
        )
    except (OSError, ValueError, TypeError, KeyError):
        return None


def last_record(out: Path) -> dict[str, object]:
    """What the last build into ``out`` recorded of itself (``record`` of
    :meth:`SiteFiles.commit`) in its intact manifest, or ``{}``."""
    doc = _intact(manifest_path(out), out)
    record = doc.get("build") if doc is not None else None
    return record if isinstance(record, dict) else {}


def last_files(out: Path) -> dict[str, tuple[str, str, int]]:
    """The file keys the last build into ``out`` recorded (jouleboard/engine/fresh.py), with each
    file's content digest and size, for the files still exactly as that build wrote them."""
    doc = _intact(manifest_path(out), out)
    record = doc.get("build") if doc is not None else None
    keys = record.get("keys") if isinstance(record, dict) else None
    if doc is None or not isinstance(keys, dict):
        return {}
    files = doc["files"]
    assert isinstance(files, dict)
    found = {}
    for name, key in keys.items():
        try:
            found[name] = (str(key), _trusted_digest(out, name, files[name]), int(files[name][1]))
        except (OSError, ValueError, TypeError, KeyError):
            continue  # gone, edited or odd: render it
    return found


def read_manifest(path: Path, out: Path) -> dict[str, tuple[str, int]]:
    """The digest and inode of each of the previous build's files by path, or ``{}`` (write
    everything) unless the manifest is intact, was written for this very folder, and every
    file it lists is still the file that build wrote (same size, mtime and inode)."""
    doc = _intact(path, out)
    if doc is None:
        return {}
    files = doc["files"]
    assert isinstance(files, dict)
    try:
        return {
            name: (_trusted_digest(out, name, entry), int(entry[3]))
            for name, entry in files.items()
        }
    except (OSError, ValueError, TypeError):
        return {}


def _trusted_digest(out: Path, name: str, entry: list[object]) -> str:
    """The entry's digest; ValueError unless it still describes the file on disk."""
    digest, size, mtime_ns, inode = entry
    if (
        not isinstance(digest, str)
        or not _DIGEST.fullmatch(digest)
        or name.startswith("/")  # absolute
        or ".." in name.split("/")
    ):
        raise ValueError(f"bad manifest entry {name!r}")
    st = os.lstat(os.path.join(out, name))
    if not stat.S_ISREG(st.st_mode) or [st.st_size, st.st_mtime_ns, st.st_ino] != [
        size,
        mtime_ns,
        inode,
    ]:
        raise ValueError(f"{name!r} changed since the manifest was written")
    return digest


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False if unsupported.
    The C library is the one this process has loaded (``find_library`` ran ``ldconfig -p``
    in a new process at every commit)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(result == 0)


def _swap_into_place(staging: Path, out: Path) -> None:
    """Make ``staging`` the new ``out``; the previous ``out`` ends up in ``staging``."""
    if not out.exists():
        os.replace(staging, out)  # atomic on one file system
        staging.mkdir()  # so the caller's cleanup has something to remove
        return
    if _exchange(staging, out):
        return
    # Fallback without an atomic exchange: the previous site waits under a name the next
    # build recognises (it holds the marker) and restores if this process dies between the
    # two renames. A folder of that name that is not the build's own is never touched.
    previous = _previous(out)
    if os.path.lexists(previous):
        raise OutputRefused(
            f"refusing to write into {out}/: {previous} is in the way and "
            f"is not a site a build left (no {MARKER} in it); move or rename "
            "it: builds use that name while they replace the site"
        )
    if not is_marked(out):  # an empty folder or a site from before the marker
        (out / MARKER).write_text(MARKER_TEXT, encoding="utf-8")
    os.replace(out, previous)
    os.replace(staging, out)
    os.replace(previous, staging)


@dataclass(frozen=True)
class Kept:
    """What :func:`_take_spare` left in a staging folder: files (the last site's, by
    relative path) and the folders that hold them."""

    files: frozenset[str] = frozenset()
    folders: frozenset[str] = frozenset()


def _spare(out: Path) -> Path:
    return out.parent / f".{out.name}.spare"


def _keep_spare(old: Path, out: Path, unshared: Iterable[str]) -> None:
    """Keep ``old`` (the site this build replaced, marked) as the spare of ``out``: its
    folders, and the files the new site shares with it (hard links: no disk of their own),
    for the next build to fill rather than make (:func:`_take_spare`). ``unshared``: its
    files the new site does not share, deleted first. A folder of that name that is not a
    build's own is never touched: ``old`` is then removed as before."""
    spare = _spare(out)
    if os.path.lexists(spare):
        return
    for name in unshared:
        if name != MARKER:  # (the marker stays: the spare is a build's own)
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(old, name))
    with contextlib.suppress(OSError):
        os.rename(old, spare)


def _take_spare(out: Path, staging: Path, same: dict[str, int], folders: set[str]) -> Kept:
    """Move the spare the last build kept (:func:`_keep_spare`) onto the empty ``staging``
    and empty it but for what the new site has: its folders in ``folders`` and each file
    whose path ``same`` gives with the inode of the site's file there (unchanged since the
    last build: the same file, which would be linked again). Every other entry goes,
    links unfollowed; so whatever was put into the spare, only the site's files stay. The
    marker stays (a fresh copy unless it is the site's): ``staging`` is a build's own."""
    spare = _spare(out)
    if not _own(spare):
        return Kept()
    try:
        device = os.lstat(out).st_dev
        os.rename(spare, staging)  # onto an empty folder: replaces it
    except OSError:
        return Kept()
    files: set[str] = set()
    kept_folders: set[str] = set()

    def empty(folder: str, prefix: str) -> None:
        with os.scandir(folder) as scan:
            entries = list(scan)
        for entry in entries:
            name = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                if name in folders:
                    kept_folders.add(name)
                    empty(entry.path, name + "/")
                else:
                    shutil.rmtree(entry.path)
                continue
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(st.st_mode) and same.get(name) == st.st_ino and st.st_dev == device:
                files.add(name)
            elif name == MARKER:  # a new file of its own, never missing
                replace_text(Path(entry.path), MARKER_TEXT)
                files.add(name)
            else:
                os.unlink(entry.path)

    try:
        empty(os.fspath(staging), "")
    except OSError as error:  # an entry this user may not delete: never into the site
        _remove_own(staging)  # what can go, the marker last
        if os.path.lexists(staging):
            raise OutputRefused(
                f"{out}/ was left as it was: {staging}, the last site a build kept to "
                f"build the next one from, holds what cannot be deleted ({error}); delete "
                "that folder (builds no longer use it)"
            ) from None
        staging.mkdir()
        staging.chmod(0o755)
        return Kept()
    return Kept(frozenset(files), frozenset(kept_folders))


def _previous(out: Path) -> Path:
    return out.parent / f".{out.name}-previous"


def _own(folder: Path) -> bool:
    """True if ``folder`` (a sibling name a build uses) is a build's own: a real folder that
    holds the marker, which a build writes into its staging folder first, and has no
    manifest beside it (it would be a site someone builds into: ``--out .site-previous``)."""
    return (
        folder.is_dir()
        and not folder.is_symlink()
        and is_marked(folder)
        and not os.path.lexists(manifest_path(folder))
    )


def _remove_own(folder: Path) -> None:
    """Delete a build's own folder with its marker last: a build killed while deleting it
    leaves a folder the next build still recognises (and finishes deleting), never an
    unmarked one that no build may touch."""
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in [e for e in entries if e.name != MARKER]:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
    with contextlib.suppress(OSError):
        os.unlink(folder / MARKER)
    with contextlib.suppress(OSError):
        folder.rmdir()


def _recover(out: Path) -> None:
    """Clean up after a build that was killed: restore or drop its previous site, drop its
    staging folders. Called under the lock, so no other build is using these names (they
    are the output's own: ``.<name>-previous`` and ``.<name>-new-<8 random characters>``).
    Only folders that hold the marker are moved or deleted (and empty staging folders: a
    build killed before it wrote one); anything else of those names is left alone."""
    previous = _previous(out)
    if _own(previous):
        if not os.path.lexists(out):
            os.replace(previous, out)
        else:
            _remove_own(previous)
    for folder in _staging_folders(out):
        if _own(folder):
            _remove_own(folder)
        else:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only if empty


def _staging_folders(out: Path) -> list[Path]:
    """Folders beside ``out`` named like its builds' staging folders."""
    staging_name = re.compile(rf"\.{re.escape(out.name)}-new-[a-z0-9_]{{8}}")
    with os.scandir(out.parent) as entries:
        return [
            Path(e.path)
            for e in entries
            if staging_name.fullmatch(e.name) and e.is_dir(follow_symlinks=False)
        ]


def clean_up_after_killed_builds(out: Path) -> None:
    """What :func:`_recover` does, for a build that writes nothing (its output is up to
    date): only when a killed build left something, and under the output's lock."""
    out = out.resolve()
    if _own(_previous(out)) or _staging_folders(out):
        with locked(out):
            _recover(out)
