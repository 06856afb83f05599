"""A chart's SVG from vl-convert, its Vega-Lite compiled once per template (in a worker).

Charts made from one template differ only in their data rows: the default site's 124 Pareto
renders come from 6 templates, its 100 length charts from 2. A render whose template is
already compiled takes about a fifth less CPU (docs/architecture.md has the figures). So
:func:`svg` compiles a spec with each of its datasets replaced by a marker, keeps the Vega
it gets for the next chart with the same template, and puts each chart's rows where the
markers are before vl-convert renders the Vega. The SVG is the one
``vl_convert.vegalite_to_svg`` draws from the whole spec, byte for byte (tests/test_compiled.py
renders two charts of each kind of the default site both ways):

- a chart's rows reach vl-convert as the same JSON text, which it parses as it parses the
  whole spec (its parser reads some long numbers one unit in the last place off; the whole
  spec's rows are read the same way);
- the compiled Vega comes back to Python and goes to vl-convert again as text, so its own
  numbers are parsed a second time. A template is kept only if that parse gives back each
  of them exactly (:func:`_numbers_survive`); else its charts are rendered from the whole
  spec, as before.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, TypedDict

from jouleboard.core.jsonio import dumps_canonical

_ROWS = "__jouleboard_rows__"  # a marker's one field: the index of the dataset it stands for
_MARKER = re.compile(r'\[\{"__jouleboard_rows__":(\d+)\}\]')
_KEPT = 256  # templates a worker keeps compiled; a long-lived one (serve's) starts over then
_compiled: dict[str, str | None] = {}  # template -> its Vega JSON with markers (None: unsafe)


class FetchRule(TypedDict, total=False):
    """A conversion's keyword arguments for what it may read: see :func:`fetching_nothing`."""

    allowed_base_urls: list[str]


_fetch_rule: FetchRule | None = None  # see fetching_nothing


def fetching_nothing() -> FetchRule:
    """The keyword arguments that keep a conversion from reading any URL or file (a spec a
    worker warms up on is read from the published site, which someone may have edited).
    vl-convert 1 takes ``allowed_base_urls`` with each conversion; vl-convert 2 refuses it
    there (TypeError) and takes it once for the process, through ``configure``, which the
    first call here does. Call it before the process's first conversion: vl-convert 2
    restarts its engine when the rule changes (~0.08 s). A program that imports jouleboard
    and builds a site in its own process keeps the rule for its own conversions."""
    global _fetch_rule
    if _fetch_rule is None:
        import vl_convert

        configure = getattr(vl_convert, "configure", None)
        if configure is None:
            _fetch_rule = {"allowed_base_urls": []}
        else:
            configure(allowed_base_urls=[])
            _fetch_rule = {}
    return _fetch_rule


def svg(spec_json: str) -> str:
    """The SVG of the Vega-Lite spec ``spec_json`` (canonical JSON, data inline: nothing is
    fetched), as ``vl_convert.vegalite_to_svg`` draws it."""
    import vl_convert

    rule = fetching_nothing()  # before any conversion: see its note
    spec = json.loads(spec_json)
    datasets = spec.get("datasets") if isinstance(spec, dict) else None
    if isinstance(datasets, dict) and datasets and all(map(_rows, datasets.values())):
        names = sorted(datasets)
        spec["datasets"] = {name: [{_ROWS: i}] for i, name in enumerate(names)}
        template = dumps_canonical(spec)
        if template not in _compiled:
            if len(_compiled) >= _KEPT:
                _compiled.clear()
            _compiled[template] = _compile(template)
        vega = _compiled[template]
        if vega is not None:
            rows = [dumps_canonical(datasets[name]) for name in names]
            filled = _MARKER.sub(lambda marker: rows[int(marker.group(1))], vega)
            return vl_convert.vega_to_svg(filled, **rule)
    return vl_convert.vegalite_to_svg(spec_json, **rule)


def _rows(dataset: object) -> bool:
    """Whether ``dataset`` is rows, as the marker that stands for it is: a list of objects,
    not empty (Vega-Lite may compile other data differently)."""
    return isinstance(dataset, list) and bool(dataset) and all(isinstance(r, dict) for r in dataset)


def _compile(template: str) -> str | None:
    """``template``'s Vega as JSON text, or None when vl-convert would not read it back as it
    is (see :func:`_numbers_survive`), or when a marker did not come through whole."""
    import vl_convert

    vega = vl_convert.vegalite_to_vega(template)
    try:
        text = json.dumps(vega, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError:
        return None
    markers = _MARKER.findall(text)
    whole = text.count(_ROWS) == len(markers)  # no marker changed (a field added, say)
    known = set(markers) <= set(_MARKER.findall(template))
    return text if whole and known and _numbers_survive(vega) else None


def _numbers_survive(vega: Any) -> bool:
    """Whether vl-convert parses each number of ``vega`` written as JSON back to itself:
    they go through it in a spec's ``usermeta``, which Vega-Lite passes on untouched."""
    import vl_convert

    numbers = list(_floats(vega))
    if not numbers:
        return True
    probe = {"mark": "point", "usermeta": {"numbers": numbers}}
    back = vl_convert.vegalite_to_vega(json.dumps(probe, allow_nan=False))
    kept = back.get("usermeta", {}).get("numbers") if isinstance(back, dict) else None
    # (A number with no fraction may come back as an int: the same number to Vega.)
    return isinstance(kept, list) and kept == numbers


def _floats(value: Any) -> Iterator[float]:
    """Every float in a JSON value (integers are written, and parsed, exactly)."""
    if isinstance(value, float):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _floats(item)
    elif isinstance(value, list):
        for item in value:
            yield from _floats(item)
