"""Tables that do not follow the page's controls say which setting they show (issue 29,
item 2): a task page's "Other deadlines" tables name their deadline and their GPUs."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def test_preset_deadline_tables_name_their_deadline_and_gpus(default_site: Path) -> None:
    tasks = yaml.safe_load((REPO / "data" / "tasks.yaml").read_text(encoding="utf-8"))
    gpus = yaml.safe_load((REPO / "data" / "site.yaml").read_text(encoding="utf-8"))["default_gpus"]
    checked = 0
    for task, info in tasks.items():
        page = (default_site / "tasks" / task / "index.html").read_text(encoding="utf-8")
        assert "the controls above do not change them" in page
        for ms in info.get("preset_deadlines_ms", []):
            if ms == info["default_deadline"]["ms"]:
                continue
            caption = re.search(
                re.escape(f'id="ranking-{task}-{ms:g}ms-caption">') + "([^<]*)", page
            )
            assert caption is not None, (task, ms)
            shown = f"{ms:g} ms" if info["kind"] != "diffusion" else f"{ms / 1000:g} s"
            assert f"≤ {shown}, on {' and '.join(gpus)}" in caption.group(1), caption.group(1)
            checked += 1
    assert checked >= 20
