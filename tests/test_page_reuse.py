"""A rebuild renders only the pages whose inputs changed (jouleboard/engine/reuse.py) and takes the
others from the last build's output, and its result is still the bytes of a clean build."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jouleboard.engine.build import build_site
from jouleboard.engine.fresh import key_of
from jouleboard.output.writer import LastFile, SiteFiles
from tests.golden.tree import REPO, tree
from tests.test_unchanged_rebuild import built_project

# A build in a new process (as `jouleboard build` runs), printing how many pages it rendered:
# page keys must not depend on the process that computed them.
_BUILD = """
import sys
from pathlib import Path
from jouleboard.engine.build import build_site
summary = build_site(Path(sys.argv[1]), Path(sys.argv[2]), project=Path(sys.argv[3]))
print(summary.pages, summary.rendered)
"""


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    return built_project(tmp_path)


def rebuild(project: Path) -> tuple[int, int]:
    done = subprocess.run(
        [sys.executable, "-c", _BUILD, str(project / "data"), str(project / "site"), str(project)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    pages, rendered = done.stdout.split()
    return int(pages), int(rendered)


def same_as_clean(project: Path, tmp_path: Path) -> bool:
    build_site(project / "data", tmp_path / "clean", project=project)
    return tree(project / "site") == tree(tmp_path / "clean")


def edit_one_measurement(project: Path, factor: float = 1.01) -> None:
    path = sorted((project / "data" / "measurements").rglob("*.json"))[0]
    doc = json.loads(path.read_text())
    doc["metrics"]["median_itl_ms"] *= factor
    path.write_text(json.dumps(doc))


def test_an_edited_measurement_renders_only_the_pages_that_show_it(
    project: Path, tmp_path: Path
) -> None:
    edit_one_measurement(project)
    pages, rendered = rebuild(project)
    assert 0 < rendered < pages
    assert same_as_clean(project, tmp_path)


def test_a_rebuild_takes_unchanged_files_unread(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last build's files whose keys are unchanged are linked into the new site as the
    manifest recorded them, not read and hashed again (not even the charts' SVGs, whose
    sizes the pages need: they are kept with the plan's parts, tests/test_kept_parts.py)
    nor held in memory or spooled to disk."""
    read: list[str] = []
    original_read, original_add = LastFile.read, SiteFiles.add
    taken: set[str] = set()

    def reading(self: LastFile) -> bytes:
        read.append(self.source.relative_to(project / "site").as_posix())
        return original_read(self)

    def adding(self: SiteFiles, path: str, content: str | bytes | LastFile) -> None:
        if isinstance(content, LastFile):
            taken.add(path)
        original_add(self, path, content)

    monkeypatch.setattr(LastFile, "read", reading)
    monkeypatch.setattr(SiteFiles, "add", adding)
    edit_one_measurement(project)
    summary = build_site(project / "data", project / "site", project=project)
    assert read == []
    assert len(taken) > summary.files / 2
    assert same_as_clean(project, tmp_path)


def test_an_edited_template_renders_every_page_that_uses_it(project: Path, tmp_path: Path) -> None:
    text = (REPO / "templates" / "base.html").read_text()
    (project / "templates" / "base.html").write_text(text.replace("Built with", "Made with"))
    pages, rendered = rebuild(project)
    assert rendered == pages  # every page extends base.html
    assert "Made with" in (project / "site" / "index.html").read_text()
    assert same_as_clean(project, tmp_path)


def test_a_page_altered_in_the_output_is_rendered_again(project: Path, tmp_path: Path) -> None:
    page = project / "site" / "glossary" / "index.html"
    page.write_text(page.read_text().replace("<title>", "<titl3>", 1))
    edit_one_measurement(project)  # so the build runs at all; the glossary does not show it
    rebuild(project)
    assert "<titl3>" not in page.read_text()
    assert same_as_clean(project, tmp_path)


def test_equal_values_have_equal_keys_however_they_share_objects() -> None:
    """Records parsed from their files share strings (a validated literal is the schema's own
    object) that records unpickled from the kept reads hold apart."""
    shared = "mxfp4"
    apart = "".join(["mx", "fp4"])
    assert shared == apart and shared is not apart
    assert key_of(((shared, shared), [shared]), "b") == key_of(((shared, apart), [apart]), "b")
    assert key_of((shared,), "b") != key_of((shared,), "c") != key_of(("bf16",), "c")


def test_the_first_rebuild_after_files_were_parsed_renders_no_more(project: Path) -> None:
    """The project's build parsed every measurement file; later builds take them from the
    kept reads. An edit and its undoing change the same pages, so they render as many."""
    edit_one_measurement(project)
    _, first = rebuild(project)  # after the build that parsed the files
    edit_one_measurement(project, 1 / 1.01)
    _, second = rebuild(project)  # after one that took them from the kept reads
    assert 0 < first == second
