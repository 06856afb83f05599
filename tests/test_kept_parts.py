"""The parts of the plan an earlier process made one per page are kept for the next build
into the same output (jouleboard/engine/kept_parts.py): after one edited measurement, a new
process plans again only the task page of its task and the pages of the models measured on
it, and its site equals a clean build. A change that every part reads (a registry) plans
them all again; a kept file that is damaged or not this user's alone is not read; a build
that fails keeps nothing."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from jouleboard.core.problems import ValidationFailed
from jouleboard.engine import kept, kept_parts, outputs
from jouleboard.engine.build import build_site
from jouleboard.engine.fresh import Content
from jouleboard.engine.kept_parts import parts_file
from jouleboard.kinds import Kinds
from jouleboard.loading.dataset import load_dataset
from jouleboard.output.writer import LastFile, last_record
from jouleboard.plan import site as plan_site_module
from jouleboard.plan.finding import task_finding
from jouleboard.plan.views import Part, SiteView, TaskView
from jouleboard.render import markdown
from jouleboard.render.finding import Finding
from tests.golden.tree import DATA, REPO, tree
from tests.sitebuild import copy_chart_cache


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, golden_site: Path) -> Path:
    """A site folder with the golden data, and a chart cache of its own that holds the
    charts (the run's, rendered for the shared golden site) but nothing kept."""
    root = tmp_path / "project"
    shutil.copytree(DATA, root / "data")
    copy_chart_cache(root / "cache", link=True)
    monkeypatch.chdir(root)
    return root


@pytest.fixture()
def planned(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every task and model page planned (made, not taken), as ``task:<id>``, ``model:<id>``."""
    calls: list[str] = []

    def counting(label: str, real: Callable[..., Part]) -> Callable[..., Part]:
        def make(site: SiteView, item: object) -> Part:
            calls.append(f"{label}:{getattr(item, 'id', item)}")
            return real(site, item)

        return make

    monkeypatch.setattr(plan_site_module, "task_page", counting("task", plan_site_module.task_page))
    monkeypatch.setattr(
        plan_site_module, "model_page", counting("model", plan_site_module.model_page)
    )
    return calls


@pytest.fixture()
def found(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every task's finding made (not taken), by task id."""
    made: list[str] = []
    real = plan_site_module.task_finding

    def counting(site: SiteView, t: TaskView) -> Finding:
        made.append(t.id)
        return real(site, t)

    monkeypatch.setattr(plan_site_module, "task_finding", counting)
    return made


def build(project: Path, out: str = "site") -> None:
    """A command-line build: a new state each time, as a new process has."""
    build_site(project / "data", project / out, project=project, cache=project / "cache")


def measured(data: Path) -> dict[str, set[str]]:
    """Task id -> the ids of the models measured on it, read from the measurement files."""
    found: dict[str, set[str]] = {}
    for path in (data / "measurements").rglob("*.json"):
        doc = json.loads(path.read_text(encoding="utf-8"))
        found.setdefault(doc["task"], set()).add(doc["model_id"])
    return found


def edit_in(data: Path, task: str) -> None:
    """Change one number of one measurement of ``task``, within the physical bounds."""
    path = sorted((data / "measurements" / task).rglob("*.json"))[0]
    doc = json.loads(path.read_text(encoding="utf-8"))
    metrics = doc["metrics"]
    key = "median_itl_ms" if "median_itl_ms" in metrics else "batch_latency_s"
    metrics[key] *= 1.001
    path.write_text(json.dumps(doc), encoding="utf-8")


def every_page(data: Path) -> list[str]:
    models = set().union(*measured(data).values())
    return sorted([*(f"task:{t}" for t in measured(data)), *(f"model:{m}" for m in models)])


def test_after_an_edit_only_the_parts_reading_its_task_are_planned_and_the_site_is_clean(
    project: Path, planned: list[str]
) -> None:
    data = project / "data"
    build(project)
    assert sorted(planned) == every_page(data)  # the first build plans everything
    by_task = measured(data)
    models = set().union(*by_task.values())
    assert len(by_task) == 3 and all(len(m) < len(models) for m in by_task.values())
    for task in sorted(by_task):  # each task in turn: its page and its models' pages
        planned.clear()
        edit_in(data, task)
        build(project)
        assert sorted(planned) == sorted(
            [f"task:{task}", *(f"model:{m}" for m in by_task[task])]
        ), task
    planned.clear()
    build(project, "clean")  # another output: nothing kept for it
    assert sorted(planned) == every_page(data)
    assert tree(project / "site") == tree(project / "clean")


def test_after_an_edit_only_its_tasks_finding_is_made_again(
    project: Path, found: list[str]
) -> None:
    """Each task's finding (it ranks the task about ten times) is kept with the parts: after
    an edit of one task, only that task's is made again, and the site is a clean build's."""
    data = project / "data"
    build(project)
    tasks = sorted(measured(data))
    assert sorted(found) == tasks
    for task in tasks:
        found.clear()
        edit_in(data, task)
        build(project)
        assert found == [task]
    found.clear()
    build(project, "clean")
    assert sorted(found) == tasks
    assert tree(project / "site") == tree(project / "clean")


def test_the_measurement_schema_is_made_again_only_with_another_basis(
    project: Path, monkeypatch: pytest.MonkeyPatch, another_version: Callable[[str], None]
) -> None:
    """The published measurement schema depends on the code, the kinds and pydantic (all in
    the kept parts' basis): a rebuild after an edited measurement takes it from the last
    build; with another pydantic it is made again; and the site is a clean build's."""
    made: list[int] = []
    real = plan_site_module.measurement_schema_text

    def counting(kinds: Kinds) -> str:
        made.append(1)
        return real(kinds)

    monkeypatch.setattr(plan_site_module, "measurement_schema_text", counting)
    build(project)
    edit_in(project / "data", "gpqa")
    build(project)
    assert len(made) == 1
    another_version("pydantic")
    edit_in(project / "data", "gpqa")
    build(project)
    assert len(made) == 2
    build(project, "clean")
    assert tree(project / "site") == tree(project / "clean")


def test_a_rebuild_reads_no_chart_it_takes_from_the_last_build(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What pages need of each chart (its sizes, URLs, embed code) is kept with the parts,
    by the chart's key: a rebuild takes the charts the edit did not change without reading
    their SVGs back for their sizes, which it does when nothing was kept; and the site is a
    clean build's either way."""
    read: list[str] = []
    real = outputs.content_of

    def counting(file: Content | LastFile) -> Content | None:
        if isinstance(file, LastFile):
            read.append(file.source.name)
        return real(file)

    monkeypatch.setattr(outputs, "content_of", counting)
    build(project)
    edit_in(project / "data", "gpqa")
    build(project)
    assert read == []
    parts_file(project / "cache", project / "site").unlink()  # nothing kept
    edit_in(project / "data", "gpqa")
    build(project)
    assert read and all(name.endswith(".svg") for name in read)
    build(project, "clean")
    assert tree(project / "site") == tree(project / "clean")


def test_a_registry_edit_plans_every_part_again(project: Path, planned: list[str]) -> None:
    """Every part reads the registries: a model's description edited plans every task and
    model page again, and the site is a clean build's."""
    build(project)
    models = project / "data" / "models.yaml"
    text = models.read_text(encoding="utf-8")
    models.write_text(text.replace("description_md: ", "description_md: Edited. ", 1))
    planned.clear()
    build(project)
    assert sorted(planned) == every_page(project / "data")
    build(project, "clean")
    assert tree(project / "site") == tree(project / "clean")


def test_an_edited_repeat_run_plans_again_every_task_its_noise_reaches(
    project: Path, planned: list[str]
) -> None:
    """The measurement noise comes from the repeat runs of each data set and kind of task
    (docs/measurement-format.md), and it sets the rank ranges on every page of a task of
    that kind. The golden data's one repeat run is of a gpqa configuration: edited, it
    plans again the pages of gpqa and of image-chat (a language model's task too, whose
    configurations did not change), not text-to-image's (diffusion), and the site is a
    clean build's."""
    data = project / "data"
    build(project)
    [repeat] = (data / "measurements").rglob("*-r2.json")
    assert repeat.relative_to(data).parts[1] == "gpqa"
    doc = json.loads(repeat.read_text(encoding="utf-8"))
    noise = load_dataset(data).noise.per_run
    for name in ("avg_power_watts", "energy_per_token_joules", "energy_per_response_joules"):
        doc["metrics"][name] *= 1.05  # the run used 5 % more energy
    repeat.write_text(json.dumps(doc), encoding="utf-8")
    assert load_dataset(data).noise.per_run > noise
    planned.clear()
    build(project)
    by_task = measured(data)
    assert sorted(by_task) == ["gpqa", "image-chat", "text-to-image"]
    language = ("gpqa", "image-chat")
    models = {m for task in language for m in by_task[task]}
    assert sorted(planned) == sorted(
        [*(f"task:{t}" for t in language), *(f"model:{m}" for m in models)]
    )
    build(project, "clean")
    assert tree(project / "site") == tree(project / "clean")


@pytest.mark.parametrize("library", ["altair", "markdown", "nh3"])
def test_another_version_of_a_library_that_plans_plans_every_part_again(
    project: Path, planned: list[str], another_version: Callable[[str], None], library: str
) -> None:
    """A part holds what Altair (chart templates) and markdown (descriptions, as nh3 cleans
    them) made: with another version of any of them installed, nothing kept is taken (after
    an edit of one task, which alone plans that task's pages again)."""
    build(project)
    edit_in(project / "data", "gpqa")
    another_version(library)
    planned.clear()
    build(project)
    assert sorted(planned) == every_page(project / "data")


def describe(data: Path, text: str) -> str:
    """Give the first model of the registry the description ``text``; its old one."""
    models = data / "models.yaml"
    doc = yaml.safe_load(models.read_text(encoding="utf-8"))
    first = doc[next(iter(doc))]
    old, first["description_md"] = first["description_md"], text
    models.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    assert old and old != text
    return str(old)


def new_process() -> None:
    """Forget what this process rendered, as a new process has (the kept texts stay)."""
    markdown._rendered.clear()


def test_a_rebuild_renders_only_the_texts_that_changed(project: Path, rendered: list[str]) -> None:
    """The Markdown texts a build rendered are kept for the next process: after an edited
    measurement it renders none, after an edited description only that one (each rendered
    from the file's text as a clean build renders it), and the site is a clean build's."""
    data = project / "data"
    build(project)
    first = list(rendered)
    assert first and len(set(first)) == len(first)  # each text rendered once per build
    for task in ("gpqa", "text-to-image"):
        new_process()
        rendered.clear()
        edit_in(data, task)
        build(project)
        assert rendered == [], task
    describe(data, "An *edited* description.")
    new_process()
    rendered.clear()
    build(project)
    assert rendered == ["An *edited* description."]
    new_process()
    build(project, "clean")  # another output: nothing kept for it
    assert tree(project / "site") == tree(project / "clean")


def test_a_text_no_build_asks_for_is_dropped(
    project: Path, rendered: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A text is kept while builds ask for it, and dropped after _RENDERED_BUILDS builds in a
    row that did not (here 2): an edited description's old text does not stay for good."""
    monkeypatch.setattr(kept_parts, "_RENDERED_BUILDS", 2)
    data = project / "data"
    build(project)
    old = describe(data, "Replaced.")

    def kept_texts() -> set[str]:
        _, earlier = kept.recall(parts_file(project / "cache", project / "site"), kept_parts._MAGIC)
        return set(kept_parts._kept_pairs(earlier[kept_parts._RENDERED][1], int))

    build(project)  # asks for the new text, not the old
    assert {old, "Replaced."} <= kept_texts()
    edit_in(data, "gpqa")
    build(project)  # the second build in a row that did not ask for it
    assert "Replaced." in kept_texts() and old not in kept_texts()


@pytest.mark.parametrize("damage", ["a changed byte", "writable by the group"])
def test_a_kept_file_not_to_trust_is_not_read(
    project: Path, planned: list[str], damage: str
) -> None:
    build(project)
    path = parts_file(project / "cache", project / "site")
    if damage == "a changed byte":
        content = bytearray(path.read_bytes())
        content[-10] ^= 1
        path.write_bytes(bytes(content))
    else:
        path.chmod(0o660)
    edit_in(project / "data", "gpqa")
    planned.clear()
    build(project)
    assert sorted(planned) == every_page(project / "data")
    build(project, "clean")
    assert tree(project / "site") == tree(project / "clean")


def test_a_failed_build_keeps_nothing(project: Path) -> None:
    build(project)
    path = parts_file(project / "cache", project / "site")
    before = path.read_bytes()
    edit_in(project / "data", "gpqa")
    (project / "data" / "measurements" / "broken.json").write_text("{")
    with pytest.raises(ValidationFailed):
        build(project)
    assert path.read_bytes() == before
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".part")]


def narrowed(site: SiteView, tasks: tuple[str, ...]) -> SiteView:
    """``site`` with only ``tasks``' data: what a route that reads only those may see."""
    return dataclasses.replace(
        site,
        tasks={t: v for t, v in site.tasks.items() if t in tasks},
        by_model={
            m: {t: c for t, c in by_task.items() if t in tasks}
            for m, by_task in site.by_model.items()
        },
        findings={t: f for t, f in site.findings.items() if t in tasks},
        gpu_counts={},
    )


@pytest.mark.slow  # plans the bundled data's task and model pages twice (~0.5 s)
def test_each_kept_route_reads_only_the_tasks_it_names(default_view: SiteView) -> None:
    """A route's key covers the data of the tasks it names (and the registry, URLs and
    MLPerf results): made from a view holding only those tasks, each route of the bundled
    data makes the part it makes from the whole view, and each task's finding is the one
    the whole view has."""
    routes = [r for r in plan_site_module.page_routes(default_view) if r.tasks is not None]
    assert len(routes) == len(default_view.tasks) + len(default_view.by_model)
    for route in routes:
        alone = narrowed(default_view, route.tasks or ())
        same = next(r for r in plan_site_module.page_routes(alone) if r.path == route.path)
        assert same.make() == route.make(), route.path
    # and each task's finding, kept as a route that reads that task alone
    for task in default_view.tasks:
        alone = narrowed(default_view, (task,))
        assert task_finding(alone, alone.tasks[task]) == default_view.findings[task], task


_KEYS = """
import sys
from pathlib import Path
from jouleboard.core.urls import Urls
from jouleboard.engine.kept import data_key
from jouleboard.loading.dataset import load_dataset
from jouleboard.plan.site import site_view
site = site_view(load_dataset(Path(sys.argv[1])), Urls())
print(data_key((site.registry, site.mlperf)))
for task, t in site.tasks.items():
    print(data_key((task, t.configs, t.noise)))
"""


@pytest.mark.slow  # two processes
def test_the_data_key_is_the_same_in_every_process() -> None:
    """The registry's pydantic models hold a set (the fields given), whose order changes
    with the process's hash seed: the key pickles it in order. Two processes with different
    seeds give the same keys, and the tasks' keys differ from each other."""
    keys = []
    for seed in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-c", _KEYS, str(DATA)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=REPO,
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
        )
        keys.append(out.stdout.split())
    assert keys[0] == keys[1]
    assert len(set(keys[0])) == len(keys[0]) == 4  # the registry's, and 3 tasks'


_CLI = (
    "import sys\n"
    "from jouleboard.cli import main\n"
    "status = main(['build', '-q', '--data', 'data', '--out', 'site'])\n"
    "print(status, sorted(m for m in ('markdown', 'nh3') if m in sys.modules))\n"
)


def _cli_build(project: Path) -> tuple[dict[str, str], str]:
    """``jouleboard build`` in a new process: the chart templates its manifest trusts, and
    its status with the renderer's libraries it imported."""
    done = subprocess.run(
        [sys.executable, "-c", _CLI],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    record = last_record(project / "site").get("chart_templates")
    assert isinstance(record, dict) and record
    return record, done.stdout.splitlines()[-1]


@pytest.mark.slow  # three builds, each in a new process
def test_the_manifest_still_trusts_the_templates_of_the_charts_taken(tmp_path: Path) -> None:
    """A rebuild that takes parts from the last plan binds none of their charts to a template,
    yet its manifest still records their templates: the build after it, which may plan those
    parts again, reads them from the cache instead of making them with Altair. Such a
    rebuild takes every text it shows from the last build's renders, and imports neither
    markdown nor nh3."""
    shutil.copytree(DATA, tmp_path / "data")
    first, imported = _cli_build(tmp_path)
    assert imported == "0 ['markdown', 'nh3']"  # (the first build renders every text)
    edit_in(tmp_path / "data", "gpqa")
    assert _cli_build(tmp_path) == (first, "0 []")
    edit_in(tmp_path / "data", "text-to-image")
    assert _cli_build(tmp_path) == (first, "0 []")
