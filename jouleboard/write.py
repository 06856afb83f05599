"""The only code that writes the output folder.

Files are collected in memory; :meth:`SiteFiles.commit` writes them into a fresh sibling
folder and swaps it with the output folder in one step, so a reader (or a build killed at
any moment) sees either the previous complete site or the new one, never a mix.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


class DuplicatePath(Exception):
    pass


class SiteFiles:
    """Output files by relative POSIX path; two producers may not claim one path."""

    def __init__(self) -> None:
        self._files: dict[str, bytes] = {}

    def add(self, path: str, content: str | bytes) -> None:
        pure = PurePosixPath(path)
        if pure.is_absolute() or ".." in pure.parts or not pure.parts:
            raise ValueError(f"output path {path!r} must be relative and inside the site")
        if path in self._files:
            raise DuplicatePath(f"two outputs claim {path!r}")
        self._files[path] = content.encode("utf-8") if isinstance(content, str) else content

    def __contains__(self, path: str) -> bool:
        return path in self._files

    def items(self) -> list[tuple[str, bytes]]:
        return sorted(self._files.items())

    def total_bytes(self) -> int:
        return sum(len(b) for b in self._files.values())

    def commit(self, out: Path) -> WriteStats:
        """Write every file and atomically replace ``out`` with the result.

        Incremental: a content-hash manifest beside ``out`` records what the previous build
        wrote; a file whose bytes are unchanged is hard-linked from the previous site
        instead of written again. The result is the same bytes as a clean build.
        """
        out = out.absolute()
        out.parent.mkdir(parents=True, exist_ok=True)
        _recover(out)
        manifest_path = out.parent / f".{out.name}.manifest.json"
        previous = _read_manifest(manifest_path, out)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-new-", dir=out.parent))
        staging.chmod(0o755)  # mkdtemp makes it private; a site is for reading
        stats = WriteStats()
        digests = {}
        try:
            for path, content in self.items():
                target = staging / path
                target.parent.mkdir(parents=True, exist_ok=True)
                digest = digests[path] = hashlib.sha256(content).hexdigest()
                if previous.get(path) == digest and _link(out / path, target):
                    stats.linked += 1
                    continue
                target.write_bytes(content)
                stats.written += 1
            os.sync()  # on disk before the swap makes it visible (one call, not one per file)
            _swap_into_place(staging, out)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        _write_manifest(manifest_path, out, digests)
        return stats


@dataclass
class WriteStats:
    written: int = 0
    linked: int = 0  # unchanged since the previous build: hard-linked, not rewritten


def _link(source: Path, target: Path) -> bool:
    try:
        os.link(source, target)
        return True
    except OSError:  # no previous file, or a file system without hard links
        return False


def _read_manifest(path: Path, out: Path) -> dict[str, str]:
    """Previous digests, trusted only for files whose size and mtime still match."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    trusted = {}
    for name, (digest, size, mtime_ns) in entries.items():
        try:
            st = (out / name).stat()
        except OSError:
            continue
        if st.st_size == size and st.st_mtime_ns == mtime_ns:
            trusted[name] = digest
    return trusted


def _write_manifest(path: Path, out: Path, digests: dict[str, str]) -> None:
    files = {}
    for name, digest in digests.items():
        st = (out / name).stat()
        files[name] = [digest, st.st_size, st.st_mtime_ns]
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps({"files": files}, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False if unsupported."""
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return False
    try:
        libc = ctypes.CDLL(libc_name, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_uint]
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
    # Fallback without an atomic exchange: a marker lets the next build restore the
    # previous site if this process dies between the two renames.
    previous = out.parent / f".{out.name}-previous"
    shutil.rmtree(previous, ignore_errors=True)
    os.replace(out, previous)
    os.replace(staging, out)
    os.replace(previous, staging)


def _recover(out: Path) -> None:
    """Clean up after a build that was killed: restore or drop leftovers."""
    previous = out.parent / f".{out.name}-previous"
    if previous.exists():
        if not out.exists():
            os.replace(previous, out)
        else:
            shutil.rmtree(previous, ignore_errors=True)
    for stale in out.parent.glob(f".{out.name}-new-*"):
        shutil.rmtree(stale, ignore_errors=True)
