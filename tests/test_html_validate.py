"""html-validate (npm, its ``html-validate:recommended`` preset) finds no error on any page.

The tool lives in its own small npm package, tools/htmlvalidate/ (exact versions in its
package-lock.json): ``npm ci --prefix tools/htmlvalidate`` installs it, as the README's test
command and .ci/run do. Without it the test is skipped on a developer's machine and fails
under CI (``CI`` set).

tools/htmlvalidate/htmlvalidate.json departs from the preset in four rules, each a choice of
the site and not a fault: ``CHANGED`` below holds the reasons, and a test keeps the two equal.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from tests.missing_tool import missing_tool

REPO = Path(__file__).resolve().parents[1]
TOOL = REPO / "tools" / "htmlvalidate"
CONFIG = TOOL / "htmlvalidate.json"
CLI = TOOL / "node_modules" / "html-validate" / "bin" / "html-validate.mjs"

# Every rule the config changes from the preset, and why.
CHANGED = {
    # Set, not off: the site writes `<!doctype html>` in lower case (HTML is case-blind here,
    # and tests/test_html_valid.py pins the exact opening of every page).
    "doctype-style": "lower case: the site's one spelling of the doctype",
    # Set, not off: ids come from slugs, and a model's slug keeps the dot of its version
    # ("deepseek-v3.1"), as its URL does. HTML allows any id without spaces; relaxed mode
    # checks exactly that. Renaming the ids would give one thing two names.
    "valid-id": "relaxed: ids keep the dots of model slugs, valid HTML",
    # A search-engine heuristic (titles cut near 70 characters in results), not validity:
    # titles name the model, task and chart in full so that a tab or a bookmark says what the
    # page is (WCAG 2.4.2); the long ones are embed pages, which are noindex.
    "long-title": "off: titles name model, task and chart in full",
    # WCAG technique H32 (a submit button) serves forms whose submission changes the context.
    # The explore, calculator and compare forms change nothing until the reader edits a field,
    # then update the page in place as the reader types (WCAG 3.2.2 is met without a button);
    # a submit button would do nothing.
    "wcag/h32": "off: the forms apply each change in place, there is nothing to submit",
}


def _cli() -> Path:
    if shutil.which("node") is None or not CLI.exists():
        message = (
            "html-validate is not installed: run `npm ci --prefix tools/htmlvalidate` "
            "(Node.js 20.19+)"
        )
        missing_tool(message)
    return CLI


def test_the_config_changes_only_the_documented_rules() -> None:
    config = json.loads(CONFIG.read_text(encoding="utf-8"))
    assert config["extends"] == ["html-validate:recommended"]
    assert set(config["rules"]) == set(CHANGED)
    for rule, setting in config["rules"].items():
        assert CHANGED[rule].startswith("off") == (setting == "off"), rule


def test_the_tools_are_pinned() -> None:
    """html-validate and axe-core (tests/browser/test_accessibility.py) at exact versions,
    the lock's."""
    package = json.loads((TOOL / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((TOOL / "package-lock.json").read_text(encoding="utf-8"))
    wanted = package["devDependencies"]
    assert set(wanted) == {"axe-core", "html-validate"}
    for name, version in wanted.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"pin an exact version of {name}"
        assert lock["packages"][f"node_modules/{name}"]["version"] == version, name


def validate(paths: list[Path], report: Path) -> list[dict[str, object]]:
    """html-validate's JSON report of ``paths`` (one entry per file that has messages)."""
    # The JSON formatter's output to a pipe is cut at 64 KB when node exits: a file is whole.
    done = subprocess.run(
        [
            "node",
            str(_cli()),
            "--config",
            str(CONFIG),
            "--formatter",
            f"json={report}",
            *map(str, paths),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]
    result: list[dict[str, object]] = json.loads(report.read_text(encoding="utf-8"))
    assert (done.returncode == 0) == (result == []), done.stderr[-2000:]
    return result


def test_the_validator_does_report_an_error(tmp_path: Path) -> None:
    page = tmp_path / "bad.html"
    page.write_text(
        '<!doctype html>\n<html lang="en"><head><title>x</title></head>'
        '<body><main><input id="a.b"><figure><img src="c.svg" alt="c">'
        "<figcaption>c</figcaption><details>"
        "<summary>s</summary></details></figure></main></body></html>\n",
        encoding="utf-8",
    )
    found = validate([page], tmp_path / "report.json")
    rules = {m["ruleId"] for f in found for m in f["messages"]}  # type: ignore[attr-defined]
    assert {"no-implicit-input-type", "element-permitted-order"} <= rules
    assert "valid-id" not in rules and "doctype-style" not in rules


def test_no_page_has_an_error(default_site: Path, tmp_path: Path) -> None:
    pages = sorted(default_site.rglob("*.html"))
    assert len(pages) > 200
    found = validate(pages, tmp_path / "report.json")
    errors = [
        f"{Path(str(f['filePath'])).relative_to(default_site).as_posix()}:{m['line']}: "
        f"{m['ruleId']}: {m['message']}"
        for f in found
        for m in f["messages"]  # type: ignore[attr-defined]
    ]
    if errors:
        by_rule = Counter(e.split(": ")[1] for e in errors)
        pytest.fail(
            f"{len(errors)} html-validate errors {dict(by_rule.most_common())}:\n"
            + "\n".join(errors[:80]),
            pytrace=False,
        )
