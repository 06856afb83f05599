"""One rule for reading a file that someone else supplied (a data folder, a run tree, an
import source, a site's templates): it must be a regular file, not a link, under its size
cap, and it is checked before a single byte is read.

``refusal`` looks without opening (for walks and freshness checks); ``read_capped`` opens
without following a link and without blocking on a pipe, checks the open file itself (so a
file swapped between the look and the read is still caught) and reads at most the cap. Both
speak in the rule ids of docs/measurement-format.md (``file.*``).
"""

from __future__ import annotations

import errno
import os
import stat
import tarfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import IO, BinaryIO

from jouleboard.core.text_rules import printable

# Every file of a data folder is checked against this before anything reads it (twice the
# largest cap of a reader of the data folder: registries 2 MiB, measurement files 1 MiB).
DATA_FILE_CAP = 4 * 1024 * 1024
# A whole data folder as a git ref holds it (a release's ref, diff --base): its files in all
# (the bundled data is 8 MB; 100,000 measurement files are ~300 MB), and how many.
DATA_FOLDER_CAP = 512 * 1024 * 1024
DATA_FOLDER_FILES = 200_000
# A file of a site's static/ folder: a CNAME is a line; an image or PDF fits well under this;
# and its files in all (GitHub Pages publishes at most 1 GB; a site is mostly generated).
STATIC_FILE_CAP = 16 * 1024 * 1024
STATIC_TOTAL_CAP = 256 * 1024 * 1024
# The hidden names static/ publishes (GitHub Pages' marker, RFC 8615's folder); any other
# (.git, .env, .DS_Store) is skipped with a note.
STATIC_HIDDEN_PUBLISHED = frozenset({".nojekyll", ".well-known"})

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


class FileRefused(Exception):
    """Why a file is not read: a rule id, a message and how to fix it."""

    def __init__(self, rule: str, message: str, hint: str) -> None:
        super().__init__(rule, message, hint)
        self.rule, self.message, self.hint = rule, message, hint

    def __str__(self) -> str:
        return f"{self.rule}: {self.message} ({self.hint})"


def _not_regular(mode: int) -> FileRefused:
    what = (
        "a symbolic link"
        if stat.S_ISLNK(mode)
        else "a folder"
        if stat.S_ISDIR(mode)
        else "a pipe (FIFO)"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "not a file"
    )
    return FileRefused(
        "file.not-regular",
        f"not a regular file ({what})",
        "put the file itself there, not a link, pipe or device",
    )


def _too_large(size: int, cap: int) -> FileRefused:
    return FileRefused(
        "file.too-large",
        f"file has {size:,} bytes, over the {cap:,}-byte cap",
        "remove the file or make it smaller",
    )


def _os_error(error: OSError) -> FileRefused:
    if error.errno == errno.ENOENT:
        return FileRefused("file.missing", "file is missing", "check the path")
    if error.errno == errno.ELOOP:  # O_NOFOLLOW met a link
        return _not_regular(stat.S_IFLNK)
    return FileRefused(
        "file.unreadable",
        f"cannot read the file: {error.strerror or error}",
        "check the path and permissions",
    )


def refusal(path: Path, cap: int) -> FileRefused | None:
    """Why ``path`` would not be read (a link, not a regular file, over ``cap`` bytes, or
    unreadable), or None. Nothing is opened."""
    try:
        info = path.lstat()
    except OSError as e:
        return _os_error(e)
    return stat_refusal(info, cap)


def stat_refusal(info: os.stat_result, cap: int) -> FileRefused | None:
    """:func:`refusal` of a file whose ``lstat()`` is ``info``."""
    if not stat.S_ISREG(info.st_mode):
        return _not_regular(info.st_mode)
    if info.st_size > cap:
        return _too_large(info.st_size, cap)
    return None


@contextmanager
def open_regular(path: Path, cap: int) -> Iterator[BinaryIO]:
    """``path`` opened for binary reading once it is known to be a regular file (the open
    file itself is checked) of at most ``cap`` bytes; raises :class:`FileRefused`. The
    caller must still bound what it reads (a file can grow after the check)."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as e:
        raise _os_error(e) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _not_regular(info.st_mode)
        if info.st_size > cap:
            raise _too_large(info.st_size, cap)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        yield f


def read_bounded(f: BinaryIO, cap: int) -> bytes:
    """What is left of the open file ``f``, up to ``cap + 1`` bytes: more than ``cap`` tells
    the caller the file grew past its cap after the check. ``f.read(cap + 1)`` would do the
    same, but it allocates the whole cap before it reads a byte (4 MiB a data file: 60 ms for
    the bundled data's 1,858 files against 15 ms); this asks for the file's size and one
    byte more, and reads on only when the file grew meanwhile."""
    size = os.fstat(f.fileno()).st_size
    data = f.read(min(size, cap) + 1)  # a buffered read returns short only at the end
    if len(data) <= size or len(data) > cap:
        return data
    return data + f.read(cap + 1 - len(data))


def read_capped(path: Path, cap: int) -> bytes:
    """The bytes of ``path``, a regular file of at most ``cap`` bytes (not a link, pipe or
    device: see :func:`open_regular`); raises :class:`FileRefused` otherwise."""
    try:
        with open_regular(path, cap) as f:
            data = read_bounded(f, cap)
    except OSError as e:
        raise _os_error(e) from None
    if len(data) > cap:  # it grew after the check
        raise _too_large(len(data), cap)
    return data


def extract_tar(archive: tarfile.TarFile, target: Path) -> None:
    """Unpack ``archive`` into ``target``: regular files and folders only, every one inside
    ``target``. Python's "data" filter does it where the interpreter has it (3.11.4 and
    later); before that, any other member (a link, a device, an absolute path, a ``..``)
    is refused with ValueError and nothing is unpacked."""
    if hasattr(tarfile, "data_filter"):
        archive.extractall(target, filter="data")
        return
    members = archive.getmembers()
    for member in members:
        parts = PurePosixPath(member.name).parts
        if not (member.isfile() or member.isdir()) or member.name.startswith("/") or ".." in parts:
            raise ValueError(
                f"the archive holds {member.name!r}, which is not a plain file or folder inside it"
            )
    archive.extractall(target, members=members)


class ArchiveRefused(ValueError):
    """Why an archive is not unpacked further: a rule id, a message and how to fix it."""

    def __init__(self, rule: str, message: str, hint: str) -> None:
        super().__init__(message)
        self.rule, self.message, self.hint = rule, message, hint


def extract_tar_stream(
    stream: IO[bytes],
    target: Path,
    file_cap: int = DATA_FILE_CAP,
    total_cap: int = DATA_FOLDER_CAP,
    max_files: int = DATA_FOLDER_FILES,
) -> None:
    """Unpack the tar archive read from ``stream`` into ``target`` member by member, as
    :func:`extract_tar` does, holding none of it in memory: a member over ``file_cap``
    bytes, past ``total_cap`` bytes in all or past ``max_files`` members raises
    :class:`ArchiveRefused` from its header, before a byte of it is read (what was
    unpacked so far stays in ``target``, for the caller to remove). Any other archive
    that cannot be unpacked raises ValueError."""
    total = 0
    try:
        with tarfile.open(fileobj=stream, mode="r|") as archive:
            for count, member in enumerate(archive, 1):
                name = printable(member.name)
                hint = "commit the data folder without it (a data folder holds no file that large)"
                if count > max_files:
                    raise ArchiveRefused(
                        "file.too-many",
                        f"more than {max_files:,} files (at {name})",
                        "a data folder holds fewer files",
                    )
                if member.size > file_cap:
                    raise ArchiveRefused(
                        "file.too-large",
                        f"{name} has {member.size:,} bytes, over the {file_cap:,}-byte cap",
                        hint,
                    )
                total += member.size
                if total > total_cap:
                    raise ArchiveRefused(
                        "file.too-large",
                        f"its files pass {total_cap:,} bytes in all at {name}",
                        "a data folder is smaller: commit the data without what is not data",
                    )
                _extract_member(archive, member, target)
    except tarfile.TarError as e:
        raise ValueError(f"not an archive that can be unpacked: {e}") from None


def _extract_member(archive: tarfile.TarFile, member: tarfile.TarInfo, target: Path) -> None:
    """One member, under the rules of :func:`extract_tar`."""
    if hasattr(tarfile, "data_filter"):
        archive.extract(member, target, filter="data")
        return
    parts = PurePosixPath(member.name).parts
    if not (member.isfile() or member.isdir()) or member.name.startswith("/") or ".." in parts:
        raise ValueError(
            f"the archive holds {member.name!r}, which is not a plain file or folder inside it"
        )
    archive.extract(member, target)
