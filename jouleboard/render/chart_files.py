"""Build-time rendering with vl-convert: static SVGs of charts and the shared Vega bundle.

Renders are cached on disk by content hash (spec + vl-convert version), so a rebuild
only renders charts whose data changed; cold renders use every core. Builds in other
checkouts and processes share the cache: entries are written atomically and carry a digest
that is checked on every read, so a partial or damaged entry is rendered again, never used.

Whoever can write the cache folder (another user, a poisoned CI cache) can also write a
matching digest, so nothing published rests on the cache's word: an entry must name its
own key (no copied or linked entries) and be a regular file, a cached SVG must hold only
the markup vl-convert draws charts with (no script, event attribute, foreign object or
outside link), a PNG must be a PNG, and the Vega bundle must be the one the installed
vl-convert makes. An entry that fails is dropped with a warning and made again.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import html
import multiprocessing
import os
import re
import signal
import sys
import tempfile
import threading
import time
import xml.parsers.expat
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from jouleboard.core.console import SILENT, Progress
from jouleboard.core.fonts import system_fonts
from jouleboard.core.jsonio import dumps_canonical
from jouleboard.core.problems import Problem, RenderFailed, ValidationFailed, shown_path
from jouleboard.core.safe_read import FileRefused, read_capped
from jouleboard.core.shapes import JsonObject

if TYPE_CHECKING:
    from multiprocessing.synchronize import Event as EventType


def _default_cache() -> Path:
    """$JOULEBOARD_CACHE, else the user's cache folder (entries are content-addressed, so
    every checkout and build can share them)."""
    if os.environ.get("JOULEBOARD_CACHE"):
        return Path(os.environ["JOULEBOARD_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "jouleboard"


DEFAULT_CACHE = _default_cache()


def check_cache(cache: Path) -> None:
    """Make ``cache`` if it is missing; raise NotADirectoryError, with one line to show,
    when it is something else (a file, /dev/null) or lies below a file."""
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise NotADirectoryError(
            errno.ENOTDIR,
            "the chart cache is not a folder (set JOULEBOARD_CACHE to a folder, or unset it)",
            str(cache),
        ) from None


_Made = TypeVar("_Made")  # what a worker's job returns
_PARALLEL_FROM = 8  # fewer uncached charts than this render in-process
# Entries are "<magic> <file name> <sha256 of content> <length>\n<content>", in their own
# folder so an older jouleboard sharing the cache never reads one (nor this one an older,
# unchecked entry). The file name is the entry's key: an entry copied or linked to another
# key names the wrong one and is refused.
_ENTRY_MAGIC = "jouleboard-cache-2"
_ENTRIES = "checked-2"
_ENTRY_CAP = 32 * 1024 * 1024  # bytes; the largest chart SVG is ~150 kB, the bundle ~0.9 MB
_PNG_CAP = 16 * 1024 * 1024  # bytes; the largest 2x chart PNG is ~0.7 MB


@functools.cache
def _vl_version() -> str:
    from importlib.metadata import version

    return version("vl-convert-python")


def _key(spec_json: str, kind: str, fonts: str = "") -> str:
    """The cache entry of a chart's ``kind`` (svg, png) export; ``fonts``: the system's
    fonts (core/fonts.py) for a chart drawn with them, so that one installed or removed
    draws it again. Entries carry a variant tag: older ones (clip ids numbered by render
    order, text measured with whatever system font was installed) are rendered again."""
    basis = f"{kind}\0{_VARIANT}\0{_vl_version()}\0{fonts}\0{spec_json}"
    return hashlib.sha256(basis.encode()).hexdigest()


_VARIANT = "stable-ids-1\0bundled-font-1"
# A tag that names a clip path or refers to one: the only markup stable_ids changes.
_CLIP_TAG = re.compile(r'<[^>]*?(?:\bid="clip\d|url\(#clip\d)[^>]*>')
_CLIP_REF = re.compile(r'(?<=\bid="clip)\d+(?=")|(?<=url\(#clip)\d+(?=\))')


def stable_ids(svg: str) -> str:
    """``svg`` with its clip-path ids renumbered 1, 2, ... in order of first use.

    Vega numbers clip paths with a counter that lives as long as the process, so the same
    spec gives different ids depending on what the process rendered before (and, in a pool,
    on which worker got it). Renumbering makes a chart's SVG depend on its spec alone. Only
    markup inside tags is touched, never text (which holds no "<"), and only the tags
    with a clip reference are looked into: one call per tag was ~5 % of a render. Most
    charts have no clip path (30 of the default build's 312), and their SVG is returned as
    it is without a scan: the scan took 0.7 ms of a worker's CPU per chart."""
    if "clip" not in svg:
        return svg
    numbers: dict[str, str] = {}

    def renumber(match: re.Match[str]) -> str:
        return numbers.setdefault(match.group(0), str(len(numbers) + 1))

    return _CLIP_TAG.sub(lambda tag: _CLIP_REF.sub(renumber, tag.group(0)), svg)


# vl-convert measures every piece of text through its font database, which opens and maps
# the system's copy of the font file anew for each measurement: ~600 times for a small chart,
# ~60 % of its render time. With the system's fonts hidden from that database (it reads
# $FONTCONFIG_FILE once, when first used), vl-convert uses the Liberation Sans compiled into
# it, from memory, ~2.5x faster, and a chart's SVG no longer depends on the fonts installed.
# The set below holds the characters that font draws exactly as wide as Debian's Liberation
# Sans 1.07 does (tests/test_chart_fonts.py; the two differ on "·", "Ѝ" and the kerning of
# "11", by under 1 px). A chart with any other character renders where the system's fonts
# are seen, which can fall back to a font that has it.
_BUNDLED_FONT_CHARS = frozenset(
    chr(c)
    for first, last in (
        (0x20, 0x7E),
        (0xA0, 0xB6),
        (0xB8, 0x17F),  # Basic Latin, Latin-1, Latin Extended-A
        (0x384, 0x38A),
        (0x38C, 0x38C),
        (0x38E, 0x3A1),
        (0x3A3, 0x3CE),  # Greek
        (0x400, 0x40C),
        (0x40E, 0x45F),  # Cyrillic
        (0x2013, 0x2014),
        (0x2018, 0x201E),
        (0x2020, 0x2022),
        (0x2026, 0x2026),
        (0x2030, 0x2030),
        (0x2032, 0x2033),
        (0x2039, 0x203A),
        (0x20AC, 0x20AC),
        (0x2122, 0x2122),
        (0x2190, 0x2195),
        (0x2212, 0x2212),
        (0x221E, 0x221E),
        (0x2248, 0x2248),
        (0x2260, 0x2260),
        (0x2264, 0x2265),  # dashes, quotes, symbols
    )
    for c in range(first, last + 1)
)


def bundled_font_suffices(spec_json: str) -> bool:
    """Whether every character of a chart's spec is one vl-convert's own font draws."""
    return spec_json.isascii() or _BUNDLED_FONT_CHARS.issuperset(spec_json)


def _no_fonts_config(folder: Path) -> Path:
    """Write into ``folder`` a font configuration that lists one empty folder: a font
    database made while FONTCONFIG_FILE names it sees no system font."""
    empty = folder / "none"
    empty.mkdir(exist_ok=True)
    config = folder / "fonts_config.xml"
    folders = f"<dir>{html.escape(str(empty), quote=False)}</dir>"
    config.write_text(
        f'<?xml version="1.0"?>\n<fontconfig>{folders}</fontconfig>\n', encoding="utf-8"
    )
    return config


@contextlib.contextmanager
def _fonts_configured(config: Path) -> Iterator[None]:
    """While inside, FONTCONFIG_FILE names ``config``."""
    before = os.environ.get("FONTCONFIG_FILE")
    os.environ["FONTCONFIG_FILE"] = str(config)
    try:
        yield
    finally:
        if before is None:
            del os.environ["FONTCONFIG_FILE"]
        else:
            os.environ["FONTCONFIG_FILE"] = before


def _start_renderer(fonts_config: Path | None) -> None:
    """Load vl-convert's JavaScript engine and both its font databases (text measurement
    and rasterising) in this process: with the system's fonts if ``fonts_config`` is None,
    else with the fonts that configuration lists (see :func:`_no_fonts_config`). Once
    made, a database stays as it is for the life of the process, and never reads the
    configuration again. Raises :class:`RenderFailed` if vl-convert does not load or draw."""
    from jouleboard.render.compiled import fetching_nothing

    try:
        import vl_convert

        with contextlib.nullcontext() if fonts_config is None else _fonts_configured(fonts_config):
            svg = vl_convert.vegalite_to_svg(
                '{"data":{"values":[{"a":"x"}]},"mark":"text","encoding":{"text":{"field":"a"}}}',
                **fetching_nothing(),
            )
            vl_convert.svg_to_png(svg)
    except Exception as e:  # (an ImportError from a broken install, vl-convert's own errors)
        raise RenderFailed(
            f"vl-convert, which draws the charts, could not start ({type(e).__name__}: {e}); "
            "nothing was written. Check that `python -c 'import vl_convert'` works, and "
            "reinstall vl-convert-python if it does not"
        ) from e


_renderer_here = False  # whether this process has started its renderer (_render_here)


def _render_here(job: tuple[str, str | None, bool]) -> tuple[bytes | None, bytes | None]:
    """:func:`_render` in this process, whose renderer uses vl-convert's own font (it is
    only given jobs that font suffices for)."""
    global _renderer_here
    if not _renderer_here:
        with tempfile.TemporaryDirectory(prefix="jouleboard-fonts-") as folder:
            _start_renderer(_no_fonts_config(Path(folder)))
        _renderer_here = True
    return _render(job)


def _render(job: tuple[str, str | None, bool]) -> tuple[bytes | None, bytes | None]:
    """One chart in one call: ``(spec JSON, its SVG text if already known, want PNG)`` ->
    ``(SVG if rendered here, 2x PNG if wanted)``. The PNG is rasterised from the SVG (the
    same picture as rendering the spec again, in half the time), so no chart is compiled
    twice and the SVG never travels back to a worker."""
    import vl_convert

    from jouleboard.render import compiled

    spec_json, svg_text, want_png = job
    rendered = None
    if svg_text is None:
        svg_text = stable_ids(compiled.svg(spec_json))
        rendered = svg_text.encode("utf-8")
    png: bytes | None = vl_convert.svg_to_png(svg_text, scale=2) if want_png else None
    return rendered, png


def _entry(name: str, content: bytes) -> bytes:
    """A cache file: a header line with its own file name (its key), the content's digest
    and length, then the content."""
    digest = hashlib.sha256(content).hexdigest()
    return f"{_ENTRY_MAGIC} {name} {digest} {len(content)}\n".encode("ascii") + content


def _warn_dropped(path: Path, reason: str) -> None:
    """One line on stderr: a cache entry was refused and is made again (a forged or
    damaged cache is worth knowing about, and costs a render)."""
    print(
        f"warning: chart cache entry {path} refused ({reason}); made again from vl-convert",
        file=sys.stderr,
    )


def _drop(path: Path, reason: str) -> None:
    _warn_dropped(path, reason)
    with contextlib.suppress(OSError):
        path.unlink()  # a link is removed, not what it points to


def _load(path: Path) -> bytes | None:
    """The content of the cache entry at ``path``, or None when it is missing or fails its
    check (a link or not a regular file, over the cap, truncated, overwritten, written by
    another version or for another key): it is dropped, with a warning, and made again."""
    try:
        raw = read_capped(path, _ENTRY_CAP)
    except FileRefused as e:
        if e.rule != "file.missing":
            _drop(path, e.message)
        return None
    header, newline, content = raw.partition(b"\n")
    parts = header.split(b" ")
    if not newline or len(parts) != 4 or parts[0] != _ENTRY_MAGIC.encode("ascii"):
        _drop(path, "not an entry of this jouleboard")
        return None
    if parts[1] != path.name.encode("utf-8", "replace"):
        _drop(path, "its header names another entry")
        return None
    if parts[3] != str(len(content)).encode("ascii") or parts[2] != hashlib.sha256(
        content
    ).hexdigest().encode("ascii"):
        _drop(path, "its content does not match its digest")
        return None
    return content


_SVG = "http://www.w3.org/2000/svg "
_XLINK_HREF = "http://www.w3.org/1999/xlink href"
# What vl-convert draws charts with (every mark type, gradients, legends, titles), and no
# more: no script, style, a, image, use, foreignObject or animation element.
_SVG_ELEMENTS = frozenset(
    _SVG + name
    for name in (
        "svg",
        "g",
        "path",
        "line",
        "rect",
        "circle",
        "ellipse",
        "polygon",
        "polyline",
        "text",
        "tspan",
        "title",
        "desc",
        "defs",
        "clipPath",
        "linearGradient",
        "radialGradient",
        "stop",
        "pattern",
    )
)
# Presentation attributes only: no on* handler, no style, no href but a fragment.
_SVG_ATTRIBUTES = frozenset(
    {
        "aria-hidden",
        "aria-label",
        "aria-roledescription",
        "role",
        "class",
        "id",
        "version",
        "viewBox",
        "width",
        "height",
        "x",
        "y",
        "x1",
        "y1",
        "x2",
        "y2",
        "cx",
        "cy",
        "r",
        "rx",
        "ry",
        "fx",
        "fy",
        "fr",
        "dx",
        "dy",
        "d",
        "points",
        "transform",
        "display",
        "opacity",
        "pointer-events",
        "preserveAspectRatio",
        "clip-path",
        "fill",
        "fill-opacity",
        "fill-rule",
        "clip-rule",
        "stroke",
        "stroke-opacity",
        "stroke-width",
        "stroke-linecap",
        "stroke-linejoin",
        "stroke-dasharray",
        "stroke-dashoffset",
        "stroke-miterlimit",
        "font-family",
        "font-size",
        "font-style",
        "font-variant",
        "font-weight",
        "text-anchor",
        "text-decoration",
        "offset",
        "stop-color",
        "stop-opacity",
        "gradientUnits",
        "gradientTransform",
        "patternUnits",
    }
)
_URL_ATTRIBUTES = frozenset({"fill", "stroke", "clip-path"})  # those that can name a url()
_FRAGMENT_URL = re.compile(r"url\(#[^()\\\s]*\)")


def svg_refusal(svg: bytes) -> str | None:
    """Why ``svg`` is not a chart vl-convert could have drawn (so must not be published: it
    could run script when opened), or None. It must parse as XML with one svg element, at
    its root, and only the elements and attributes in :data:`_SVG_ELEMENTS` and
    :data:`_SVG_ATTRIBUTES`; references stay within the file (``#id``); no declaration,
    entity, comment or processing instruction."""
    if b"<!" in svg or b"<?" in svg:
        return "a declaration, entity, comment or processing instruction"
    parser = xml.parsers.expat.ParserCreate(namespace_separator=" ")
    refused: list[str] = []
    root_seen = False

    def start(name: str, attributes: dict[str, str]) -> None:
        nonlocal root_seen
        if refused:
            return
        if name not in _SVG_ELEMENTS or (name == _SVG + "svg") == root_seen:
            refused.append(f"element {name.rpartition(' ')[2]}")
            return
        root_seen = True
        for attribute, value in attributes.items():
            if attribute == _XLINK_HREF and value.startswith("#"):
                continue
            if attribute not in _SVG_ATTRIBUTES:
                refused.append(f"attribute {attribute.rpartition(' ')[2]}")
            elif attribute in _URL_ATTRIBUTES and "url(" in _FRAGMENT_URL.sub("", value):
                refused.append(f"a link outside the file in {attribute}")

    parser.StartElementHandler = start
    try:
        parser.Parse(svg, True)
    except xml.parsers.expat.ExpatError as e:
        return f"not well-formed XML: {xml.parsers.expat.ErrorString(e.code)}"
    return refused[0] if refused else None


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PNG_END = b"\x00\x00\x00\x00IEND\xaeB`\x82"


def png_refusal(png: bytes) -> str | None:
    """Why ``png`` is not a whole PNG image within the cap, or None."""
    if len(png) > _PNG_CAP:
        return f"{len(png):,} bytes, over the {_PNG_CAP:,}-byte cap"
    if not png.startswith(_PNG_SIGNATURE) or not png.endswith(_PNG_END):
        return "not a PNG image"
    return None


def _load_export(path: Path, fmt: str) -> bytes | None:
    """:func:`_load`, then the content checked as what it will be published as."""
    content = _load(path)
    if content is None:
        return None
    reason = svg_refusal(content) if fmt == "svg" else png_refusal(content)
    if reason is not None:
        _drop(path, f"cached {fmt.upper()} holds {reason}" if fmt == "svg" else reason)
        return None
    return content


def _store(path: Path, content: bytes) -> None:
    """Write a cache entry atomically: a private temporary file in the same folder, renamed
    over the entry, so a concurrent reader or a build killed at any moment sees the old
    entry, the new one or none, never part of one. It is not forced to disk (an fsync per
    entry was 0.5 s of a cold build's 304, in the build's own process): an entry a power cut
    tears fails its check when read (:func:`_load`), and is made again."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(_entry(path.name, content))
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the cache is shared by checkouts
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _workers() -> int:
    """Worker processes for cold renders: the cores this process may use (at most 4)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return min(cores, 4)


# Why this worker's renderer did not start, if it did not (see _start_worker).
_start_failure: RenderFailed | None = None

# Set by the build once it has handed the workers a chart to draw (see Pool.submit): a
# worker then stops warming up (see _warm). A worker's own copy, given as it starts.
_work_waiting: EventType | None = None


# How much less of the CPU a worker asks for than its build (os.nice): the build's own
# process is the path every page waits on (loading, planning, the pages the charts go
# into), and a worker's start-up and renders take what it leaves. A rebuild after an edited
# measurement readies its worker while it imports the pipeline and a forked child hashes
# the inputs, three processes on two cores: 0.21-0.27 s sooner (the median of 16 runs of
# each, alternating), and a cold build no slower.
WORKER_NICENESS = 5


def may_fork() -> bool:
    """Whether this process may fork a child that goes on running Python: on Linux, with no
    thread but its own (a child of a process with threads could find a lock taken that no
    thread of its own will give back), and without vl-convert loaded (its JavaScript engine
    runs threads that Python does not see, and a process forked after it has started
    deadlocks)."""
    return (
        sys.platform.startswith("linux")
        and threading.active_count() == 1
        and "vl_convert" not in sys.modules
    )


class _Executor(ProcessPoolExecutor):
    """A :class:`ProcessPoolExecutor` whose first worker is forked from this process if
    ``fork_first`` and this process :func:`may_fork`, and every other one spawned (a new
    interpreter). A forked worker has the interpreter and the modules this process has
    loaded: it starts about 0.15 s of CPU sooner. Later workers are spawned: once the
    executor's manager thread runs, this process has a thread of its own. The queues and
    locks are the spawn context's, which both kinds of worker can use."""

    def __init__(self, *args: Any, fork_first: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fork_first = fork_first

    def _spawn_process(self) -> None:
        if self._processes or not (self._fork_first and may_fork()):
            super()._spawn_process()  # type: ignore[misc]
            return
        spawn = self._mp_context
        self._mp_context = multiprocessing.get_context("fork")
        try:
            super()._spawn_process()  # type: ignore[misc]
        finally:
            self._mp_context = spawn


def _start_worker(
    fonts_config: str | None, parent: int, work_waiting: EventType | None = None
) -> None:
    """A worker's start: a lower priority than its build's (:data:`WORKER_NICENESS`), its
    renderer (see :func:`_start_renderer`), and a watch that ends it if its build is killed
    (kill -9 leaves no one to stop it, and it would wait for work forever). A worker
    ignores Ctrl-C, which its build handles by stopping it (a Ctrl-C in a terminal goes to
    every process of the build, and a worker it interrupted printed its traceback): see
    :meth:`Pool.submit`.

    A renderer that does not start is not the initializer's failure, which would print a
    traceback here and leave the build only a broken pool: every job given to this worker
    then raises the :class:`RenderFailed` that says why (see :func:`_in_worker`)."""
    global _work_waiting, _start_failure
    _work_waiting = work_waiting
    if hasattr(os, "nice"):  # (not on Windows)
        os.nice(WORKER_NICENESS)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_end_with_parent, args=(parent,), daemon=True).start()
    try:
        _start_renderer(None if fonts_config is None else Path(fonts_config))
    except RenderFailed as e:
        _start_failure = e


def _in_worker(work: Callable[..., _Made], *args: object) -> _Made:
    """``work(*args)`` in a worker whose renderer started; else the reason it did not."""
    if _start_failure is not None:
        raise _start_failure
    return work(*args)


def _end_with_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def _ready() -> None:
    """A job that does nothing: submitting one starts a worker (see :meth:`Pool.start`)."""


def _warm(specs: Sequence[str]) -> int:
    """:func:`_ready`, then render ``specs`` (fetching nothing) and keep nothing: a
    worker's first chart of a kind compiles its code, ~0.1 s that a rebuild's worker spends
    while the build loads, not after (see :meth:`Pool.start`). It stops as soon as the build
    has a chart for the workers: the chart then compiles that code, and each spec warmed
    after it came (0.1-0.13 s each) would only delay it. Returns how many it rendered."""
    from jouleboard.render import compiled

    for done, spec in enumerate(specs):
        if _work_waiting is not None and _work_waiting.is_set():
            return done
        # (vl-convert's errors for a spec it refuses, PermissionError from vl-convert 2 for
        # one that names a URL or a file: a published spec may have been edited)
        with contextlib.suppress(ValueError, PermissionError, RecursionError):
            compiled.svg(spec)  # which also compiles its template for the build's charts
    return len(specs)


class Pool:
    """Chart-render worker processes, started on first use or early with :meth:`start`
    (a cold build starts them before loading the data, so their ~0.5 s start-up and the
    Vega bundle overlap with loading and planning). Workers use vl-convert's own font;
    the one for charts that need the system's fonts starts only when such a chart comes.
    Use as a context manager.

    A pool started with fewer workers than that (a rebuild readies one) stays that size
    until :meth:`widen`: a rebuild's few renders then wait for the worker it readied, not
    for a second one whose ~0.5 s start would take a core from the build. (The executor
    starts a worker at each submit that finds none idle, up to its ``_max_workers``.)

    The font configuration that hides the system's fonts from the workers is the pool's,
    in a temporary folder it removes on the way out: a worker may be stopped while it
    starts (a rebuild that draws no chart), and a folder of its own would stay behind."""

    def __init__(self) -> None:
        self._executors: dict[bool, ProcessPoolExecutor] = {}  # by "sees system fonts"
        self._size = _workers()  # the most workers of vl-convert's own font: see widen
        self._fonts: tempfile.TemporaryDirectory[str] | None = None
        self._work_waiting: EventType | None = None  # see _warm
        self._fork = False  # see start
        self._bundle: Future[bytes] | None = None
        self._pending: set[Future[Any]] = set()  # jobs not done, but a worker's start
        # The worker processes, kept here: an executor forgets its own when shut down
        # (release), and the interpreter's exit then waits for them.
        self._workers: dict[int, multiprocessing.process.BaseProcess] = {}

    def __enter__(self) -> Pool:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, *rest: object
    ) -> None:
        """Stop the workers once no job of theirs is wanted: on Ctrl-C, or when all they
        have left to do is start (a rebuild that drew no chart waited ~0.3 s for the worker
        :meth:`start` had asked for) or end (vl-convert takes ~0.4 s). After any other
        failure a job still running (the Vega bundle) is awaited, and so cached for the
        next build. A worker that ended abruptly (a broken pool) is told as a
        :class:`RenderFailed` that says how it ended."""
        try:
            if (kind is not None and issubclass(kind, KeyboardInterrupt)) or not self._pending:
                for process in self._workers.values():
                    process.terminate()  # a process already ended is left alone
            for executor in self._executors.values():
                executor.shutdown(cancel_futures=True)
        finally:
            # A worker reads the font configuration only while it starts, so the folder may
            # go while workers end: after release() the shutdown above does not wait for
            # them (nor should the build: vl-convert takes ~0.4 s to end).
            if self._fonts is not None:
                self._fonts.cleanup()
        if kind is not None and issubclass(kind, BrokenProcessPool):
            raise RenderFailed(
                f"a chart worker process ended abruptly{self._how_ended()}; nothing was "
                "written. Build again (the charts drawn so far are kept in the chart cache)"
            ) from error

    def _how_ended(self) -> str:
        """How the first worker that ended abruptly ended, if the pool knows: ``" (killed
        by SIGKILL ...)"``; its other workers were ended with SIGTERM after it."""
        for process in self._workers.values():
            code = process.exitcode
            if code is None or code in (0, -signal.SIGTERM):
                continue
            if code > 0:
                return f" (exit status {code})"
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            cause = ", as the system ends a process when memory runs out" * (name == "SIGKILL")
            return f" (killed by {name}{cause})"
        return ""

    def release(self) -> None:
        """Tell the workers to end (their memory is freed as they do) without waiting for
        them: a worker's vl-convert takes ~0.4 s to shut down, time the caller can use."""
        for executor in self._executors.values():
            executor.shutdown(wait=False, cancel_futures=True)

    @property
    def started(self) -> bool:
        return False in self._executors

    def executor(self, system_fonts: bool = False) -> ProcessPoolExecutor:
        if system_fonts not in self._executors:
            config = None
            if not system_fonts:
                self._fonts = tempfile.TemporaryDirectory(prefix="jouleboard-fonts-")
                config = str(_no_fonts_config(Path(self._fonts.name)))
            # The spawn context's queues and locks, which a forked worker can use too (see
            # _Executor); the fork context's semaphores have no name a spawned one could open.
            context = multiprocessing.get_context("spawn")
            if self._work_waiting is None:
                self._work_waiting = context.Event()
            self._executors[system_fonts] = _Executor(
                max_workers=1 if system_fonts else self._size,
                mp_context=context,
                initializer=_start_worker,
                initargs=(config, os.getpid(), self._work_waiting),
                fork_first=self._fork and not system_fonts,
            )
        return self._executors[system_fonts]

    def submit(
        self, work: Callable[..., _Made], *args: object, system_fonts: bool = False
    ) -> Future[_Made]:
        """``work(*args)`` in a worker. The first call starts the workers: from the main
        thread, with Ctrl-C ignored, as an exec keeps it, so a worker ignores Ctrl-C from its
        first instruction (and from :func:`_start_worker` on when started from another
        thread). Ctrl-C is blocked meanwhile: one pressed then reaches this process when the
        call returns (on Linux; elsewhere it may be lost)."""
        executor = self.executor(system_fonts)
        handler = signal.getsignal(signal.SIGINT)  # None: not set from Python, so not restorable
        if (
            handler is None
            or threading.current_thread() is not threading.main_thread()  # sets no handler
            or not hasattr(signal, "pthread_sigmask")  # Windows
        ):
            return self._wanted(work, executor.submit(_in_worker, work, *args))
        held = signal.pthread_sigmask(signal.SIG_BLOCK, [])  # the mask as it is
        try:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            return self._wanted(work, executor.submit(_in_worker, work, *args))
        finally:
            signal.signal(signal.SIGINT, handler)
            signal.pthread_sigmask(signal.SIG_SETMASK, held)

    def _wanted(self, work: Callable[..., object], future: Future[_Made]) -> Future[_Made]:
        """``future``, counted as pending until done unless it only starts a worker; and
        the workers the submit started."""
        for executor in self._executors.values():
            self._workers.update(executor._processes or {})
        if work is not _ready and work is not _warm:
            self._pending.add(future)
            future.add_done_callback(self._pending.discard)
            if self._work_waiting is not None and not self._work_waiting.is_set():
                self._work_waiting.set()
        return future

    def start(self, cache: Path, workers: int | None = None, fork: bool = False) -> None:
        """Start ``workers`` workers (default: every one) now; one makes the Vega bundle if
        the cache lacks it. Fewer than every one: the pool keeps that size (and one more
        that renders while the bundle is made) until :meth:`widen`. ``fork``: the first
        worker is forked from this process if it :func:`may_fork` (see :class:`_Executor`):
        a rebuild's one worker, whose start and renders are the path the rebuild waits on.
        A cold build's workers start while it loads the data, which is not waiting for
        them: they are spawned."""
        self._fork = fork and not self._executors
        count = min(workers or _workers(), _workers())
        path = _bundle_path(cache)
        bundle = _trusted_bundle(path) is None
        if not self.started:
            self._size = min(count + bundle, _workers())
        if bundle:
            self._bundle = self.submit(_make_bundle)
            # Cached as soon as it is made, even if this build then fails on invalid data.
            self._bundle.add_done_callback(functools.partial(_store_made, path))
        for _ in range(count - bundle):
            self.submit(_ready)

    def warm(self, specs: Sequence[str]) -> None:
        """Have the worker :meth:`start` readied render ``specs`` (JSON text) for nothing
        until the build hands it a chart (see :func:`_warm`), so that its first charts of
        those kinds come sooner (a rebuild's worker: the last build's). Not when that worker
        makes the Vega bundle: the build's charts get a worker of their own then."""
        if specs and self.started and self._bundle is None:
            self.submit(_warm, list(specs))

    def widen(self) -> None:
        """Let the pool grow to every worker as jobs come (after a :meth:`start` with fewer):
        enough renders to keep them all busy."""
        self._size = _workers()
        executor = self._executors.get(False)
        if executor is not None:  # (the attribute its submit reads to start another worker)
            executor._max_workers = self._size  # type: ignore[attr-defined]

    def bundle(self) -> bytes | None:
        """The bundle a worker made (see :meth:`start`), or None."""
        return self._bundle.result() if self._bundle is not None else None


def _store_made(path: Path, done: Future[bytes]) -> None:
    """Cache what a worker made, if it made it and the cache can be written (it is only a
    shortcut; a failed callback would print a traceback)."""
    if not done.cancelled() and done.exception() is None:
        with contextlib.suppress(OSError):
            _store(path, done.result())


class _Jobs:
    """Render jobs under way: every one given to the workers when they are made, if ``pool``
    runs; :meth:`results` gives ``(index in jobs, result)`` for every job, in completion
    order. Enough work (or any, once ``pool`` runs) is spread over worker processes, the
    biggest specs first so no core idles at the end; a few jobs render in this process (a
    worker costs ~0.5 s to start), except those that need the system's fonts (``system``,
    one flag a job: see :func:`bundled_font_suffices`). Without a ``pool``, the jobs go to
    one of their own when :meth:`results` is read."""

    def __init__(
        self,
        jobs: list[tuple[str, str | None, bool]],
        system: list[bool],
        progress: Progress = SILENT,
        pool: Pool | None = None,
    ) -> None:
        self.jobs, self.system, self.progress = jobs, system, progress
        self.renders = [(job[1] is None) + job[2] for job in jobs]
        started = pool is not None and pool.started
        self.here = not started and (sum(self.renders) < _PARALLEL_FROM or _workers() < 2)
        self.futures = self._submit(pool) if pool is not None else None

    def _submit(self, pool: Pool) -> dict[Future[tuple[bytes | None, bytes | None]], int]:
        jobs = self.jobs
        return {
            pool.submit(_render, jobs[i], system_fonts=self.system[i]): i
            for i in sorted(range(len(jobs)), key=lambda i: -len(jobs[i][0]))
            if self.system[i] or not self.here
        }

    def results(self) -> Iterator[tuple[int, tuple[bytes | None, bytes | None]]]:
        with contextlib.ExitStack() as stack:
            futures = self.futures
            if futures is None:  # starts no worker until one is asked for
                futures = self._submit(stack.enter_context(Pool()))
            if self.here:
                for index, job in enumerate(self.jobs):
                    if not self.system[index]:
                        yield index, _render_here(job)
                        self.progress.advance(self.renders[index])
            for future in as_completed(futures):
                index = futures[future]
                yield index, future.result()
                self.progress.advance(self.renders[index])


@dataclass
class Renders:
    """The static exports of charts, under way: see :func:`start_renders`."""

    cache: Path
    texts: dict[str, str]  # chart id -> its spec, as the cache keys it
    paths: dict[tuple[str, str], Path]  # (chart id, format) -> its cache entry
    found: dict[tuple[str, str], bytes]  # the exports made so far
    wanted: Sequence[str]  # the formats asked for
    same: dict[str, list[str]]  # spec -> the charts it draws
    missing: list[str]  # the chart drawn for each job
    jobs: _Jobs

    def exports(self) -> dict[tuple[str, str], bytes]:
        """``(chart id, format) -> bytes`` (SVG text, 2x PNG), once every render is made;
        new ones are stored in the cache as they arrive."""
        return dict(sorted(self.arrivals()))

    def arrivals(self) -> Iterator[tuple[tuple[str, str], bytes]]:
        """:meth:`exports`' items as they come: those the cache held, then each render's
        (for every chart it draws) as it is made, stored in the cache as it arrives."""
        found, same = self.found, self.same
        yield from sorted((k, v) for k, v in found.items() if k[1] in self.wanted)
        for index, (svg, png) in self.jobs.results():
            cid = self.missing[index]
            if svg is not None and (reason := svg_refusal(svg)) is not None:
                raise ValidationFailed([unsafe_render(self.cache, cid, reason)])
            for fmt, content in (("svg", svg), ("png", png)):
                if content is not None:
                    _store(self.paths[(cid, fmt)], content)
                    for twin in same[self.texts[cid]]:
                        found[(twin, fmt)] = content
                        if fmt in self.wanted:
                            yield (twin, fmt), content


def start_renders(
    specs: Mapping[str, JsonObject],
    formats: tuple[str, ...] = ("svg", "png"),
    cache: Path = DEFAULT_CACHE,
    progress: Progress = SILENT,
    svg_only: frozenset[str] = frozenset(),
    pool: Pool | None = None,
) -> Renders:
    """Static exports of each chart, started: see :func:`render_charts`. When ``pool``'s
    workers run, the renders are theirs from now on, and the caller can do other work
    before it asks for :meth:`Renders.exports`."""
    texts = {cid: dumps_canonical(spec) for cid, spec in specs.items()}
    root = cache / _ENTRIES
    wanted = [fmt for fmt in ("svg", "png") if fmt in formats]
    needed = ["svg", "png"] if "png" in wanted else wanted  # a PNG is made from the SVG
    system = {cid for cid, text in texts.items() if not bundled_font_suffices(text)}
    fonts = system_fonts() if system else ""
    paths = {
        (cid, fmt): root / fmt / f"{_key(text, fmt, fonts if cid in system else '')}.{fmt}"
        for cid, text in texts.items()
        for fmt in needed
        if fmt == "svg" or cid not in svg_only
    }
    found: dict[tuple[str, str], bytes] = {}
    for (cid, fmt), path in paths.items():
        if fmt in wanted or (cid, "png") not in found:
            content = _load_export(path, fmt)
            if content is not None:
                found[(cid, fmt)] = content
    # Charts with identical specs (the same picture on two pages) are rendered once.
    same: dict[str, list[str]] = {}
    for cid in sorted(texts):
        if any((cid, fmt) not in found for fmt in wanted if (cid, fmt) in paths):
            same.setdefault(texts[cid], []).append(cid)
    missing = [cids[0] for cids in same.values()]
    jobs = [
        (
            texts[cid],
            found[(cid, "svg")].decode("utf-8") if (cid, "svg") in found else None,
            "png" in wanted and (cid, "png") in paths and (cid, "png") not in found,
        )
        for cid in missing
    ]
    progress.start("rendering charts", sum((job[1] is None) + job[2] for job in jobs))
    under_way = _Jobs(jobs, [cid in system for cid in missing], progress, pool)
    return Renders(cache, texts, paths, found, wanted, same, missing, under_way)


def render_charts(
    specs: Mapping[str, JsonObject],
    formats: tuple[str, ...] = ("svg", "png"),
    cache: Path = DEFAULT_CACHE,
    progress: Progress = SILENT,
    svg_only: frozenset[str] = frozenset(),
    pool: Pool | None = None,
) -> dict[tuple[str, str], bytes]:
    """Static exports of each chart: ``(chart id, format) -> bytes`` (SVG text, 2x PNG).

    Every chart missing from the cache is one job (its SVG, then the PNG rasterised from
    it, except for the ids in ``svg_only``, e.g. phone renders); jobs run across the cores.
    Cached entries are checked on read, new ones stored as they arrive. ``progress`` counts
    the renders (an SVG and a PNG are one each); ``pool``: worker processes to use.
    """
    return start_renders(specs, formats, cache, progress, svg_only, pool).exports()


def unsafe_render(cache: Path, chart_id: str, reason: str) -> Problem:
    """A chart drawn just now that holds what no chart of ours can (:func:`svg_refusal`):
    its spec came from a chart template cached on disk that someone changed."""
    return Problem(
        shown_path(cache),
        "",
        "chart.unsafe-render",
        f"chart {chart_id} was drawn as an SVG holding {reason}, which is never published",
        f"the chart cache was changed: delete {shown_path(cache)} and build again",
    )


def _bundle_path(cache: Path) -> Path:
    return cache / _ENTRIES / f"vega-bundle-{_vl_version()}.js"


def cold(cache: Path) -> bool:
    """Whether ``cache`` holds nothing for this vl-convert version (a fresh cache or a new
    vl-convert: every chart will be rendered), judged by its Vega bundle entry."""
    return not _bundle_path(cache).is_file()


def _make_bundle() -> bytes:
    import vl_convert

    bundle: str = vl_convert.javascript_bundle()  # type: ignore[call-arg]  # stub: optional
    return bundle.encode("utf-8")


# The SHA-256 of the bundle each vl-convert version makes (constraints.txt pins the version;
# tests/test_chart_cache_forgery.py checks the entry of the installed one). The cached bundle
# is published only if it has this digest: making the bundle to compare with costs ~1.8 s,
# so a vl-convert missing here has its bundle made on every build (in a worker when one
# runs). On an upgrade, add the new version's digest (that test prints it).
BUNDLE_SHA256 = {
    "1.9.0.post1": "3425bd951a44d478d0505c6b5d1e8d57656b6e9a4da7bfe88a718ce61d76e572",
}


def _trusted_bundle(path: Path) -> bytes | None:
    """The cached bundle at ``path`` if it is byte for byte the one the installed vl-convert
    makes (its digest is in :data:`BUNDLE_SHA256`), else None; a cached bundle with another
    digest is dropped with a warning."""
    expected = BUNDLE_SHA256.get(_vl_version())
    content = _load(path)
    if content is None or expected is None:
        return None
    if hashlib.sha256(content).hexdigest() != expected:
        _drop(path, f"not the Vega bundle vl-convert {_vl_version()} makes")
        return None
    return content


def vega_bundle(cache: Path = DEFAULT_CACHE, pool: Pool | None = None) -> str:
    """The vega + vega-lite + vega-embed bundle shipped with vl-convert (one file), which
    every page loads: from the cache when it is the installed vl-convert's own (see
    :func:`_trusted_bundle`), from ``pool`` when one of its workers made it, else made
    here (~1.8 s)."""
    path = _bundle_path(cache)
    content = _trusted_bundle(path)
    if content is None:
        content = (pool.bundle() if pool is not None else None) or _make_bundle()
        _store(path, content)
    return content.decode("utf-8")
