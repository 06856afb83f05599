"""Build-time rendering with vl-convert: static SVGs of charts and the shared Vega bundle.

Renders are cached on disk by content hash (spec + vl-convert version), so a rebuild
only renders charts whose data changed; cold renders use every core.
"""

from __future__ import annotations

import functools
import hashlib
import multiprocessing
import os
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


def _store(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_bytes(content)
    os.replace(tmp, path)  # a killed build never leaves a truncated cache entry


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
                  progress: Progress = SILENT) -> dict[tuple[str, str], bytes]:
    """Static exports of each chart: ``(chart id, format) -> bytes`` (SVG text, 2x PNG).
    SVGs render first; PNGs are rasterised from them. ``progress`` counts the renders."""
    texts = {cid: dumps_canonical(spec) for cid, spec in specs.items()}
    paths = {(cid, fmt): cache / fmt / f"{_key(text, fmt)}.{fmt}"
             for cid, text in texts.items() for fmt in formats}
    for fmt in ("svg", "png"):
        if fmt not in formats:
            continue
        missing = sorted(cid for cid in texts if not paths[(cid, fmt)].exists())
        if fmt == "svg":
            jobs = [("svg", texts[cid]) for cid in missing]
        else:
            svgs = {cid: paths[(cid, "svg")].read_text(encoding="utf-8") if "svg" in formats
                    else _render(("svg", texts[cid])).decode("utf-8") for cid in missing}
            jobs = [("png", svgs[cid]) for cid in missing]
        progress.start(f"rendering {fmt.upper()} charts", len(jobs))
        for cid, content in zip(missing, _run(jobs, progress), strict=True):
            _store(paths[(cid, fmt)], content)
    return {key: paths[key].read_bytes() for key in sorted(paths)}


def vega_bundle(cache: Path = DEFAULT_CACHE) -> str:
    """The vega + vega-lite + vega-embed bundle shipped with vl-convert (one file)."""
    path = cache / f"vega-bundle-{_vl_version()}.js"
    if not path.exists():
        import vl_convert

        bundle = vl_convert.javascript_bundle()  # type: ignore[call-arg]  # stub: optional
        _store(path, bundle.encode("utf-8"))
    return path.read_text(encoding="utf-8")
