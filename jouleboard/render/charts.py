"""Chart kinds as Vega-Lite spec templates (built once with Altair); pages bind only data.

Each kind reads named data sets (``table``, and ``deadline`` for the deadline rule), so a
page's chart is ``bind(template, datasets, title)``: a dict copy, no Altair work. Altair is
imported on first use only. Spec strings come from this module and from registry names;
numbers come from validated records.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import json
import math
import os
import sys
import tempfile
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias, TypeVar

from jouleboard.core.shapes import JsonObject, JsonValue, Scalar
from jouleboard.render.point_names import NAME_DX, NAME_DY, NAME_DY_CENTRE, NAME_SIZE
from jouleboard.render.text_fit import measured, text_width, wrap

if TYPE_CHECKING:  # imported where a chart is built (first use only)
    import altair as alt

Spec: TypeAlias = "JsonObject"  # a Vega-Lite spec
_TEMPLATE_CAP = 4 * 1024 * 1024  # bytes; a cached chart template is a few kB
_Value = TypeVar("_Value")  # an Altair value channel (alt.SizeValue, ...)


_trusted: dict[str, str] = {}  # template key -> sha256 of its spec text (trust_templates)
_made: dict[str, str] = {}  # the same for every template this process built or checked


def trust_templates(record: object) -> None:
    """Trust the cached templates the last build into this output used: ``record`` is what
    :func:`templates_made` gave that build (from its manifest), key -> digest of the spec
    text. Anything else in it is ignored."""
    _trusted.clear()
    if isinstance(record, dict):
        _trusted.update(
            (k, v)
            for k, v in record.items()
            if isinstance(k, str) and isinstance(v, str) and len(v) == 64
        )


def templates_made() -> dict[str, str]:
    """Every template this process built or checked, and those the last build into the
    same output trusted (:func:`trust_templates`): key -> sha256 of its spec text, for the
    manifest (the next build into the same output trusts these, and only these). A build
    that takes parts of the plan from the last one (jouleboard/engine/kept_parts.py) binds
    none of their charts, and its next build may need their templates again."""
    return dict(sorted({**_trusted, **_made}.items()))


def template(build: Callable[..., Spec]) -> Callable[..., Spec]:
    """Memoise a chart kind in memory and on disk, so a build whose templates are cached
    never imports Altair. The key covers this module's source and the Altair version.

    The templates the bundled data and the test data use ship with the package
    (:data:`PACKAGED`, made by tools/chart_templates.py): with the Altair version they were
    made with, and this very module, no build of those data imports Altair, not even the
    first into a new output (Altair and the templates were ~0.3 s of it).

    A template read from the disk cache is a spec the site publishes, and whoever can write
    the cache can write one: it is used only when its text has the digest the last build
    into the same output recorded for its key (:func:`trust_templates`), which is the text
    this code made then. Otherwise it is built again (importing Altair); a cached entry
    that differs from it is replaced, with a one-line warning, and never used."""

    @functools.cache
    def cached(*args: str) -> Spec:
        from jouleboard.render.chart_files import DEFAULT_CACHE

        key = template_key(build.__name__, args)
        _uses[key] = (build.__name__, args)
        shipped = _packaged().get(key)
        if shipped is not None:  # as trusted as the code it ships with
            _made[key] = hashlib.sha256(shipped.encode()).hexdigest()
            packaged: Spec = json.loads(shipped)
            return packaged
        path = DEFAULT_CACHE / "chart-templates" / f"{key}.json"
        text = _cached_text(path)
        digest = hashlib.sha256(text.encode()).hexdigest() if text is not None else ""
        if text is not None and digest == _trusted.get(key):
            spec: Spec = json.loads(text)
        else:
            made = json.dumps(build(*args), sort_keys=True)
            spec = json.loads(made)  # as the next build reads it: page keys see the same order
            if text != made:
                if text is not None:
                    print(
                        f"warning: chart cache entry {path} refused (not the chart template "
                        "this jouleboard makes); made again from Altair",
                        file=sys.stderr,
                    )
                _store_template(path, made)
            digest = hashlib.sha256(made.encode()).hexdigest()
        _made[key] = digest
        return spec

    return functools.wraps(build)(cached)


def template_key(name: str, args: Sequence[str]) -> str:
    """The key of chart kind ``name``'s template for ``args``: it covers the installed Altair
    and this module's source, which make it."""
    altair, source = _makers()
    return hashlib.sha256(json.dumps([name, tuple(args), altair, source]).encode()).hexdigest()


@functools.cache
def _makers() -> tuple[str, str]:
    """What makes every template: Altair's version and the digest of this module's source
    (looked up once, not once per template)."""
    from importlib.metadata import version

    return version("altair"), hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


PACKAGED = Path(__file__).with_name("chart_templates.json")
_uses: dict[str, tuple[str, tuple[str, ...]]] = {}  # key -> (kind, args), this process's


def templates_used() -> dict[str, tuple[str, tuple[str, ...]]]:
    """The chart kind and arguments of every template this process has asked for, by key
    (what tools/chart_templates.py packages)."""
    return dict(sorted(_uses.items()))


@functools.cache
def _packaged() -> dict[str, str]:
    """The templates shipped in :data:`PACKAGED`: key -> spec text; none if it is missing
    or odd (they are then built, as on a new Altair)."""
    try:
        doc = json.loads(PACKAGED.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict):
        return {}
    return {
        key: entry["spec"]
        for key, entry in doc.items()
        if isinstance(entry, dict) and isinstance(entry.get("spec"), str)
    }


def _cached_text(path: Path) -> str | None:
    """The text of a cached template, or None (missing, a link, a pipe, oversized, not
    UTF-8): a link or pipe in the cache is never followed or read."""
    from jouleboard.core.safe_read import FileRefused, read_capped

    try:
        return read_capped(path, _TEMPLATE_CAP).decode("utf-8")
    except (FileRefused, ValueError):
        return None


def _store_template(path: Path, text: str) -> None:
    """Cache ``text`` at ``path`` if the cache can be written (it is only a shortcut): a
    private new file renamed over the entry, so a link planted at a guessable temporary
    name is never written through."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


AXIS_GREY = "#6b6b6b"
DEADLINE_RED = "#c0392b"
# Colour-blind-safe categorical palette (Okabe-Ito) for GPUs.
GPU_COLORS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00"]
# Models: ten colours, each at least 3:1 against the light page (white) and the dark one
# (#121417), so one SVG reads in both schemes (WCAG 1.4.11), and none near the deadline's
# red or the axes' grey. Chosen by maximising the smallest CIEDE2000 difference between any
# two (22 or more), then ordered so that each next colour is the one farthest from those
# before it: the first six also stay 15 or more apart for readers with protanopia or
# deuteranopia (Machado et al. 2009). A task's best-ranked models get the first ones
# (model_colors), and the compare page gives them out in the order models are chosen.
MODEL_COLORS = (
    "#0c60cc",  # blue
    "#849c00",  # yellow-green
    "#009c90",  # teal
    "#846000",  # brown
    "#009cd8",  # sky blue
    "#f04884",  # pink
    "#9c3c9c",  # purple
    "#0c7830",  # green
    "#9c84d8",  # lavender
    "#d87824",  # orange
)


OTHER = "Other models"  # the one legend entry of the models past the palette
OTHER_GREY = "#757575"  # 3:1 on the light and the dark page, far from every palette colour


def model_colors(models: Sequence[str], palette: Sequence[str] = MODEL_COLORS) -> dict[str, str]:
    """Each of ``models`` (one task's, best ranked first) with its colour on the task's
    charts: the palette in order, so the models most looked at get the most distinct
    colours; past the palette, one grey (:data:`OTHER_GREY`): a chart drawing two grey
    models names them beside their marks (:func:`shared_colors`), or gives them one legend
    entry (:data:`OTHER`). Same order, same colours."""
    return {m: palette[i] if i < len(palette) else OTHER_GREY for i, m in enumerate(models)}


def shared_colors(colors: Mapping[str, str]) -> tuple[str, ...]:
    """The models of ``colors`` (a chart's, model -> colour) whose colour another has: a
    reader cannot match them to a legend, so the chart names them."""
    counts: dict[str, int] = {}
    for color in colors.values():
        counts[color] = counts.get(color, 0) + 1
    return tuple(m for m, color in colors.items() if counts[color] > 1)


def log_title(title: str) -> str:
    """An axis title that says its scale is logarithmic: ``Energy per token (J)`` ->
    ``Energy per token (J, log scale)``; ``Latency`` -> ``Latency (log scale)``."""
    if title.endswith("log scale)"):
        return title
    if title.endswith(", log)"):
        return f"{title[: -len(', log)')]}, log scale)"
    if title.endswith(")"):
        return f"{title[:-1]}, log scale)"
    return f"{title} (log scale)"


CONFIG: Spec = {
    "background": "transparent",
    # Arial's metrics (Liberation Sans and Arimo share them): vl-convert measures text in
    # Liberation Sans to lay a static SVG out, so the reader's browser draws the same widths
    # and no label outgrows the space it was given.
    "font": "Liberation Sans, Arial, Helvetica, Arimo, sans-serif",
    "view": {"stroke": None},
    "axis": {
        "labelColor": AXIS_GREY,
        "titleColor": AXIS_GREY,
        "gridColor": "#8884",
        "domainColor": AXIS_GREY,
        "tickColor": AXIS_GREY,
        "labelFontSize": 11,
        "titleFontSize": 12,
        "titleFontWeight": "normal",
        "labelOverlap": True,
        "labelSeparation": 4,
    },
    # Linear axes: about five labelled values, not one every few pixels.
    "axisQuantitative": {"tickCount": 5},
    # A legend's text is at least the size of every other text of the chart (the axis
    # titles' 12 px): it is what a reader matches each colour by.
    "legend": {
        "labelColor": AXIS_GREY,
        "titleColor": AXIS_GREY,
        "labelFontSize": 12,
        "titleFontSize": 12,
        "titleFontWeight": "normal",
        "labelLimit": 260,
        "symbolSize": 120,
        "rowPadding": 4,
    },
    "title": {"color": AXIS_GREY, "fontSize": 13, "fontWeight": "normal", "anchor": "start"},
}


WIDTH = 640  # the static SVG's width; the interactive view fits its container
PER_MODEL = 0  # height placeholder: one 24 px band per model, set by bind()


# Log axes: label the decades and their 2x/5x steps only; grid lines and tick marks at the
# labelled values only, the decades stronger, so a log-log chart is not a mesh of minor
# lines. Thousands and up read 1k, 20k, 100k; overlapping labels are dropped.
_LEAD = "slice(format(datum.value, '.0e'), 0, 1)"
_LABELLED = f"indexof(['1','2','5'], {_LEAD}) >= 0"
LOG_AXIS: JsonObject = {
    "labelExpr": f"{_LABELLED} ? (datum.value >= 1000 ? format(datum.value, '~s') : "
    "format(datum.value, '~g')) : ''",
    "gridOpacity": {
        "condition": [
            {"test": f"{_LEAD} === '1'", "value": 0.8},
            {"test": _LABELLED, "value": 0.35},
        ],
        "value": 0,
    },
    "tickOpacity": {"condition": {"test": _LABELLED, "value": 1}, "value": 0},
    "labelOverlap": "greedy",
    "labelSeparation": 6,
}


# Whether Altair checks each template against the Vega-Lite schema as it is made: about
# half of a template's cost, paid by every build into a new output folder. The templates
# are this module's own, so the tests check them (tests/test_chart_templates_valid.py)
# and builds do not.
VALIDATE = False

# Every encoding is given to Altair as its typed channel (alt.X("a:Q"), alt.SizeValue(...)),
# never as a shorthand string or a dict (x="a:Q", alt.value(...), alt.condition(...)): Altair
# finds the class of those by matching them against the Vega-Lite schema, which took 0.2 s
# of every new process that made templates. The specs are the same.


def _if_chosen(channel: Callable[..., _Value], chosen: object, other: object) -> _Value:
    """A value channel: ``chosen`` for the configurations chosen at the deadline, ``other``
    for the rest."""
    return channel(other, condition={"test": "datum.chosen", "value": chosen})


def _finish(chart: alt.Chart | alt.LayerChart | alt.FacetChart, height: int) -> Spec:
    # altair types to_dict() loosely: from here on the spec is checked as plain JSON.
    # The size is set on the dict: chart.properties() would deep-copy the whole chart first.
    spec: Spec = chart.to_dict(validate=VALIDATE)
    spec["width"], spec["height"] = WIDTH, height
    spec.pop("config", None)
    spec["config"] = copy.deepcopy(CONFIG)
    # The static SVG grows around its plot so long labels are never clipped; the
    # interactive view (site.js) fits its container instead.
    spec["autosize"] = {"type": "pad"}
    return spec


@template
def ranking_bar(value_title: str) -> Spec:
    """Horizontal bars of tokens/J, one per model, in rank order, each in its model's
    colour (bind ``colors``); the axis names the models, so no legend."""
    import altair as alt

    base = alt.Chart(alt.NamedData("table")).encode(
        y=alt.Y(
            "model:N",
            sort=alt.EncodingSortField("rank", op="min", order="ascending"),
            title=None,
            axis=alt.Axis(labelLimit=240),
        ),
        x=alt.X("value:Q", title=value_title),
    )
    bars = base.mark_bar(cornerRadiusEnd=2).encode(
        color=alt.Color("model:N", title="Model", scale=_model_scale(), legend=None),
        tooltip=[
            alt.Tooltip("model:N", title="Model"),
            alt.Tooltip("places:N", title="Place"),
            alt.Tooltip("gpu:N", title="GPU"),
            alt.Tooltip("shown:N", title=value_title),
            alt.Tooltip("interval:N", title="Within measurement noise"),
        ],
    )
    # The interval the measurement noise allows (low..high; a point when it is unknown).
    whiskers = base.mark_errorbar(ticks={"size": 8}, color=AXIS_GREY, thickness=1.5).encode(
        x=alt.X("low:Q", title=value_title), x2=alt.X2("high:Q")
    )
    # ``shown``: the figure as the tables print it (measure/formats.py), never re-rounded;
    # past the interval's end, so the whisker never runs through it.
    # ``label``: the figure, and the places where the noise lets the model share them.
    labels = base.mark_text(align="left", dx=4, color=AXIS_GREY).encode(
        x=alt.X("high:Q"), text=alt.Text("label:N")
    )
    spec = _finish(alt.layer(bars, whiskers, labels), PER_MODEL)
    # Room for the longest bar's figure, which a fitted (phone) chart does not count.
    spec["padding"] = {"left": 5, "top": 5, "bottom": 5, "right": 84}
    return spec


def _model_legend() -> alt.Color:
    """Colour by model (one colour per model site-wide: :func:`_model_scale`), with the
    legend under the chart in two columns."""
    import altair as alt

    return alt.Color(
        "model:N",
        title="Model",
        scale=_model_scale(),
        legend=alt.Legend(orient="bottom", columns=2, symbolLimit=40, symbolOpacity=1),
    )


def _model_scale() -> alt.Scale:
    """A model colour scale until bind sets each model's own (``colors``)."""
    import altair as alt

    return alt.Scale(range=list(MODEL_COLORS))


def _deadline_rule() -> alt.Chart:
    import altair as alt

    rule: alt.Chart = (
        alt.Chart(alt.NamedData("deadline"))
        .mark_rule(strokeDash=[6, 4], color=DEADLINE_RED, strokeWidth=1.5)
        .encode(x=alt.X("latency:Q"))
    )
    return rule


DEADLINE_LABEL_Y = -4  # px: the label's baseline, above the plot, where no line runs
DEADLINE_LABEL_DX = 3  # px between the rule and the label's near end
_ON_RIGHT = "datum.side === 'right'"  # the rule in the right half: its label goes left


def _deadline_label() -> alt.Chart:
    """The deadline's label, above the plot (clear of its own rule and of every data line)
    and beside the rule on the side with more room (``side``: see bind). One text mark
    whose alignment and offset follow each row's ``side``. Two marks, one per side, each
    blank on the other's rows, drew the same pixels (all 146 images of the default build
    with a deadline) with a mark, a data set and two transforms more."""
    import altair as alt

    label: alt.Chart = (
        alt.Chart(alt.NamedData("deadline"))
        .mark_text(
            align=alt.ExprRef(f"{_ON_RIGHT} ? 'right' : 'left'"),
            dx=alt.ExprRef(f"{_ON_RIGHT} ? {-DEADLINE_LABEL_DX} : {DEADLINE_LABEL_DX}"),
            baseline="bottom",
            y=DEADLINE_LABEL_Y,
            color=DEADLINE_RED,
        )
        .encode(x=alt.X("latency:Q"), text=alt.Text("label:N"))
    )
    return label


# Where a point's name is drawn (its row's ``name_at``): the text's alignment and its
# offset from the point, across and (up or down) along (px; render/point_names.py).
NAME_PLACES: tuple[tuple[str, Literal["left", "center", "right"], int, int], ...] = (
    ("left", "right", -NAME_DX, NAME_DY),
    ("centre", "center", 0, NAME_DY_CENTRE),
    ("right", "left", NAME_DX, NAME_DY),
)


def side(value: float, values: list[float]) -> str:
    """``right`` when ``value`` lies in the right half of ``values``' log range, so a label
    beside it goes to its left and stays inside the chart; else ``left``."""
    low, high = min([value, *values]), max([value, *values])
    if low <= 0 or high <= low:
        return "left"
    return "right" if math.log(value / low) / math.log(high / low) > 0.5 else "left"


@template
def task_scatter(
    latency_title: str, energy_title: str = "Energy per token (J)", energy_unit: str = "J/token"
) -> Spec:
    """Every configuration: energy per token vs latency (log-log), colour by model (the
    models past the palette in one grey, :data:`OTHER`), shape by GPU; each model's chosen
    configuration drawn large and outlined."""
    import altair as alt

    # A model picked in the legend (interactive view) stays coloured; the rest fade.
    pick = alt.selection_point(fields=["legend"], bind="legend", name="pick")
    x, y = _log_xy(latency_title, energy_title)
    base = alt.Chart(alt.NamedData("table"))
    points = (
        base.transform_calculate(shade="datum.chosen ? 1 : 0.35")
        .mark_point(filled=True)
        .encode(
            x=x,
            y=y,
            # ``legend``: the model's name, or OTHER past the palette (one grey entry).
            color=alt.Color(
                "legend:N",
                title="Model",
                scale=_model_scale(),
                legend=alt.Legend(orient="bottom", columns=2, symbolLimit=40, symbolOpacity=1),
            ),
            shape=alt.Shape(
                "gpu:N",
                title="GPU",
                legend=alt.Legend(orient="bottom", symbolOpacity=1, symbolFillColor=AXIS_GREY),
            ),
            size=_if_chosen(alt.SizeValue, 150, 24),
            # The chosen configurations stand out: the others are small and faint.
            opacity=alt.OpacityValue(
                0.08,
                condition={
                    "param": pick.name,
                    "field": "shade",
                    "type": "quantitative",
                    "scale": None,
                    "legend": None,
                },
            ),
            stroke=_if_chosen(alt.StrokeValue, "#111", None),
            tooltip=[
                alt.Tooltip("model:N", title="Model"),
                alt.Tooltip("config:N", title="Setup"),
                alt.Tooltip("energy:Q", title=energy_unit, format=".4f"),
                alt.Tooltip("latency:Q", title=latency_title, format=".1f"),
            ],
        )
        .add_params(pick)
    )
    spec = _finish(alt.layer(points, _deadline_rule(), _deadline_label()), 380)
    spec["usermeta"] = {"other": OTHER}  # js/charts.js drawScatter names the rest alike
    return spec


def _log_xy(latency_title: str, energy_title: str) -> tuple[alt.X, alt.Y]:
    """Latency (x) and energy (y) on log scales, their titles saying so."""
    import altair as alt

    return (
        alt.X(
            "latency:Q", scale=alt.Scale(type="log"), title=log_title(latency_title), axis=LOG_AXIS
        ),
        alt.Y(
            "energy:Q", scale=alt.Scale(type="log"), title=log_title(energy_title), axis=LOG_AXIS
        ),
    )


def _energy_whiskers(which: str, latency_title: str, energy_title: str) -> alt.Chart:
    """Vertical intervals (``low``..``high``) of energy on a log-log chart, for the points
    ``which`` (a Vega expression) selects: the Pareto frontier, never empty where a chart
    has a point."""
    import altair as alt

    whiskers: alt.Chart = (
        alt.Chart(alt.NamedData("table"))
        .transform_filter(which)
        .mark_rule(strokeWidth=1.5)
        .encode(
            x=alt.X(
                "latency:Q",
                scale=alt.Scale(type="log"),
                title=log_title(latency_title),
                axis=LOG_AXIS,
            ),
            y=alt.Y(
                "low:Q", scale=alt.Scale(type="log"), title=log_title(energy_title), axis=LOG_AXIS
            ),
            y2=alt.Y2("high:Q"),
        )
    )
    return whiskers


@template
def pareto(
    latency_title: str, energy_title: str = "Energy per token (J)", energy_unit: str = "J/token"
) -> Spec:
    """One model's configurations with its Pareto frontier drawn as a step line."""
    import altair as alt

    base = alt.Chart(alt.NamedData("table"))
    x, y = _log_xy(latency_title, energy_title)
    frontier = (
        base.transform_filter("datum.frontier")
        .mark_line(color=AXIS_GREY, strokeWidth=1.5, interpolate="step-after")
        .encode(x=x, y=y, order=alt.Order("latency:Q"))
    )
    points = base.mark_point(filled=True, size=60).encode(
        x=x,
        y=y,
        color=alt.Color(
            "gpu:N",
            title="GPU",
            scale=alt.Scale(range=GPU_COLORS),
            legend=alt.Legend(orient="bottom"),
        ),
        shape=alt.Shape(
            "kind:N",
            title="Configuration",
            scale=alt.Scale(domain=["Pareto frontier", "other"], range=["diamond", "circle"]),
            # Vega fills a shape legend's symbols black: unseen on a dark page. The chart
            # grey follows the scheme (THEME_STYLE, live-chart.js themed), as the GPU legends'.
            legend=alt.Legend(orient="bottom", symbolFillColor=AXIS_GREY, symbolOpacity=1),
        ),
        tooltip=[
            alt.Tooltip("config:N", title="Setup"),
            alt.Tooltip("energy:Q", title=energy_unit, format=".4f"),
            alt.Tooltip("latency:Q", title=latency_title, format=".1f"),
        ],
    )
    whiskers = _energy_whiskers("datum.frontier", latency_title, energy_title).encode(
        color=alt.ColorValue(AXIS_GREY)
    )
    return _finish(alt.layer(frontier, whiskers, points, _deadline_rule(), _deadline_label()), 300)


@template
def length_histogram() -> Spec:
    """Output-length distribution: counts per length bin."""
    import altair as alt

    bars = (
        alt.Chart(alt.NamedData("table"))
        .mark_bar(color="#0072B2")
        .encode(
            x=alt.X("start:Q", title="Output length (tokens)", bin="binned"),
            x2=alt.X2("end:Q"),
            y=alt.Y("count:Q", title="Responses"),
            tooltip=[
                alt.Tooltip("start:Q", title="From", format=",.0f"),
                alt.Tooltip("end:Q", title="To", format=",.0f"),
                alt.Tooltip("count:Q", title="Responses"),
            ],
        )
    )
    return _finish(bars, 180)


MLPERF_BAND = 40  # px a system takes on an MLPerf chart: its bar, and under it its sources


@template
def mlperf_bars(value_title: str) -> Spec:
    """An MLPerf benchmark's systems as horizontal bars of its ranked figure (``value``,
    its text ``shown``), one per system and scenario (``model``: the bar's name), coloured
    by scenario; under each bar the measured throughput and wall power it is derived from
    (``derivation``)."""
    import altair as alt

    base = alt.Chart(alt.NamedData("table")).encode(
        y=alt.Y(
            "model:N",
            sort=alt.EncodingSortField("order", op="min", order="ascending"),
            title=None,
            axis=alt.Axis(labelLimit=240, ticks=False),
        )
    )
    x = alt.X("value:Q", title=value_title)
    bars = base.mark_bar(cornerRadiusEnd=2, height=14, yOffset=-8).encode(
        x=x,
        color=alt.Color(
            "scenario:N",
            title="Scenario",
            scale=alt.Scale(domain=["Server", "Offline"], range=GPU_COLORS[:2]),
            legend=alt.Legend(orient="bottom"),
        ),
        tooltip=[
            alt.Tooltip("system:N", title="System"),
            alt.Tooltip("scenario:N", title="Scenario"),
            alt.Tooltip("shown:N", title=value_title),
            alt.Tooltip("derivation:N", title="From"),
        ],
    )
    figures = base.mark_text(align="left", dx=4, yOffset=-8, color=AXIS_GREY).encode(
        x=x, text=alt.Text("shown:N")
    )
    sources = base.mark_text(align="left", dx=4, yOffset=9, color=AXIS_GREY).encode(
        x=alt.XDatum(0), text=alt.Text("derivation:N")
    )
    spec = _finish(alt.layer(bars, figures, sources), PER_MODEL)
    # Room for the longest bar's figure, which a fitted (phone) chart does not count.
    spec["padding"] = {"left": 5, "top": 5, "bottom": 5, "right": 96}
    return spec


@template
def gpu_compare(value_title: str) -> Spec:
    """Best tokens/J of each model on each GPU, as dots on a shared axis."""
    import altair as alt

    dots = (
        alt.Chart(alt.NamedData("table"))
        .mark_point(filled=True, size=90)
        .encode(
            y=alt.Y(
                "model:N",
                title=None,
                sort=alt.EncodingSortField("order", order="ascending"),
                axis=alt.Axis(labelLimit=240),
            ),
            x=alt.X("value:Q", title=value_title),
            color=alt.Color(
                "gpu:N",
                title="GPU",
                scale=alt.Scale(range=GPU_COLORS),
                legend=alt.Legend(orient="bottom"),
            ),
            tooltip=[
                alt.Tooltip("model:N", title="Model"),
                alt.Tooltip("gpu:N", title="GPU"),
                alt.Tooltip("value:Q", title=value_title, format=".2f"),
            ],
        )
    )
    return _finish(dots, PER_MODEL)


@template
def compare_pareto(latency_title: str) -> Spec:
    """Several models' configurations and Pareto frontiers on one chart (compare page)."""
    import altair as alt

    base = alt.Chart(alt.NamedData("table"))
    x, y = _log_xy(latency_title, "Energy per token (J)")
    # js/charts.js sets each model's own colour (the explore data's ``color``).
    color = alt.Color(
        "model:N",
        title="Model",
        scale=_model_scale(),
        legend=alt.Legend(orient="bottom", columns=2),
    )
    lines = (
        base.transform_filter("datum.frontier")
        .mark_line(strokeWidth=2, interpolate="step-after")
        .encode(x=x, y=y, color=color, order=alt.Order("latency:Q"), detail=alt.Detail("model:N"))
    )
    # Each model's configuration chosen at the deadline is drawn large and outlined.
    points = base.mark_point(filled=True).encode(
        x=x,
        y=y,
        color=color,
        shape=alt.Shape(
            "gpu:N",
            title="GPU",
            legend=alt.Legend(orient="bottom", symbolFillColor=AXIS_GREY, symbolOpacity=1),
        ),
        size=_if_chosen(alt.SizeValue, 160, 40),
        opacity=_if_chosen(alt.OpacityValue, 1.0, 0.5),
        stroke=_if_chosen(alt.StrokeValue, "#111", None),
        tooltip=[
            alt.Tooltip("model:N", title="Model"),
            alt.Tooltip("config:N", title="Setup"),
            alt.Tooltip("energy:Q", title="J/token", format=".4f"),
            alt.Tooltip("latency:Q", title=latency_title, format=".1f"),
        ],
    )
    # Each frontier point's interval (never an empty layer, which makes Vega warn: a model
    # drawn has a frontier, while none of its points may meet the deadline).
    whiskers = _energy_whiskers("datum.frontier", latency_title, "Energy per token (J)").encode(
        color=color
    )
    return _finish(alt.layer(lines, whiskers, points, _deadline_rule(), _deadline_label()), 340)


ACCURACY_HEIGHT = 380  # px of the accuracy chart's plot (its names are placed in it)


@template
def accuracy_energy() -> Spec:
    """Accuracy against energy per response (log x), one point per model, with the Pareto
    front of models that no other beats on both; the front's models are named, and any
    model whose colour another shares (rows with ``named``)."""
    import altair as alt

    base = alt.Chart(alt.NamedData("table"))
    x = alt.X(
        "energy:Q",
        scale=alt.Scale(type="log"),
        axis=LOG_AXIS,
        title=log_title("Energy per response (J)"),
    )
    y = alt.Y("accuracy:Q", title="Accuracy (%, vendor-reported)", scale=alt.Scale(zero=False))
    front = (
        base.transform_filter("datum.frontier")
        .mark_line(color=AXIS_GREY, strokeDash=[4, 3], interpolate="step-after")
        .encode(x=x, y=y, order=alt.Order("energy:Q"))
    )
    # Opaque: a faded point loses the 3:1 its colour has against the page (dark scheme).
    points = base.mark_point(filled=True, size=90, opacity=1).encode(
        x=x,
        y=y,
        color=_model_legend(),
        tooltip=[
            alt.Tooltip("model:N", title="Model"),
            alt.Tooltip("builder:N", title="Builder"),
            alt.Tooltip("accuracy:Q", title="Accuracy (%)", format=".1f"),
            alt.Tooltip("energy:Q", title="J/response", format=",.0f"),
            alt.Tooltip("per_correct:Q", title="J/correct answer", format=",.0f"),
        ],
    )
    # The front's models are named, and those whose colour another shares (``named``; the
    # others' names would collide), each where its row says (``name_at``, ``below``: chosen
    # clear of the other marks by plan/task_charts.py accuracy_spec).
    labels = [
        base.transform_calculate(
            shown=(
                f"datum.named && datum.name_at === '{at}' && {'' if low else '!'}datum.below "
                "? datum.model : ''"
            )
        )
        .mark_text(align=align, dx=dx, dy=dy if low else -dy, fontSize=NAME_SIZE, color=AXIS_GREY)
        .encode(x=x, y=y, text=alt.Text("shown:N"))
        for at, align, dx, dy in NAME_PLACES
        for low in (False, True)
    ]
    return _finish(alt.layer(front, points, *labels), ACCURACY_HEIGHT)


SENSITIVITY_HEIGHT = 300  # px of the deadline chart's plot
LINE_LABEL_SIZE = 12  # px: a line's name at its end, the size of a legend's
LINE_LABEL_GAP = 14  # px between two line names' baselines


# The tables' display rules (measure/formats.py show) in d3's format language, for tooltips:
# fixed2 21.42 and 2.00; sig3 2.96, 37.7 and 0.0123.
D3_FORMATS = {"fixed2": ",.2f", "sig3": ",.3r"}


@template
def deadline_sensitivity(
    latency_title: str,
    value_title: str,
    rule: str = "",
    deadline_unit: str = "ms",
    value_format: str = ",.2f",
) -> Spec:
    """Each model's best efficiency as the deadline loosens (a step line per model, log x
    and log y, so lines far apart in value all keep their shape): where lines cross, the
    ranking changes. Each line is named at its right end (bind ``ends``: the rows of
    plan/task_charts.py sensitivity_ends, names moved apart so none overlaps), not by a
    legend; ``rule``: "rule" draws the default deadline (when it lies inside the data).
    The tooltip gives the deadline in ``deadline_unit`` and the value in d3's
    ``value_format``, which reads as the tables do (21.42 tokens/J, not 21.4)."""
    import altair as alt

    x = alt.X(
        "latency:Q",
        scale=alt.Scale(type="log", nice=False),
        title=log_title(latency_title),
        axis=LOG_AXIS,
    )

    def y_of(field: str) -> alt.Y:
        return alt.Y(
            f"{field}:Q",
            scale=alt.Scale(type="log", nice=False),
            title=log_title(value_title),
            axis=LOG_AXIS,
        )

    y = y_of("value")
    color = alt.Color("model:N", title="Model", scale=_model_scale(), legend=None)
    base = alt.Chart(alt.NamedData("table"))
    lines = base.mark_line(
        interpolate="step-after", strokeWidth=2, point=alt.OverlayMarkDef(size=18)
    ).encode(
        x=x,
        y=y,
        color=color,
        order=alt.Order("latency:Q"),
        tooltip=[
            alt.Tooltip("model:N", title="Model"),
            alt.Tooltip("latency:Q", title=f"Deadline from ({deadline_unit})", format=",.4~g"),
            alt.Tooltip("value:Q", title=value_title, format=value_format),
        ],
    )
    ends = alt.Chart(alt.NamedData("ends"))
    # From each line's end to its name (the name moved up or down to clear the others).
    leaders = ends.mark_rule(strokeWidth=1, x2Offset=6).encode(
        x=x, x2=alt.X2("latency:Q"), y=y, y2=alt.Y2("label_value:Q"), color=color
    )
    names = (
        ends.transform_calculate(shown="split(datum.lines, '\\n')")
        .mark_text(
            align="left",
            baseline="middle",
            dx=9,
            fontSize=LINE_LABEL_SIZE,
            lineHeight=LINE_LABEL_GAP,
            color=AXIS_GREY,
        )
        .encode(x=x, y=y_of("label_value"), text=alt.Text("shown:N"))
    )
    layers = [lines, leaders, names]
    if rule:
        layers += [_deadline_rule(), _deadline_label()]
    return _finish(alt.layer(*layers), SENSITIVITY_HEIGHT)


def with_domains(spec: Spec, domains: Mapping[str, tuple[float, float]]) -> Spec:
    """``spec`` with each positional channel of ``domains`` ("x", "y") drawn over exactly
    that range (no rounding out to nice values), in every layer; data rows shared."""

    def adapt(node: JsonObject) -> JsonObject:
        out = {
            key: value if key in _DATA_KEYS else _each(adapt, value) for key, value in node.items()
        }
        for channel, (low, high) in domains.items():
            enc = out.get(channel)
            scale = enc.get("scale") if isinstance(enc, dict) else None
            if isinstance(enc, dict) and isinstance(scale, dict):
                out[channel] = {**enc, "scale": {**scale, "domain": [low, high]}}
        return out

    return adapt(spec)


PHONE_WIDTH = 350  # a phone render's whole width: a 390 px screen less the page margins
PHONE_AXIS_LABELS = 125  # px of an axis label's line on a phone
AXIS_LABEL_SIZE = 11  # px (CONFIG's axis labelFontSize)
TITLE_SIZE = 12  # px (CONFIG's axis titleFontSize)
PHONE_TITLE = 200  # px of a line of an x axis's title on a phone
LABEL_LINE = 12  # px between the two lines of a wrapped axis label


def wrapped_labels(
    names: Collection[str], width: float = PHONE_AXIS_LABELS
) -> dict[str, list[str]]:
    """Each name wider than ``width`` px at the axis font, broken at its spaces into two
    lines: the first as many whole words as fit, the second the rest (never a word cut in
    the middle; a second line still too wide is ended with an ellipsis by the axis, the
    chart's description and tooltip keeping the whole name)."""
    out = {}
    for name in sorted(set(names)):
        if text_width(name, AXIS_LABEL_SIZE) <= width:
            continue
        lines = wrap(name, width, AXIS_LABEL_SIZE)
        out[name] = [lines[0], " ".join(lines[1:])] if len(lines) > 1 else lines
    return out


def _wrapped_axis(axis: JsonObject, labels: Mapping[str, list[str]]) -> None:
    """A band axis whose long names take two lines, centred on their band."""
    wrapped = json.dumps(labels, ensure_ascii=False, sort_keys=True)
    two = json.dumps(sorted(n for n, lines in labels.items() if len(lines) > 1), ensure_ascii=False)
    axis["labelExpr"] = f"({wrapped})[datum.label] || datum.label"
    axis["labelLineHeight"] = LABEL_LINE
    # Vega draws a label's first line at the band's middle: two lines move up by half one.
    axis["labelOffset"] = {
        "condition": {"test": f"indexof({two}, datum.label) >= 0", "value": -LABEL_LINE / 2},
        "value": 0,
    }


def static(spec: Spec) -> Spec:
    """The spec a static SVG is rendered from: without Vega's per-mark ARIA labels. The page
    shows the SVG as an image whose alt text describes it (the markup inside an image is
    not read out), and the labels doubled its bytes and cost ~5 % of its render time; the
    published spec, which vega-embed renders live, keeps them. Without its title too: the
    figure's caption (and an embed's heading) says it, and the image repeated it. Without
    its tooltips: an image shows none, they change no byte of the SVG, and they cost ~4 %
    of its render time (tests/test_chart_static.py)."""

    def drop_tooltips(node: JsonObject) -> JsonObject:
        return {
            key: value if key in _DATA_KEYS else _each(drop_tooltips, value)
            for key, value in node.items()
            if key != "tooltip"
        }

    config = spec.get("config", {})
    out = {**spec, "config": {**(config if isinstance(config, dict) else {}), "aria": False}}
    out.pop("title", None)
    return drop_tooltips(out)


def phone(spec: Spec) -> Spec:
    """The phone render of a chart: its whole width fits a 390 px screen, so its text is
    drawn at its own size (never under 10 px); legends take one column, long model names on
    an axis take two lines (broken between words, never cut in the middle), and the title
    is left to the page's caption. The data rows are shared with ``spec``, not copied (they
    are most of its size, and nothing here changes them)."""

    datasets = spec.get("datasets", {})
    names = {
        model
        for rows in (datasets.values() if isinstance(datasets, dict) else ())
        if isinstance(rows, list)
        for row in rows
        if isinstance(row, dict) and isinstance(model := row.get("model"), str)
    }
    labels = wrapped_labels(names)
    wraps = False

    def adapt(node: JsonObject) -> JsonObject:
        nonlocal wraps
        out = {
            key: value if key in _DATA_KEYS else _each(adapt, value) for key, value in node.items()
        }
        axis, legend = out.get("axis"), out.get("legend")
        if isinstance(axis, dict) and _number(axis.get("labelLimit", 0)) > PHONE_AXIS_LABELS:
            axis["labelLimit"] = PHONE_AXIS_LABELS
            if labels:  # the chart's long names, each on two lines of its own
                _wrapped_axis(axis, labels)
                wraps = True
        if isinstance(legend, dict):
            legend.update(columns=1, labelLimit=PHONE_WIDTH - 40)
        x = out.get("x")
        title = x.get("title") if isinstance(x, dict) else None
        if isinstance(x, dict) and isinstance(title, str):
            # A long axis title under a narrow plot: two lines, not one past the chart's edge.
            lines: list[JsonValue] = [*wrap(title, PHONE_TITLE, TITLE_SIZE)]
            out["x"] = {**x, "title": lines if len(lines) > 1 else title}
        return out

    out = adapt(spec)
    # A chart's own phone data (usermeta.phone: its line names wrapped narrower, say).
    meta = spec.get("usermeta")
    own = meta.get("phone") if isinstance(meta, dict) else None
    own_data = own.get("datasets") if isinstance(own, dict) else None
    if isinstance(own, dict) and isinstance(own_data, dict) and isinstance(datasets, dict):
        out["datasets"] = {**datasets, **own_data}
        out["height"] = own.get("height", out.get("height"))
    out["width"] = PHONE_WIDTH
    out["autosize"] = {"type": "fit-x", "contains": "padding"}
    height = out.get("height")
    if wraps and isinstance(height, int):
        # One band per model: room for a name's two lines (24 px a band on a desktop).
        out["height"] = round(height * 28 / 24)
    out.pop("title", None)
    return out


_DATA_KEYS = frozenset({"datasets", "values"})  # where a spec keeps its data rows


def _each(adapt: Callable[[JsonObject], JsonObject], node: JsonValue) -> JsonValue:
    """``node`` with ``adapt`` applied to every object in it (lists walked, the rest kept)."""
    if isinstance(node, list):
        return [_each(adapt, value) for value in node]
    return adapt(node) if isinstance(node, dict) else node


# Vega measures every axis and legend label against its labelLimit, to cut a longer one with
# an ellipsis: ~14 % of the static renders' time (a log-log Pareto chart: 42 -> 36 ms). A
# limit that no label can reach changes no byte of the picture, so :func:`uncut` drops it.
AXIS_LABEL_LIMIT = 180  # px: Vega-Lite's labelLimit of an axis that sets none
LEGEND_LABEL_LIMIT = 160  # px: and of a legend
LABEL_FONT_SIZE = 10  # px: Vega-Lite's label size where none is set
LABEL_ROOM = 2  # px a label is kept under its limit (kerning, rounding)
_LEGEND_CHANNELS = frozenset(
    {
        "color",
        "fill",
        "stroke",
        "shape",
        "size",
        "opacity",
        "fillOpacity",
        "strokeOpacity",
        "strokeWidth",
        "strokeDash",
    }
)
_NAMED = frozenset({"nominal", "ordinal"})  # types whose labels are the field's values
_REWORDED = frozenset({"labelExpr", "format", "formatType", "labelFont", "values"})


def uncut(spec: Spec) -> Spec:
    """``spec`` with no label limit (``labelLimit`` 0) on an axis channel or on its legends
    where every label they can show is known to fit the limit: each is printable, of
    characters whose Liberation Sans widths :func:`~jouleboard.render.text_fit.text_width`
    knows (:func:`~jouleboard.render.text_fit.measured`), and at least :data:`LABEL_ROOM` px
    under it. A band axis or a legend shows its field's
    values (the spec's data rows hold every one: a field a transform makes, or any transform
    but a filter or a calculation, leaves the limits alone); a log axis labelled by
    :data:`LOG_AXIS` shows a few characters. Only for a chart drawn in vl-convert's own
    Liberation Sans (chart_files.bundled_font_suffices): a system font's widths are not
    known here. Anything else (a linear axis, a wrapped label, another font) keeps its
    limit. The published spec keeps its limits; this is for the static renders only."""
    from jouleboard.render.chart_files import bundled_font_suffices

    config = spec.get("config")
    config = config if isinstance(config, dict) else {}
    if config.get("font") != CONFIG["font"] or not bundled_font_suffices(
        json.dumps(spec, ensure_ascii=False)
    ):
        return spec
    values = _field_values(spec)
    if values is None:
        return spec
    encodings = list(_encodings(spec))
    axes = frozenset(c for c in ("x", "y") if _axis_fits(c, encodings, values, config))
    legends = _legends_fit(encodings, values, config)
    return _without_limits(spec, axes, legends) if axes or legends else spec


def _without_limits(node: JsonValue, axes: frozenset[str], legends: bool) -> Spec:
    """``node`` (a spec or a part of one) with labelLimit 0 on the ``axes`` channels' axes,
    and on its legends if ``legends``; its data rows shared, not copied."""

    def adapt(node: JsonObject) -> JsonObject:
        out = {k: v if k in _DATA_KEYS else _each(adapt, v) for k, v in node.items()}
        encoding = out.get("encoding")
        if not isinstance(encoding, dict):
            return out
        changed = dict(encoding)
        for channel, field_def in encoding.items():
            if not isinstance(field_def, dict):
                continue
            if channel in axes and isinstance(axis := field_def.get("axis", {}), dict):
                changed[channel] = {**field_def, "axis": {**axis, "labelLimit": 0}}
            legend = field_def.get("legend", {})  # None: this layer shows no legend
            shown = legends and channel in _LEGEND_CHANNELS and "field" in field_def
            if shown and isinstance(legend, dict):
                changed[channel] = {**field_def, "legend": {**legend, "labelLimit": 0}}
        return {**out, "encoding": changed}

    return adapt(node) if isinstance(node, dict) else {}


def _fits(labels: Collection[str], size: JsonValue, limit: JsonValue) -> bool:
    if not isinstance(size, int | float) or not isinstance(limit, int | float):
        return False
    return all(
        measured(label) and label.isprintable() and text_width(label, size) + LABEL_ROOM <= limit
        for label in labels
    )


def _axis_fits(
    channel: str,
    encodings: Sequence[JsonObject],
    values: Mapping[str, set[str]],
    config: JsonObject,
) -> bool:
    """Whether no label of the ``channel`` axis (its layers share it) can reach its limit."""
    styles = [v for k, v in config.items() if k.startswith("axis") and isinstance(v, dict)]
    if any(_REWORDED & style.keys() for style in styles):
        return False
    sizes = [s.get("labelFontSize", LABEL_FONT_SIZE) for s in styles]
    limits = [s.get("labelLimit", AXIS_LABEL_LIMIT) for s in styles]
    if not all(isinstance(v, int | float) for v in sizes + limits):
        return False
    size = max([LABEL_FONT_SIZE, *sizes])  # type: ignore[type-var]
    limit = min([AXIS_LABEL_LIMIT, *limits])  # type: ignore[type-var]
    kinds = set()
    for encoding in encodings:
        end = encoding.get(f"{channel}2")
        if isinstance(end, dict) and "field" in end:
            kinds.add("follows")  # the values of a range's end, on the same scale
        elif end is not None and not (isinstance(end, dict) and "value" in end):
            return False
        field_def = encoding.get(channel)
        if field_def is None or (isinstance(field_def, dict) and field_def.keys() == {"value"}):
            continue
        if not isinstance(field_def, dict) or _derived(field_def):
            return False
        axis = field_def.get("axis", {})
        axis = axis if isinstance(axis, dict) else {}
        scale = field_def.get("scale", {})
        scale = scale if isinstance(scale, dict) else {}
        if field_def.get("type") == "quantitative":
            # A log axis labelled by LOG_AXIS; a layer that sets no scale shares it.
            if "scale" in field_def and scale.get("type") != "log":
                return False
            if "labelExpr" in axis:
                if axis["labelExpr"] != LOG_AXIS["labelExpr"] or "scale" not in field_def:
                    return False
                kinds.add("log")
            else:
                kinds.add("follows")
            if (_REWORDED - {"labelExpr"}) & axis.keys() or "format" in field_def:
                return False
            continue
        labels = _labels(field_def, values, axis)
        if labels is None or not _fits(
            labels, axis.get("labelFontSize", size), axis.get("labelLimit", limit)
        ):
            return False
        kinds.add("named")
    return kinds == {"named"} or (kinds <= {"log", "follows"} and "log" in kinds)


def _legends_fit(
    encodings: Sequence[JsonObject], values: Mapping[str, set[str]], config: JsonObject
) -> bool:
    """Whether no label of any legend of the chart can reach its limit."""
    style = config.get("legend", {})
    style = style if isinstance(style, dict) else {}
    if _REWORDED & style.keys():
        return False
    found = False
    for encoding in encodings:
        for channel in _LEGEND_CHANNELS & encoding.keys():
            field_def = encoding[channel]
            if isinstance(field_def, dict) and "field" not in field_def:
                if "condition" in field_def or "datum" in field_def:
                    return False
                continue  # a value: no legend
            if not isinstance(field_def, dict) or _derived(field_def):
                return False
            legend = field_def.get("legend", {})
            legend = legend if isinstance(legend, dict) else {}
            labels = _labels(field_def, values, legend)
            size = legend.get("labelFontSize", style.get("labelFontSize", LABEL_FONT_SIZE))
            limit = legend.get("labelLimit", style.get("labelLimit", LEGEND_LABEL_LIMIT))
            if labels is None or not _fits(labels, size, limit):
                return False
            found = True
    return found


def _derived(field_def: JsonObject) -> bool:
    """Whether a channel's values are made by Vega-Lite (binned, aggregated, a condition)."""
    return bool({"aggregate", "bin", "timeUnit", "condition", "datum"} & field_def.keys())


def _labels(
    field_def: JsonObject, values: Mapping[str, set[str]], guide: JsonObject
) -> set[str] | None:
    """The labels a band axis or legend of ``field_def`` can show: its field's values and
    its scale's domain; None where they are not known (a number, a reworded label)."""
    field, scale = field_def.get("field"), field_def.get("scale", {})
    if field_def.get("type") not in _NAMED or not isinstance(field, str) or field not in values:
        return None
    if _REWORDED & guide.keys() or "format" in field_def:
        return None
    domain = scale.get("domain", []) if isinstance(scale, dict) else None
    if not isinstance(domain, list) or not all(isinstance(v, str) for v in domain):
        return None
    return values[field] | set(domain)  # type: ignore[arg-type]


def _encodings(node: JsonValue) -> Iterator[JsonObject]:
    """Every ``encoding`` object of a spec (its top level's and its layers'), in order."""
    if isinstance(node, list):
        for value in node:
            yield from _encodings(value)
    elif isinstance(node, dict):
        encoding = node.get("encoding")
        if isinstance(encoding, dict):
            yield encoding
        for key, value in node.items():
            if key not in _DATA_KEYS and key != "encoding":
                yield from _encodings(value)


def _field_values(spec: Spec) -> dict[str, set[str]] | None:
    """Each field of the spec's data rows (every data set's and inline) -> its values, for
    the fields whose values are all text and that no transform makes; None if a transform
    other than a filter or a calculation, or data from elsewhere (a URL), could make more."""
    made: set[str] = set()
    rows: list[JsonValue] = []
    pending: list[JsonValue] = [spec]
    while pending:
        node = pending.pop()
        if isinstance(node, list):
            pending.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        steps = node.get("transform", [])
        for step in steps if isinstance(steps, list) else [None]:
            if not isinstance(step, dict) or not step.keys() <= {"filter", "calculate", "as"}:
                return None
            if "as" in step:
                made.add(str(step["as"]))
        data = node.get("data")
        if isinstance(data, dict) and not data.keys() <= {"name", "values"}:
            return None
        datasets = node.get("datasets", {})
        for table in datasets.values() if isinstance(datasets, dict) else ():
            rows.extend(table if isinstance(table, list) else [])
        inline = data.get("values", []) if isinstance(data, dict) else []
        rows.extend(inline if isinstance(inline, list) else [])
        pending.extend(v for k, v in node.items() if k not in _DATA_KEYS and k != "data")
    values: dict[str, set[str]] = {}
    numbers: set[str] = set(made)
    for row in rows:
        for key, value in row.items() if isinstance(row, dict) else ():
            if isinstance(value, str) and "." not in key and "[" not in key:
                values.setdefault(key, set()).add(value)
            else:
                numbers.add(key)
    return {key: labels for key, labels in values.items() if key not in numbers}


def _number(value: JsonValue) -> float:
    """A number of a spec (a label limit, a latency), as float() reads it."""
    if isinstance(value, int | float | str):
        return float(value)
    raise TypeError(f"not a number: {value!r}")


# Static SVGs follow the reader's colour scheme: the page shows them as images, and an SVG
# image applies its own prefers-color-scheme rules, so one file serves light and dark.
DARK_TEXT = "#c3c9d2"
THEME_STYLE = (
    "<style>@media (prefers-color-scheme: dark){"
    f'[fill="{AXIS_GREY}"]{{fill:{DARK_TEXT}}}[stroke="{AXIS_GREY}"]{{stroke:{DARK_TEXT}}}'
    '[stroke="#111"]{stroke:#f2f4f7}[stroke="#8884"]{stroke:#fff3}'
    '[fill="#c0392b"]{fill:#ff8a7a}[stroke="#c0392b"]{stroke:#ff8a7a}}</style>'
)


def themed(svg: str) -> str:
    """An SVG export with the dark-scheme rules inserted after its opening tag."""
    head, sep, rest = svg.partition(">")
    return head + sep + THEME_STYLE + rest if sep else svg


MAX_POINTS = 2000  # points a scatter chart draws; beyond, it shows a sample (sample())
P = TypeVar("P")


def sample(
    items: Sequence[P], keep: Callable[[P], bool], key: Callable[[P], str], limit: int = MAX_POINTS
) -> list[P]:
    """At most ``limit`` of ``items`` (all of them if there are no more), in their order:
    every item ``keep`` marks (even past ``limit``), then the rest chosen by a SHA-256 of
    their ``key``, so the same items give the same sample (no random state) and the sample
    is spread evenly over the chart, not one end of it."""
    if len(items) <= limit:
        return list(items)
    kept = [keep(i) for i in items]
    room = max(limit - sum(kept), 0)
    others = sorted(
        (hashlib.sha256(key(i).encode()).hexdigest(), n) for n, i in enumerate(items) if not kept[n]
    )
    chosen = {n for _, n in others[:room]}
    return [i for n, i in enumerate(items) if kept[n] or n in chosen]


MODEL_FIELDS = ("model", "legend")  # the fields a chart colours models by


def with_model_colors(spec: Spec, colors: Mapping[str, str]) -> Spec:
    """``spec`` with every colour-by-model encoding mapping each model of ``colors`` (its
    display name, in legend order) to its colour; the data rows are shared, not copied."""

    def adapt(node: JsonObject) -> JsonObject:
        out = {
            key: value if key in _DATA_KEYS else _each(adapt, value) for key, value in node.items()
        }
        color = out.get("color")
        if isinstance(color, dict) and color.get("field") in MODEL_FIELDS and "scale" in color:
            out["color"] = {
                **color,
                "scale": {"domain": [*colors], "range": [*colors.values()]},
            }
        return out

    return adapt(spec)


def title_of(spec: Spec) -> str:
    """The title :func:`bind` gave a chart."""
    title = spec["title"]
    if not isinstance(title, str):
        raise TypeError(f"a chart's title is text, not {title!r}")
    return title


def bind(
    template: Spec,
    datasets: Mapping[str, Sequence[Mapping[str, Scalar]]],
    title: str,
    colors: Mapping[str, str] | None = None,
) -> Spec:
    """A page's chart: the template with its data and title (the template is not changed).
    ``colors``: each model's colour (model_colors) by its display name, in legend order,
    for every model the chart may draw."""
    spec = with_model_colors(template, colors) if colors else dict(template)
    if "deadline" in datasets:
        xs = [_number(r.get("latency", 0)) for r in datasets["table"]]
        datasets = {
            **datasets,
            "deadline": [
                {**d, "side": side(_number(d["latency"]), xs)} for d in datasets["deadline"]
            ],
        }
    # The rows as JSON objects (dict is invariant: a row of scalars is not typed as one).
    spec["datasets"] = {name: [{**row} for row in rows] for name, rows in datasets.items()}
    spec["title"] = title
    if spec.get("height") == PER_MODEL:
        spec["height"] = 24 * max(1, len({row["model"] for row in datasets["table"]}))
    return spec
