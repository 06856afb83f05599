"""What is fresh: the one place that decides whether an output file must be made again.

Every product of a build (a page, a chart's files, a download) has a key: the digest of
the values it is made from and of ``basis`` (the templates, the package's code and the
versions that turn those values into bytes; see
:func:`jouleboard.engine.fingerprint.render_digest`). A product whose key is unchanged is
taken from the last build instead of made again: from memory when this process made it
(``jouleboard serve``), else from the output folder, where the manifest recorded its digest,
size, modification time and inode when it was written: a file still as it was is linked
into the new site unread (read only where something must look into it, and then checked
against the digest). Any doubt (no manifest, an edited file, another key) makes it anew.
A build with no change at all never gets here: see
:func:`jouleboard.output.writer.unchanged_build`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from jouleboard.output.writer import LastFile, OutputChanged, last_files

Content = str | bytes
T = TypeVar("T")
_PROTOCOL = 5  # fixed, so a key does not change with Python's default protocol


def key_of(source: object, basis: str) -> str:
    """The digest of ``source`` (the values a product is made from) and ``basis``. Pickling
    is exact and deterministic for the plan's frozen values (tests/test_page_reuse.py builds
    in a new process and finds the same keys); values holding sets must not be passed.

    The pickler keeps no memo ("fast" mode), so equal values give equal keys however they
    share objects: records parsed from their files share strings that records unpickled
    from the kept reads do not, and a memo wrote them once and then referred to them, so
    every page changed its key in the first rebuild after files were parsed. (Without a
    memo a cycle cannot be pickled; plan values hold none.)"""
    digest = hashlib.sha256(basis.encode("utf-8") + b"\0")
    pickler = pickle.Pickler(Hashing(digest), protocol=_PROTOCOL)
    pickler.fast = True
    pickler.dump(source)  # into the digest as it is written, never whole in memory
    return digest.hexdigest()


def view_key(page: object) -> str:
    """The digest of a page's view (its path, template, title and body)."""
    return key_of(page, "")


class Hashing:
    """A file that only hashes what is written to it."""

    def __init__(self, digest: hashlib._Hash) -> None:
        self.digest = digest

    def write(self, data: bytes) -> int:
        self.digest.update(data)
        return len(data)


def chart_ids(body: object) -> set[str]:
    """The ids of every chart in a page body (nested views, tuples, lists)."""
    from jouleboard.plan.views import ChartRef
    from jouleboard.rank.tables import Table

    found: set[str] = set()
    stack = [body]
    while stack:
        value = stack.pop()
        if isinstance(value, ChartRef):
            found.add(value.id)
        elif isinstance(value, tuple | list):
            stack.extend(value)
        elif not isinstance(value, Table):  # tables hold no charts: skip their many cells
            stack.extend(getattr(value, name) for name in _field_names(type(value)))
    return found


_FIELDS: dict[type, tuple[str, ...]] = {}


def _field_names(kind: type) -> tuple[str, ...]:
    """The fields of a dataclass (none for any other type), looked up once per type."""
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = (
            tuple(f.name for f in dataclasses.fields(kind))
            if dataclasses.is_dataclass(kind)
            else ()
        )
    return names


def content_of(file: Content | LastFile) -> Content | None:
    """A product's content: a last build's file read, or None if it is no longer what that
    build wrote (gone or edited since its manifest was read: make it anew)."""
    if not isinstance(file, LastFile):
        return file
    try:
        return file.read()
    except OutputChanged:
        return None


class Products:
    """The products of the last build, by output path, each with the key it was made from.

    A build calls :meth:`begin`, then :meth:`take` or :meth:`get` for every product (which
    records its key for the manifest), then :meth:`end` once its output is committed.
    ``resident``: keep what this build made in memory for the next one (serve); otherwise
    only the output folder carries products from one build to the next (the command line).
    """

    def __init__(self, resident: bool = False) -> None:
        self.resident = resident
        self.keys: dict[str, str] = {}  # this build's, for its manifest
        self.made = 0  # products made anew in this build (not taken from the last one)
        self._held: dict[str, tuple[str, Content]] = {}  # the last build's, in memory
        self._now: dict[str, tuple[str, Content]] = {}  # this build's, while it runs
        self._disk: dict[str, tuple[str, str, int]] = {}  # path -> (key, digest, size)
        self._out: Path | None = None

    def begin(self, out: Path) -> None:
        """Start a build into ``out``; without products in memory, those the output folder
        holds (as its manifest recorded them) are the last build's."""
        self.keys, self.made, self._now, self._out = {}, 0, {}, out
        self._disk = {} if self._held else last_files(out)

    def take(self, path: str, key: str) -> Content | None:
        """The last build's product at ``path`` if it was made from ``key``, else None."""
        last = self._last(path, key)
        content = content_of(last) if last is not None else None
        if isinstance(last, LastFile) and content is not None:
            self._keep(path, key, content)
        return content

    def take_file(self, path: str, key: str) -> Content | LastFile | None:
        """:meth:`take`, but a product in the output folder comes as its file, unread
        (unless products are ``resident``: then it is read, to be held)."""
        if self.resident:
            return self.take(path, key)
        return self._last(path, key)

    def _last(self, path: str, key: str) -> Content | LastFile | None:
        self.keys[path] = key
        held = self._now.get(path) or self._held.get(path)
        if held is not None and held[0] == key:
            self._now[path] = held
            return held[1]
        known = self._disk.get(path)
        if known is None or known[0] != key or self._out is None:
            return None
        return LastFile(self._out / path, known[1], known[2])

    def made_now(self, path: str, key: str, content: Content) -> None:
        """Record ``content`` as made from ``key`` by this build."""
        self.keys[path] = key
        self.made += 1
        self._keep(path, key, content)

    def get(self, path: str, key: str, make: Callable[[], T]) -> T | Content | LastFile:
        """The product at ``path`` made from ``key``: the last build's (its file, unread,
        when it is in the output folder), or ``make()``."""
        known = self.take_file(path, key)
        if known is not None:
            return known
        content = make()  # (take has recorded the key)
        self.made += 1
        if isinstance(content, str | bytes):
            self._keep(path, key, content)
        return content

    def end(self) -> None:
        """This build's output is committed: its products are the last build's now."""
        if self.resident:
            self._held = self._now
        self._now, self._disk = {}, {}

    def _keep(self, path: str, key: str, content: Content) -> None:
        if self.resident:
            self._now[path] = (key, content)
