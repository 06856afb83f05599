"""Issue 29 item 8: the task page's status line follows the search box as it changes."""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import Recorder
from tests.browser.test_explore import TABLE, eventually, open_task, snapshot, status

pytestmark = pytest.mark.browser


def test_status_line_follows_the_search(site_page: Recorder) -> None:
    page = open_task(site_page)
    meet = None
    for query in ("qwen", "qwen 3", "llama"):
        page.fill("#model-search", query)
        line = eventually(page, lambda: status(page), lambda s, q=query: f"“{q}”" in s)
        rows = snapshot(page, TABLE)
        shown = sum(not r["hidden"] for r in rows if len(r["cells"]) > 1)  # not "No model…"
        found = re.search(r"^(\d+) models meet .*\. (\d+) of them match(es)? “(.*)”\.$", line)
        assert found and int(found[2]) == shown, (line, shown)
        meet = meet or int(found[1])
        assert int(found[1]) == meet == len(rows) or shown == 0, line
    page.fill("#model-search", "")
    line = eventually(page, lambda: status(page), lambda s: "“" not in s)
    assert line.startswith(f"{meet} models meet ") and line.count(".") == 1, line
