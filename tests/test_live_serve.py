"""The resident ``jouleboard serve`` (jouleboard/engine/live.py): after any edit the output equals a
clean ``build_site(..., preview=True)`` of the same inputs, every file byte for byte; the
pages it serves ahead of the commit are the clean build's pages; an edit redoes only what it
touched (one measurement file read again, no new plan for a template edit); a failed edit
publishes nothing and keeps the previous site.
"""

from __future__ import annotations

import dataclasses
import json
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from jouleboard.core.problems import ValidationFailed
from jouleboard.engine import assemble as engine
from jouleboard.engine import live
from jouleboard.engine.build import build_site
from jouleboard.engine.live import Changes, LiveSite, output_path
from jouleboard.kinds import Kinds
from jouleboard.loading import dataset as loading
from jouleboard.loading.dataset import MeasurementFile
from jouleboard.render import chart_files
from jouleboard.render.chart_files import DEFAULT_CACHE
from tests.golden.tree import tree
from tests.test_serve_robust import site_folder, start_serve, stop

MODEL = "Qwen/Qwen3-8B"
MODEL_PAGE = "/models/qwen--qwen3-8b/"
OTHERS = ["/tasks/gpqa/", "/downloads/configurations.csv", "/sitemap.xml"]
MEASUREMENT = Path("measurements/gpqa/Qwen/Qwen3-8B/H100-x1-bfloat16-tp1-ep1-dp1-seqs8.json")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return site_folder(tmp_path)


def edit_template(project: Path, n: int) -> str:
    base = project / "templates" / "base.html"
    mark = f'<meta name="live-test" content="{n}">'
    base.write_text(
        base.read_text(encoding="utf-8").replace("</head>", mark + "</head>", 1), encoding="utf-8"
    )
    return mark


def edit_description(project: Path, n: int) -> str:
    path = project / "data" / "models.yaml"
    models = yaml.safe_load(path.read_text(encoding="utf-8"))
    mark = f"Edited description number {n}."
    models[MODEL]["description_md"] = mark
    path.write_text(yaml.safe_dump(models, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return mark


def edit_measurement(project: Path, n: int) -> str:
    """Throughput times 1.5 (J/token and J/response kept consistent): the model's ranked
    numbers change on its page, the task page and the home page."""
    path = project / "data" / MEASUREMENT
    doc = json.loads(path.read_text(encoding="utf-8"))
    m = doc["metrics"]
    m["output_throughput_tokens_per_sec"] *= 1.5
    m["energy_per_token_joules"] = m["avg_power_watts"] / m["output_throughput_tokens_per_sec"]
    m["energy_per_response_joules"] = m["energy_per_token_joules"] * m["avg_output_len_tokens"]
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return ""


def clean_build(project: Path, out: Path) -> dict[str, str]:
    build_site(project / "data", out, project=project, preview=True)
    return tree(out)


# --- a running serve -----------------------------------------------------------------------


def get(url: str, timeout: float = 30) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return bytes(response.read())


def wait_for(lines: list[str], needle: str, count: int, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while sum(needle in line for line in lines) < count:
        assert time.monotonic() < deadline, f"no {count}th {needle!r} in: {''.join(lines)}"
        time.sleep(0.05)


def test_serve_after_each_edit_equals_a_clean_build(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "preview"
    proc, lines = start_serve(project / "data", out)
    try:
        wait_for(lines, "serving on", 1, 300)
        url = next(line for line in lines if "serving on" in line).split()[2].rstrip("/")
        edits: list[Callable[[Path, int], str]] = [
            edit_template,
            edit_description,
            edit_measurement,
        ]
        for n, edit in enumerate(edits, start=1):
            before = get(url + MODEL_PAGE)
            since = get(url + "/__jouleboard__/version").decode()
            mark = edit(project, n)
            status = get(f"{url}/__jouleboard__/wait?since={since}&page={MODEL_PAGE}", 120)
            assert json.loads(status)["version"] != since, f"no reload after the {edit.__name__}"
            at_reload = get(url + MODEL_PAGE)  # from memory, or after the commit
            # Any other file asked for now waits for the commit: never the previous one.
            others = {path: get(url + path) for path in OTHERS}
            wait_for(lines, "built ", n + 1)  # this update has committed
            clean = tmp_path / f"clean-{n}"
            assert tree(out) == clean_build(project, clean), edit.__name__
            assert at_reload == (clean / output_path(MODEL_PAGE)).read_bytes(), edit.__name__
            for path, body in others.items():
                assert body == (clean / output_path(path)).read_bytes(), (edit.__name__, path)
            assert mark.encode() in at_reload if mark else at_reload != before
        # A broken measurement keeps the previous site and signals only its problem (open
        # pages show it: issue 39)...
        settled, since = tree(out), get(url + "/__jouleboard__/version")
        broken = project / "data" / MEASUREMENT
        good = broken.read_text(encoding="utf-8")
        broken.write_text(
            good.replace('"kind": "llm"', '"kind": "llm", "extra": 1'), encoding="utf-8"
        )
        wait_for(lines, "still serving the previous site", 1)
        assert tree(out) == settled
        status = json.loads(get(f"{url}/__jouleboard__/wait?since={since.decode()}", 60))
        assert status["version"] != since.decode() and "/extra" in status["error"]
        # ... and its fix is a normal update.
        broken.write_text(good, encoding="utf-8")
        wait_for(lines, "built ", len(edits) + 2)
        assert tree(out) == clean_build(project, tmp_path / "clean-fixed")
        assert "Traceback" not in "".join(lines)
    finally:
        stop(proc)


# --- the resident site in this process ----------------------------------------------------


class Published:
    def __init__(self) -> None:
        self.files: list[dict[str, bytes]] = []

    def __call__(self, files: dict[str, bytes]) -> None:
        self.files.append(files)


@pytest.fixture
def site(project: Path, tmp_path: Path) -> Iterator[LiveSite]:
    site = LiveSite(project / "data", tmp_path / "preview", project, DEFAULT_CACHE)
    site.update(Changes(), lambda: [], Published())
    yield site


def test_pages_served_ahead_are_the_clean_builds(
    site: LiveSite, project: Path, tmp_path: Path
) -> None:
    """Every page that can be made alone (home, task, model and GPU pages), with the files
    published with it, is byte for byte the clean build's."""
    edit_measurement(project, 1)
    pages = [
        "index.html",
        "tasks/gpqa/index.html",
        output_path(MODEL_PAGE),
        "gpus/h100/index.html",
        "compare/index.html",
    ]
    published = Published()
    site.update(Changes(data=True, content=False, templates=False), lambda: pages, published)
    clean = tmp_path / "clean"
    clean_build(project, clean)
    assert len(published.files) == 1
    ahead = published.files[0]
    made_alone = {p for p in pages if p != "compare/index.html"}  # not one page's part
    assert made_alone <= set(ahead) and "compare/index.html" not in ahead
    assert any(p.startswith("charts/") for p in ahead)
    assert {p: c for p, c in ahead.items() if (clean / p).read_bytes() != c} == {}
    assert tree(site.target.path) == tree(clean)


@pytest.mark.parametrize("page", ["about/index.html", "compare/index.html", "downloads/index.html"])
def test_a_content_edit_serves_the_waiting_page_ahead(
    site: LiveSite, project: Path, tmp_path: Path, page: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The about page is made alone; the compare and downloads pages (not one page's part)
    come from the whole plan, still before the site is rendered and committed (the
    downloads page sized before its files are). The data is not loaded again."""

    def no_load(*args: object, **kwargs: object) -> None:
        raise AssertionError("a content edit loaded the data folder")

    monkeypatch.setattr(engine, "load_sources", no_load)
    about = project / "content" / "about.md"
    about.write_text(about.read_text(encoding="utf-8") + "\nEdited about page.\n", encoding="utf-8")
    published = Published()
    site.update(Changes(data=False, content=True, templates=False), lambda: [page], published)
    monkeypatch.undo()  # the clean build goes through the same engine: it loads
    clean = tmp_path / "clean"
    clean_build(project, clean)
    assert len(published.files) == 1
    ahead = published.files[0]
    assert page in ahead
    if page.startswith("about"):
        assert b"Edited about page." in ahead[page]
    assert {p: c for p, c in ahead.items() if (clean / p).read_bytes() != c} == {}
    assert tree(site.target.path) == tree(clean)


def test_an_edited_stylesheet_is_served_ahead_under_its_new_name(
    site: LiveSite, project: Path, tmp_path: Path
) -> None:
    css = project / "templates" / "assets" / "style.css"
    css.write_text(
        css.read_text(encoding="utf-8") + "\n.live-test { color: red; }\n", encoding="utf-8"
    )
    published = Published()
    site.update(
        Changes(data=False, content=False, templates=True), lambda: ["index.html"], published
    )
    clean = tmp_path / "clean"
    clean_build(project, clean)
    ahead = published.files[0]
    sheets = [p for p in ahead if p.startswith("assets/style-")]
    assert len(sheets) == 1 and b".live-test" in ahead[sheets[0]]
    assert sheets[0].encode() in ahead["index.html"]
    assert {p: c for p, c in ahead.items() if (clean / p).read_bytes() != c} == {}
    assert tree(site.target.path) == tree(clean)


def test_an_edited_measurement_is_read_again_alone(
    site: LiveSite, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[str] = []
    original = loading.read_measurement

    def counted(path: Path, root: Path, known: Kinds, raw: bytes | None = None) -> MeasurementFile:
        read.append(path.relative_to(root).as_posix())
        return original(path, root, known, raw)

    monkeypatch.setattr(loading, "read_measurement", counted)
    edit_template(project, 1)  # an update that loads nothing forgets nothing
    site.update(Changes(data=False, content=False, templates=True), lambda: [], Published())
    edit_measurement(project, 1)
    site.update(Changes(data=True, content=False, templates=False), lambda: [], Published())
    assert read == [MEASUREMENT.as_posix()]
    edit_description(project, 1)  # the registries changed: every file checked, none read
    site.update(Changes(data=True, content=False, templates=False), lambda: [], Published())
    assert set(read) == {MEASUREMENT.as_posix()}  # (a file saved seconds ago is read again)
    assert tree(site.target.path) == clean_build(project, tmp_path / "clean")


def test_a_template_edit_renders_pages_without_a_new_plan(
    site: LiveSite, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planned: list[object] = []
    monkeypatch.setattr(engine, "plan_site", lambda *args: planned.append(args))
    mark = edit_template(project, 1)
    published = Published()
    site.update(
        Changes(data=False, content=False, templates=True),
        lambda: [output_path(MODEL_PAGE)],
        published,
    )
    assert planned == []
    assert mark.encode() in published.files[0][output_path(MODEL_PAGE)]
    monkeypatch.undo()  # the clean build goes through the same engine: it plans
    assert tree(site.target.path) == clean_build(project, tmp_path / "clean")


def test_a_failed_edit_publishes_nothing_and_keeps_the_site(site: LiveSite, project: Path) -> None:
    before = tree(site.target.path)
    measurement = project / "data" / MEASUREMENT
    good = measurement.read_text(encoding="utf-8")
    measurement.write_text("{", encoding="utf-8")
    published = Published()
    with pytest.raises(ValidationFailed):
        site.update(
            Changes(data=True, content=False, templates=False),
            lambda: [output_path(MODEL_PAGE)],
            published,
        )
    measurement.write_text(good, encoding="utf-8")
    (project / "templates" / "model.html").write_text("{% if %}", encoding="utf-8")
    with pytest.raises(ValidationFailed) as failed:
        site.update(
            Changes(data=False, content=False, templates=True),
            lambda: [output_path(MODEL_PAGE)],
            published,
        )
    [problem] = failed.value.problems
    assert problem.file.endswith("templates/model.html") and problem.rule == "template.syntax"
    assert problem.message.startswith("line 1: Expected an expression")
    assert published.files == [] and tree(site.target.path) == before


def test_the_preview_publishes_static_files_as_build_does(
    site: LiveSite, project: Path, tmp_path: Path
) -> None:
    """static/ (CNAME, .well-known/...) is in the preview, edits to it included, byte for
    byte as a clean build (before: serve's own driver left it out)."""
    static = project / "static"
    (static / ".well-known").mkdir(parents=True)
    (static / "CNAME").write_text("energy.example.org\n", encoding="utf-8")
    (static / ".well-known" / "security.txt").write_text("Contact: x@example.org\n")
    site.update(Changes(), lambda: [], Published())  # what an edit outside data/ does
    clean = tmp_path / "clean"
    assert tree(site.target.path) == clean_build(project, clean)
    assert (site.target.path / "CNAME").read_text() == "energy.example.org\n"
    (static / "CNAME").write_text("leaderboard.example.org\n", encoding="utf-8")
    site.update(Changes(), lambda: [], Published())
    assert (site.target.path / "CNAME").read_text() == "leaderboard.example.org\n"


def test_the_warm_up_draws_the_first_chart_of_each_kind_in_this_process(
    site: LiveSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """serve warms its renderer with the site's own charts: for each kind, the chart that
    comes first by id, desktop and phone, in serve's process (no worker starts)."""
    drawn: list[list[str]] = []
    render = chart_files.render_charts

    def recorded(specs: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        drawn.append(sorted(specs))
        return render(specs, *args, **kwargs)

    def no_worker(*args: object, **kwargs: object) -> None:
        pytest.fail("the warm-up started a worker process")

    monkeypatch.setattr(live, "render_charts", recorded)
    monkeypatch.setattr(chart_files.Pool, "executor", no_worker)
    site.warm_up()

    assert site.state.built is not None
    by_kind: dict[str, list[str]] = {}
    for cid in site.state.built.plan.charts:
        by_kind.setdefault(cid.split("--")[0], []).append(cid)
    assert {"top", "pareto", "deadlines", "configurations"} <= by_kind.keys()
    firsts = [min(ids) for ids in by_kind.values()]
    assert sorted(cid for batch in drawn for cid in batch) == sorted(
        [*firsts, *(f"{cid}~phone" for cid in firsts)]
    )
    assert all(len(batch) < chart_files._PARALLEL_FROM for batch in drawn)  # in this process


def test_the_warm_up_passes_over_a_chart_that_needs_the_system_fonts(site: LiveSite) -> None:
    """A chart with a character vl-convert's own font lacks renders in a worker, so the
    warm-up takes the next chart of its kind instead."""
    assert site.state.built is not None
    charts = site.state.built.plan.charts
    first, second = sorted(cid for cid in charts if cid.startswith("pareto--"))[:2]
    assert sorted(live.warm_up_specs({first: charts[first], second: charts[second]})) == [
        first,
        f"{first}~phone",
    ]
    foreign = dataclasses.replace(charts[first], spec={**charts[first].spec, "description": "能效"})
    assert sorted(live.warm_up_specs({first: foreign, second: charts[second]})) == [
        second,
        f"{second}~phone",
    ]
