"""The GitHub workflows: valid against the workflow schema, and the rules we promise."""

from __future__ import annotations

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
