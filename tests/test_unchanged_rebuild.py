"""A rebuild from unchanged inputs into an intact output does nothing; any change to an
input, an option or the output itself makes it build (and the result equals a clean build)."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from jouleboard.core.problems import ValidationFailed
from jouleboard.engine import build as build_module
from jouleboard.engine.build import build_site
from jouleboard.output.folder import OutputRefused
from tests.git_repo import git
from tests.golden.tree import DATA, REPO, tree
from tests.runs_generator import (
    RunSpec,
    benchmark_llm_base,
    write_model_info,
    write_monolithic,
    write_run,
)
from tests.test_raw_runs import GPUS_YAML, MODELS_YAML, TASKS_YAML
from tests.test_validation_rules import make_data_dir


def built_project(tmp_path: Path) -> Path:
    """A site folder (data/, templates/) and its site built once, into project/site."""
    root = tmp_path / "project"
    shutil.copytree(DATA, root / "data")
    (root / "templates").mkdir()
    build_site(root / "data", root / "site", project=root)
    return root


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    return built_project(tmp_path)


def stat_of(site: Path) -> dict[str, tuple[int, int]]:
    return {
        p.relative_to(site).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in site.rglob("*")
        if p.is_file()
    }


def test_nothing_changed_touches_nothing(project: Path) -> None:
    site = project / "site"
    before, files = stat_of(site), tree(site)
    again = build_site(project / "data", site, project=project)
    assert again.unchanged and again.written == 0
    assert again.files == len(files) and again.bytes == sum(
        p.stat().st_size for p in site.rglob("*") if p.is_file()
    )
    assert stat_of(site) == before  # not one file rewritten or re-linked
    assert "up to date" in str(again)


def touch_measurement(project: Path) -> None:
    path = next((project / "data" / "measurements").rglob("*.json"))
    doc = json.loads(path.read_text())
    doc["metrics"]["median_itl_ms"] *= 1.001
    path.write_text(json.dumps(doc))


def same_bytes_new_mtime(project: Path) -> None:
    """Content decides, not time stamps: rewriting a file with its own bytes is no change."""
    path = project / "data" / "models.yaml"
    path.write_bytes(path.read_bytes())


def site_template(project: Path) -> None:
    text = (REPO / "templates" / "base.html").read_text()
    (project / "templates" / "base.html").write_text(text.replace("Built with", "Made with"))


def new_data_file(project: Path) -> None:
    src = next((project / "data" / "measurements").rglob("*.json"))
    doc = json.loads(src.read_text())
    doc["serving"]["max_num_seqs"] = 999
    src.with_name("copy-seqs999.json").write_text(json.dumps(doc))


INPUT_CHANGES: list[Callable[[Path], None]] = [touch_measurement, site_template, new_data_file]


@pytest.mark.parametrize("change", INPUT_CHANGES, ids=[c.__name__ for c in INPUT_CHANGES])
def test_an_input_change_builds(
    project: Path, tmp_path: Path, change: Callable[[Path], None]
) -> None:
    change(project)
    again = build_site(project / "data", project / "site", project=project)
    assert not again.unchanged and again.written > 0
    clean = tmp_path / "clean"
    build_site(project / "data", clean, project=project)
    assert tree(project / "site") == tree(clean)


def hidden_measurement(project: Path) -> None:
    src = next((project / "data" / "measurements").rglob("*.json"))
    shutil.copyfile(src, src.with_name(".draft.json"))


def hidden_measurement_folder(project: Path) -> None:
    src = next((project / "data" / "measurements").rglob("*.json"))
    (src.parent / ".old").mkdir()
    shutil.copyfile(src, src.parent / ".old" / src.name)


def hidden_static_file(project: Path) -> None:
    (project / "static").mkdir()
    (project / "static" / ".env").write_text("TOKEN=x\n")


@pytest.mark.parametrize(
    ("change", "rule"),
    [
        (hidden_measurement, "file.hidden"),
        (hidden_measurement_folder, "file.hidden"),
        (hidden_static_file, "static.hidden"),
    ],
    ids=["measurement", "measurement folder", "static file"],
)
def test_a_hidden_name_no_build_reads_is_still_seen(
    project: Path, tmp_path: Path, change: Callable[[Path], None], rule: str
) -> None:
    """No build reads a hidden file, but a build refuses a hidden measurement and, with
    --strict, a hidden file in static/: after one is added, a build says so, as a clean
    build does, instead of "up to date"."""
    build_site(project / "data", project / "site", project=project, strict=True)
    change(project)
    for out in (project / "site", tmp_path / "clean"):
        with pytest.raises(ValidationFailed) as failed:
            build_site(project / "data", out, project=project, strict=True)
        assert rule in [problem.rule for problem in failed.value.problems]


def test_a_byte_code_cache_is_never_read(project: Path, tmp_path: Path) -> None:
    """A __pycache__ folder (which merely running code rewrites) is read neither by the input
    check nor by the build: with a measurement and a static file in such folders, the site
    is up to date, and a clean build is the site built before they were added."""
    before = tree(project / "site")
    src = next((project / "data" / "measurements").rglob("*.json"))
    doc = json.loads(src.read_text())
    doc["serving"]["max_num_seqs"] = 999
    (src.parent / "__pycache__").mkdir()
    (src.parent / "__pycache__" / "copy-seqs999.json").write_text(json.dumps(doc))
    (project / "static" / "__pycache__").mkdir(parents=True)
    (project / "static" / "__pycache__" / "x.pyc").write_bytes(b"code")
    assert build_site(project / "data", project / "site", project=project).unchanged
    build_site(project / "data", tmp_path / "clean", project=project)
    assert tree(tmp_path / "clean") == before


def test_the_files_a_run_build_reads_above_the_runs_given_are_inputs(tmp_path: Path) -> None:
    """A build of raw runs (--runs .../current/run) also reads the provenance file beside
    run/ and the benchmark's configs/ folder further up: a change to either builds, as a
    clean build would, instead of "up to date". So does a run file written again with its
    modification time put back (its status-change time moved)."""
    data = make_data_dir(
        tmp_path, models_yaml=MODELS_YAML, gpus_yaml=GPUS_YAML, tasks_yaml=TASKS_YAML
    )
    bench, spec = tmp_path / "bench", RunSpec(num_gpus=4, max_num_seqs=64, avg_power_watts=1600)
    write_run(benchmark_llm_base(bench, spec), spec)
    write_model_info(bench, "vllm", "chat", "acme/tiny-1b", {"total_parameters_billion": 1.0})
    runs = [benchmark_llm_base(bench, spec) / "run"]
    provenance = runs[0].parent / "jouleboard-provenance.yaml"
    provenance.write_text("license: Apache-2.0\ndataset: First sweep\n")

    def parallel(degree: int) -> None:
        write_monolithic(bench, "chat", "acme/tiny-1b", "H100", {"tensor-parallel-size": degree})

    parallel(4)
    site = tmp_path / "site"
    build_site(data, site, project=REPO, runs=runs)
    assert build_site(data, site, project=REPO, runs=runs).unchanged
    results = next(runs[0].rglob("results.json"))
    written = results.stat()

    def same_size_same_time() -> None:  # rewritten, its modification time put back
        results.write_bytes(results.read_bytes())
        os.utime(results, ns=(written.st_atime_ns, written.st_mtime_ns))

    for change in (
        same_size_same_time,
        lambda: provenance.write_text("license: Apache-2.0\ndataset: Renamed sweep\n"),
        lambda: parallel(2),
    ):
        change()
        assert not build_site(data, site, project=REPO, runs=runs).unchanged
        clean = tmp_path / "clean"
        shutil.rmtree(clean, ignore_errors=True)
        build_site(data, clean, project=REPO, runs=runs)
        assert tree(site) == tree(clean)
    assert "Renamed sweep" in (site / "index.html").read_text()


def test_rewriting_a_file_with_its_own_bytes_is_no_change(project: Path) -> None:
    same_bytes_new_mtime(project)
    assert build_site(project / "data", project / "site", project=project).unchanged


def snapshot(project: Path) -> dict[Path, bytes]:
    """The bytes of every file of the project's data and templates."""
    folders = (project / "data", project / "templates")
    return {p: p.read_bytes() for folder in folders for p in folder.rglob("*") if p.is_file()}


def put_back(project: Path, files: dict[Path, bytes]) -> None:
    """An editor's undo: every file as :func:`snapshot` found it (the same bytes, written
    again), and none it did not find."""
    for path in set(snapshot(project)) - set(files):
        path.unlink()
    for path, data in files.items():
        if path.read_bytes() != data:
            path.write_bytes(data)


# Changes a build reads after its digest. (An edited data file is not among them when the
# last build kept its reads, jouleboard/engine/kept.py: they are taken by the bytes the
# digest hashed, and the build does not see the edit.)
READ_AFTER_THE_DIGEST = [site_template, new_data_file]


@pytest.mark.parametrize(
    "change", READ_AFTER_THE_DIGEST, ids=[c.__name__ for c in READ_AFTER_THE_DIGEST]
)
def test_an_edit_made_during_a_build_and_undone_after_it_builds_again(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Callable[[Path], None]
) -> None:
    """An input edited after the build took its inputs digest, and put back as it was once
    that build is done: the build read the edited input, so the next one is not "up to
    date" over its output, and leaves the site a clean build would. (The builds take
    another base URL than the fixture's: a build of the fixture's inputs has nothing to
    do, before the edit and after the undo alike.)"""
    build = functools.partial(build_site, project / "data", project=project, base_url="/sub/")
    files = snapshot(project)
    real_digest = build_module.inputs_digest

    def digest_then_edit(*args: Any, **kwargs: Any) -> str | None:
        digest = real_digest(*args, **kwargs)
        change(project)
        return digest

    monkeypatch.setattr(build_module, "inputs_digest", digest_then_edit)
    assert not build(project / "site").unchanged
    made_from_the_edit = tree(project / "site")
    monkeypatch.undo()
    put_back(project, files)
    assert snapshot(project) == files
    again = build(project / "site")
    build(tmp_path / "clean")
    assert made_from_the_edit != tree(tmp_path / "clean")
    assert not again.unchanged
    assert tree(project / "site") == tree(tmp_path / "clean")


@pytest.mark.parametrize(
    "option",
    [{"png": True}, {"base_url": "/sub/"}, {"site_url": "https://example.org"}, {"preview": True}],
)
def test_another_option_builds(project: Path, option: dict[str, object]) -> None:
    """A build with another option runs, and what it reuses from the last build's output
    leaves it equal to a clean build with that option."""
    again = build_site(project / "data", project / "site", project=project, **option)
    assert not again.unchanged and again.written > 0
    build_site(project / "data", project / "clean", project=project, **option)
    assert tree(project / "site") == tree(project / "clean")


@pytest.mark.parametrize("library", ["markdown", "nh3", "altair"])
def test_another_version_of_a_library_that_shapes_the_output_builds(
    project: Path, another_version: Callable[[str], None], library: str
) -> None:
    """After an upgrade of a library that shapes what is published (Markdown and nh3 make
    a description's HTML, Altair a chart's spec), a build of unchanged inputs runs: with
    the new version a clean build could differ."""
    another_version(library)
    assert not build_site(project / "data", project / "site", project=project).unchanged


def test_every_runtime_dependency_but_the_importers_own_shapes_the_output() -> None:
    """The libraries whose versions the inputs digest reads are the runtime dependencies
    pyproject.toml declares (and two that come with them: pydantic-core, MarkupSafe), but
    ruamel.yaml, which only the importers use; each is installed under that name."""
    import tomllib

    from jouleboard.engine.fingerprint import OUTPUT_LIBRARIES, _version

    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    names = {
        re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0].lower()
        for d in declared["project"]["dependencies"]
    }
    assert sorted(names - set(OUTPUT_LIBRARIES)) == ["ruamel.yaml"]
    assert sorted(set(OUTPUT_LIBRARIES) - names) == ["markupsafe", "pydantic-core"]
    assert [name for name in OUTPUT_LIBRARIES if _version(name) == "-"] == []


def release_project(tmp_path: Path) -> tuple[Path, str]:
    """A git repository whose data/ is the working release v2, with v1's data at the branch
    release-1 (the golden sample), built once into site/; and a later commit whose data/
    lacks one of v1's measurement files (v1 corrected)."""
    root = tmp_path / "repo"
    shutil.copytree(DATA, root / "data")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "v1")
    git(root, "branch", "release-1")
    os.unlink(sorted((root / "data" / "measurements").rglob("*.json"))[0])
    git(root, "add", "-A")
    git(root, "commit", "-qm", "v1 corrected")
    corrected = git(root, "rev-parse", "HEAD")
    site = yaml.safe_load((root / "data" / "site.yaml").read_text())
    (root / "data" / "site.yaml").write_text(yaml.safe_dump(site | {"data_version": "v2"}))
    releases = [
        {"version": "v2", "date": "2026-03-01", "notes_md": "Second release."},
        {"version": "v1", "date": "2026-02-16", "notes_md": "First.", "ref": "release-1"},
    ]
    (root / "data" / "releases.yaml").write_text(yaml.safe_dump({"releases": releases}))
    build_site(root / "data", root / "site", project=REPO)
    return root, corrected


def v1_configurations(site: Path) -> int:
    return len((site / "data" / "v1" / "configurations.csv").read_text().splitlines()) - 1


def test_a_release_ref_that_moved_builds_and_one_that_went_fails(tmp_path: Path) -> None:
    """An older release's data is what its git ref names when the site is built: a ref
    that moves (a branch that advances, a tag made again) while no file changes must not
    leave the last build's release data up to date; nor a ref that no longer resolves
    (a clean build fails on it)."""
    root, corrected = release_project(tmp_path)
    data, site = root / "data", root / "site"
    assert build_site(data, site, project=REPO).unchanged
    first = v1_configurations(site)
    git(root, "branch", "-f", "release-1", corrected)
    again = build_site(data, site, project=REPO)
    assert not again.unchanged
    assert v1_configurations(site) == first - 1  # the file the corrected v1 lacks
    build_site(data, tmp_path / "clean", project=REPO)
    assert tree(site) == tree(tmp_path / "clean")
    assert build_site(data, site, project=REPO).unchanged  # and then it is up to date
    git(root, "branch", "-D", "-q", "release-1")
    with pytest.raises(ValidationFailed) as failed:
        build_site(data, site, project=REPO)
    assert [p.rule for p in failed.value.problems] == ["release.ref-unreadable"]


def test_fonts_installed_or_removed_draw_again_the_charts_they_draw(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chart whose text vl-convert's own font cannot draw (a model's name in Chinese) is
    drawn with the system's fonts. After they change (here all hidden, as if removed), a
    build of unchanged inputs runs and draws those charts again: its site equals a clean
    build's, and those charts differ from the last build's (else the test shows nothing)."""
    from jouleboard.render.chart_files import _no_fonts_config

    root = tmp_path / "project"
    shutil.copytree(DATA, root / "data")
    models = root / "data" / "models.yaml"
    name = "通义千问 第三代 八十亿参数"  # the widest name on its charts' axes, so they fit it
    models.write_text(models.read_text().replace("nickname: Qwen 3 8B", f"nickname: {name}"))
    site = root / "site"
    build_site(root / "data", site, project=REPO)
    before = tree(site)
    monkeypatch.setenv("FONTCONFIG_FILE", str(_no_fonts_config(tmp_path)))
    assert not build_site(root / "data", site, project=REPO).unchanged
    build_site(root / "data", tmp_path / "clean", project=REPO)
    after = tree(site)
    assert after == tree(tmp_path / "clean")
    redrawn = sorted(path for path in after if after[path] != before.get(path))
    assert redrawn
    assert all(path.endswith(".svg") and name[:4] in (site / path).read_text() for path in redrawn)


def edited_output(site: Path) -> None:
    (site / "index.html").write_text("defaced")


def added_output(site: Path) -> None:
    (site / "stray.txt").write_text("not the build's")


def removed_output(site: Path) -> None:
    os.unlink(next(site.rglob("*.csv")))


OUTPUT_CHANGES: list[Callable[[Path], None]] = [edited_output, removed_output]


@pytest.mark.parametrize("change", OUTPUT_CHANGES, ids=[c.__name__ for c in OUTPUT_CHANGES])
def test_a_changed_output_is_rebuilt_to_a_clean_build(
    project: Path, tmp_path: Path, change: Callable[[Path], None]
) -> None:
    site = project / "site"
    expected = tree(site)
    change(site)
    again = build_site(project / "data", site, project=project)
    assert not again.unchanged
    assert tree(site) == expected


def test_a_folder_added_to_the_output_is_not_up_to_date(project: Path, tmp_path: Path) -> None:
    """An empty folder added to the output (no file in it to refuse) is not what the last
    build left: the build runs, and the site is a clean build's, without it."""
    site = project / "site"
    (site / "models" / "empty" / "deeper").mkdir(parents=True)
    assert not build_site(project / "data", site, project=project).unchanged
    assert not (site / "models" / "empty").exists()
    assert build_site(project / "data", site, project=project).unchanged


def test_a_file_added_to_the_output_is_refused_not_deleted(project: Path) -> None:
    """A file the last build did not write is someone's (a CNAME): the build refuses, naming
    it, rather than delete it; once it is gone (moved to static/) the site is rebuilt."""
    site = project / "site"
    expected = tree(site)
    added_output(site)
    with pytest.raises(OutputRefused, match=r"did not make \(stray\.txt\)"):
        build_site(project / "data", site, project=project)
    assert (site / "stray.txt").read_text() == "not the build's"
    (site / "stray.txt").unlink()
    assert build_site(project / "data", site, project=project).unchanged
    assert tree(site) == expected


def test_a_damaged_manifest_builds(project: Path) -> None:
    manifest = project / ".site.manifest.json"
    doc = json.loads(manifest.read_text())
    doc["build"]["pages"] += 1  # the checksum no longer matches
    manifest.write_text(json.dumps(doc))
    assert not build_site(project / "data", project / "site", project=project).unchanged


def test_nothing_to_do_imports_no_pipeline(project: Path) -> None:
    """`jouleboard build` with nothing to do reads the digest, not the data: in a fresh
    interpreter it imports neither the schema (pydantic), the kinds, the plan nor the
    templates (the no-op stays fast because none of them loads)."""
    code = (
        "import sys\n"
        "from jouleboard.cli import main\n"
        f"status = main(['build', '-q', '--data', {str(project / 'data')!r}, "
        f"'--out', {str(project / 'site')!r}])\n"
        "heavy = ['pydantic', 'jinja2', 'jouleboard.kinds', 'jouleboard.plan.views',\n"
        "         'jouleboard.loading.dataset', 'jouleboard.engine.assemble']\n"
        "print(status, [m for m in heavy if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=project, capture_output=True, text=True, check=True
    )
    assert "up to date" in done.stdout
    assert done.stdout.splitlines()[-1] == "0 []"
    # The same interpreter after an edit builds, and then the pipeline is imported.
    touch_measurement(project)
    again = subprocess.run(
        [sys.executable, "-c", code], cwd=project, capture_output=True, text=True, check=True
    )
    assert "built" in again.stdout
    assert "'jouleboard.engine.assemble'" in again.stdout.splitlines()[-1]


def test_the_code_digest_of_a_build_without_an_input_check_is_the_checks_own() -> None:
    """Pages and charts are keyed by the package's code (engine/fingerprint.py code_digest):
    the input check's digest of it where a build took one (the command line), else the
    process's own (serve). Both must be the same value, or a serve after a command-line
    build, and the other way round, would make every page and chart again."""
    from jouleboard.engine.fingerprint import Seen, code_digest, inputs_digest

    seen = Seen()
    assert inputs_digest(DATA, REPO, (), {}, seen) is not None
    assert len(seen.code) == 64
    assert code_digest(Seen()) == code_digest(seen) == seen.code
