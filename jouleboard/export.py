"""Build-time rendering with vl-convert: static SVGs of charts and the shared Vega bundle.

Renders are cached on disk by content hash (spec + vl-convert version), so a rebuild
only renders charts whose data changed; cold renders use every core. Builds in other
checkouts and processes share the cache: entries are written atomically and carry a digest
that is checked on every read, so a partial or damaged entry is rendered again, never used.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import multiprocessing
import os
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from jouleboard.console import SILENT, Progress
from jouleboard.jsonio import dumps_canonical


def _default_cache() -> Path:
    """$JOULEBOARD_CACHE, else the user's cache folder (entries are content-addressed, so
    every checkout and build can share them)."""
    if os.environ.get("JOULEBOARD_CACHE"):
        return Path(os.environ["JOULEBOARD_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "jouleboard"


DEFAULT_CACHE = _default_cache()
_PARALLEL_FROM = 8  # fewer uncached charts than this render in-process
# Entries are "<magic> <sha256 of content> <length>\n<content>", in their own folder so an
# older jouleboard sharing the cache never reads one (nor this one an older, unchecked entry).
_ENTRY_MAGIC = "jouleboard-cache-1"
_ENTRIES = "checked-1"


@functools.cache
def _vl_version() -> str:
    from importlib.metadata import version

    return version("vl-convert-python")


def _key(spec_json: str, kind: str) -> str:
    return hashlib.sha256(f"{kind}\0{_vl_version()}\0{spec_json}".encode()).hexdigest()


def _render(job: tuple[str, str]) -> bytes:
    """``("svg", spec JSON)`` -> SVG; ``("png", SVG text)`` -> 2x PNG rasterised from the SVG
    (the same picture as rendering the spec again, in half the time)."""
    import vl_convert

    fmt, text = job
    if fmt == "svg":
        svg: str = vl_convert.vegalite_to_svg(text)
        return svg.encode("utf-8")
    png: bytes = vl_convert.svg_to_png(text, scale=2)
    return png


def _entry(content: bytes) -> bytes:
    """A cache file: a header line with the content's digest and length, then the content."""
    digest = hashlib.sha256(content).hexdigest()
    return f"{_ENTRY_MAGIC} {digest} {len(content)}\n".encode("ascii") + content


def _load(path: Path) -> bytes | None:
    """The content of the cache entry at ``path``, or None when it is missing or fails its
    check (truncated, overwritten, or not written by this version): render it again."""
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    header, newline, content = raw.partition(b"\n")
    parts = header.split(b" ")
    if not newline or len(parts) != 3 or parts[0] != _ENTRY_MAGIC.encode("ascii"):
        return None
    if parts[2] != str(len(content)).encode("ascii") or \
            parts[1] != hashlib.sha256(content).hexdigest().encode("ascii"):
        return None
    return content


def _store(path: Path, content: bytes) -> None:
    """Write a cache entry atomically: a private temporary file in the same folder, flushed
    to disk, then renamed over the entry, so a concurrent reader or a build killed at any
    moment sees the old entry, the new one or none, never part of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(_entry(content))
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the cache is shared by checkouts
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _run(jobs: list[tuple[str, str]], progress: Progress = SILENT) -> list[bytes]:
    results: list[bytes] = []
    if len(jobs) >= _PARALLEL_FROM and (os.cpu_count() or 1) > 1:
        workers = min(os.cpu_count() or 1, 4)
        # spawn, not fork: vl-convert runs a JavaScript engine with its own threads, and a
        # process forked after it has started deadlocks.
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            for result in pool.map(_render, jobs, chunksize=4):
                results.append(result)
                progress.advance()
        return results
    for job in jobs:
        results.append(_render(job))
        progress.advance()
    return results


def render_charts(specs: dict[str, dict[str, Any]], formats: tuple[str, ...] = ("svg", "png"),
                  cache: Path = DEFAULT_CACHE,
                  progress: Progress = SILENT,
                  svg_only: frozenset[str] = frozenset()) -> dict[tuple[str, str], bytes]:
    """Static exports of each chart: ``(chart id, format) -> bytes`` (SVG text, 2x PNG).
    SVGs render first; PNGs are rasterised from them (except for the ids in ``svg_only``,
    e.g. phone renders). Cached entries are checked on read. ``progress`` counts the
    renders."""
    texts = {cid: dumps_canonical(spec) for cid, spec in specs.items()}
    root = cache / _ENTRIES
    found: dict[tuple[str, str], bytes] = {}
    for fmt in ("svg", "png"):
        if fmt not in formats:
            continue
        paths = {cid: root / fmt / f"{_key(text, fmt)}.{fmt}" for cid, text in texts.items()
                 if fmt == "svg" or cid not in svg_only}
        for cid, path in paths.items():
            content = _load(path)
            if content is not None:
                found[(cid, fmt)] = content
        missing = sorted(cid for cid in paths if (cid, fmt) not in found)
        if fmt == "svg":
            jobs = [("svg", texts[cid]) for cid in missing]
        else:
            jobs = [("png", found[(cid, "svg")].decode("utf-8") if "svg" in formats
                     else _render(("svg", texts[cid])).decode("utf-8")) for cid in missing]
        progress.start(f"rendering {fmt.upper()} charts", len(jobs))
        for cid, content in zip(missing, _run(jobs, progress), strict=True):
            _store(paths[cid], content)
            found[(cid, fmt)] = content
    return dict(sorted(found.items()))


def vega_bundle(cache: Path = DEFAULT_CACHE) -> str:
    """The vega + vega-lite + vega-embed bundle shipped with vl-convert (one file)."""
    path = cache / _ENTRIES / f"vega-bundle-{_vl_version()}.js"
    content = _load(path)
    if content is None:
        import vl_convert

        bundle = vl_convert.javascript_bundle()  # type: ignore[call-arg]  # stub: optional
        content = bundle.encode("utf-8")
        _store(path, content)
    return content.decode("utf-8")
