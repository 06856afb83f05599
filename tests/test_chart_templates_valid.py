"""Builds make chart templates without Altair's schema check (render/charts.py VALIDATE:
about half a template's cost in every build into a new output). Here every template the
bundled site uses is made again with the check on: each must be valid Vega-Lite as Altair's
schema states it, and the same spec the unchecked build makes."""

from __future__ import annotations

from pathlib import Path

import pytest

from jouleboard.core.urls import Urls
from jouleboard.loading.dataset import load_dataset
from jouleboard.plan.site import plan_site
from jouleboard.render import charts

pytestmark = pytest.mark.slow  # plans the bundled site twice

REPO = Path(__file__).resolve().parents[1]


def templates() -> list[object]:
    return [f for f in vars(charts).values() if callable(f) and hasattr(f, "cache_clear")]


def plan_specs() -> dict[str, object]:
    for made in templates():
        made.cache_clear()  # type: ignore[attr-defined]
    charts.trust_templates({})  # none from the disk cache: every one built by Altair
    plan = plan_site(load_dataset(REPO / "data"), Urls())
    return {c.id: c.spec for c in plan.charts.values()}


def test_every_template_is_valid_vega_lite(monkeypatch: pytest.MonkeyPatch) -> None:
    unchecked = plan_specs()
    monkeypatch.setattr(charts, "VALIDATE", True)
    checked = plan_specs()  # raises SchemaValidationError on an invalid template
    assert checked == unchecked and len(checked) > 100
    # Every chart kind was made (and so checked) at least once.
    unused = [t for t in templates() if t.cache_info().currsize == 0]  # type: ignore[attr-defined]
    assert not unused, unused


def test_no_template_makes_altair_look_a_class_up_by_schema(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every encoding reaches Altair as its typed channel: a shorthand string or a dict
    (x="a:Q", alt.value(...), alt.condition(...)) makes Altair match it against the
    Vega-Lite schema to find its class (SchemaBase.from_dict), about 0.2 s of each new
    process that makes templates (render/charts.py)."""
    import altair.utils.schemapi as schemapi

    looked_up: list[str] = []
    from_dict = schemapi.SchemaBase.from_dict.__func__  # type: ignore[attr-defined]

    def spy(cls: type, dct: object, /, *args: object, **kwargs: object) -> object:
        looked_up.append(f"{cls.__name__}: {dct!r}"[:120])
        return from_dict(cls, dct, *args, **kwargs)

    monkeypatch.setattr(schemapi.SchemaBase, "from_dict", classmethod(spy))
    assert len(plan_specs()) > 100
    assert looked_up == []
