"""A task's model colours, and its deadline chart: how each model's best efficiency grows as
the deadline loosens, with the sentence that says what the default deadline does to it.
Pure functions of the site view (plan/task.py puts them on the task page)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from jouleboard.core.shapes import JsonValue, Row
from jouleboard.kinds.base import Record
from jouleboard.measure.formats import significant
from jouleboard.measure.units import boundary_words, in_words, measured_gpus
from jouleboard.plan.views import ChartRef, SiteView, TaskView, chart_ref
from jouleboard.rank import ranking
from jouleboard.render import charts
from jouleboard.render.line_labels import log_pixels, log_value, spread
from jouleboard.render.point_names import Place, Render, clear_places, place_names
from jouleboard.render.text_fit import wrap


def task_models(t: TaskView) -> list[str]:
    """Every model of ``t``: the default ranking's order, then the unranked ones by id."""
    order = {r.config.model_id: r.rank for r in t.ranking}
    return sorted({c.model_id for c in t.configs}, key=lambda m: (order.get(m, 1e9), m))


def chart_colors(
    site: SiteView, t: TaskView, model_ids: Sequence[str] | None = None
) -> tuple[dict[str, str], tuple[str, ...]]:
    """For a chart of ``t`` drawing ``model_ids`` (in legend order; None: every model of
    the task, as the browser may draw when it re-ranks the task): each one's colour by
    display name (what charts.bind takes), and the names the chart must label beside their
    marks (those whose colour another drawn model has). Colours are the task's (charts.model_colors
    over task_models), so a model has one colour on every chart of its task, the best
    ranked the most distinct ones."""
    picks = charts.model_colors(task_models(t))
    models = site.registry.models
    drawn = task_models(t) if model_ids is None else model_ids
    colors = {models[m].nickname: picks[m] for m in drawn}
    return colors, charts.shared_colors(colors)


def scatter_colors(site: SiteView, t: TaskView) -> tuple[dict[str, str], dict[str, str]]:
    """The configurations chart's colours, where every model of the task is drawn: the
    task's own for the models the palette covers, and one grey legend entry
    (charts.OTHER) for the rest, so no two entries look alike; and each model's entry by
    its name (the ``legend`` field of its points)."""
    models = site.registry.models
    ranked = [models[m].nickname for m in task_models(t)]
    colors, _ = chart_colors(site, t)
    covered = ranked[: len(charts.MODEL_COLORS)]
    entry = {name: name if name in covered else charts.OTHER for name in ranked}
    shown = {name: colors[name] for name in covered}
    if len(ranked) > len(covered):
        shown[charts.OTHER] = charts.OTHER_GREY
    return shown, entry


def sensitivity_models(site: SiteView, t: TaskView) -> list[str]:
    """The models of the deadline chart (default GPUs), in its order: the default ranking,
    then the rest by id."""
    models = {c.model_id for c in t.configs if c.gpu_model in site.default_gpus}
    return [m for m in task_models(t) if m in models]


def _default_configs(site: SiteView, t: TaskView) -> list[Record]:
    return [c for c in t.configs if c.gpu_model in site.default_gpus]


def sensitivity_rows(site: SiteView, t: TaskView, limit: int | None = None) -> list[Row]:
    """Each model's best efficiency as the deadline sweeps (default GPUs): one point each
    time a looser deadline admits a better configuration, and one at the slowest
    configuration's latency, so every line runs to the chart's right edge. Order: the
    default ranking, then the rest; the first ``limit`` models only (None: all)."""
    p, scale = t.deadline.percentile, t.kind.latency.scale_ms
    configs = _default_configs(site, t)
    if not configs:
        return []
    end = max(c.latency_ms(p) for c in configs) / scale
    order = {r.config.model_id: r.rank for r in t.ranking}
    rows: list[Row] = []
    for model in sensitivity_models(site, t)[:limit]:
        best = None
        name = site.registry.models[model].nickname
        for c in sorted(
            (c for c in configs if c.model_id == model),
            key=lambda c: (c.latency_ms(p), *ranking.sort_key(c, p)),
        ):
            value = t.units.efficiency(c.energy_per_output_joules)
            if best is None or value > best:
                best = value
                rows.append(
                    {
                        "model": name,
                        "latency": c.latency_ms(p) / scale,
                        "value": value,
                        "order": order.get(model, len(order) + 1),
                    }
                )
        rows.append({**rows[-1], "latency": end})
    return rows


def _span(values: Sequence[float]) -> tuple[float, float]:
    """A log axis's range: the values' own, widened by 4 % each way (a point on the edge
    is not cut in half)."""
    return min(values) / 1.04, max(values) * 1.04


DESKTOP_NAME = 260  # px a line's name may take on the static chart
PHONE_NAME = 118  # px on its phone render (longer names take two lines)
NAME_GAP = 3  # px between two names


def sensitivity_ends(
    rows: Sequence[Row], ys: tuple[float, float], name_width: float
) -> tuple[list[Row], int]:
    """Each line's end, its name in lines no wider than ``name_width`` px (``lines``, joined
    by newlines) and
    the value at which the name's first line is drawn (``label_value``: moved up or down
    from the end's own value only as far as keeps the names apart), on a y axis from
    ``ys[0]`` to ``ys[1]``; and the plot's height, px (taller than the chart's own where
    the names need it)."""
    last: dict[str, Row] = {}
    for row in rows:
        last[str(row["model"])] = row
    ends = sorted(last.values(), key=lambda r: -_float(r["value"]))
    size, line = charts.LINE_LABEL_SIZE, charts.LINE_LABEL_GAP
    names = [wrap(str(r["model"]), name_width, size) for r in ends]
    # A name's lines, and a little air between one name and the next.
    sizes = [len(n) * line + NAME_GAP for n in names]
    height = max(charts.SENSITIVITY_HEIGHT, sum(sizes) + line)
    low, high = ys
    centres = spread(
        [log_pixels(_float(r["value"]), low, high, height) for r in ends], sizes, 0, height
    )
    labelled = [
        {
            **r,
            "lines": "\n".join(n),
            "label_value": log_value(c - (len(n) - 1) * line / 2, low, high, height),
        }
        for r, n, c in zip(ends, names, centres, strict=True)
    ]
    return labelled, height


def _float(value: object) -> float:
    if isinstance(value, int | float):
        return float(value)
    raise TypeError(f"not a number: {value!r}")


@dataclass(frozen=True)
class DeadlineEffect:
    """What the default deadline does to the lines of the deadline chart."""

    inside: bool  # the deadline lies inside the data (it is drawn)
    sentence: str  # the caption's sentence about it


def deadline_effect(site: SiteView, t: TaskView, rows: Sequence[Row]) -> DeadlineEffect:
    """Whether the default deadline rules anything out on the chart's lines, in words true
    for them: the models that would do better past it, or that none would, or that every
    configuration meets it."""
    latency, d = t.kind.latency, t.deadline
    configs = _default_configs(site, t)
    slowest = max(c.latency_ms(d.percentile) for c in configs)
    deadline = latency.value(d.ms)
    if d.ms >= slowest:
        return DeadlineEffect(
            False,
            f"Every configuration meets the default {deadline} deadline (the slowest takes "
            f"{significant(slowest / latency.scale_ms, 3)} {latency.unit}), so it rules none "
            "out: each line's right end is the model's figure in the ranking above.",
        )
    at = d.ms / latency.scale_ms
    better = []
    for model in dict.fromkeys(str(r["model"]) for r in rows):
        line = [r for r in rows if r["model"] == model]
        within = [_float(r["value"]) for r in line if _float(r["latency"]) <= at]
        if not within or _float(line[-1]["value"]) > max(within):
            better.append(model)
    if not better:
        return DeadlineEffect(
            True,
            f"Right of the dashed line are configurations the default {deadline} deadline "
            "rules out; none of them would raise a model's figure.",
        )
    names = better if len(better) <= 4 else [*better[:3], f"{len(better) - 3} more"]
    listed = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]
    return DeadlineEffect(
        True,
        f"Right of the dashed line is what the default {deadline} deadline rules out: there "
        f"{listed} would do better.",
    )


def sensitivity_chart(site: SiteView, t: TaskView) -> tuple[ChartRef, str] | None:
    """The deadline chart (its first view's models), and the caption's sentence on what the
    default deadline does to it."""
    rows = sensitivity_rows(site, t, site.table_rows)
    if not rows:
        return None
    p, latency, units = t.deadline.percentile, t.kind.latency, t.units
    gpus = in_words(measured_gpus(sorted(site.default_gpus), t.configs))
    total = len({c.model_id for c in _default_configs(site, t)})
    drawn = len({r["model"] for r in rows})
    which = "" if drawn == total else f" (the top {drawn} of {total:,} models)"
    effect = deadline_effect(site, t, rows)
    ys = _span([_float(r["value"]) for r in rows])
    ends, height = sensitivity_ends(rows, ys, DESKTOP_NAME)
    phone_ends, phone_height = sensitivity_ends(rows, ys, PHONE_NAME)
    xs = [_float(r["latency"]) for r in rows]
    spec = charts.bind(
        charts.deadline_sensitivity(
            f"Deadline: {latency.words[p]} ({latency.unit})",
            f"Best {units.efficiency_axis[:1].lower()}{units.efficiency_axis[1:]}",
            "rule" if effect.inside else "",
            latency.unit,
            charts.D3_FORMATS[units.efficiency_show],
        ),
        {
            "table": rows,
            "ends": ends,
            **({"deadline": t.deadline_rows()} if effect.inside else {}),
        },
        f"{t.info.name}: best {units.efficiency_words} as the deadline loosens{which}",
        chart_colors(site, t, sensitivity_models(site, t)[: site.table_rows])[0],
    )
    # The phone render's names are wrapped narrower (charts.phone reads usermeta.phone).
    phone_rows: list[JsonValue] = [{**r} for r in phone_ends]
    spec = {
        **charts.with_domains(spec, {"x": (min(xs), max(xs)), "y": ys}),
        "height": height,
        "usermeta": {"phone": {"datasets": {"ends": phone_rows}, "height": phone_height}},
    }
    default = latency.value(t.deadline.ms)
    ref = chart_ref(
        site.urls,
        "deadlines",
        [t.id],
        charts.title_of(spec),
        f"Step lines, one per model{which}, each named at its right end, of each model's "
        f"best {units.efficiency_words} (log scale) at every deadline on {latency.words[p]}, "
        f"on {gpus}; "
        + (
            f"the default {default} deadline is drawn. "
            if effect.inside
            else f"every configuration meets the default {default} deadline. "
        )
        + "Where two lines cross, the two models swap ranks.",
        spec,
        site.urls.task(t.id),
        f"default deadline {default} drawn" if effect.inside else f"default deadline {default}",
        table_id=f"ranking-{t.id}",
        table_alt="The ranking tables list the figures at set deadlines.",
        boundary=boundary_words(t.boundary),
        data=t.configs,
    )
    return ref, effect.sentence


ACCURACY_AXIS = 48  # px left of the accuracy chart's plot: its y axis (labels, title), padding
# px of the phone render's plot: its whole width less the y axis.
ACCURACY_PHONE_PLOT = charts.PHONE_WIDTH - ACCURACY_AXIS
# Whole widths (px) the interactive view draws the accuracy chart at: the widest that fits
# its figure (js/live-chart.js), with the names placed for it. The desktop render's and the
# phone render's, and steps between and below them (a 360 px and a 320 px screen), so no
# figure draws names placed for a wider plot.
ACCURACY_LIVE = (charts.WIDTH + ACCURACY_AXIS, 620, 560, 500, 450, 400,
                 charts.PHONE_WIDTH, 328, 288)  # fmt: skip


def accuracy_spec(
    points: Sequence[Row], title: str, colors: dict[str, str], shared: Sequence[str]
) -> charts.Spec:
    """The accuracy chart: ``points`` (model, accuracy, energy, frontier...) on axes over
    fixed ranges. It names the front's models and those whose colour another shares
    (``shared``), each placed (render/point_names.py: above or below its point, on its left,
    its right or centred, clear of the other points, the front's steps and the names placed
    before it) for the desktop render, again for the narrower phone one (their rows differ
    only in ``name_at`` and ``below``) and for each of the interactive view's widths
    (usermeta.live: each width's places by model); the front's names first, in the front's
    order."""
    energy = [_float(p["energy"]) for p in points]
    accuracy = [_float(p["accuracy"]) for p in points]
    low = math.floor(math.log10(min(energy)))
    xs = 10.0**low, 10.0 ** max(math.ceil(math.log10(max(energy))), low + 1)  # 1 decade or more
    pad = max(max(accuracy) - min(accuracy), 1.0) * 0.04  # a point on an edge stays whole
    ys = min(accuracy) - pad, max(accuracy) + pad
    front = sorted((i for i, p in enumerate(points) if p["frontier"]), key=lambda i: energy[i])
    named = front + [i for i, p in enumerate(points) if p["model"] in shared and i not in front]

    def render(width: float) -> Render:
        at = [
            (
                width * math.log(e / xs[0]) / math.log(xs[1] / xs[0]),
                charts.ACCURACY_HEIGHT * (ys[1] - a) / (ys[1] - ys[0]),
            )
            for e, a in zip(energy, accuracy, strict=True)
        ]
        # The front's steps (step-after): right to the next point, then up to it.
        line = [corner for i, j in itertools.pairwise(front)
                for corner in (at[i], (at[j][0], at[i][1]))] + [at[front[-1]]]  # fmt: skip
        return Render(width, charts.ACCURACY_HEIGHT, at, line)

    names = [(i, str(points[i]["model"])) for i in named]

    def places(plot: float) -> dict[int, Place]:
        return dict(zip(named, place_names(names, render(plot)), strict=True))

    def table(at: dict[int, Place]) -> list[Row]:
        return [
            {
                **p,
                "named": i in at,
                "name_at": at[i].at if i in at else "",
                "below": i in at and at[i].below,
            }
            for i, p in enumerate(points)
        ]

    # The interactive view names only what its width leaves room for (render/point_names.py
    # clear_places): a 320 px embed has no clear place for some names.
    live: list[JsonValue] = [
        {
            "width": whole,
            "names": {
                str(points[i]["model"]): [p.at, p.below]
                for i, p in zip(
                    named, clear_places(names, render(whole - ACCURACY_AXIS)), strict=True
                )
                if p is not None
            },
        }
        for whole in ACCURACY_LIVE
    ]
    spec = charts.bind(
        charts.accuracy_energy(), {"table": table(places(charts.WIDTH))}, title, colors
    )
    phone_rows: list[JsonValue] = [{**r} for r in table(places(ACCURACY_PHONE_PLOT))]
    return {
        **charts.with_domains(spec, {"x": xs, "y": ys}),
        "usermeta": {
            "phone": {"datasets": {"table": phone_rows}},
            "live": {"dataset": "table", "widths": live},
        },
    }
