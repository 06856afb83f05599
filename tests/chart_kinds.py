"""One chart of each kind the bundled site draws (the first of each by id), for the tests
that check a static render's spec against vl-convert."""

from __future__ import annotations

from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
KINDS = 8  # the bundled site draws every kind


def one_of_each_kind() -> dict[str, Any]:
    """Chart kind -> the published spec of its first chart in the bundled site's plan."""
    from jouleboard.core.urls import Urls
    from jouleboard.loading.dataset import load_dataset
    from jouleboard.plan.site import plan_site

    plan = plan_site(load_dataset(REPO / "data"), Urls())
    kinds: dict[str, Any] = {}
    for cid in sorted(plan.charts):
        kinds.setdefault(cid.split("--")[0], plan.charts[cid].spec)
    assert len(kinds) == KINDS, sorted(kinds)
    return kinds
