"""Pages and downloads of the last build reused when nothing they show has changed.

A page's HTML is a function of its view (the plan's page: every value it shows), the site's
frame, the charts it embeds, and the templates and code that render it; a download's text,
of its records and the code. A build records a digest of those per file in the output's
manifest; the next build into the same folder takes a file whose digest is unchanged from
the folder (checked against the manifest's content digest) instead of making it again.
After an edited measurement, only the pages that show it are rendered. Any doubt (no
manifest, an edited file, a different digest) makes the file anew.
"""

from __future__ import annotations

import dataclasses
import hashlib
import pickle
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from jouleboard.output.writer import last_files

T = TypeVar("T")
_PROTOCOL = 5  # fixed, so a digest does not change with Python's default protocol


def page_key(page: Any, site: Any, charts: Mapping[str, Any], basis: str) -> str:
    """The digest of what ``page`` renders from: its view, ``site`` (the frame), the
    ``charts`` entries of the charts it shows, and ``basis`` (templates and code: see
    :func:`jouleboard.engine.fingerprint.render_digest`)."""
    return file_key((page, site, {cid: charts[cid] for cid in sorted(chart_ids(page.body))}), basis)


def file_key(source: Any, basis: str) -> str:
    """The digest of ``source`` (the values a file is made from) and ``basis``. Pickling is
    exact and deterministic for the plan's frozen values (tests/test_page_reuse.py builds in
    a new process and finds the same keys)."""
    body = pickle.dumps(source, protocol=_PROTOCOL)
    return hashlib.sha256(basis.encode("utf-8") + b"\0" + body).hexdigest()


def chart_ids(body: Any) -> set[str]:
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


class LastFiles:
    """The files the last build into ``out`` left, by path: each usable while its key is
    the same and its bytes are still the ones that build wrote."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.known = last_files(out)
        self.keys: dict[str, str] = {}  # this build's, for its manifest
        self.made = 0  # files made anew (not taken from the last build)

    def get(self, path: str, key: str, make: Callable[[], T]) -> T | bytes:
        """The file at ``path`` whose key is ``key``: the last build's, or ``make()``."""
        self.keys[path] = key
        known = self.known.get(path)
        if known is not None and known[0] == key:
            try:
                content = (self.out / path).read_bytes()
            except OSError:
                content = b""
            if hashlib.sha256(content).hexdigest() == known[1]:
                return content
        self.made += 1
        return make()
