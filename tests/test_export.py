"""Chart exports (jouleboard/render/chart_files.py): SVGs depend on their spec alone, each
picture is rendered once, and PNGs are rasterised from the SVGs."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path

import pytest

from jouleboard.core.console import Progress
from jouleboard.core.jsonio import dumps_canonical
from jouleboard.engine.build import start_one
from jouleboard.render import chart_files
from jouleboard.render.chart_files import _CLIP_REF, Pool, _ready, render_charts, stable_ids
from jouleboard.render.charts import static
from tests.test_serve_robust import interruptible


def _bars(labels: list[str]) -> dict:
    """A clipped bar chart: vega gives it a clip path, numbered by a per-process counter."""
    return {
        "data": {"values": [{"v": i + 1, "k": k} for i, k in enumerate(labels)]},
        "mark": {"type": "bar", "clip": True},
        "encoding": {
            "x": {"field": "v", "type": "quantitative"},
            "y": {"field": "k", "type": "nominal"},
        },
    }


class _Counting(Progress):
    def __init__(self) -> None:
        super().__init__()
        self.totals: list[int] = []

    def start(self, what: str, total: int) -> None:
        self.totals.append(total)

    def advance(self, count: int = 1) -> None:
        pass


def test_a_charts_svg_does_not_depend_on_what_was_rendered_before(tmp_path: Path) -> None:
    first = render_charts({"a": _bars(["x", "y"])}, ("svg",), tmp_path / "one")
    render_charts({"b": _bars(["p", "q", "r"])}, ("svg",), tmp_path / "two")
    again = render_charts({"a": _bars(["x", "y"])}, ("svg",), tmp_path / "three")
    assert first == again
    assert re.findall(rb'id="(clip\d+)"', first[("a", "svg")]) == [b"clip1"]


def test_stable_ids_renumbers_clip_references_in_tags_only() -> None:
    svg = (
        '<g clip-path="url(#clip8)"><text>url(#clip8) id="clip9"</text>'
        '<g clip-path="url(#clip12)"/><defs><clipPath id="clip8"/>'
        '<clipPath id="clip12"/></defs></g>'
    )
    assert stable_ids(svg) == (
        '<g clip-path="url(#clip1)"><text>url(#clip8) id="clip9"</text>'
        '<g clip-path="url(#clip2)"/><defs><clipPath id="clip1"/>'
        '<clipPath id="clip2"/></defs></g>'
    )


def test_stable_ids_is_renumbering_inside_every_tag() -> None:
    """stable_ids looks only into the tags that hold a clip reference: on real renders and
    on near misses, the same as renumbering inside every tag (its definition)."""

    def inside_every_tag(svg: str) -> str:
        numbers: dict[str, str] = {}

        def renumber(match: re.Match[str]) -> str:
            return numbers.setdefault(match.group(0), str(len(numbers) + 1))

        return re.sub(r"<[^>]*>", lambda tag: _CLIP_REF.sub(renumber, tag.group(0)), svg)

    import vl_convert

    renders = [vl_convert.vegalite_to_svg(_bars(list("abc"[:n]))) for n in (1, 3, 2)]
    assert all('clip-path="url(#clip' in svg for svg in renders)
    points = {"data": {"values": [{"a": 1}]}, "mark": "point", "encoding": {"x": {"field": "a"}}}
    unclipped = vl_convert.vegalite_to_svg(json.dumps(points))
    assert "clip" not in unclipped  # most charts (stable_ids returns these without a scan)
    renders.append(unclipped)
    near = (
        '<g id="clipper" a="url(#clip)"><g id="clip3" clip-path="url(#clip3)"/>'
        '<text x="1">id="clip4" url(#clip4)</text><path d="M0" clip-path="url(#clip7)"/></g>'
    )
    for svg in [*renders, near]:
        assert stable_ids(svg) == inside_every_tag(svg)
    assert stable_ids(near).count("clip1") == 2 and stable_ids(near).count("clip2") == 1


def test_identical_specs_are_rendered_once_and_pngs_come_from_the_cache(tmp_path: Path) -> None:
    progress = _Counting()
    specs = {"one": _bars(["x"]), "twin": _bars(["x"]), "other": _bars(["y"])}
    exports = render_charts(specs, ("svg", "png"), tmp_path, progress)
    assert progress.totals == [4]  # two distinct pictures, an SVG and a PNG each
    assert exports[("one", "svg")] == exports[("twin", "svg")]
    assert exports[("one", "png")].startswith(b"\x89PNG")
    assert sorted(exports) == sorted((c, f) for c in specs for f in ("svg", "png"))
    progress = _Counting()
    assert render_charts(specs, ("svg", "png"), tmp_path, progress) == exports
    assert progress.totals == [0]


# A process that starts two chart workers, prints their pids and waits to be killed.
_KILLED_BUILD = """
import pathlib, sys, time
from jouleboard.render import chart_files
if __name__ == "__main__":
    chart_files._workers = lambda: 2
    chart_files._trusted_bundle = lambda path: b"cached"
    pool = chart_files.Pool()
    pool.start(pathlib.Path(sys.argv[1]), workers=1, fork=True)  # forked, as a rebuild's
    pool.widen()
    for future in [pool.submit(chart_files._ready) for _ in range(2)]:  # one spawned
        future.result()
    print(" ".join(map(str, pool.executor()._processes)), flush=True)
    time.sleep(600)
"""


def test_a_chart_worker_runs_at_a_lower_priority_than_its_build() -> None:
    """The build's own process is what every page waits on: a worker takes what it leaves."""
    with chart_files.Pool() as pool:
        niceness = pool.submit(os.nice, 0).result(timeout=120)
    assert niceness == os.nice(0) + chart_files.WORKER_NICENESS > os.nice(0)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"))


def test_chart_workers_end_when_their_build_is_killed(tmp_path: Path) -> None:
    """A build killed with kill -9 stops no one: its workers, the forked one a rebuild
    readies and a spawned one, see their parent gone and end."""
    script = tmp_path / "killed_build.py"  # a file: spawned workers re-import the main module
    script.write_text(_KILLED_BUILD)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path / "cache")],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},  # what the killed build leaves stays here
    )
    try:
        assert proc.stdout is not None
        workers = [int(pid) for pid in proc.stdout.readline().split()]
        assert len(workers) == 2 and all(_alive(pid) for pid in workers)
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 20
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in workers), "a worker outlived its killed build"


# Ctrl-C in a terminal goes to every process of the group: the build and its chart workers.
# Here the process starts two workers (one forked, as a rebuild readies it, one spawned),
# gives one a 60 s job, and presses Ctrl-C on its group.
_INTERRUPTED_BUILD = """
import os, pathlib, signal, sys, time
from jouleboard.render import chart_files
from jouleboard.render.chart_files import Pool, _ready
if __name__ == "__main__":
    chart_files._workers = lambda: 2
    chart_files._trusted_bundle = lambda path: b"cached"
    started = time.monotonic()
    try:
        with Pool() as pool:
            pool.start(pathlib.Path(sys.argv[1]), workers=1, fork=True)  # forked
            pool.widen()
            for future in [pool.submit(_ready) for _ in range(2)]:  # and one spawned
                future.result()
            assert len(pool.executor()._processes) == 2  # both have started and wait
            pool.submit(time.sleep, 60)
            time.sleep(0.5)  # the job is running
            os.killpg(os.getpgid(0), signal.SIGINT)
            time.sleep(60)
    except KeyboardInterrupt:
        print(f"interrupted, stopped in {time.monotonic() - started:.1f} s")
"""


def test_ctrl_c_stops_the_chart_workers_without_a_word_from_them(tmp_path: Path) -> None:
    """The workers ignore Ctrl-C (a worker it interrupted printed its traceback) and the
    build stops them itself, without waiting for their jobs (a cold build's Vega bundle
    took 1.4 s to finish after Ctrl-C)."""
    script = tmp_path / "interrupted_build.py"  # a file: spawned workers re-import it
    script.write_text(_INTERRUPTED_BUILD)
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "cache")],
        capture_output=True,
        text=True,
        timeout=120,
        start_new_session=True,  # its own process group: the Ctrl-C reaches no one else
        preexec_fn=interruptible,  # Ctrl-C as at a terminal, however pytest was started
    )
    assert done.stdout.startswith("interrupted, stopped in "), done.stdout + done.stderr
    assert float(done.stdout.split()[-2]) < 30, done.stdout  # the 60 s job was not awaited
    assert done.stderr == ""


@pytest.mark.parametrize("warm", [False, True])
def test_a_worker_that_only_started_is_stopped_not_awaited(warm: bool) -> None:
    """A rebuild starts a worker while it loads (Pool.start), in case a chart changed. When
    none did, the build ended when the worker had got ready and ended, ~0.3 s after its
    own work (a small site's rebuild: 0.85 s instead of 0.55). So it does when the worker
    was still warming with the last build's charts."""
    with Pool() as pool:
        if warm:
            pool.submit(chart_files._warm, [json.dumps(_bars(["a", "b"]))] * 50)
        else:
            pool.submit(_ready)
        workers = list(pool.executor()._processes.values())
    assert [w.exitcode for w in workers] == [-signal.SIGTERM]


def test_a_warming_worker_stops_once_the_build_hands_it_a_chart() -> None:
    """A rebuild's worker warms up on the last build's charts (Pool.start) only while it has
    nothing to draw: once the build has handed the workers a chart, that chart compiles the
    code the warm-up would, and each spec warmed after it only delays it (0.1-0.13 s). With
    no chart handed, it warms on every spec. (The chart is handed while the worker starts
    its renderer, ~0.4 s before it could begin warming.)"""
    specs = [json.dumps(_bars(["a", "b"]))] * 3
    with Pool() as pool:
        assert pool.submit(chart_files._warm, specs).result(timeout=120) == 3
    with Pool() as pool:
        warming = pool.submit(chart_files._warm, specs)
        chart = pool.submit(chart_files._render, (json.dumps(_bars(["c"])), None, False))
        assert warming.result(timeout=120) == 0
        svg, _ = chart.result(timeout=120)
        assert svg is not None and svg.startswith(b"<svg")


def test_a_rebuilds_worker_warms_with_the_last_builds_charts_an_edit_redraws(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker a rebuild readies renders, while the build loads, the static spec of the
    last build's first task scatter and first Pareto chart (by name): an edited measurement
    redraws one of each, and a worker's first chart of a kind compiles its code. The worker
    is started (forked) before the specs are read. A spec that is a link, not JSON or not an
    object is passed over, and never followed."""
    charts = tmp_path / "site" / "charts"
    charts.mkdir(parents=True)
    first, second = _bars(["a"]) | {"title": "first"}, _bars(["b"])
    (charts / "configurations--b.vl.json").write_text(json.dumps(second))
    (charts / "configurations--a.vl.json").write_text(json.dumps(first))
    (charts / "configurations--a.svg").write_text("<svg/>")
    (tmp_path / "elsewhere.json").write_text(json.dumps(second))
    (charts / "pareto--a--t.vl.json").symlink_to(tmp_path / "elsewhere.json")
    (charts / "pareto--b--t.vl.json").write_text(json.dumps(second))
    calls: list[tuple[object, ...]] = []
    pool = Pool()

    def start(cache: Path, workers: int | None = None, fork: bool = False) -> None:
        calls.append(("start", cache, workers, fork))

    def warm(specs: Sequence[str]) -> None:
        calls.append(("warm", list(specs)))

    monkeypatch.setattr(pool, "start", start)
    monkeypatch.setattr(pool, "warm", warm)
    started = ("start", tmp_path / "cache", 1, True)  # one worker, forked when it may be
    start_one(pool, tmp_path / "cache", tmp_path / "site")
    warmed = dumps_canonical(static(first))
    assert "title" not in warmed and calls == [started, ("warm", [warmed])]
    for odd in ("[1, 2]", "{not json"):
        (charts / "configurations--a.vl.json").write_text(odd)
        calls.clear()
        start_one(pool, tmp_path / "cache", tmp_path / "site")
        assert calls == [started, ("warm", [])]
    calls.clear()
    start_one(pool, tmp_path / "cache", tmp_path / "nothing-built")
    assert calls == [started, ("warm", [])]


def _submitted(pool: Pool, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The work ``pool`` is given from now on, in order; none of it runs."""
    submitted: list[object] = []

    def submit(work: object, *args: object) -> Future[object]:
        submitted.append(work)
        return Future()

    monkeypatch.setattr(pool, "submit", submit)
    return submitted


@pytest.mark.parametrize("bundle", [b"cached", None])
def test_a_readied_worker_warms_up_unless_it_makes_the_bundle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bundle: bytes | None
) -> None:
    """Pool.warm hands the readied worker the specs; when that worker makes the Vega bundle
    instead, the specs would start a second worker only to warm it: they are dropped."""
    monkeypatch.setattr(chart_files, "_trusted_bundle", lambda path: bundle)
    pool = Pool()
    submitted = _submitted(pool, monkeypatch)
    monkeypatch.setattr(Pool, "started", True)
    pool.start(tmp_path, workers=1)
    pool.warm(["{}"])
    if bundle is None:
        assert submitted == [chart_files._make_bundle]
    else:
        assert submitted == [_ready, chart_files._warm]


def test_a_worker_stopped_while_it_starts_leaves_nothing_in_the_temp_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker starts its renderer with a font configuration that hides the system's fonts.
    When that configuration was the worker's own temporary folder, a worker stopped while it
    started (as above) left its folder behind: 970 of them in this machine's /tmp."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the workers' temp folder
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # and this process's
    with Pool() as pool:
        pool.submit(_ready)
        (worker,) = pool.executor()._processes.values()
        maps = Path(f"/proc/{worker.pid}/maps")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (
            list(tmp_path.glob("jouleboard-fonts-*")) and "vl_convert" in maps.read_text()
        ):  # the old code made the folder in the worker, after vl-convert was loaded
            time.sleep(0.01)
        assert "vl_convert" in maps.read_text() and list(tmp_path.glob("jouleboard-fonts-*"))
    assert worker.exitcode == -signal.SIGTERM  # stopped, not ended by itself
    assert list(tmp_path.iterdir()) == []


def test_a_failed_build_still_awaits_the_job_a_worker_runs() -> None:
    """After a failure other than Ctrl-C, a job already running (a cold build's Vega bundle,
    cached when it is done) is finished, not cut short."""
    with contextlib.suppress(RuntimeError), Pool() as pool:
        job = pool.submit(time.sleep, 0.3)
        while not (job.running() or job.done()):  # a worker that died ends the wait too
            time.sleep(0.01)
        raise RuntimeError("the data is invalid")
    assert job.done() and not job.cancelled() and job.exception() is None


def test_a_pool_started_with_one_worker_keeps_one_until_widened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rebuild readies one worker while it loads (Pool.start with workers=1) for the few
    charts an edit redraws. The executor starts another worker at each job that finds none
    idle, so the edit's four renders started a second one, whose ~0.5 s start took a core
    from the build (an edit rebuild: 1.36-1.40 s, 1.23-1.26 s without it). Many renders
    widen the pool to every worker."""
    monkeypatch.setattr(chart_files, "_workers", lambda: 2)
    monkeypatch.setattr(chart_files, "_trusted_bundle", lambda path: b"cached")
    for widened in (False, True):
        with Pool() as pool:
            pool.start(tmp_path, workers=1)
            if widened:
                pool.widen()
            jobs = [pool.submit(time.sleep, 0.2) for _ in range(4)]  # the edit's renders
            assert len(pool.executor()._processes) == 1 + widened
            for job in jobs:
                job.result()


# A process with one thread readies one worker (as a rebuild does), widens the pool and hands
# it charts, eight at once (a job that finds an idle worker starts none), until a second
# worker has drawn one; then starts a pool as a cold build does. MARK tells the kinds of
# worker apart: a forked worker has this process's __main__, where the build set it; a
# spawned one imported the script again (as __mp_main__), where it has its first value.
_FORKED_THEN_SPAWNED = """
import json, os, pathlib, sys, threading, time
from jouleboard.render import chart_files
MARK = "imported again"
def draw(spec):
    svg, _ = chart_files._render((spec, None, False))
    time.sleep(0.2)  # long enough for the jobs to wait for a worker
    return MARK, os.getpid(), svg.decode()
if __name__ == "__main__":
    MARK = "the build's"
    chart_files._workers = lambda: 2
    chart_files._trusted_bundle = lambda path: b"cached"  # no bundle job
    spec = sys.argv[1]
    threads = threading.active_count()
    with chart_files.Pool() as pool:
        pool.start(pathlib.Path(sys.argv[2]), workers=1, fork=True)
        drawn = [pool.submit(draw, spec).result(timeout=120)]
        pool.widen()
        deadline = time.monotonic() + 120
        while len({pid for _, pid, _ in drawn}) < 2 and time.monotonic() < deadline:
            jobs = [pool.submit(draw, spec) for _ in range(8)]
            drawn += [job.result(timeout=120) for job in jobs]
    with chart_files.Pool() as pool:  # a cold build's
        pool.start(pathlib.Path(sys.argv[2]))
        cold = pool.submit(draw, spec).result(timeout=120)
    print(json.dumps({"threads": threads, "drawn": drawn, "cold": cold}))
"""


def _rebuild_script(tmp_path: Path, text: str, argument: str) -> str:
    """What ``text``, run as a script with ``argument`` and a chart cache in ``tmp_path``,
    prints (it must succeed). A file: a spawned worker imports its main module again."""
    script = tmp_path / "rebuild.py"
    script.write_text(text)
    done = subprocess.run(
        [sys.executable, str(script), argument, str(tmp_path / "cache")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_rebuilds_worker_is_forked_and_the_workers_added_later_are_spawned(
    tmp_path: Path,
) -> None:
    """A rebuild's one worker is forked from a process with no other thread: it needs no new
    interpreter and no imports of what the build has loaded (about 0.15 s of CPU sooner).
    Once the pool's own thread runs, forking is unsafe: the workers a widened pool adds are
    spawned, as a cold build's are. Both kinds draw a chart byte for byte alike."""
    spec = dumps_canonical(_bars(["a", "b", "c"]))
    said = json.loads(_rebuild_script(tmp_path, _FORKED_THEN_SPAWNED, spec))
    assert said["threads"] == 1
    drawn = said["drawn"]
    first_pid = drawn[0][1]
    assert drawn[0][0] == "the build's"  # forked
    assert {mark for mark, pid, _ in drawn if pid != first_pid} == {"imported again"}  # spawned
    assert said["cold"][0] == "imported again"
    svgs = {svg for _, _, svg in [*drawn, said["cold"]]}
    assert len(svgs) == 1 and drawn[0][2].startswith("<svg")


# A rebuild's pool in a process that has started a thread, or vl-convert's engine, or
# neither: the worker reports which __main__ it has (see _FORKED_THEN_SPAWNED).
_FORK_REFUSED = """
import pathlib, sys, threading, time
from jouleboard.render import chart_files, compiled
MARK = "imported again"
def mark():
    return MARK
if __name__ == "__main__":
    MARK = "the build's"
    chart_files._trusted_bundle = lambda path: b"cached"  # no bundle job
    if sys.argv[1] == "thread":
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
    elif sys.argv[1] == "vl_convert":
        import vl_convert
        vl_convert.vegalite_to_svg('{"mark": "point"}', **compiled.fetching_nothing())
    with chart_files.Pool() as pool:
        pool.start(pathlib.Path(sys.argv[2]), workers=1, fork=True)
        print(pool.submit(mark).result(timeout=120))
"""


@pytest.mark.parametrize(
    ("before", "worker"),
    [("nothing", "the build's"), ("thread", "imported again"), ("vl_convert", "imported again")],
)
def test_a_rebuilds_worker_is_spawned_after_a_thread_or_vl_convert_started(
    tmp_path: Path, before: str, worker: str
) -> None:
    """Asked to fork, a pool still spawns its worker when the process runs another thread
    or has started vl-convert's engine (whose threads Python does not see): a forked child
    could find a lock taken that no thread of its own gives back, and hang."""
    assert _rebuild_script(tmp_path, _FORK_REFUSED, before).strip() == worker


def test_no_worker_is_forked_from_a_process_with_threads_or_vl_convert(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A child forked from a process with another thread may find a lock taken that no
    thread of its own gives back; vl-convert's engine runs threads Python does not see."""
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr("threading.active_count", lambda: 1)
    monkeypatch.delitem(sys.modules, "vl_convert", raising=False)
    assert chart_files.may_fork()
    monkeypatch.setattr("threading.active_count", lambda: 2)
    assert not chart_files.may_fork()
    monkeypatch.setattr("threading.active_count", lambda: 1)
    monkeypatch.setitem(sys.modules, "vl_convert", object())
    assert not chart_files.may_fork()
    monkeypatch.delitem(sys.modules, "vl_convert")
    monkeypatch.setattr(sys, "platform", "darwin")
    assert not chart_files.may_fork()


def test_a_pool_started_small_grows_by_one_while_it_makes_the_bundle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the cache lacks the Vega bundle, the one worker a rebuild readies makes it
    (~1.8 s): the renders get a worker of their own rather than wait behind it."""
    monkeypatch.setattr(chart_files, "_workers", lambda: 4)
    monkeypatch.setattr(chart_files, "_trusted_bundle", lambda path: None)
    pool = Pool()
    submitted = _submitted(pool, monkeypatch)
    pool.start(tmp_path, workers=1)
    assert submitted == [chart_files._make_bundle]  # the bundle, no other worker readied
    assert pool._size == 2
