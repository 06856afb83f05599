"""A task's finding for a view: the rankings the sentence and its "what changes it" strip
compare (render/finding.py words them). The default view's is planned with the site; the
browser computes any other view's with the same rules (templates/assets/js/finding.js, kept
equal by tests/test_finding_parity.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from jouleboard.config.fields import Percentile
from jouleboard.kinds.base import Record
from jouleboard.measure.formats import precision_label, show
from jouleboard.measure.units import per_thousand
from jouleboard.plan.views import HomeCard, MiniBar, SiteView, TaskView
from jouleboard.rank import ranking
from jouleboard.rank.noise import rank_text
from jouleboard.render.finding import Finding, Scenario, Standing, finding, summary


@dataclass(frozen=True, slots=True)
class View:
    """What a reader chose on a task page: the deadline (ms) on a percentile, the GPUs, the
    precisions (None: all) and an energy budget per output (J; None: none)."""

    ms: float
    percentile: Percentile
    gpus: frozenset[str]
    precisions: frozenset[str] | None = None
    budget: float | None = None


def default_view(site: SiteView, t: TaskView) -> View:
    return View(t.deadline.ms, t.deadline.percentile, frozenset(site.default_gpus))


def standings(
    site: SiteView, t: TaskView, rows: Sequence[ranking.RankedRow[Record]]
) -> tuple[Standing, ...]:
    """A ranking as the finding reads it: name, configuration, efficiency in task units."""
    return tuple(
        Standing(
            site.registry.models[r.config.model_id].nickname,
            f"{precision_label(r.config.weight_precision)}, "
            f"{r.config.num_gpus}× {r.config.gpu_model}",
            t.units.efficiency(r.config.energy_per_output_joules),
            r.rank_best,
            r.rank_worst,
            r.u,
            t.kind.output_text(r.config),
            per_thousand(r.config.energy_per_response_joules, t.units.response),
        )
        for r in rows
    )


def where_text(site: SiteView, t: TaskView, view: View) -> str:
    """``Chat, with median inter-token latency ≤ 300 ms``, and what else narrows a view
    other than the default: ``, on H100``, ``, FP8 only``, ``, at most 0.1 J/token`` (the
    budget in the table's scale: ``, at most 0.07 MJ/video``, as the budget box reads)."""
    text = f"{t.info.name}, with {t.kind.latency.text(view.ms, view.percentile)}"
    if view.gpus != frozenset(site.default_gpus):
        text += f", on {' and '.join(sorted(view.gpus)) or 'no GPU'}"
    if view.precisions is not None:
        shown = [precision_label(p) for p in sorted(view.precisions)]
        text += f", {', '.join(shown) or 'no precision'} only"
    if view.budget is not None:
        budget = t.units.energy_scaled(view.budget)
        text += f", at most {budget:g} {t.units.energy_scaled_label}"
    return text


def task_finding(site: SiteView, t: TaskView, view: View | None = None) -> Finding:
    """The task's finding at ``view`` (default: the page's default view), and what changes
    it: no deadline, the tightest preset deadline below the view's, each GPU alone (with the
    view's precisions), each of the view's precisions alone (on the view's GPUs)."""
    v = view or default_view(site, t)

    def at(
        ms: float = v.ms, on: frozenset[str] = v.gpus, precisions: frozenset[str] | None = None
    ) -> tuple[Standing, ...]:
        rows = ranking.rank(
            t.configs,
            ranking.Deadline(ms, v.percentile),
            gpus=on,
            precisions=v.precisions if precisions is None else precisions,
            energy_budget_joules_per_token=v.budget,
            noise=t.noise,
        )
        return standings(site, t, rows)

    tighter_ms = min((ms for ms in t.info.preset_deadlines_ms if ms < v.ms), default=None)
    tighter = (
        None
        if tighter_ms is None
        else Scenario(f"at {t.kind.latency.value(tighter_ms)}", at(tighter_ms))
    )
    by_gpu = [
        Scenario(f"on {g} alone", at(on=frozenset({g})))
        for g in sorted({c.gpu_model for c in t.configs})
    ]
    precisions = {c.weight_precision for c in t.configs if c.gpu_model in v.gpus}
    if v.precisions is not None:
        precisions &= v.precisions
    by_precision = [
        Scenario(f"{precision_label(p)} only", at(precisions=frozenset({p})))
        for p in sorted(precisions)
    ]
    said = finding(
        where_text(site, t, v),
        t.kind.latency.value(v.ms),
        at(),
        at(float("inf")),
        tighter,
        by_gpu,
        by_precision,
        t.units.efficiency_unit_lower,
        t.units.efficiency_show,
        site.top_n,
        t.noise,
    )
    every = sorted({c.weight_precision for c in t.configs})
    return replace(said, precisions=tuple(precision_label(p) for p in every))


CARD_ROWS = 3  # the top rows a home card draws


def home_card(site: SiteView, t: TaskView) -> HomeCard:
    """The home page's card of a task: the default view's answer in brief and its top rows
    as bars scaled to the leader's figure."""
    rows = t.ranking[:CARD_ROWS]
    ranked = standings(site, t, t.ranking)
    lead = ranked[0].efficiency if ranked else 1.0
    bars = tuple(
        MiniBar(
            rank_text(r.rank_best, r.rank_worst),
            s.model,
            site.urls.url(site.urls.model(r.config.model_id)),
            show(t.units.efficiency_show, s.efficiency),
            f"{s.efficiency / lead * 100:.2f}",
        )
        for r, s in zip(rows, ranked, strict=False)
    )
    return HomeCard(
        t.info.name,
        site.urls.url(site.urls.task(t.id)),
        summary(ranked, t.units.efficiency_unit_lower, t.units.efficiency_show, t.noise),
        t.units.efficiency_label,
        t.kind.latency.short_text(t.deadline.ms, t.deadline.percentile),
        bars,
    )
