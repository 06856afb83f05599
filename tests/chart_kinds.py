"""One chart of each kind the bundled site draws (the first of each by id), for the tests
that check a static render's spec against vl-convert."""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jouleboard.plan.views import ChartRef

REPO = Path(__file__).resolve().parents[1]
KINDS = 8  # the bundled site draws every kind


@functools.cache
def bundled_charts() -> Mapping[str, ChartRef]:
    """The charts of the bundled site's plan, planned once per test process (about 1.5 s of
    CPU): the tests that read them change none."""
    from jouleboard.core.urls import Urls
    from jouleboard.loading.dataset import load_dataset
    from jouleboard.plan.site import plan_site

    return plan_site(load_dataset(REPO / "data"), Urls()).charts


def one_of_each_kind() -> dict[str, Any]:
    """Chart kind -> the published spec of its first chart in the bundled site's plan (a copy
    of it, the caller's to change)."""
    charts = bundled_charts()
    kinds: dict[str, Any] = {}
    for cid in sorted(charts):
        kinds.setdefault(cid.split("--")[0], charts[cid].spec)
    assert len(kinds) == KINDS, sorted(kinds)
    return copy.deepcopy(kinds)
