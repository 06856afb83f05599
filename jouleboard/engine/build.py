"""The one build engine: ``build(inputs, out, state) -> (summary, state)`` is the only
path from inputs to an output folder. A cold build, a rebuild by the command line (whose
state is what the output folder's manifest records), ``jouleboard serve`` (whose state
stays in memory from edit to edit) and the tests' builds all go through it.

First the inputs digest (jouleboard/engine/fingerprint.py): when it is the output's last
build's, there is nothing to do, and nothing of the pipeline is imported (this module
imports only what that check needs). Otherwise jouleboard/engine/assemble.py runs the
stages: read (sources) -> plan (jouleboard/plan/) -> charts, downloads, pages
(jouleboard/engine/outputs.py, each product taken from the last build while its key is
the same: jouleboard/engine/fresh.py) -> commit (jouleboard/output/writer.py, the one
writer). Nothing is written before every input has been read and checked.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import NoReturn

from jouleboard.core.console import SILENT, VERBOSE, Progress
from jouleboard.engine.fingerprint import Listing, Seen, inputs_digest
from jouleboard.engine.kept import kept_file
from jouleboard.engine.kept_parts import KeptParts, parts_file
from jouleboard.engine.state import (
    EVERYTHING,
    NOTHING,
    BuildSummary,
    Changes,
    Inputs,
    Publish,
    State,
)
from jouleboard.loading import MEASUREMENTS_DIR
from jouleboard.output.folder import OutputFolder, output_folder
from jouleboard.output.writer import (
    clean_up_after_killed_builds,
    manifest_path,
    refuse_added_files,
    unchanged_build,
)
from jouleboard.render.chart_files import DEFAULT_CACHE, Pool, check_cache, cold, may_fork

__all__ = ["BuildSummary", "Inputs", "Publish", "build", "build_site", "find_project"]


def where_things_are(
    progress: Progress,
    data_dir: Path,
    project: Path,
    cache: Path,
    out: Path,
    runs: Sequence[Path] = (),
) -> None:
    """With -v: every folder a build reads or writes, in the order it looks in them."""
    if progress.level < VERBOSE:
        return
    from jouleboard.core.resources import content_dir
    from jouleboard.render.pages import template_dirs

    own = project / "content"
    rows = [
        ("data", str(data_dir.resolve())),
        *(("raw runs", str(Path(run).resolve())) for run in runs),
        ("site folder", str(project.resolve())),
        ("templates", " then ".join(str(p) for p in template_dirs(project))),
        (
            "content",
            " then ".join(dict.fromkeys(str(p) for p in (own, content_dir()) if p.is_dir())),
        ),
        ("chart cache", str(cache)),
        ("output", str(out)),
    ]
    for name, place in rows:
        progress.detail(f"{name:<14} {place}")


def build(
    inputs: Inputs,
    out: Path,
    state: State | None = None,
    *,
    changes: Changes = EVERYTHING,
    waiting: Callable[[], Sequence[str]] = lambda: (),
    publish: Publish | None = None,
    progress: Progress = SILENT,
    one_shot: bool = False,
) -> tuple[BuildSummary, State]:
    """Build ``inputs`` into ``out`` and return the summary and the state the next build
    starts from (``state`` itself, updated). On invalid data, or any warning when
    ``inputs.strict``, nothing is written and the exception propagates; the state then
    remembers ``changes`` for the next build.

    ``state``: what the last build left (None: a new one; the output folder's manifest
    then says which products are still fresh). ``changes``: which inputs changed since
    that build (serve knows; anything else: everything). ``waiting``: output paths a
    browser waits for; they are rendered first and given to ``publish`` with the files
    they use, before the whole site is committed. ``one_shot``: the process ends after
    this build (the command line), so a rebuild whose measurements changed readies a chart
    worker while the data loads.
    """
    state = state if state is not None else State()
    target = output_folder(
        out, data=inputs.data, project=inputs.project, cache=inputs.cache, runs=inputs.runs
    )
    # Refuse an unsafe --out before any work (and again, under its lock, at commit time).
    refuse_added_files(target.path, target.given)  # a CNAME put there by hand: not lost
    where_things_are(progress, inputs.data, inputs.project, inputs.cache, target.path, inputs.runs)
    started = time.perf_counter()
    if state.built is None or state.built.inputs != inputs:
        changes = EVERYTHING
    changes |= state.pending
    state.pending = changes
    with Pool() as pool:
        summary = _built(
            inputs, target, state, changes, started, pool, waiting, publish, progress, one_shot
        )
    state.pending = NOTHING
    return summary, state


def _built(
    inputs: Inputs,
    target: OutputFolder,
    state: State,
    changes: Changes,
    started: float,
    pool: Pool,
    waiting: Callable[[], Sequence[str]],
    publish: Publish | None,
    progress: Progress,
    one_shot: bool,
) -> BuildSummary:
    """:func:`build` from the inputs digest on, its chart workers in ``pool``."""
    # A rebuild into this output where a measurement file changed: a chart or two will
    # change too, so a worker gets ready while the rest loads. Not when nothing measured
    # changed (content, a failing file: no chart to draw), nor in a first build or one of
    # another data folder, whose charts are cached as a rule: a worker starts then if one
    # is needed. It draws the last build's charts of the kinds an edit redraws while it
    # waits.
    ready = None
    if one_shot and not cold(inputs.cache):
        ready = partial(_start_one_once, pool, inputs.cache, target.path)
    digest = None
    seen = Seen()
    if changes == EVERYTHING and not state.resident:  # serve knows what changed
        if ready is not None and may_fork():
            digest, seen = _digest_beside(inputs, target.path, ready)
        else:
            listed = _edits_listed(target.path, ready) if ready is not None else None
            digest = inputs_digest(
                inputs.data, inputs.project, inputs.runs, inputs.options(), seen, listed
            )
        last = unchanged_build(target.path, digest) if digest is not None else None
        if last is not None:
            clean_up_after_killed_builds(target.path)
            state.pending = NOTHING
            return BuildSummary(
                Path(target.given),
                pages=last.pages,
                files=last.files,
                bytes=last.bytes,
                linked=last.files,
                site_url=last.site_url,
                unchanged=True,
                timings={"check": time.perf_counter() - started},
            )
    # Something to do: only now the pipeline (data, plan, charts, templates) is imported,
    # once a chart worker that will be wanted is starting (~0.2 s of imports sooner).
    check_cache(inputs.cache)
    if cold(inputs.cache):  # every chart will be rendered: start the workers while loading
        pool.start(inputs.cache)
    if digest is not None:  # a new process: what an earlier one read and planned
        reads = state.measurements.recall(
            kept_file(inputs.cache, target.path),
            seen,
            ready,
            inputs.data / MEASUREMENTS_DIR,
        )
        state.parts = KeptParts(parts_file(inputs.cache, target.path), reads)
    from jouleboard.engine.assemble import assemble

    try:
        summary = assemble(
            inputs, target, state, changes, digest, seen, waiting, publish, progress, pool
        )
        if state.parts is not None:  # only a build that succeeded: every part is whole
            state.parts.keep()
    finally:  # after a failed build too: the fix is then the only file read again
        state.measurements.keep()
        if state.parts is not None:
            state.parts.discard()
            state.parts = None
    return summary


# The share of the data folder's measurement files that may have changed since the
# output's last build for its worker to start as soon as the input check has listed them:
# an edit or a few, not another data folder (every file new to this output).
EDITED_SHARE = 0.1


def _edits_listed(out: Path, ready: Callable[[], None]) -> Callable[[Listing], None]:
    """What the input check calls with the data folder's entries once it has listed them,
    before it reads one: ``ready()`` if a measurement file was written or changed (its
    modification or status change time) since the output's last build was committed, and
    not more than :data:`EDITED_SHARE` of them were (or just the one, in a small folder).
    The worker then starts during the check (~0.1 s sooner at 1,858 files). A file changed
    while the last build ran, or on a file system whose times say otherwise, is found by
    the reads that build kept, file by file
    (:meth:`~jouleboard.engine.state.MeasurementMemo.recall`), which call ``ready`` then."""
    try:
        since = manifest_path(out).stat().st_mtime_ns
    except OSError:  # no last build: its charts are rendered as a first build's are
        return lambda entries: None
    top = MEASUREMENTS_DIR + os.sep

    def listed(entries: Listing) -> None:
        times = [
            max(st.st_mtime_ns, st.st_ctime_ns)
            for _, relative, st in entries
            if relative.startswith(top) and relative.endswith(".json")
        ]
        if _few_edited(times, since):
            ready()

    return listed


def _few_edited(times: Sequence[int], since: int) -> bool:
    """Whether some of the files written at ``times`` (ns) were written at or after
    ``since`` (at the clock's tick a file written just after the commit can have its time),
    and not more than :data:`EDITED_SHARE` of them (or just the one, in a small folder)."""
    edited = sum(written >= since for written in times)
    return 0 < edited <= max(EDITED_SHARE * len(times), 1)


def _edited_since_last_build(out: Path, data: Path) -> bool:
    """:func:`_edits_listed`'s finding from a quick look at the measurement files alone
    (their status, unsorted, no other folder), for the forked child to say before it
    starts the input check, which first asks git, the fonts and the versions (~0.1 s)."""
    try:
        since = manifest_path(out).stat().st_mtime_ns
    except OSError:
        return False
    times = []
    for folder, dirs, names in os.walk(data / MEASUREMENTS_DIR):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        for name in names:
            if name.endswith(".json") and not name.startswith("."):
                try:
                    st = os.lstat(os.path.join(folder, name))
                except OSError:
                    continue
                times.append(max(st.st_mtime_ns, st.st_ctime_ns))
    return _few_edited(times, since)


def _digest_beside(inputs: Inputs, out: Path, ready: Callable[[], None]) -> tuple[str | None, Seen]:
    """:func:`inputs_digest` and what it saw, taken by a forked child while this process
    imports the pipeline. Once the child has found a measurement file edited since the
    output's last build (by the files' times, before its check starts:
    :func:`_edited_since_last_build`; else as its check lists them: :func:`_edits_listed`),
    a build is all but sure to follow: this process calls ``ready`` (a chart worker starts)
    and imports what the build runs (~0.25 s) on one core while the child reads and hashes
    the inputs (~0.15 s) on the other. With nothing found edited, nothing is imported before
    the digest decides, as in one process. If the child does not say (it failed, or was
    killed), the digest is taken here."""
    import pickle

    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        _digest_for_parent(inputs, out, read_end, write_end)
    os.close(write_end)
    try:
        with os.fdopen(read_end, "rb") as said:
            while (tag := said.read(1)) == b"R":
                ready()
                import jouleboard.engine.assemble  # noqa: F401  (while the child hashes)
            size = int.from_bytes(said.read(8), "big") if tag == b"D" else 0
            found = said.read(size) if size else b""
    finally:
        os.waitpid(child, 0)
    if size and len(found) == size:
        digest, seen = pickle.loads(found)  # from this process's own child, by its pipe
        return digest, seen
    seen = Seen()
    digest = inputs_digest(
        inputs.data, inputs.project, inputs.runs, inputs.options(), seen, _edits_listed(out, ready)
    )
    return digest, seen


def _digest_for_parent(inputs: Inputs, out: Path, read_end: int, write_end: int) -> NoReturn:
    """The forked child of :func:`_digest_beside`: ``R`` on the pipe once an edited
    measurement file is listed, then ``D``, the length and the pickled digest and what it
    saw; it ends without the parent's exit functions or its buffered output."""
    import pickle

    status = 1
    try:
        os.close(read_end)
        with os.fdopen(write_end, "wb") as pipe:
            told = False

            def tell() -> None:
                nonlocal told
                if not told:
                    told = True
                    pipe.write(b"R")
                    pipe.flush()

            if _edited_since_last_build(out, inputs.data):
                tell()
            seen = Seen()
            digest = inputs_digest(
                inputs.data,
                inputs.project,
                inputs.runs,
                inputs.options(),
                seen,
                _edits_listed(out, tell),
            )
            found = pickle.dumps((digest, seen), pickle.HIGHEST_PROTOCOL)
            pipe.write(b"D" + len(found).to_bytes(8, "big") + found)
        status = 0
    finally:  # (an error or Ctrl-C too: the parent takes the digest itself)
        os._exit(status)


def _start_one_once(pool: Pool, cache: Path, out: Path) -> None:
    """:func:`start_one`, unless a worker is already started."""
    if not pool.started:
        start_one(pool, cache, out)


# The charts an edited measurement redraws: its task's configurations, its model's Pareto.
WARM_KINDS = ("configurations", "pareto")


def start_one(pool: Pool, cache: Path, out: Path) -> None:
    """Start one chart worker for a rebuild into ``out``, then warm it with the static spec
    of the last build's first chart of each kind in :data:`WARM_KINDS`: a worker's first
    chart of a kind compiles its code (the first of an edit's four renders took 0.11-0.13
    s, the others 0.03-0.07 s), which it does while the build loads and plans if it is
    ready before the build's charts. The worker is started first: reading the specs takes
    about 0.03 s, and the worker's start is the path a rebuild waits on. A spec that is
    missing or odd is passed over: it only warms."""
    import json
    import os

    pool.start(cache, workers=1, fork=True)

    from jouleboard.core.jsonio import dumps_canonical
    from jouleboard.core.safe_read import FileRefused, read_capped
    from jouleboard.core.urls import Urls, chart_kind
    from jouleboard.render.charts import static, uncut

    folder = out / Path(Urls.chart("x", "vl.json")).parent
    try:
        names = sorted(name for name in os.listdir(folder) if name.endswith(".vl.json"))
    except OSError:
        names = []
    warm = []
    for kind in WARM_KINDS:
        name = next((n for n in names if chart_kind(n) == kind), None)
        try:
            spec = json.loads(read_capped(folder / name, SPEC_CAP)) if name else None
        except (FileRefused, ValueError):
            spec = None
        if isinstance(spec, dict):
            warm.append(dumps_canonical(uncut(static(spec))))
    pool.warm(warm)


SPEC_CAP = 8 * 1024 * 1024  # bytes of a chart's published spec read to warm a worker


def build_site(
    data_dir: Path,
    out: Path,
    base_url: str | None = None,
    project: Path | None = None,
    cache: Path = DEFAULT_CACHE,
    preview: bool = False,
    runs: Sequence[Path] = (),
    strict: bool = False,
    site_url: str | None = None,
    progress: Progress = SILENT,
    require_prometheus: bool = False,
    png: bool = False,
    one_shot: bool = False,
) -> BuildSummary:
    """:func:`build` with a new state, the options as keywords: the site from ``data_dir``
    (and raw ML.ENERGY run trees ``runs``) into ``out``. ``project`` is the site folder
    (default: see :func:`find_project`)."""
    inputs = Inputs(
        data_dir,
        project or find_project(data_dir),
        tuple(runs),
        cache,
        base_url,
        site_url,
        preview,
        strict,
        require_prometheus,
        png,
    )
    return build(inputs, out, progress=progress, one_shot=one_shot)[0]


def find_project(data_dir: Path) -> Path:
    """The site folder: the one holding the data folder. Its templates/ and content/, where
    present, override the packaged ones; nothing else is needed from it."""
    return data_dir.resolve().parent
