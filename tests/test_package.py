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


@pytest.mark.package
def test_fresh_venv_init_build_validate_rank_outside_the_checkout(
    wheel: Path, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    # The dependencies are reused from the environment running the tests (no download):
    # the base interpreter's (--system-site-packages) or, when the tests run in a virtual
    # environment, that environment's, named in a .pth file after the new venv's own
    # site-packages. The jouleboard imported below must be the wheel's copy, checked by its
    # path.
    run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], cwd=tmp_path)
    python, cli = venv / "bin" / "python", str(venv / "bin" / "jouleboard")
    own = run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], cwd=tmp_path
    ).stdout.strip()
    (Path(own) / "_test_dependencies.pth").write_text(
        "".join(f"{path}\n" for path in sites.getsitepackages()), encoding="utf-8"
    )
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


def _git(folder: Path, *args: str) -> str:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    return subprocess.run(
        [*git, "-C", str(folder), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


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
    _git(checkout, "init", "-q")
    _git(checkout, "commit", "-q", "--allow-empty", "-m", "c")
    commit = _git(checkout, "rev-parse", "HEAD")
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
        (  # a local wheel or a checkout without an https remote: said, not guessed
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
        got_line, got_note = requirement()
        assert got_line == line
        assert (got_note is None) if note is None else (note in (got_note or ""))
    _git(checkout, "remote", "add", "origin", "https://github.com/o/jouleboard")
    got_line, got_note = requirement()  # the checkout, now with an https remote
    assert got_line == f"jouleboard @ git+https://github.com/o/jouleboard@{commit}"
    assert got_note is not None and commit[:12] in got_note
