"""The wheel is a generator anyone can install: built from the checkout, installed into a
fresh virtual environment, used from a folder outside the checkout (init, build, validate,
rank). Also the init command itself, in-process (fast)."""

from __future__ import annotations

import json
import os
import re
import shutil
import site as sites
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

import jouleboard
from jouleboard.commands.init import InitRefused, init_site
from jouleboard.config.content import about_markdown
from jouleboard.loading.dataset import load_dataset
from tests.git_repo import git

REPO = Path(__file__).resolve().parents[1]
# What a source distribution holds (MANIFEST.in): enough to build the wheel.
SOURCE = (
    "pyproject.toml",
    "setup.py",
    "MANIFEST.in",
    "README.md",
    "LICENSE",
    "NOTICE",
    "jouleboard",
    "templates",
    "content",
    "schema",
    "docs",
    "data",
)
WHEEL_LIMIT_BYTES = 2_000_000  # small enough to keep in a CI cache


def run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    # No PYTHONPATH: the venv must import jouleboard from its own site-packages.
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, timeout=600, env={**clean, **env}
    )
    assert result.returncode == 0, f"{args}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pip wheel from a copy of the source (an in-tree build would write into the checkout);
    no build isolation, so nothing is downloaded."""
    src = tmp_path_factory.mktemp("src")
    for name in SOURCE:
        if (REPO / name).is_dir():
            shutil.copytree(
                REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__", ".*")
            )
        else:
            shutil.copy2(REPO / name, src / name)
    dist = tmp_path_factory.mktemp("dist")
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(dist),
            str(src),
        ],
        cwd=src,
    )
    (built,) = dist.glob("jouleboard-*.whl")
    return built


@pytest.mark.package
def test_wheel_carries_templates_content_schema_example_and_licenses(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for template in (REPO / "templates").rglob("*"):
        if template.is_file():
            assert f"jouleboard/_resources/{template.relative_to(REPO).as_posix()}" in names
    assert "jouleboard/_resources/content/about.md" in names
    assert "jouleboard/_resources/schema/measurement.schema.json" in names
    for doc in (REPO / "docs").glob("*.md"):  # `jouleboard docs` prints them from the wheel
        assert f"jouleboard/_resources/docs/{doc.name}" in names
    assert "jouleboard/_resources/examples/mlenergy-v3.tar.gz" in names
    assert "jouleboard/skeleton/github/workflows/deploy.yml" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert any(n.endswith(".dist-info/licenses/NOTICE") for n in names)
    assert wheel.name == f"jouleboard-{jouleboard.__version__}-py3-none-any.whl"
    assert wheel.stat().st_size < WHEEL_LIMIT_BYTES


@pytest.fixture(scope="module")
def dependencies(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """jouleboard's dependencies without jouleboard: a folder of links to every entry of the
    site-packages running the tests but jouleboard's own (the checkout's editable install:
    its package, metadata and finder) and the .pth files. A fresh venv names it in a .pth
    file, so pip finds each dependency installed and needs no index, while the only
    jouleboard it can import or find installed is the one a test installs. (A venv with
    --system-site-packages would see the checkout's jouleboard, which pip may take as
    already installed.)"""
    view = tmp_path_factory.mktemp("dependencies")
    for folder in sites.getsitepackages():
        for entry in sorted(Path(folder).iterdir()):
            name = entry.name.casefold()
            own = name.startswith(("jouleboard", "__editable__")) or "jouleboard" in name
            if own or name.endswith(".pth") or (view / entry.name).exists():
                continue
            (view / entry.name).symlink_to(entry)
    return view


def fresh_venv(venv: Path, dependencies: Path) -> Path:
    """A new virtual environment seeing ``dependencies`` (and no jouleboard); its bin/. Its
    pip is the one among them, the tests' own, not a copy ensurepip installs (2.5 s each)."""
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=venv.parent)
    python = venv / "bin" / "python"
    own = run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        cwd=venv.parent,
    ).stdout.strip()
    (Path(own) / "_test_dependencies.pth").write_text(f"{dependencies}\n", encoding="utf-8")
    return venv / "bin"


@pytest.mark.package
def test_fresh_venv_init_build_validate_rank_outside_the_checkout(
    wheel: Path, dependencies: Path, tmp_path: Path
) -> None:
    # The jouleboard imported below must be the wheel's copy, checked by its path.
    venv = tmp_path / "venv"
    python, cli = fresh_venv(venv, dependencies) / "python", str(venv / "bin" / "jouleboard")
    run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        cwd=tmp_path,
    )
    home = tmp_path / "home"
    home.mkdir()
    where = run([str(python), "-c", "import jouleboard; print(jouleboard.__file__)"], cwd=home)
    assert Path(where.stdout.strip()).is_relative_to(venv)
    assert (
        run([cli, "--version"], cwd=home).stdout.strip() == f"jouleboard {jouleboard.__version__}"
    )

    run([cli, "init", "mysite"], cwd=home)
    site = home / "mysite"
    assert not (site / "templates").exists()  # the packaged templates are used
    build = run([cli, "build"], cwd=site)
    assert "built" in build.stdout and "load+validate" in build.stderr
    assert (site / "site" / "index.html").is_file()
    assert (site / "site" / "tasks" / "chat" / "index.html").is_file()
    assert "Example LLM 8B" in (site / "site" / "tasks" / "chat" / "index.html").read_text()
    b200 = (site / "site" / "gpus" / "b200" / "index.html").read_text()  # no config ran on it
    assert "<p>No task has a configuration measured on NVIDIA B200 yet.</p>" in b200
    assert run([cli, "validate"], cwd=site).stdout.startswith("ok: 1 configuration valid")
    # The documentation a hint cites is there for a wheel user, outside any checkout.
    assert run([cli, "docs", "howto", "Add a GPU"], cwd=site).stdout.startswith("## Add a GPU")
    ranked = run([cli, "rank", "--task", "chat", "--format", "csv"], cwd=site).stdout
    assert ranked.splitlines()[1].startswith("1,example-org/example-llm-8b,")

    run([cli, "init", "ml", "--example", "mlenergy-v3"], cwd=home)
    assert run([cli, "validate"], cwd=home / "ml").stdout.startswith(
        "ok: 1858 measurements valid (1855 configurations, 3 of them measured more than once)"
    )
    assert "ML.ENERGY Benchmark v3" in (home / "ml" / "NOTICE").read_text()


def test_init_writes_a_site_that_validates(tmp_path: Path) -> None:
    written = init_site(tmp_path / "new")
    for needed in (
        ".github/workflows/deploy.yml",
        ".github/workflows/pull-request.yml",
        "README.md",
        "requirements.txt",
        "data/site.yaml",
        "data/gpus.yaml",
        "data/tasks.yaml",
        "data/models.yaml",
    ):
        assert needed in written
    data = load_dataset(tmp_path / "new" / "data")
    assert len(data.configurations) == 1 and list(data.registry.tasks) == ["chat"]
    gpus = data.registry.gpus
    # Published board powers (W): B200 1000, H100 SXM 700, H200 SXM 700, AMD MI300X 750.
    assert {g: gpus[g].board_power_watts for g in gpus} == {
        "B200": 1000.0,
        "H100": 700.0,
        "H200": 700.0,
        "MI300X": 750.0,
    }
    assert gpus["MI300X"].vendor == "AMD"
    readme = (tmp_path / "new" / "README.md").read_text()
    assert "python -m pip install -r requirements.txt && jouleboard build" in readme
    assert "jouleboard serve" in readme and "$example_note" not in readme
    requirement = (tmp_path / "new" / "requirements.txt").read_text()
    assert f"jouleboard=={jouleboard.__version__}" in requirement


def test_init_example_keeps_the_attribution(tmp_path: Path) -> None:
    init_site(tmp_path / "ex", example="mlenergy-v3")
    site = yaml.safe_load((tmp_path / "ex" / "data" / "site.yaml").read_text())
    assert "ML.ENERGY Benchmark v3" in site["attribution_md"]
    assert "Apache" in (tmp_path / "ex" / "NOTICE").read_text()
    assert not (tmp_path / "ex" / "data" / "measurements" / "chat").exists()
    configurations = load_dataset(tmp_path / "ex" / "data").configurations
    # 1,858 files, three of them repeat runs folded into their configuration.
    assert (len(configurations), sum(c.runs for c in configurations)) == (1855, 1858)


@pytest.mark.parametrize("example", [None, "mlenergy-v3"])
def test_init_readme_and_about_page_speak_of_the_folders_own_data(
    example: str | None, tmp_path: Path
) -> None:
    """A fresh folder's about page must not claim ML.ENERGY's data source, GPUs or models,
    and the README's rank example must name a task the folder has."""
    site = tmp_path / "site"
    init_site(site, example=example)
    data = load_dataset(site / "data")
    readme = (site / "README.md").read_text()
    task = re.search(r"jouleboard rank --task (\S+?)`", readme)
    assert task and task.group(1) in data.registry.tasks, readme
    about = about_markdown(site)
    assert about is not None and "## What is measured" in about
    claims = ("ML.ENERGY", "Nemotron", "B200", "H100", "2026-02-16")
    if example is None:
        assert not [c for c in claims if c in about]
    else:
        assert "The ML.ENERGY Benchmark v3" in about


def test_init_refuses_a_non_empty_folder_and_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep me")
    with pytest.raises(InitRefused, match="non-empty"):
        init_site(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]
    (tmp_path / "file").write_text("x")
    with pytest.raises(InitRefused, match=r"file is a file;"):  # not "a non-empty file"
        init_site(tmp_path / "file")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "data/site.yaml" in init_site(empty)  # an empty folder is fine


class _Installed:
    """A stand-in for the installed distribution, holding ``direct_url.json``."""

    def __init__(self, direct_url: dict[str, object] | None) -> None:
        self.text = None if direct_url is None else json.dumps(direct_url)

    def read_text(self, name: str) -> str | None:
        return self.text if name == "direct_url.json" else None


def test_init_requires_jouleboard_from_where_it_was_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """requirements.txt of an init'd site must install on its CI (issue 30: it said
    jouleboard==0.1.0, which no package index has). PEP 610's direct_url.json says where the
    running jouleboard came from; each case's line, and the note init prints when CI cannot
    reach it."""
    import importlib.metadata

    from jouleboard.commands.init import requirement

    checkout = tmp_path / "checkout"
    checkout.mkdir()
    git(checkout, "init", "-q")
    git(checkout, "commit", "-q", "--allow-empty", "-m", "c")
    commit = git(checkout, "rev-parse", "HEAD")
    cases = [
        (None, f"jouleboard=={jouleboard.__version__}", None),
        (
            {
                "url": "https://github.com/o/jouleboard",
                "vcs_info": {"vcs": "git", "commit_id": "ab12"},
            },
            "jouleboard @ git+https://github.com/o/jouleboard@ab12",
            None,
        ),
        (
            {"url": "https://example.org/jouleboard-0.1.0-py3-none-any.whl", "archive_info": {}},
            "jouleboard @ https://example.org/jouleboard-0.1.0-py3-none-any.whl",
            None,
        ),
        (  # a checkout without an https remote: said, not guessed
            {"url": f"file://{checkout}", "dir_info": {"editable": True}},
            f"# jouleboard: say where CI installs it from (README.md)\n"
            f"jouleboard=={jouleboard.__version__}",
            f"jouleboard was installed from file://{checkout}, which the site's CI cannot reach",
        ),
    ]
    for direct_url, line, note in cases:
        monkeypatch.setattr(
            importlib.metadata, "distribution", lambda _n, d=direct_url: _Installed(d)
        )
        got = requirement()
        assert got.line == line and got.archive is None
        assert (got.note is None) if note is None else (note in (got.note or ""))
    git(checkout, "remote", "add", "origin", "https://github.com/o/jouleboard")
    got = requirement()  # the checkout, now with an https remote
    assert got.line == f"jouleboard @ git+https://github.com/o/jouleboard@{commit}"
    assert got.note is not None and commit[:12] in got.note


def test_init_from_a_local_wheel_vendors_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 39: a site made from a wheel wrote jouleboard==0.1.0, which no index has, so
    its first CI run failed. The wheel pip recorded (PEP 610: file URL and sha256) is
    copied into vendor/ and requirements.txt names it there; one that is gone or changed
    since is said, not copied."""
    import hashlib
    import importlib.metadata

    from jouleboard.commands.init import requirement

    wheel = tmp_path / "dist dir" / f"jouleboard-{jouleboard.__version__}-py3-none-any.whl"
    wheel.parent.mkdir()
    wheel.write_bytes(b"PK\x03\x04 a wheel")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    url = wheel.as_uri()  # file:///.../dist%20dir/jouleboard-...whl, as pip writes it
    for info in ({"hashes": {"sha256": digest}}, {"hash": f"sha256={digest}"}, {}):
        installed = {"url": url, "archive_info": info}
        monkeypatch.setattr(
            importlib.metadata, "distribution", lambda _n, d=installed: _Installed(d)
        )
        got = requirement()
        assert (got.line, got.note, got.archive) == (f"./vendor/{wheel.name}", None, wheel)
    written = init_site(tmp_path / "site", requirement_line=got.line, vendor=got.archive)
    assert f"vendor/{wheel.name}" in written
    assert (tmp_path / "site" / "vendor" / wheel.name).read_bytes() == wheel.read_bytes()
    lines = (tmp_path / "site" / "requirements.txt").read_text().splitlines()
    assert lines[-1] == f"./vendor/{wheel.name}"

    stale = {"url": url, "archive_info": {"hashes": {"sha256": "0" * 64}}}
    monkeypatch.setattr(importlib.metadata, "distribution", lambda _n: _Installed(stale))
    got = requirement()
    assert got.archive is None and "has changed since it was installed" in (got.note or "")
    wheel.unlink()
    monkeypatch.setattr(
        importlib.metadata, "distribution", lambda _n: _Installed({"url": url, "archive_info": {}})
    )
    got = requirement()
    assert got.archive is None and "is no longer there" in (got.note or "")
    assert got.line.endswith(f"jouleboard=={jouleboard.__version__}")


# What the GitHub expressions of the generated workflows' run steps stand for here: the
# base branch of a pull request, and what configure-pages says for a project site.
EXPRESSIONS = {
    "github.base_ref": "main",
    "steps.pages.outputs.base_path": "/mysite",
    "steps.pages.outputs.origin": "https://owner.github.io",
}


def workflow_steps(workflow: Path) -> list[tuple[str, str, dict[str, str]]]:
    """(name, script, environment) of every ``run`` step of ``workflow``'s jobs, in order,
    its ``${{ }}`` expressions replaced from :data:`EXPRESSIONS` (one it lacks fails)."""

    def value(text: str) -> str:
        def one(match: re.Match[str]) -> str:
            assert match.group(1) in EXPRESSIONS, f"{workflow.name}: {match.group(0)}"
            return EXPRESSIONS[match.group(1)]

        return re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", one, text)

    steps = []
    for job in yaml.safe_load(workflow.read_text(encoding="utf-8"))["jobs"].values():
        for step in job.get("steps", []):
            if "run" in step:
                env = {k: value(str(v)) for k, v in step.get("env", {}).items()}
                steps.append((step.get("name", step["run"]), value(step["run"]), env))
    return steps


@pytest.mark.package
def test_an_init_from_the_wheel_installs_and_builds_as_its_workflows_do_offline(
    wheel: Path, dependencies: Path, tmp_path: Path
) -> None:
    """Issue 39: a site init'd from a wheel wrote jouleboard==0.1.0 to requirements.txt,
    which no package index has, so its first CI run failed. A new user installs the wheel,
    runs jouleboard init and commits the folder; each generated workflow then runs in a
    fresh clone and a fresh venv, as on a runner, every run step as written (the checkout,
    setup-python and configure-pages actions stand in by the clone, the venv and
    EXPRESSIONS). pip may use no index (PIP_NO_INDEX): the dependencies are installed
    already (the dependencies fixture), and jouleboard can only come from the folder."""
    user = fresh_venv(tmp_path / "user-venv", dependencies)
    run([str(user / "python"), "-m", "pip", "install", "-q", "--no-index", str(wheel)], tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    made = run([str(user / "jouleboard"), "init", "mysite"], cwd=home)
    site = home / "mysite"
    assert f"vendor/{wheel.name}" in made.stderr and "note:" not in made.stderr
    assert (site / "vendor" / wheel.name).read_bytes() == wheel.read_bytes()
    assert (site / "requirements.txt").read_text().splitlines()[-1] == f"./vendor/{wheel.name}"
    readme = (site / "README.md").read_text()
    assert "python -m pip install -r requirements.txt && jouleboard build" in readme
    git(site, "init", "-q", "-b", "main")
    git(site, "add", "-A")
    git(site, "commit", "-q", "-m", "My leaderboard")

    workflows = sorted((site / ".github" / "workflows").glob("*.yml"))
    assert [w.name for w in workflows] == ["deploy.yml", "pull-request.yml"]
    for workflow in workflows:
        runner = tmp_path / workflow.stem
        runner.mkdir()
        checkout = runner / "checkout"  # the committed folder alone, with origin/main
        subprocess.run(["git", "clone", "-q", str(site), str(checkout)], check=True)
        assert (checkout / "vendor" / wheel.name).is_file()
        venv_bin = fresh_venv(runner / "venv", dependencies)
        outputs, summary = runner / "github_output", runner / "step_summary"
        environment = {
            **{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PATH")},
            "PATH": f"{venv_bin}:/usr/local/bin:/usr/bin:/bin",  # no other jouleboard
            "PIP_NO_INDEX": "1",
            "GITHUB_OUTPUT": str(outputs),
            "GITHUB_STEP_SUMMARY": str(summary),
            "JOULEBOARD_CACHE": str(runner / "chart-cache"),
        }
        steps = workflow_steps(workflow)
        assert steps[0][1] == "python -m pip install -r requirements.txt", steps[0]
        for name, script, env in steps:
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                cwd=checkout,
                env={**environment, **env},
                capture_output=True,
                text=True,
                timeout=900,
            )
            assert done.returncode == 0, f"{workflow.name}: {name}\n{done.stdout}\n{done.stderr}"
        # The jouleboard that ran is the vendored wheel, installed into the runner's venv.
        origin = subprocess.run(
            [
                str(venv_bin / "python"),
                "-c",
                "import importlib.metadata as m, jouleboard; print(jouleboard.__file__); "
                "print(m.distribution('jouleboard').read_text('direct_url.json'))",
            ],
            capture_output=True,
            text=True,
            check=True,
            env=environment,
            cwd=checkout,  # where the steps ran (python -c imports from its folder first)
        ).stdout.splitlines()
        assert Path(origin[0]).is_relative_to(runner / "venv")
        assert json.loads(origin[1])["url"] == (checkout / "vendor" / wheel.name).as_uri()
        built = (checkout / "site" / "index.html").read_text(encoding="utf-8")
        assert "Example LLM 8B" in built
        if workflow.name == "deploy.yml":  # under the project site's path, absolute links
            assert 'href="/mysite/tasks/chat/"' in built
            robots = (checkout / "site" / "robots.txt").read_text()
            assert "Sitemap: https://owner.github.io/mysite/sitemap.xml" in robots
            assert outputs.read_text().startswith("version=")
        else:
            assert "No ranking changes" in summary.read_text(), summary.read_text()
