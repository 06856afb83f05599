"""The GitHub workflows: valid against the workflow schema, and the rules we promise."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

WORKFLOWS = Path(__file__).resolve().parents[1] / ".github" / "workflows"
PR = WORKFLOWS / "pull-request.yml"
DEPLOY = WORKFLOWS / "deploy.yml"
# The workflows `jouleboard init` writes into a new site folder: held to the same rules.
NEW_SITE = Path(__file__).resolve().parents[1] / "jouleboard" / "skeleton" / "github" / "workflows"
ALL_WORKFLOWS = sorted([*WORKFLOWS.glob("*.yml"), *NEW_SITE.glob("*.yml")])


def load(path: Path) -> dict:
    doc = yaml.safe_load(path.read_text())
    doc["on"] = doc.pop(True, doc.get("on"))  # YAML 1.1 reads the key `on` as true
    return doc


def test_workflows_validate_against_the_github_schema() -> None:
    tool = shutil.which("check-jsonschema")
    if tool is None:
        pytest.skip("check-jsonschema is not installed (pip install -e '.[dev]')")
    result = subprocess.run(
        [tool, "--builtin-schema", "vendor.github-workflows", *map(str, ALL_WORKFLOWS)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_schema_check_catches_a_broken_workflow(tmp_path: Path) -> None:
    tool = shutil.which("check-jsonschema")
    if tool is None:
        pytest.skip("check-jsonschema is not installed")
    broken = tmp_path / "broken.yml"
    broken.write_text(PR.read_text().replace("runs-on:", "runs_on:", 1))
    result = subprocess.run(
        [tool, "--builtin-schema", "vendor.github-workflows", str(broken)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0


def test_pull_requests_run_read_only_without_target_trigger() -> None:
    pr = load(PR)
    assert set(pr["on"]) == {"pull_request"}
    for path in ALL_WORKFLOWS:
        assert "pull_request_target" not in load(path)["on"], path.name
        assert "secrets." not in path.read_text(), path.name
    assert pr["permissions"] == {"contents": "read"}
    assert all("permissions" not in job for job in pr["jobs"].values())
    steps = [s.get("run", "") + str(s.get("uses", "")) for s in pr["jobs"]["check"]["steps"]]
    joined = "\n".join(steps)
    for needed in (
        "jouleboard validate data --format github",
        "python build.py",
        "jouleboard diff",
        "GITHUB_STEP_SUMMARY",
        "python -m pytest",
        "actions/upload-artifact",
    ):
        assert needed in joined, needed


@pytest.mark.parametrize("path", [DEPLOY, NEW_SITE / "deploy.yml"], ids=["repo", "new-site"])
def test_deploy_has_pages_permissions_only_in_the_deploy_job(path: Path) -> None:
    deploy = load(path)
    assert deploy["on"]["push"]["branches"] == ["main"] and "workflow_dispatch" in deploy["on"]
    assert deploy["permissions"] == {"contents": "read"}
    assert deploy["concurrency"]["group"]
    # The build job only reads (configure-pages reads the Pages settings).
    assert deploy["jobs"]["build"]["permissions"] == {"contents": "read", "pages": "read"}
    assert deploy["jobs"]["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    uses = [s.get("uses", "") for job in deploy["jobs"].values() for s in job["steps"]]
    assert any(u.startswith("actions/upload-pages-artifact@") for u in uses)
    assert any(u.startswith("actions/deploy-pages@") for u in uses)
    setup = [
        s
        for s in deploy["jobs"]["build"]["steps"]
        if str(s.get("uses", "")).startswith("actions/setup-python")
    ]
    assert setup and setup[0]["with"]["cache"] == "pip"


def test_zizmor_finds_no_security_problem() -> None:
    tool = shutil.which("zizmor")
    if tool is None:
        pytest.skip("zizmor is not installed")
    result = subprocess.run(
        [tool, "--offline", "--min-severity", "low", *map(str, ALL_WORKFLOWS)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


def test_actions_are_pinned_to_commits() -> None:
    for path in ALL_WORKFLOWS:
        for job in load(path)["jobs"].values():
            for step in job["steps"]:
                if "uses" in step:
                    ref = step["uses"].split("@", 1)[1]
                    assert len(ref) == 40 and all(c in "0123456789abcdef" for c in ref), step


@pytest.mark.parametrize("path", [DEPLOY, NEW_SITE / "deploy.yml"], ids=["repo", "new-site"])
def test_deploy_takes_base_path_and_origin_from_configure_pages(path: Path) -> None:
    """No hard-coded /<repo>/: configure-pages knows user.github.io sites and custom domains;
    its origin becomes site_url; the chart cache is keyed by the vl-convert version."""
    steps = load(path)["jobs"]["build"]["steps"]
    pages = next(s for s in steps if str(s.get("uses", "")).startswith("actions/configure-pages@"))
    build = next(s for s in steps if s.get("name") == "Build")
    assert build["env"]["BASE_PATH"] == f"${{{{ steps.{pages['id']}.outputs.base_path }}}}"
    assert build["env"]["ORIGIN"] == f"${{{{ steps.{pages['id']}.outputs.origin }}}}"
    assert '--base-url "${BASE_PATH%/}/"' in build["run"]
    assert '--site-url "$ORIGIN"' in build["run"]
    assert "github.event.repository.name" not in path.read_text()
    cache = next(s for s in steps if str(s.get("uses", "")).startswith("actions/cache@"))
    assert cache["with"]["path"] == "~/.cache/jouleboard"
    assert "steps.vl.outputs.version" in cache["with"]["key"]
    version_step = next(s for s in steps if s.get("id") == "vl")
    assert "vl-convert-python" in version_step["run"]
    order = [steps.index(s) for s in (pages, cache, build)]
    assert order == sorted(order)


def test_ci_and_workflows_install_from_the_lock_file() -> None:
    root = WORKFLOWS.parents[1]
    for text in (PR.read_text(), DEPLOY.read_text(), (root / ".ci" / "run").read_text()):
        assert "-c constraints.txt" in text
    pins = [
        line
        for line in (root / "constraints.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert pins and all("==" in line for line in pins)
    assert any(line.startswith("vl-convert-python==") for line in pins)


def readme_test_command() -> list[str]:
    """The parts of the README's test command (its second code block), split at ``&&``."""
    readme = (WORKFLOWS.parents[1] / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, re.DOTALL)
    return [part.strip() for part in blocks[1].split("&&")]


def runs(command: str, line: str) -> bool:
    """Whether ``line`` runs ``command``, with any options added: each word of ``command`` in
    ``line``, in order."""
    words = iter(line.split())
    return all(word in words for word in command.split())


def test_ci_and_the_pull_request_check_install_what_the_readme_test_command_does() -> None:
    """.ci/run and, before its test step, the pull request check run each install of the
    README's test command (the npm tools as well: under CI a missing html-validate or
    axe-core fails its test), then the command's pytest; the check with CI set."""
    *installs, tests = readme_test_command()
    assert tests == "python -m pytest" and len(installs) == 2, installs
    ci = (WORKFLOWS.parents[1] / ".ci" / "run").read_text().splitlines()
    ci_command = next(line for line in ci if line.endswith(f"&& {tests}")).split("&&")[:-1]
    assert len(ci_command) == len(installs), ci_command
    assert all(map(runs, installs, ci_command)), ci_command
    steps = load(PR)["jobs"]["check"]["steps"]
    test_step = next(i for i, step in enumerate(steps) if step.get("run") == tests)
    assert steps[test_step]["env"]["CI"] == "true"
    for install in installs:
        assert any(runs(install, str(step.get("run", ""))) for step in steps[:test_step]), install


RELEASE = WORKFLOWS / "release.yml"
BUILD_FRONTEND = re.compile(r"python -m build(?=\s|$)")


def _builds_outside_the_checkout(step: dict) -> bool:
    """`python -m build` at the checkout root imports the project's build.py (the site build)
    instead of the build frontend: the step must leave the checkout before it runs."""
    run = step.get("run", "")
    match = BUILD_FRONTEND.search(run)
    if match is None:
        return True
    workdir = str(step.get("working-directory", ""))
    if workdir and workdir.rstrip("/") not in {".", "${{ github.workspace }}", "$GITHUB_WORKSPACE"}:
        return True
    before = run[: match.start()]
    return 'cd "$RUNNER_TEMP"' in before


def test_release_runs_only_on_version_tags() -> None:
    release = load(RELEASE)
    assert release["on"] == {"push": {"tags": ["v*"]}}
    assert release["concurrency"]["cancel-in-progress"] is False


def test_release_only_the_publish_job_may_mint_an_oidc_token() -> None:
    release = load(RELEASE)
    assert release["permissions"] == {"contents": "read"}
    jobs = release["jobs"]
    assert set(jobs) == {"build", "publish"}
    publish = jobs["publish"]
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["environment"] == {"name": "release"}
    assert publish["needs"] == "build"
    for name, job in jobs.items():
        assert "permissions" in job, name  # each job states what it may do
        writes = {scope for scope, level in job["permissions"].items() if level == "write"}
        assert writes == ({"id-token"} if name == "publish" else set()), name
        if name != "publish":
            assert "environment" not in job, name
        assert job["timeout-minutes"] > 0, name


def test_release_builds_outside_the_checkout() -> None:
    steps = load(RELEASE)["jobs"]["build"]["steps"]
    builds = [s for s in steps if BUILD_FRONTEND.search(s.get("run", ""))]
    assert len(builds) == 1
    build = builds[0]
    assert _builds_outside_the_checkout(build)
    assert '--sdist --wheel --outdir "$GITHUB_WORKSPACE/dist" "$GITHUB_WORKSPACE"' in build["run"]
    assert build["env"]["PIP_CONSTRAINT"] == "${{ github.workspace }}/constraints.txt"
    install = next(s for s in steps if "pip install build" in s.get("run", ""))
    assert re.search(r"pip install build==\d+(\.\d+)+\b", install["run"]), install["run"]
    assert steps.index(install) < steps.index(build)
    checkout = next(s for s in steps if str(s.get("uses", "")).startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] is False
    # The check itself: the same command run from the checkout root is refused.
    at_root = {"run": build["run"].replace('cd "$RUNNER_TEMP"\n', "")}
    assert not _builds_outside_the_checkout(at_root)
    in_workspace = {**at_root, "working-directory": "${{ github.workspace }}"}
    assert not _builds_outside_the_checkout(in_workspace)
    assert _builds_outside_the_checkout({**at_root, "working-directory": "${{ runner.temp }}"})


def test_release_publishes_with_trusted_publishing_and_no_token() -> None:
    release = load(RELEASE)
    text = RELEASE.read_text()
    for forbidden in ("secrets.", "github.token", "GITHUB_TOKEN", "password:", "api-token"):
        assert forbidden not in text, forbidden
    assert "env" not in release
    publish = release["jobs"]["publish"]
    assert "env" not in publish
    steps = publish["steps"]
    uses = [str(s.get("uses", "")).split("@", 1)[0] for s in steps]
    assert uses == ["actions/download-artifact", "pypa/gh-action-pypi-publish"]
    step = steps[1]
    assert "env" not in step
    assert set(step.get("with", {})) <= {"packages-dir", "print-hash", "verbose"}
    # The artifact the build job uploads is the one the publish job downloads, into dist/.
    upload = next(
        s
        for s in release["jobs"]["build"]["steps"]
        if str(s.get("uses", "")).startswith("actions/upload-artifact@")
    )
    assert upload["with"]["name"] == steps[0]["with"]["name"]
    assert upload["with"]["path"] == steps[0]["with"]["path"] == step["with"]["packages-dir"]


@pytest.mark.parametrize(("tag", "ok"), [("v{version}", True), ("v{version}.1", False)])
def test_release_refuses_a_tag_other_than_the_package_version(
    tmp_path: Path, tag: str, ok: bool
) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    from jouleboard import __version__

    steps = load(RELEASE)["jobs"]["build"]["steps"]
    check = next(s for s in steps if "TAG" in s.get("env", {}))
    assert check["env"]["TAG"] == "${{ github.ref_name }}"
    workspace = tmp_path / "workspace"
    (workspace / "dist").mkdir(parents=True)
    (workspace / "dist" / f"jouleboard-{__version__}-py3-none-any.whl").write_bytes(b"")
    (workspace / "dist" / f"jouleboard-{__version__}.tar.gz").write_bytes(b"")
    (tmp_path / "temp").mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "GITHUB_WORKSPACE": str(workspace),
        "RUNNER_TEMP": str(tmp_path / "temp"),
        "TAG": tag.format(version=__version__),
    }
    # As GitHub runs a `run:` step with the default bash shell.
    result = subprocess.run(
        [bash, "--noprofile", "--norc", "-eo", "pipefail", "-c", check["run"]],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert (result.returncode == 0) is ok, result.stdout + result.stderr
    if not ok:
        assert "does not match the package version" in result.stdout


@pytest.mark.parametrize("path", [PR, NEW_SITE / "pull-request.yml"], ids=["repo", "new-site"])
def test_a_pull_request_build_fails_on_warnings(path: Path) -> None:
    """A measurement in a misspelt folder (measurement/) is a warning, file.unread: the
    repository's check built without --strict, so such a pull request passed every step and
    its measurement was never published."""
    runs = [step.get("run", "") for job in load(path)["jobs"].values() for step in job["steps"]]
    builds = [run for run in runs if "build.py" in run or "jouleboard build" in run]
    assert builds and all("--strict" in run for run in builds), builds
