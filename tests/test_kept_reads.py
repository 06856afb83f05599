"""Measurement files read by an earlier process are kept for the next build into the same
output (jouleboard/engine/kept.py): a new process after one edited file parses that file
alone, and its site equals a clean build; anything the kept reads depend on besides a
file's bytes (the code, the working folder, the kinds) and any kept file that is damaged or
not this user's alone makes the build read everything again."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import random
import shutil
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from jouleboard.config.registry import load_registry
from jouleboard.core.problems import ValidationFailed
from jouleboard.core.resources import templates_dir
from jouleboard.engine import assemble, fingerprint, kept
from jouleboard.engine import build as engine_build
from jouleboard.engine.build import build_site
from jouleboard.engine.fingerprint import Seen
from jouleboard.engine.fresh import chart_ids
from jouleboard.engine.state import KeptReads
from jouleboard.kinds import registered
from jouleboard.loading import dataset
from jouleboard.render import chart_files
from tests.golden.tree import DATA, REPO, tree
from tests.sitebuild import copy_chart_cache
from tests.speech_kind import SpeechKind

FILES = len(list((DATA / "measurements").rglob("*.json")))


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, golden_site: Path) -> Path:
    """A site folder with the golden data, and a chart cache of its own that holds the
    charts (the run's, rendered for the shared golden site) but no kept reads."""
    root = tmp_path / "project"
    shutil.copytree(DATA, root / "data")
    copy_chart_cache(root / "cache", link=True)
    monkeypatch.chdir(root)  # messages name files relative to it: part of the basis
    return root


def build(project: Path, out: str = "site") -> None:
    """A command-line build: a new state each time, as a new process has; a chart cache of
    the test's own, which nothing else builds into."""
    build_site(project / "data", project / out, project=project, cache=project / "cache")


def kept_path(project: Path, out: str = "site") -> Path:
    return kept.kept_file(project / "cache", project / out)


def edit_one(project: Path, factor: float = 1.001) -> Path:
    path = sorted((project / "data" / "measurements").rglob("*.json"))[0]
    doc = json.loads(path.read_text())
    doc["metrics"]["median_itl_ms"] *= factor
    path.write_text(json.dumps(doc))
    return path


def test_after_one_edit_only_that_file_is_parsed_and_the_site_is_a_clean_build(
    project: Path, parsed: list[Path]
) -> None:
    build(project)
    assert len(parsed) == FILES  # the first build reads everything
    edited = edit_one(project)
    parsed.clear()
    build(project)
    assert parsed == [edited]
    build(project, "clean")  # another output: nothing kept for it
    assert len(parsed) == 1 + FILES
    assert tree(project / "site") == tree(project / "clean")


@pytest.fixture()
def started(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """The ``workers`` of every Pool.start call: a chart worker readied early is one (1)."""
    calls: list[int | None] = []
    real = chart_files.Pool.start

    def recording(
        pool: chart_files.Pool, cache: Path, workers: int | None = None, fork: bool = False
    ) -> None:
        calls.append(workers)
        real(pool, cache, workers, fork)

    monkeypatch.setattr(chart_files.Pool, "start", recording)
    return calls


def one_shot(project: Path, out: str, data: str = "data") -> None:
    """A command-line build (``one_shot``) of ``data`` into ``out``, the project's cache."""
    cache = project / "cache"
    build_site(project / data, project / out, project=project, cache=cache, one_shot=True)


def test_a_chart_worker_is_readied_early_only_for_a_rebuild_whose_measurements_changed(
    project: Path, monkeypatch: pytest.MonkeyPatch, started: list[int | None]
) -> None:
    """A command-line build whose chart cache is warm starts a chart worker while it loads
    only in a rebuild (an earlier build into the same output kept its reads) that finds a
    measurement file edited, new or gone, as soon as its input check has seen the data
    folder: its charts change (a new file that then fails to parse has started one too, and
    the failed build stops it). Not for a change no chart is drawn from (a template), nor in
    a first build into a new output, which finds its charts cached as a rule and renders
    what it does not find without that worker, to the same site."""
    renders: list[int] = []  # render jobs, per call

    class Counting(chart_files._Jobs):
        def __init__(self, jobs: list[tuple[str, str | None, bool]], *args: Any) -> None:
            renders.append(len(jobs))
            super().__init__(jobs, *args)

    monkeypatch.setattr(chart_files, "_Jobs", Counting)
    one_shot(project, "site")
    assert started == []  # a first build
    edit_one(project)
    one_shot(project, "site")
    assert started == [1]  # a rebuild with an edited file
    (project / "templates").mkdir()  # a site template changed, no measurement
    text = (templates_dir() / "base.html").read_text(encoding="utf-8")
    (project / "templates" / "base.html").write_text(text.replace("</head>", "<!--x--></head>"))
    renders.clear()
    one_shot(project, "site")
    assert (started, sum(renders)) == ([1], 0)
    broken = project / "data" / "measurements" / "broken.json"
    broken.write_text("{")
    with pytest.raises(ValidationFailed):
        one_shot(project, "site")
    assert started == [1, 1]
    broken.unlink()
    gone = sorted((project / "data" / "measurements").rglob("*.json"))[-1]
    gone.unlink()
    one_shot(project, "site")
    assert started == [1, 1, 1]  # a file gone: its points leave the charts
    edit_one(project)
    renders.clear()
    one_shot(project, "new")
    assert started == [1, 1, 1]
    assert sum(renders) > 0  # the edit changed charts: rendered without an early worker
    one_shot(project, "site")
    assert started == [1, 1, 1, 1]
    assert tree(project / "new") == tree(project / "site")


def test_a_new_measurement_readies_the_worker_before_it_is_parsed(
    project: Path, monkeypatch: pytest.MonkeyPatch, parsed: list[Path]
) -> None:
    """A new measurement file (a new load level of a configuration) starts the rebuild's
    chart worker as soon as the input check has seen it, not once the load reaches it: the
    worker's start (~0.6 s) overlaps the whole load. The site is a clean build's."""
    events: list[str] = []
    real = chart_files.Pool.start

    def start(pool: chart_files.Pool, *args: Any, **kwargs: Any) -> None:
        events.append("start")
        real(pool, *args, **kwargs)

    monkeypatch.setattr(chart_files.Pool, "start", start)
    one_shot(project, "site")
    source = next(
        p
        for p in sorted((project / "data" / "measurements").rglob("*.json"))
        if "max_num_seqs" in json.loads(p.read_text()).get("serving", {})
    )
    doc = json.loads(source.read_text())
    doc["serving"]["max_num_seqs"] = 5000  # a load level no golden file has
    added = source.with_name("added-seqs5000.json")
    added.write_text(json.dumps(doc))
    parsed.clear()
    real_parse = KeptReads._parse

    def parse(reads: KeptReads, path: Path, *args: Any) -> Any:
        events.append(f"parse {path.name}")
        return real_parse(reads, path, *args)

    monkeypatch.setattr(KeptReads, "_parse", parse)
    one_shot(project, "site")
    assert events == ["start", "parse added-seqs5000.json"]
    one_shot(project, "clean")
    assert tree(project / "site") == tree(project / "clean")


def test_no_worker_is_readied_for_another_data_folder_built_into_the_output(
    project: Path, started: list[int | None]
) -> None:
    """Two data folders built into one output in turn (a branch's, or a switch between data
    sets): none of the files the last build read is among the next one's inputs, so the
    next one is no edit and finds its charts cached as a rule, as a first build does. No
    worker is readied, and the site is a clean build of the folder built last; an edit in
    that folder still readies one."""
    shutil.copytree(project / "data", project / "b" / "data")
    edit_one(project / "b")  # the other folder: the same data but for one measurement
    one_shot(project, "site")
    one_shot(project, "site", "b/data")
    one_shot(project, "site")
    assert started == []
    one_shot(project, "clean")
    assert tree(project / "site") == tree(project / "clean")
    edit_one(project)
    one_shot(project, "site")
    assert started == [1]


def test_pages_that_show_no_redrawn_chart_are_made_while_the_worker_draws(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rebuild after one edit gives its charts to the worker it readied, then makes the
    downloads and the pages that show none of those charts while the worker draws them;
    a page that shows one is made as soon as every redrawn chart it shows is drawn. The
    site is a clean build's."""
    from jouleboard.engine import assemble, outputs
    from jouleboard.render.pages import render_page

    events: list[tuple[str, Any]] = []
    real_submit = chart_files.Pool.submit

    def submit(pool: chart_files.Pool, work: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        if work is chart_files._render:
            events.append(("render", None))
        return real_submit(pool, work, *args, **kw)

    real_make = outputs._Maker._make

    def make(maker: outputs._Maker, chart: Any, *args: Any) -> None:
        events.append(("drawn", chart.id))
        real_make(maker, chart, *args)

    def page(env: Any, view: Any, *args: Any) -> str:
        events.append(("page", chart_ids(view.body)))
        return render_page(env, view, *args)

    monkeypatch.setattr(chart_files.Pool, "submit", submit)
    monkeypatch.setattr(outputs._Maker, "_make", make)
    monkeypatch.setattr(assemble, "render_page", page)

    def one_shot(out: str) -> None:
        data, cache = project / "data", project / "cache"
        build_site(data, project / out, project=project, cache=cache, one_shot=True)

    one_shot("site")
    edit_one(project, 1 + random.Random().uniform(1e-4, 1e-3))  # charts no cache holds
    events.clear()
    one_shot("site")
    kinds = [kind for kind, _ in events]
    first = kinds.index("drawn")
    assert "render" in kinds[:first]
    redrawn = {cid for kind, cid in events if kind == "drawn"}
    before = [shown for kind, shown in events[kinds.index("render") : first] if kind == "page"]
    assert before and not any(shown & redrawn for shown in before)
    drawn: set[str] = set()
    after = []
    for kind, value in events[first:]:
        if kind == "drawn":
            drawn.add(value)
        elif kind == "page" and value & redrawn:
            assert value & redrawn <= drawn  # every redrawn chart it shows is drawn
            after.append(value)
    assert after  # the edit changed pages of both sorts
    last = len(kinds) - 1 - kinds[::-1].index("drawn")
    assert (
        len(redrawn) > 1
        and any(  # made while the worker drew the rest
            kind == "page" and value & redrawn for kind, value in events[first:last]
        )
    )
    build(project, "clean")
    assert tree(project / "site") == tree(project / "clean")


def test_nothing_changed_in_the_data_parses_nothing(project: Path, parsed: list[Path]) -> None:
    build(project)
    (project / "templates").mkdir()  # a site template: a build, with the same data
    text = (templates_dir() / "base.html").read_text(encoding="utf-8")
    (project / "templates" / "base.html").write_text(text.replace("</head>", "<!--x--></head>"))
    parsed.clear()
    build(project)
    assert parsed == []
    assert "<!--x-->" in (project / "site" / "index.html").read_text(encoding="utf-8")


def test_another_working_folder_reads_everything(
    project: Path, parsed: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    build(project)
    edit_one(project)
    monkeypatch.chdir(project / "data")
    parsed.clear()
    build(project)
    assert len(parsed) == FILES


def test_a_failed_build_keeps_its_reads_and_says_the_same_again(
    project: Path, parsed: list[Path]
) -> None:
    broken = sorted((project / "data" / "measurements").rglob("*.json"))[-1]
    broken.write_text('{"serving": ')
    messages = []
    for _ in range(2):
        with pytest.raises(ValidationFailed) as failed:
            build(project)
        messages.append([str(p) for p in failed.value.problems])
    assert messages[0] == messages[1] and str(broken.relative_to(project)) in messages[0][0]
    assert len(parsed) == FILES  # the second build parsed nothing


def damage(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))


def writable_by_others(path: Path) -> None:
    path.chmod(0o666)


def a_link(path: Path) -> None:
    target = path.with_name("elsewhere")
    path.rename(target)
    path.symlink_to(target)


@pytest.mark.parametrize("spoil", [damage, writable_by_others, a_link])
def test_a_kept_file_that_cannot_be_trusted_is_not_read(
    project: Path, parsed: list[Path], spoil: Callable[[Path], None]
) -> None:
    build(project)
    spoil(kept_path(project))
    edit_one(project)
    parsed.clear()
    build(project)
    assert len(parsed) == FILES
    build(project, "clean")
    assert tree(project / "site") == tree(project / "clean")


def test_a_file_changed_after_the_digest_is_kept_under_the_bytes_parsed(
    tmp_path: Path,
) -> None:
    """The inputs digest hashed one content; the file then changed before it was parsed.
    What is kept is keyed by the bytes parsed, so the first content never maps to the
    second's parse."""
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    path = sorted((data / "measurements").rglob("*.json"))[0]
    first = path.read_bytes()
    seen = Seen({os.path.abspath(path): hashlib.sha256(first).digest()}, code="c")
    doc = json.loads(first)
    doc["metrics"]["median_itl_ms"] *= 2
    path.write_text(json.dumps(doc))  # after the digest, before the read
    reads = KeptReads(tmp_path / "kept", seen)
    file = reads.read(path, data.resolve(), registered())
    registry, _ = load_registry(data)
    assert registry is not None
    record, problems = reads.check(file, registry)
    reads.keep()
    sha, kept_file, checked = kept.recall(tmp_path / "kept")[1][os.path.abspath(path)]
    assert sha == hashlib.sha256(path.read_bytes()).digest() != seen.files[os.path.abspath(path)]
    assert kept_file == kept.pickled(file)  # what the new bytes parsed to
    # Its inter-token latency doubled, it fails its check: no record is kept for it.
    assert record is None and problems and checked == b""
    assert file == dataset.read_measurement(path, data.resolve(), registered())  # the new bytes


def test_kinds_from_outside_the_package_keep_nothing(tmp_path: Path) -> None:
    known = registered()
    assert kept.basis("code", tmp_path, known) != ""
    assert kept.basis("code", tmp_path, known.with_kind(SpeechKind())) == ""
    assert kept.basis("code", tmp_path, known) != kept.basis("other code", tmp_path, known)


def test_only_the_last_outputs_built_keep_their_reads(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kept, "_OUTPUTS", 2)  # the rule, with fewer builds than 8
    outs = [f"site{i}" for i in range(4)]
    for i, out in enumerate(outs):
        build(project, out)
        os.utime(kept_path(project, out), ns=(i * 10**9, i * 10**9))  # in build order
    kept_now = sorted(kept_path(project, outs[0]).parent.glob("*.reads"))
    assert kept_now == sorted(kept_path(project, out) for out in outs[-2:])


def _alive(*kinds: type, besides: frozenset[int] = frozenset()) -> int:
    """Objects of ``kinds`` alive now, but those whose ids are ``besides``."""
    return len(_held(*kinds) - besides)


def _held(*kinds: type) -> frozenset[int]:
    """The ids of the objects of ``kinds`` alive now: those held before a build are another
    test's (conftest's session-wide data/, say) and stay alive, so their ids stay theirs."""
    gc.collect()
    return frozenset(id(o) for o in gc.get_objects() if type(o) in kinds)


@pytest.fixture
def _heap_set_aside() -> Iterator[None]:
    """What the worker holds when the test starts, moved out of the collector's sight
    (``gc.freeze``) until it ends: :func:`_held` then collects and walks only what the test
    made, and every object made later is still seen (the resident case counts them). In a
    whole run this test took 4.8-4.9 s, against about 1 s alone: a worker then holds other
    tests' sites and data, and each of the test's four walks went over all of it (with 6
    million objects made first: 5.0-5.8 s, and 0.4-0.6 s set aside). Garbage among them is
    not collected first (a walk of its own): it is set aside with the rest until the end."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@pytest.mark.usefixtures("_heap_set_aside")
@pytest.mark.parametrize("case", ["kept", "nothing kept", "resident"])
def test_a_command_line_build_lets_go_of_what_it_no_longer_needs(
    project: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """A command-line build keeps what it parsed on disk for the next process and lets it
    go once its data is loaded, and the records once its plan (which holds none) is made,
    so it plans without the parsed files and renders without either; serve (a resident
    state) holds both for its next edit. A build that keeps nothing for the next process
    (a kind named by import path is code its inputs digest cannot see) parses every file
    through the state's own memo, and lets that go just the same."""
    from jouleboard.engine import assemble
    from jouleboard.engine.build import build as build_with
    from jouleboard.engine.state import Inputs, State
    from jouleboard.kinds.diffusion import DiffusionConfiguration
    from jouleboard.kinds.token_records import Configuration

    resident = case == "resident"
    if case == "nothing kept":
        monkeypatch.setenv("JOULEBOARD_ALLOW_KIND_CODE", "1")
        with (project / "data" / "site.yaml").open("a", encoding="utf-8") as site_yaml:
            site_yaml.write("kinds:\n  - tests.speech_kind:SpeechKind\n")
        assert fingerprint.inputs_digest(project / "data", project, (), {}) is None
    planning: list[int] = []
    rendering: list[int] = []
    plan, render = assemble.plan_site, assemble.render_page
    records = (Configuration, DiffusionConfiguration)
    files_before, records_before = _held(dataset.MeasurementFile), _held(*records)

    def counting_plan(*args: object) -> object:
        planning.append(_alive(dataset.MeasurementFile, besides=files_before))
        return plan(*args)  # type: ignore[arg-type]

    def counting_render(*args: object) -> str:
        if not rendering:
            rendering.append(_alive(*records, besides=records_before))
        return render(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(assemble, "plan_site", counting_plan)
    monkeypatch.setattr(assemble, "render_page", counting_render)
    inputs = Inputs(project / "data", project, (), project / "cache")
    build_with(inputs, project / "site", State(resident=resident))
    assert planning == [FILES if resident else 0]
    assert rendering[0] > 20 if resident else rendering == [0]  # (25: repeats are folded)
    if case == "kept":  # what the build let go is on disk for the next process
        assert len(kept.recall(kept_path(project))[1]) == FILES
    else:
        assert not kept_path(project).exists()
    build(project, "clean")
    assert tree(project / "site") == tree(project / "clean")


def test_no_load_holds_every_parsed_file_at_once(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A parsed file takes about six times its pickle's memory: the kept reads hold each
    pickled (and the next build unpickles each as it uses it), so neither the build that
    parses every file nor the next one, which takes them from the kept reads, holds more
    than the file in hand. (Each parsed file is followed by a weak reference: a file no
    longer held goes at once, it holds no cycle.)"""
    held = [0]  # parsed files alive

    def follow(file: dataset.MeasurementFile) -> None:
        held[0] += 1
        weakref.finalize(file, lambda: held.__setitem__(0, held[0] - 1))

    parse, unpickle, check = dataset.read_measurement, kept.unpickled, dataset.check_file
    alive: list[int] = []

    def parsing(*args: object, **kwargs: object) -> dataset.MeasurementFile:
        file = parse(*args, **kwargs)  # type: ignore[arg-type]
        follow(file)
        return file

    def unpickling(data: bytes) -> dataset.MeasurementFile | None:
        file = unpickle(data)
        if file is not None:
            follow(file)
        return file

    def checking(file: dataset.MeasurementFile, registry: object) -> object:
        alive.append(held[0])
        return check(file, registry)  # type: ignore[arg-type]

    monkeypatch.setattr(dataset, "read_measurement", parsing)
    monkeypatch.setattr(kept, "unpickled", unpickling)
    monkeypatch.setattr(dataset, "check_file", checking)
    build(project)  # parses every file
    edit_one(project)
    build(project)  # takes every other file, and its record, from the kept reads
    assert len(alive) == FILES + 1  # the others' records were kept from the first build's check
    assert max(alive) <= 2


def test_each_read_is_on_disk_as_soon_as_it_is_parsed(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kept reads are written as the files are read, never held until the load ends
    (at 100,000 configurations ~250 MB, and as much again to pickle them as one): when a
    file is parsed, the pickles of the files before it are in the file being written, but
    for what the writer's buffer holds."""
    written: list[tuple[int, int]] = []  # (pickled bytes so far, the file being written's size)
    so_far = 0
    real = kept.pickled

    def measuring(file: dataset.MeasurementFile) -> bytes:
        nonlocal so_far
        parts = list((project / "cache" / kept.FOLDER).glob(".*.part"))
        assert len(parts) == 1, parts  # one build, one file being written
        written.append((so_far, parts[0].stat().st_size))
        data = real(file)
        so_far += len(data)
        return data

    monkeypatch.setattr(kept, "pickled", measuring)
    # The writer's buffer (1 MiB) holds more than the golden data keeps in all: at 8 KiB,
    # what it holds shows against the few files here.
    assert kept._BUFFER <= 1024 * 1024
    monkeypatch.setattr(kept, "_BUFFER", 8192)
    build(project)
    assert len(written) == FILES and written[-1][0] > 50_000
    # Flushed but for the writer's buffer, never the whole load's.
    assert all(size >= pickled - 2 * 8192 for pickled, size in written), written
    reads = kept.recall(kept_path(project))[1]
    assert sorted(reads) == sorted(
        os.path.abspath(p) for p in (project / "data" / "measurements").rglob("*.json")
    )
    assert not list((project / "cache" / kept.FOLDER).glob(".*.part"))


def test_a_killed_builds_unfinished_file_goes_once_it_is_a_day_old(project: Path) -> None:
    """kill -9 during a load leaves the kept file it was writing; the next build that keeps
    its reads deletes such a file once it is a day old (a younger one may be another build's,
    still being written)."""
    folder = project / "cache" / kept.FOLDER
    folder.mkdir(parents=True)
    old, young = folder / ".killed.part", folder / ".running.part"
    for part in (old, young):
        part.write_bytes(b"partial")
    day = 24 * 3600
    os.utime(old, (old.stat().st_atime - day - 60, old.stat().st_mtime - day - 60))
    build(project)
    assert not old.exists() and young.exists()
    assert len(kept.recall(kept_path(project))[1]) == FILES


@pytest.fixture()
def checked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The source of every measurement file checked against the registries, in order."""
    seen: list[str] = []
    real = dataset.check_file

    def counting(file: dataset.MeasurementFile, registry: Any) -> Any:
        seen.append(file.source)
        return real(file, registry)

    monkeypatch.setattr(dataset, "check_file", counting)
    return seen


def test_a_file_is_checked_again_only_when_it_or_the_registries_changed(
    project: Path, checked: list[str]
) -> None:
    """Each kept file keeps its record as checked against the registries, keyed by them: a
    new process after one edit checks that file alone; after a registry edit, every file
    again (and keeps their records for the next); and the site is a clean build's."""
    build(project)
    assert len(checked) == FILES
    source = edit_one(project).relative_to((project / "data").resolve()).as_posix()
    checked.clear()
    build(project)
    assert checked == [source]
    models = project / "data" / "models.yaml"
    text = models.read_text(encoding="utf-8")
    models.write_text(text.replace("description_md: ", "description_md: Edited. ", 1))
    checked.clear()
    build(project)
    assert len(checked) == FILES
    edit_one(project, 1.002)
    checked.clear()
    build(project)
    assert checked == [source]
    build(project, "clean")
    assert tree(project / "site") == tree(project / "clean")


def test_a_kept_record_of_other_registries_with_a_damaged_pickle_parses_the_file(
    tmp_path: Path,
) -> None:
    """The registries changed since a file's record was kept, and the file's own pickle
    cannot be made: the file is parsed from its bytes and checked, never dropped."""
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    path = sorted((data / "measurements").rglob("*.json"))[0]
    where = os.path.abspath(path)
    seen = Seen({where: hashlib.sha256(path.read_bytes()).digest()}, code="c")
    registry, _ = load_registry(data)
    assert registry is not None
    first = KeptReads(tmp_path / "kept", seen)
    first.check(first.read(path, data.resolve(), registered()), registry)
    first.keep()
    basis, reads = kept.recall(tmp_path / "kept")
    sha, _, checked = reads[where]
    assert kept.unchecked(checked) is not None
    forged = kept.Writer(tmp_path / "kept", basis)
    forged.add(where, sha, b"not a pickle", checked)
    forged.commit()
    models = data / "models.yaml"
    models.write_text(
        models.read_text(encoding="utf-8").replace("description_md: ", "description_md: X. ", 1),
        encoding="utf-8",
    )
    other, _ = load_registry(data)
    assert other is not None and other != registry
    again = KeptReads(tmp_path / "kept", seen)
    got = again.check(again.read(path, data.resolve(), registered()), other)
    fresh = dataset.check_file(dataset.read_measurement(path, data.resolve(), registered()), other)
    assert got == fresh and got[0] is not None


def calls_to(monkeypatch: pytest.MonkeyPatch, name: str) -> list[Path]:
    """The data folders ``dataset.<name>`` is called with from now on, in order (it still
    runs)."""
    calls: list[Path] = []
    real = getattr(dataset, name)

    def counting(data_dir: Path, *args: Any) -> Any:
        calls.append(data_dir)
        return real(data_dir, *args)

    monkeypatch.setattr(dataset, name, counting)
    return calls


def test_the_registries_are_loaded_again_only_when_a_file_beside_the_measurements_changed(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new process takes the registries an earlier one loaded while every file of the data
    folder but the measurements is the same: an edited measurement loads none; an edited
    models.yaml or quality file loads them again; the site is a clean build's."""
    loaded = calls_to(monkeypatch, "load_registry")
    build(project)
    assert len(loaded) == 1
    edit_one(project)
    build(project)
    assert len(loaded) == 1
    for loads, name in enumerate(("models.yaml", "quality/gpqa.yaml"), start=2):
        path = project / "data" / name
        path.write_text(path.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
        build(project)
        assert len(loaded) == loads, name
    build(project, "clean")
    assert tree(project / "site") == tree(project / "clean")


def test_the_mlperf_results_are_read_again_only_when_a_file_beside_the_measurements_changed(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new process takes the MLPerf results an earlier one read and checked, under the
    registries' rule: an edited measurement reads none; an edited result, or a registry its
    check reads, reads them again; a damaged kept file reads them again; the site is a clean
    build's every time."""
    sources = sorted((REPO / "data" / "mlperf").rglob("*.json"))
    for path in [p for p in sources if "llama2-70b-99/" in p.as_posix()][:2]:
        doc = json.loads(path.read_text(encoding="utf-8"))
        doc["system"]["gpu_model"] = None  # a GPU the golden registries do not have
        out = project / "data" / "mlperf" / path.relative_to(REPO / "data" / "mlperf")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc), encoding="utf-8")
    loaded = calls_to(monkeypatch, "load_mlperf")

    def same_as_clean() -> None:
        shutil.rmtree(project / "clean", ignore_errors=True)
        build(project, "clean")
        assert tree(project / "site") == tree(project / "clean")

    build(project)
    assert len(loaded) == 1
    edit_one(project)
    build(project)
    assert len(loaded) == 1
    same_as_clean()
    result = next((project / "data" / "mlperf").rglob("Server.json"))
    doc = json.loads(result.read_text(encoding="utf-8"))
    doc["accuracy"] += " (edited)"
    result.write_text(json.dumps(doc), encoding="utf-8")
    build(project)
    assert len(loaded) == 3  # (and the clean build's)
    same_as_clean()
    models = project / "data" / "models.yaml"
    models.write_text(models.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    build(project)
    assert len(loaded) == 5
    kept_mlperf = kept_path(project).with_suffix(".mlperf")
    basis, _ = kept.recall(kept_mlperf, b"jouleboard-kept-mlperf-1\n")
    forged = kept.Writer(kept_mlperf, basis, b"jouleboard-kept-mlperf-1\n")
    forged.add("mlperf", b"", b"not a pickle")
    forged.commit()
    edit_one(project, 1.002)
    build(project)
    assert len(loaded) == 6
    same_as_clean()


@pytest.fixture()
def order(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A build's steps in order: "start" for each chart worker started (Pool.start), "read"
    for each file of the data folder (the working folder's data/) the input check reads,
    "render" for each render handed to a worker, "planned" when the plan is made. The input
    check runs in this process, as where a command-line build cannot fork (a forked child's
    reads are not seen here: tests/test_forked_digest.py checks that path)."""
    events: list[str] = []
    monkeypatch.setattr(engine_build, "may_fork", lambda: False)
    real_start, real_submit = chart_files.Pool.start, chart_files.Pool.submit
    real_digest, real_plan = fingerprint._file_digest, assemble.plan_site

    def start(pool: chart_files.Pool, *args: Any, **kwargs: Any) -> None:
        events.append("start")
        real_start(pool, *args, **kwargs)

    def digest(path: str | Path, cap: int) -> bytes:
        if str(path).startswith(str(Path.cwd() / "data")):  # (the test's folder by then)
            events.append("read")
        return real_digest(path, cap)

    def submit(pool: chart_files.Pool, work: Any, *args: Any, **kwargs: Any) -> Any:
        if work is chart_files._render:
            events.append("render")
        return real_submit(pool, work, *args, **kwargs)

    def plan(*args: Any, **kwargs: Any) -> Any:
        made = real_plan(*args, **kwargs)
        events.append("planned")
        return made

    monkeypatch.setattr(chart_files.Pool, "start", start)
    monkeypatch.setattr(chart_files.Pool, "submit", submit)
    monkeypatch.setattr(fingerprint, "_file_digest", digest)
    monkeypatch.setattr(assemble, "plan_site", plan)
    return events


def test_an_edit_readies_the_worker_before_a_file_is_read_and_hands_it_charts_while_planning(
    project: Path, order: list[str]
) -> None:
    """The input check lists the data folder before it reads a file of it. A measurement
    file written since the output's last build (by its times, against that build's
    manifest) then starts the rebuild's chart worker at once, while the check reads and
    hashes every file (0.1 s at 1,858 files), and once: the kept reads, which find the edit
    again, start no other. The build then hands the worker the charts of each page it
    plans anew as soon as that page is planned (the edited task's, its models'), not after
    the whole site is: their renders overlap the rest of the plan. (That such a rebuild
    gives a clean build's site: test_a_chart_worker_is_readied_early_only_for_a_rebuild_...)"""
    one_shot(project, "site")
    assert "start" not in order  # a first build
    edit_one(project, 1 + random.Random().uniform(1e-4, 1e-3))  # charts no cache holds
    order.clear()
    one_shot(project, "site")
    assert order[:2] == ["start", "read"] and order.count("start") == 1, order
    assert "render" in order and order.index("render") < order.index("planned"), order


def test_measurements_written_again_unchanged_ready_no_worker(
    project: Path, started: list[int | None]
) -> None:
    """More than a tenth of the measurement files written since the last build is not taken
    for an edit (another data folder, a checkout): here every file written again with the
    same bytes, so the build has nothing to do and starts no worker."""
    one_shot(project, "site")
    for path in sorted((project / "data" / "measurements").rglob("*.json")):
        path.write_bytes(path.read_bytes())
    one_shot(project, "site")
    assert started == []


def test_in_a_small_data_folder_one_edited_file_readies_the_worker_early(
    new_site: Path, order: list[str]
) -> None:
    """A tenth of a small data folder is less than one file (a new site has one): the one
    file edited there still starts the worker as the input check lists the folder."""
    copy_chart_cache(new_site / "cache", link=True)  # (the Vega bundle at least)
    one_shot(new_site, "site")
    (edited,) = (new_site / "data" / "measurements").rglob("*.json")
    doc = json.loads(edited.read_text())
    doc["metrics"]["median_itl_ms"] *= 1.001
    edited.write_text(json.dumps(doc))
    order.clear()
    one_shot(new_site, "site")
    assert order[:2] == ["start", "read"], order
