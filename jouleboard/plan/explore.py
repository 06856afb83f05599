"""The data a task page's script re-ranks: every configuration of a task as compact rows,
with the column descriptors, ranking order and wording of its kind, so the browser
(the modules of templates/assets/js/) needs no knowledge of any kind, and writes no
format, wording or column the Python side also owns."""

from __future__ import annotations

from collections.abc import Callable

from jouleboard.config.registry import Registry
from jouleboard.core.shapes import JsonLike, Row
from jouleboard.kinds.base import Record, field_value
from jouleboard.measure.formats import precision_label
from jouleboard.plan.views import TaskView
from jouleboard.rank.noise import table_note
from jouleboard.rank.ranking import runs_of
from jouleboard.rank.tables import MODEL, RANK
from jouleboard.render.footprint import ENERGY_STEPS, NUMBER_STEPS, footprint_columns

IDENTITY = (
    "model_id",
    "gpu_model",
    "num_gpus",
    "weight_precision",
    "source",
    "energy_per_output_joules",
    "energy_per_response_joules",
)


def browser_row(t: TaskView, c: Record) -> Row:
    """One configuration: the fields the ranking order reads, and every table value."""
    kind = t.kind
    fields = {
        *IDENTITY,
        *kind.tie_fields,
        kind.energy_field,
        kind.response_field,
        *(f for f, _ in kind.latency_fields.values()),
    }
    values = t.values(c)
    return {
        **{k: field_value(c, k) for k in sorted(fields)},
        **values,
        "efficiency": t.units.efficiency(c.energy_per_output_joules),
        "config": t.kind.config_label(c),
        "runs": runs_of(c),
        "output": t.kind.output_text(c),  # what one output is ("" for tokens)
    }


def explore_payload(
    t: TaskView,
    registry: Registry,
    model_url: Callable[[str], str],
    gpu_url: Callable[[str], str],
    glossary_url: str = "",
) -> dict[str, JsonLike]:
    """One task's configurations for the browser: columns + rows (compact), the table's
    column descriptors, the ranking order, the units and wording, the model and GPU names
    and links the re-ranked table shows, and what a page that shows several tasks' tables
    in turn (/compare/) says beside the table: what places mean under the task's noise,
    and where its accuracy comes from."""
    quality = registry.quality.get(t.id)
    rows = [browser_row(t, c) for c in t.configs]
    columns = sorted({k for row in rows for k in row})
    models = sorted({c.model_id for c in t.configs})
    fields = t.kind.ranking_fields(t.info, quality=t.id in registry.quality)
    units = t.units
    scales = t.kind.footprint_scales(units)
    return {
        "kind": t.kind.name,
        "columns": columns,
        "rows": [[row.get(k) for k in columns] for row in rows],
        "table": [f.browser() for f in fields],
        "glossary_url": glossary_url,
        "rank_term": RANK.term,  # the place column's glossary term, as its header links it
        "rank_note": table_note(t.noise),
        "quality_note": ""
        if quality is None
        else f"† Accuracy is vendor-reported {quality.benchmark} accuracy, not measured with "
        "the energy run. J/correct answer = J/response ÷ accuracy. A dash means no published "
        "figure.",
        "ranked_key": t.kind.ranked_key,
        # How a download names the deadline's percentile (p50-300ms, batch-30s).
        "slug_prefix": {
            p: t.kind.download_slug(1.0, p).rsplit("-", 1)[0] for p in t.kind.percentiles
        },
        # Keys whose values are floats: the browser writes 66.0 (not 66) as Python does.
        "floats": sorted({k for row in rows for k, v in row.items() if isinstance(v, float)}),
        "order": t.kind.browser_order(),
        # Measurement noise for rank ranges ({s, c}: s and the critical value; null: unknown):
        # rank/noise.py.
        "noise": t.noise.browser(),
        "latency": {
            **t.kind.latency.browser(),
            # The latency axis title at each percentile (the charts follow the percentile).
            "axis": {p: t.kind.latency.axis_title(p) for p in t.kind.percentiles},
        },
        "units": {
            "output": units.output,
            "efficiency_words": units.efficiency_words,
            "efficiency_axis": units.efficiency_axis,
            "energy_axis": f"Energy per {units.output} (J, log scale)",
            # The budget box's unit (J/token, kJ/image, MJ/video) and J per it.
            "energy_scaled_label": units.energy_scaled_label,
            "scale_joules": units.scale_joules,
            "efficiency_show": units.efficiency_show,
            "efficiency_unit_lower": units.efficiency_unit_lower,
            "response": units.response,
        },
        # What the finding of a reader's view is stated with (plan/finding.py; js/finding.js):
        # the task's name, its preset deadlines, the default GPUs and how many models it names.
        "finding": {
            "task": t.info.name,
            "presets": sorted(t.info.preset_deadlines_ms),
            "default_gpus": sorted(registry.site.default_gpus),
            "top": registry.site.top_n,
        },
        "footprint": [
            {"key": key, "per": per, "amount": amount, "energy": energy}
            for key, per, amount, energy in scales
        ],
        # The calculator table's header, and the steps its figures scale by (Wh to TWh;
        # k, M, B, T), as the server-rendered calculator has them.
        "footprint_columns": [
            {
                "key": c.key,
                "label": c.label,
                "unit": c.unit,
                "numeric": c.numeric,
                **({"term": c.term} if c.term else {}),
            }
            for c in (MODEL, *footprint_columns(scales))
        ],
        "footprint_steps": {
            "energy": [list(step) for step in ENERGY_STEPS],
            "number": [list(step) for step in NUMBER_STEPS],
        },
        "models": {
            m: {
                "nickname": registry.models[m].nickname,
                "builder": registry.models[m].builder,
                "url": model_url(m),
            }
            for m in models
        },
        "gpus": {g: gpu_url(g) for g in sorted({c.gpu_model for c in t.configs})},
        "precisions": {
            p: precision_label(p) for p in sorted({c.weight_precision for c in t.configs})
        },
        "accuracy": dict(sorted(t.accuracy.items())),
    }
