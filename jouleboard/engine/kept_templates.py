"""Jinja templates compiled by an earlier process, kept beside the kept reads
(jouleboard/engine/kept.py) in the chart cache and trusted as they are: a new process
renders the pages an edit touched without compiling their templates again."""

from __future__ import annotations

import hashlib
from pathlib import Path

import jinja2
import jinja2.bccache

from jouleboard.engine import kept

_MAGIC = b"jouleboard-kept-template-1\n"
_NEWEST = 200  # compiled templates kept (a site has about 20); older ones are deleted


class KeptTemplates(jinja2.BytecodeCache):
    """Templates compiled by an earlier process, for Jinja to load instead of compiling
    them again (about 0.15 s for the pages an edit rebuilds). Jinja keys each by the
    template's name and file and checks it against the source's checksum; ``basis`` (the
    package's code and the versions of Python and Jinja, which configure the sandbox that
    compiles them) keys them all. Each file is trusted as the kept reads are."""

    def __init__(self, cache: Path, basis: str) -> None:
        self._folder = cache / kept.FOLDER / "templates"
        self._basis = basis

    def _path(self, bucket: jinja2.bccache.Bucket) -> Path:
        name = hashlib.sha256(f"{self._basis}\0{bucket.key}".encode()).hexdigest()[:32]
        return self._folder / f"{name}.code"

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        payload = kept.trusted_payload(self._path(bucket), _MAGIC)
        if payload is not None:
            bucket.bytecode_from_string(payload)  # Jinja checks the source's checksum

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        kept.write_kept(self._path(bucket), _MAGIC, bucket.bytecode_to_string(), _NEWEST)
