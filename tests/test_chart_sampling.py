"""Scatter charts past charts.MAX_POINTS draw a sample (issue 19, budget 5): every chosen
configuration and the Pareto front stay, the sample is the same for the same inputs, and
the caption says how many of how many are drawn. The front is found here by brute force
(no configuration is beaten on both axes), not by rank.pareto_frontier."""

from __future__ import annotations

import pytest

from jouleboard.plan.task import scatter_chart, scatter_configs
from jouleboard.plan.views import SiteView
from jouleboard.render import charts


@pytest.fixture(scope="module")
def site(default_view: SiteView) -> SiteView:
    return default_view


def front(configs: list, percentile: str) -> set:  # type: ignore[type-arg]
    """Configurations no other is at least as good as on both axes and better on one."""

    def point(c):  # type: ignore[no-untyped-def]
        return c.latency_ms(percentile), c.energy_per_output_joules

    return {
        c.identity
        for c in configs
        if not any(
            point(o)[0] <= point(c)[0] and point(o)[1] <= point(c)[1] and point(o) != point(c)
            for o in configs
        )
    }


def test_sample_keeps_what_it_must_and_is_deterministic() -> None:
    items = [f"item-{i}" for i in range(1000)]
    must = set(items[::97])  # 11 items spread over the list
    one = charts.sample(items, must.__contains__, str, limit=100)
    assert len(one) == 100 and must <= set(one)
    assert one == [i for i in items if i in set(one)]  # in the items' order
    assert charts.sample(list(items), must.__contains__, str, limit=100) == one
    # Spread over the list, not one end of it: each tenth holds some of the sample.
    assert all(any(f"item-{i}" in one for i in range(k, k + 100)) for k in range(0, 1000, 100))
    # Nothing to drop, or more to keep than the limit: nothing kept is ever dropped.
    assert charts.sample(items[:50], must.__contains__, str, limit=100) == items[:50]
    assert charts.sample(items, lambda _: True, str, limit=10) == items


def test_a_sampled_scatter_keeps_the_chosen_and_the_front(site: SiteView) -> None:
    t = site.tasks["lm-arena-chat"]
    configs = list(t.configs)
    limit = 60
    assert len(configs) > 3 * limit  # the premise: there is something to leave out
    shown, note = scatter_configs(t, limit)
    ids = {c.identity for c in shown}
    chosen = {r.config.identity for r in t.ranking}
    pareto = front(configs, t.deadline.percentile)
    assert chosen <= ids and pareto <= ids
    assert len(shown) == max(limit, len(chosen | pareto))
    assert scatter_configs(t, limit) == (shown, note)
    assert note.startswith(f"Showing {len(shown)} of {len(configs)} configurations")
    chart, chart_note = scatter_chart(site, t, limit)
    assert chart_note == note
    assert chart.title == f"{t.info.name}: {len(shown)} of {len(configs)} configurations"
    assert len(chart.spec["datasets"]["table"]) == len(shown)
    assert f"for {len(shown)} of the {len(configs)} configurations" in chart.alt


def test_a_small_task_draws_every_configuration(site: SiteView) -> None:
    t = site.tasks["gpqa"]
    shown, note = scatter_configs(t)
    assert len(shown) == len(t.configs) and note == ""
    chart, _ = scatter_chart(site, t)
    assert chart.title == f"{t.info.name}: every configuration"
