"""`jouleboard docs` (issue 30, item 7): the documentation a message cites is one command
away, also for a wheel user (tests/test_package.py runs it from the installed wheel)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.cli_run import jouleboard as jouleboard_here

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"


def docs(*args: str) -> subprocess.CompletedProcess[str]:
    return jouleboard_here("docs", *args, cwd=REPO, timeout=60)


def test_lists_every_page_with_its_title() -> None:
    out = docs().stdout
    for page in DOCS.glob("*.md"):
        title = page.read_text(encoding="utf-8").splitlines()[0].removeprefix("# ")
        assert re.search(rf"^{re.escape(page.stem)} +{re.escape(title)}$", out, re.M), page


def test_help_names_every_page() -> None:
    """README names `api` a page of `jouleboard docs`; its --help left it out."""
    help_text = re.sub(r"-\s+", "-", docs("--help").stdout)  # a name wrapped at its hyphen
    help_text = " ".join(help_text.split())
    named = re.search(r"a page \(([^)]*)\)", help_text)
    assert named and set(named[1].split(", ")) == {p.stem for p in DOCS.glob("*.md")}


def test_prints_a_page_whole() -> None:
    text = (DOCS / "howto.md").read_text(encoding="utf-8")
    assert docs("howto").stdout == text
    assert docs("docs/howto.md").stdout == text  # as a hint or a link would name it


def test_prints_one_section_up_to_the_next() -> None:
    out = docs("howto", "add a gpu").stdout
    text = (DOCS / "howto.md").read_text(encoding="utf-8")
    start = text.index("## Add a GPU")
    assert out == text[start : text.index("\n## ", start) + 1].rstrip() + "\n"


def test_finds_where_a_rule_is_explained() -> None:
    out = docs("registry.unknown-nav-target").stdout
    assert out.startswith("[measurement-format: ")
    assert "| `registry.unknown-nav-target` |" in out


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("measurment-format",), "did you mean 'measurement-format'?"),
        (("howto", "Add GPU"), "did you mean 'add a gpu'?"),
        (("no.such-rule",), "no page explains the rule 'no.such-rule'"),
    ],
)
def test_a_wrong_page_section_or_rule_is_one_line_with_a_suggestion(
    args: tuple[str, ...], says: str
) -> None:
    done = docs(*args)
    assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr


def test_every_page_and_section_the_package_cites_exists() -> None:
    """Each hint of the form `jouleboard docs PAGE ["SECTION"]` in the package's source
    prints something: no message sends a user to a page or section that is not there."""
    cited = set()
    for path in (REPO / "jouleboard").rglob("*.py"):
        for match in re.finditer(
            r"`jouleboard docs ([a-z-]+)(?: \"?([A-Za-z ,]+?)\"?)?`", path.read_text()
        ):
            cited.add((match.group(1), match.group(2)))
    assert len(cited) >= 3
    for page, section in cited:
        done = docs(page, *([section] if section else []))
        assert done.returncode == 0 and done.stdout.strip(), (page, section, done.stderr)
