"""Measurement files read and parsed by an earlier process, kept for the next command-line
build into the same output (Sphinx keeps its environment the same way): after one edited
measurement, a new process parses that file alone and takes the others as they were.

Each kept file is keyed by the sha256 of the very bytes that were parsed, and the whole by
a basis: the package's code (its digest from jouleboard/engine/fingerprint.py), the
versions that shape a parsed value (Python, pydantic), the working folder (messages name
files relative to it), the data folder and the kinds. Any difference and nothing is taken,
so a kept file is one a clean build parses the same. Kinds from outside the package (a
site's kinds, kinds registered from Python) are code the basis cannot see: then nothing is
kept. With each file, the record its check against the registries made is kept, keyed by
the registries' :func:`data_key`: while they are the same, a new process takes the record
and checks only the edited file.

The kept state is pickles (one per file read), so it lives in the chart cache (the user's
own, by default ``~/.cache/jouleboard``), one file per output folder, never beside an
output folder that others may write to; it is read only when it is a regular file owned by
this user that no one else may write, whose checksum matches. A missing, damaged or foreign
one is ignored: the build reads everything, as it would without it. The compiled templates
of jouleboard/engine/kept_templates.py are kept and trusted by the same rule.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import os
import pickle
import stat
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from jouleboard.core.safe_read import read_bounded
from jouleboard.engine.fingerprint import in_package
from jouleboard.engine.fresh import Hashing

if TYPE_CHECKING:
    from jouleboard.config.registry import Registry
    from jouleboard.kinds import Kinds
    from jouleboard.kinds.base import Record
    from jouleboard.kinds.mlperf import SystemResult
    from jouleboard.loading.dataset import MeasurementFile

_MAGIC = b"jouleboard-kept-reads-4\n"
FOLDER = "kept-1"  # in the chart cache
_CAP = 1024 * 1024 * 1024  # bytes; the 100k synthetic data set keeps ~250 MB
_OUTPUTS = 8  # kept for the outputs built last; older ones are deleted
_STALE_SECONDS = 24 * 3600  # a file being written this long ago was left by a killed build
# The writer's buffer, in bytes: a frame is a few kB, and io's default of 8 kB wrote about
# two a call (1,858 frames of the bundled data: 27 ms against 14 ms with this buffer).
_BUFFER = 1024 * 1024

# By absolute path: the sha256 of the bytes parsed, what they parsed to, pickled (a parsed
# file takes ~6x the memory as objects: each is unpickled when it is used, so neither a
# build nor the next holds every parsed file at once), and its record as checked against
# the registries (:func:`checked`), or b"" (jouleboard/engine/kept_parts.py keeps its
# parts in the same frames: by route, the key and the part).
Reads = dict[str, tuple[bytes, ...]]


def pickled(file: MeasurementFile) -> bytes:
    return pickle.dumps(file, protocol=pickle.HIGHEST_PROTOCOL)


def checked(registry_key: str, file: MeasurementFile, record: Record) -> bytes:
    """What a file's check against the registries (keyed by their :func:`data_key`) made,
    with the name and source it has in messages, pickled for the next process."""
    return pickle.dumps((registry_key, file.name, file.source, record), pickle.HIGHEST_PROTOCOL)


def unchecked(data: bytes) -> tuple[str, str, str, Record] | None:
    """What :func:`checked` kept, or None if it cannot be made (none kept, a damaged pickle)."""
    done = _loaded(data) if data else None
    return done if isinstance(done, tuple) and len(done) == 4 else None


def data_key(value: object) -> str:
    """The digest of a value of the data (records, the registry): as
    :func:`jouleboard.engine.fresh.key_of`, but a pydantic model's set of the fields given
    is pickled in order (a set's order changes from one process to the next)."""
    digest = hashlib.sha256()
    pickler = _pickler()(Hashing(digest), protocol=pickle.HIGHEST_PROTOCOL)
    pickler.fast = True  # no memo: equal values, equal digests (see key_of)
    pickler.dump(value)
    return digest.hexdigest()


@functools.cache
def _pickler() -> type[pickle.Pickler]:
    from pydantic import BaseModel  # not before a build loads its data

    class DataPickler(pickle.Pickler):
        def reducer_override(self, obj: object) -> Any:  # a reduce value, or NotImplemented
            if isinstance(obj, BaseModel):
                state = dict(obj.__getstate__())
                state["__pydantic_fields_set__"] = sorted(state["__pydantic_fields_set__"])
                return type(obj), (), state  # hashed, never unpickled
            return NotImplemented

    return DataPickler


def unpickled_registry(data: bytes) -> Registry | None:
    """Kept registries, or None if they cannot be made (a damaged pickle)."""
    registry: Registry | None = _loaded(data)
    return registry


def unpickled_results(data: bytes) -> tuple[SystemResult, ...] | None:
    """Kept MLPerf results, or None if they cannot be made (a damaged pickle)."""
    results = _loaded(data)
    return results if isinstance(results, tuple) else None


def unpickled(data: bytes) -> MeasurementFile | None:
    """A kept parsed file, or None if it cannot be made (a damaged pickle)."""
    file: MeasurementFile | None = _loaded(data)
    return file


def _loaded(data: bytes) -> Any:
    """What ``data`` pickles, or None if it cannot be made (a damaged pickle, or one of
    classes that have since changed)."""
    try:
        return pickle.loads(data)
    except Exception:
        return None


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


def recall(path: Path, magic: bytes = _MAGIC) -> tuple[str, Reads]:
    """The basis and reads kept at ``path`` (:class:`Writer`); ("", {}) when there are none
    to trust. ``magic``: what the file is (jouleboard/engine/kept_parts.py keeps its parts
    in the same frames)."""
    payload = trusted_payload(path, magic)
    if payload is None:
        return "", {}
    frames = io.BytesIO(payload)
    unpickler = pickle.Unpickler(frames)
    reads: Reads = {}
    try:
        kept_basis = unpickler.load()
        while frames.tell() < len(payload):
            where, *fields = unpickler.load()
            reads[where] = tuple(fields)
    except Exception:  # written by a build whose classes have since changed: unusable
        return "", {}
    return kept_basis, reads


class Writer:
    """One build's reads, written to the kept file ``path`` as they come: the basis, then
    each ``(path, sha256, pickled file, checked record)``, a pickle each. A build never
    holds them all (at 100,000 configurations ~250 MB, and as much again to pickle them as
    one). :meth:`commit`
    puts the file in place, its checksum in its header; :meth:`discard` drops it. Failing
    to write (a read-only cache, a full disk) costs the next build its shortcut, nothing
    else."""

    def __init__(self, path: Path, kept_basis: str, magic: bytes = _MAGIC) -> None:
        self.path = path
        self.magic = magic
        self.file: BinaryIO | None = None
        self.temporary: Path | None = None
        self.digest = hashlib.sha256()
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".part")
            self.temporary = Path(name)
            self.file = os.fdopen(fd, "wb", buffering=_BUFFER)
            self.file.write(magic + b"0" * 64 + b"\n")  # the checksum's place
        except OSError:
            self.discard()
        self._frame(kept_basis)

    def add(self, where: str, *fields: bytes) -> None:
        self._frame((where, *fields))

    def _frame(self, value: object) -> None:
        if self.file is None:
            return
        frame = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self.file.write(frame)
        except OSError:
            self.discard()
            return
        self.digest.update(frame)

    def commit(self) -> None:
        if self.file is None or self.temporary is None:
            return
        try:
            self.file.seek(len(self.magic))
            self.file.write(self.digest.hexdigest().encode())
            self.file.close()
            self.file = None
            os.replace(self.temporary, self.path)
            self.temporary = None
            _prune(self.path, _OUTPUTS)
        except OSError:
            self.discard()

    def discard(self) -> None:
        if self.file is not None:
            with contextlib.suppress(OSError):
                self.file.close()
            self.file = None
        if self.temporary is not None:
            self.temporary.unlink(missing_ok=True)
            self.temporary = None


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
        data = read_bounded(f, _CAP)
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
        _prune(path, newest)
    except OSError:
        return


def _prune(path: Path, newest: int) -> None:
    """Delete all but the ``newest`` files of ``path``'s folder with its suffix, and the
    files being written there that a killed build left (a day old)."""
    kept = sorted(path.parent.glob(f"*{path.suffix}"), key=lambda p: (p.stat().st_mtime_ns, p.name))
    for old in kept[:-newest]:
        old.unlink(missing_ok=True)
    for part in path.parent.glob(".*.part"):
        with contextlib.suppress(OSError):
            if time.time() - part.stat().st_mtime > _STALE_SECONDS:
                part.unlink()
