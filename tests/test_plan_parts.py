"""Page builders' Parts gathered into one (plan/views.py parts): the same Part as adding them
in turn, in order."""

from __future__ import annotations

from typing import Any, cast

from jouleboard.plan.views import Part, parts


def _part(n: int) -> Part:
    # Stand-ins for pages, charts and downloads: a Part only keeps them in order.
    pages, charts, downloads = (
        cast(Any, tuple(f"{kind}{n}.{i}" for i in range(n % 3))) for kind in "pcd"
    )
    return Part(pages, charts, downloads, tuple((f"f{n}.{i}", "x") for i in range(n % 2)))


def test_parts_is_the_sum_of_its_items_in_order() -> None:
    items = [_part(n) for n in range(10)]
    chained = Part()
    for item in items:
        chained = chained + item
    assert parts(items) == chained
    assert parts(item for item in items) == chained  # any iterable, once through
    assert len(chained.pages) == sum(n % 3 for n in range(10)) > 0
    assert parts([]) == Part()
