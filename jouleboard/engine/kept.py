"""Measurement files read and parsed by an earlier process, kept for the next command-line
build into the same output (Sphinx keeps its environment the same way): after one edited
measurement, a new process parses that file alone and takes the others as they were.

Each kept file is keyed by the sha256 of the very bytes that were parsed, and the whole by
a basis: the package's code (its digest from jouleboard/engine/fingerprint.py), the
versions that shape a parsed value (Python, pydantic), the working folder (messages name
files relative to it), the data folder and the kinds. Any difference and nothing is taken,
so a kept file is one a clean build parses the same. Kinds from outside the package (a
site's kinds, kinds registered from Python) are code the basis cannot see: then nothing is
kept.

The kept state is a pickle, so it lives in the chart cache (the user's own, by default
``~/.cache/jouleboard``), one file per output folder, never beside an output folder that
others may write to; it is read only when it is a regular file owned by this user that no
one else may write, whose checksum matches. A missing, damaged or foreign one is ignored:
the build reads everything, as it would without it. The compiled templates of
jouleboard/engine/kept_templates.py are kept and trusted by the same rule.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import stat
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from jouleboard.engine.fingerprint import in_package

if TYPE_CHECKING:
    from jouleboard.kinds import Kinds
    from jouleboard.loading.dataset import MeasurementFile

_MAGIC = b"jouleboard-kept-reads-2\n"
FOLDER = "kept-1"  # in the chart cache
_CAP = 1024 * 1024 * 1024  # bytes; the 100k synthetic data set keeps ~130 MB
_OUTPUTS = 8  # kept for the outputs built last; older ones are deleted

# By absolute path: the sha256 of the bytes parsed, and what they parsed to, pickled (a
# parsed file takes ~6x the memory as objects: each is unpickled when it is used, so
# neither a build nor the next holds every parsed file at once).
Reads = dict[str, tuple[bytes, bytes]]


def pickled(file: MeasurementFile) -> bytes:
    return pickle.dumps(file, protocol=pickle.HIGHEST_PROTOCOL)


def unpickled(data: bytes) -> MeasurementFile | None:
    """A kept parsed file, or None if it cannot be made (a damaged pickle)."""
    try:
        file: MeasurementFile = pickle.loads(data)
    except Exception:
        return None
    return file


def kept_file(cache: Path, out: Path) -> Path:
    """Where the kept reads of builds into ``out`` live, in the chart cache ``cache``."""
    name = hashlib.sha256(os.fsencode(os.path.abspath(out))).hexdigest()[:32]
    return cache / FOLDER / f"{name}.reads"


def basis(code: str, data_root: Path, known: Kinds) -> str:
    """What every kept read depends on besides its bytes, as one digest; "" (keep nothing)
    when a kind's code lies outside the package."""
    from importlib.metadata import version

    kinds = known.all()
    if not all(in_package(_source(kind)) for kind in kinds):
        return ""
    facts = (
        code,
        sys.version,
        version("pydantic"),
        version("pydantic-core"),
        os.getcwd(),
        str(data_root),
        [(name, type(kind).__qualname__) for name, kind in known.by_task_kind.items()],
    )
    return hashlib.sha256(repr(facts).encode("utf-8", "surrogateescape")).hexdigest()


def _source(kind: object) -> str | None:
    import inspect

    try:
        return inspect.getsourcefile(type(kind))
    except TypeError:
        return None


def recall(path: Path) -> tuple[str, Reads]:
    """The basis and reads kept at ``path``; ("", {}) when there are none to trust."""
    payload = trusted_payload(path, _MAGIC)
    if payload is None:
        return "", {}
    try:
        kept_basis, reads = pickle.loads(payload)
    except Exception:  # written by a build whose classes have since changed: unusable
        return "", {}
    return kept_basis, reads


def trusted_payload(path: Path, magic: bytes) -> bytes | None:
    """What :func:`write_kept` wrote to ``path`` after ``magic``, if the file is one to trust
    (:func:`_trusted`, not a link) and its checksum matches; else None."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not _trusted(info):
            return None
        data = f.read(_CAP + 1)
    head, _, rest = data.partition(b"\n")
    checksum, _, payload = rest.partition(b"\n")
    if head + b"\n" != magic or hashlib.sha256(payload).hexdigest().encode() != checksum:
        return None
    return payload


def _trusted(info: os.stat_result) -> bool:
    """A regular file within the cap, owned by this user, that no one else may write."""
    owner = getattr(os, "getuid", None)
    return (
        stat.S_ISREG(info.st_mode)
        and info.st_size <= _CAP
        and (owner is None or info.st_uid == owner())
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


def keep(path: Path, kept_basis: str, reads: Reads) -> None:
    """Write the reads for the next build, atomically. Failing to (a read-only cache, a
    full disk) costs the next build its shortcut, nothing else."""
    payload = pickle.dumps((kept_basis, reads), protocol=pickle.HIGHEST_PROTOCOL)
    write_kept(path, _MAGIC, payload, _OUTPUTS)


def write_kept(path: Path, magic: bytes, payload: bytes, newest: int) -> None:
    """Write ``magic``, the checksum of ``payload`` and ``payload`` to ``path`` atomically,
    in a folder only this user may enter, then delete all but the ``newest`` files of the
    folder with ``path``'s suffix (so the cache does not fill up). Failing to (a read-only
    cache, a full disk) costs the next build its shortcut, nothing else."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(magic + hashlib.sha256(payload).hexdigest().encode() + b"\n")
                f.write(payload)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        kept = sorted(
            path.parent.glob(f"*{path.suffix}"), key=lambda p: (p.stat().st_mtime_ns, p.name)
        )
        for old in kept[:-newest]:
            old.unlink(missing_ok=True)
    except OSError:
        return
