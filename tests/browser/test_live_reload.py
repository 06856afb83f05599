"""`jouleboard serve` in a real browser: an open page reloads itself (once) after an edit,
with no request leaving the preview's origin."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.golden.tree import DATA, REPO

pytestmark = pytest.mark.browser


def start_serve(data: Path, out: Path) -> tuple[subprocess.Popen[str], str]:
    """``jouleboard serve`` on a free port, once it says where: the process and its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "jouleboard", "serve", "--data", str(data),
         "--out", str(out), "--port", "0"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    line = ""
    deadline = time.monotonic() + 120
    while "serving on" not in line:
        assert time.monotonic() < deadline and (line or proc.poll() is None), line
        line = proc.stdout.readline()
    return proc, line.split("serving on ", 1)[1].split()[0]


def test_an_open_page_reloads_after_an_edit(pw_context: Any, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    proc, url = start_serve(data, tmp_path / "preview")
    try:
        page = pw_context.new_page()
        loads: list[str] = []
        page.on("load", lambda p: loads.append(p.url))
        page.goto(url)
        assert page.title().endswith("jouleboard sample")
        page.wait_for_timeout(300)  # the reload request is held open by now
        site = yaml.safe_load((data / "site.yaml").read_text())
        site["title"] = "Edited in the editor"
        (data / "site.yaml").write_text(yaml.safe_dump(site))
        # No reload by the test: the page's own script does it once the rebuild is in.
        deadline = time.monotonic() + 60  # polled here: the page's CSP forbids eval
        while not page.title().endswith("Edited in the editor"):
            assert time.monotonic() < deadline, "the page did not reload after the edit"
            page.wait_for_timeout(100)
        names = page.evaluate("performance.getEntries().map(e => e.name)")
        assert all(u.startswith(url) or "://" not in u for u in names), names
        # One reload per edit: the page is served ahead of the commit, and the commit
        # that follows does not signal again.
        line = ""
        while not line.startswith("built "):
            assert time.monotonic() < deadline, "no end of the update"
            line = proc.stdout.readline()  # type: ignore[union-attr]
        page.wait_for_timeout(500)
        assert len(loads) == 2, loads
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_failed_rebuild_shows_in_the_open_page_until_the_next_build(
    pw_context: Any, tmp_path: Path
) -> None:
    """Issue 39: after a bad edit the terminal said "still serving the previous site" and
    the browser showed the old page with no sign. Now the open page shows the located
    problem over it, and the next good build takes it away (the page reloads)."""
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    proc, url = start_serve(data, tmp_path / "preview")
    try:
        page = pw_context.new_page()
        page.goto(url)
        page.wait_for_timeout(300)
        good = (data / "site.yaml").read_text()
        (data / "site.yaml").write_text(good + "colour_scheme: dark\n")
        banner = page.locator("#jouleboard-build-error")
        banner.wait_for(timeout=60_000)
        text = banner.inner_text()
        assert "the last rebuild failed" in text and "site.yaml: /colour_scheme" in text
        assert page.get_attribute("#jouleboard-build-error", "role") == "alert"
        (data / "site.yaml").write_text(good)
        deadline = time.monotonic() + 60
        while page.locator("#jouleboard-build-error").count():
            assert time.monotonic() < deadline, "the error stayed after a good build"
            page.wait_for_timeout(100)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# The page's first reload request waits this long (ms) before it leaves: as on a busy
# machine where the script runs late, an edit's whole rebuild lands before it is asked.
LATE_FIRST_REQUEST = """{ const f = window.fetch; let first = true;
  window.fetch = (...a) => {
    const late = first && String(a[0]).includes('/__jouleboard__/wait');
    if (late) first = false;
    return late ? new Promise((r) => setTimeout(r, 8000)).then(() => f(...a)) : f(...a);
  }; }"""


def test_a_page_reloads_after_an_edit_rebuilt_before_its_script_asked(
    pw_context: Any, tmp_path: Path
) -> None:
    """The reload script took the version of its first answer as the page's own: an edit
    rebuilt between the page's load and that answer was taken for the page, which kept
    its old content for good (found with every fetch of the browser suite delayed)."""
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    proc, url = start_serve(data, tmp_path / "preview")
    try:
        pw_context.add_init_script(LATE_FIRST_REQUEST)
        page = pw_context.new_page()
        page.goto(url)
        assert page.title().endswith("jouleboard sample")
        site = yaml.safe_load((data / "site.yaml").read_text())
        site["title"] = "Edited in the editor"
        (data / "site.yaml").write_text(yaml.safe_dump(site))
        line, deadline = "", time.monotonic() + 60
        while not line.startswith("built "):  # the rebuild is in, the script has not asked
            assert time.monotonic() < deadline, "no end of the update"
            line = proc.stdout.readline()  # type: ignore[union-attr]
        assert page.title().endswith("jouleboard sample")  # (the premise: not reloaded yet)
        while not page.title().endswith("Edited in the editor"):
            assert time.monotonic() < deadline, "the page did not reload after the edit"
            page.wait_for_timeout(100)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
