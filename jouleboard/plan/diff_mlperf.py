"""What a change does to the MLPerf pages (``jouleboard diff``): results added, removed and
changed, and how each benchmark's systems move, per scenario. A result is one submitted
system and software stack (round, submitter, system, software) on one benchmark and
scenario; MLPerf pages rank them by the derived figure (plan/mlperf_figures.py order), with
exact places (MLPerf results carry no repeat runs to estimate noise from)."""

from __future__ import annotations

from collections.abc import Sequence

from jouleboard.core.escape import markdown_text
from jouleboard.kinds.mlperf import SystemResult
from jouleboard.measure import metrics
from jouleboard.measure.formats import significant
from jouleboard.plan.mlperf_figures import order, per_joule_label, ranked_value

Key = tuple[str, str, str, str, str, str]


def key_of(r: SystemResult) -> Key:
    return (*r.system_key, r.result.benchmark, r.result.scenario)


def text_of(r: SystemResult) -> str:
    """``llama2-70b-99 Server: Lenovo ThinkSystem SR780a V3 (Lenovo, v5.1)``."""
    res = r.result
    return markdown_text(
        f"{res.benchmark} {res.scenario}: {res.system.name} ({res.submitter}, {res.round})"
    )


def figure(r: SystemResult) -> str:
    """The ranked figure with its unit: ``12.3 tokens/J``, ``45.6 J/sample``."""
    return f"{significant(ranked_value(r), 4)} {per_joule_label(r)[1]}"


def _listing(title: str, items: list[str]) -> list[str]:
    return [f"**{title}** ({len(items)})", "", *(f"- {i}" for i in items), ""] if items else []


def _moves(before: Sequence[SystemResult], after: Sequence[SystemResult]) -> list[str]:
    """The rows of one benchmark and scenario whose place or figure changed, in the new
    order, then those that left it."""
    was = {key_of(r): (i, r) for i, r in enumerate(order(before), start=1)}
    now = order(after)
    lines = []
    for place, r in enumerate(now, start=1):
        old = was.get(key_of(r))
        name = markdown_text(r.result.system.name)
        if old is None:
            lines.append(f"| {place} | {name} | new | {figure(r)} |")
        elif old[0] != place or ranked_value(old[1]) != ranked_value(r):
            move = "=" if old[0] == place else ("↑" if place < old[0] else "↓")
            lines.append(
                f"| {place} | {name} | {move} from {old[0]} | {figure(old[1])} → {figure(r)} |"
            )
    kept = {key_of(r) for r in now}
    for k, (place, r) in sorted(was.items(), key=lambda item: item[1][0]):
        if k not in kept:
            lines.append(
                f"| – | {markdown_text(r.result.system.name)} | dropped out (was {place}) | "
                f"{figure(r)} → – |"
            )
    return lines


def mlperf_markdown(
    base: Sequence[SystemResult], head: Sequence[SystemResult], threshold: float
) -> list[str]:
    """The MLPerf part of the change report ([] when neither side has MLPerf results)."""
    if not base and not head:
        return []
    old = {key_of(r): r for r in base}
    new = {key_of(r): r for r in head}
    added = [new[k] for k in sorted(new.keys() - old.keys())]
    removed = [old[k] for k in sorted(old.keys() - new.keys())]
    changed = []
    for k in sorted(old.keys() & new.keys()):
        a, b = old[k], new[k]
        if metrics.relative_difference(a.joules_per_output, b.joules_per_output) > threshold:
            changed.append(f"{text_of(b)}: {figure(a)} → {figure(b)}")
        elif a.result != b.result:
            fields = sorted(
                name
                for name in type(a.result).model_fields
                if getattr(a.result, name) != getattr(b.result, name)
            )
            changed.append(f"{text_of(b)}: {', '.join(fields)} changed, the figure did not")
    out = [
        "## MLPerf results",
        "",
        f"{len(added)} result(s) added, {len(removed)} removed, {len(changed)} changed "
        "(whole system at the wall; exact places: MLPerf results have no repeat runs).",
        "",
        *_listing("Added results", [text_of(r) for r in added]),
        *_listing("Removed results", [text_of(r) for r in removed]),
        *_listing("Changed results", changed),
    ]
    groups = sorted({(r.result.benchmark, r.result.scenario) for r in (*base, *head)})
    moved = False
    for benchmark, scenario in groups:
        lines = _moves(
            [r for r in base if (r.result.benchmark, r.result.scenario) == (benchmark, scenario)],
            [r for r in head if (r.result.benchmark, r.result.scenario) == (benchmark, scenario)],
        )
        if lines:
            moved = True
            unit = per_joule_label(
                next(r for r in (*head, *base) if r.result.benchmark == benchmark)
            )[0]
            out += [
                f"### MLPerf {markdown_text(benchmark)}, {markdown_text(scenario)}",
                "",
                f"| rank | system | move | {unit} |",
                "|---:|---|---|---:|",
                *lines,
                "",
            ]
    if not moved:
        out += ["No MLPerf ranking changes.", ""]
    return out
