"""A task's finding, stated from its rankings: who leads, in which configuration, by how
much, and what changes the answer (the deadline, the GPU, the precision).

Pure functions over rankings already computed (rank.py): each ranking is a sequence of
:class:`Standing` in rank order, with efficiency in the task's unit (tokens/J, images/kJ,
videos/MJ; higher is better). Numbers print through measure/formats.py ``show``, so the
sentence rounds as the tables and charts do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from jouleboard.measure.formats import capital, show
from jouleboard.rank.noise import UNKNOWN, Noise, ordinal, place_words, rank_text


@dataclass(frozen=True, slots=True)
class Standing:
    """One model's row in a ranking."""

    model: str  # display name
    config: str  # "MXFP4, 1× B200"
    efficiency: float  # outputs per J, kJ or MJ (the task's unit); higher is better
    # The places the measurement noise allows (rank/noise.py) and the relative uncertainty
    # of its energy (None: unknown, the places are exact).
    best: int = 0
    worst: int = 0
    u: float | None = None
    output: str = ""  # what one output is where a task's outputs differ ("1024×1024, 20 steps")
    relatable: str = ""  # its energy in everyday terms: "17 Wh per 1,000 responses"

    @property
    def tied(self) -> bool:
        return self.best != self.worst


@dataclass(frozen=True, slots=True)
class Scenario:
    """The ranking under changed settings, e.g. ``at 50 ms``, ``on H100 alone``."""

    label: str
    ranking: tuple[Standing, ...]


@dataclass(frozen=True, slots=True)
class Finding:
    sentence: str  # the answer, one sentence
    changes: tuple[str, ...]  # the "what changes it" strip, one short sentence each
    precisions: tuple[str, ...] = ()  # the task's precisions, as labels ("BF16", "FP8")


def place(s: Standing, at: int) -> str:
    """The place a sentence names for ``s``, ranked ``at``: its range where the noise lets
    it share places (``6th–7th``, as the table prints ``6–7``), else ``at`` itself."""
    return place_words(s.best, s.worst) if s.best else ordinal(at)


def ratio(a: float, b: float) -> str:
    """How many times ``a`` is ``b``, one decimal: ``1.4×``."""
    return f"{show('fixed1', a / b)}×"


def ratio_with_interval(a: Standing, b: Standing, noise: Noise = UNKNOWN) -> str:
    """``1.4× (1.2–1.6×)``: the ratio of two standings' efficiency and its interval at the
    noise's confidence (u of a ratio: the two uncertainties in quadrature); ``1.4×`` when
    the noise is unknown."""
    if a.u is None or b.u is None or not noise.known:
        return ratio(a.efficiency, b.efficiency)
    low, high = noise.interval(a.efficiency / b.efficiency, math.hypot(a.u, b.u))
    return f"{ratio(a.efficiency, b.efficiency)} ({show('fixed1', low)}–{show('fixed1', high)}×)"


def names(models: Sequence[str], most: int = 3) -> str:
    """``A``, ``A and B``, ``A, B and C``, ``A, B, C and 2 more``."""
    shown = list(models[:most]) + ([f"{len(models) - most} more"] if len(models) > most else [])
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def unlike_outputs(compared: Sequence[Standing]) -> str:
    """`` Outputs differ: A and B at 1024×1024, 20 steps; C at 1024×1024, 50 steps.`` when
    the standings a sentence compares make different outputs (a figure per image is then
    not the same work), each output once with the models that make it; else ""."""
    by_output: dict[str, list[str]] = {}
    for s in compared:
        by_output.setdefault(s.output, []).append(s.model)
    if len(by_output) < 2:
        return ""
    return (
        " Outputs differ: "
        + "; ".join(
            f"{names(models, len(models))} at {output}" for output, models in by_output.items()
        )
        + "."
    )


def headline(
    where: str,
    ranking: Sequence[Standing],
    unit: str,
    rule: str,
    top_n: int,
    noise: Noise = UNKNOWN,
) -> str:
    """The headline (:func:`headline_text`), with a caveat where it compares unlike outputs."""
    text = headline_text(where, ranking, unit, rule, top_n, noise)
    if len(ranking) < 2:
        return text
    lead, last = ranking[0], ranking[min(top_n, len(ranking)) - 1]
    named = [lead, *(s for s in ranking[1:] if s.best == 1 and lead.tied), ranking[1], last]
    compared = list(dict.fromkeys(named))  # each once, in the order the sentence names them
    return text + unlike_outputs(compared)


def headline_text(
    where: str,
    ranking: Sequence[Standing],
    unit: str,
    rule: str,
    top_n: int,
    noise: Noise = UNKNOWN,
) -> str:
    """``On <task>, with <deadline>, <leader> (<config>) does the most work per joule:
    <value> <unit>, <r>× (<low>–<high>×) <second> and ... <last of the top n>.`` A leader
    the noise cannot separate from the next models is named with them as tied."""
    if not ranking:
        return f"On {where}, no configuration qualifies."
    lead = ranking[0]
    figure = f"{show(rule, lead.efficiency)} {unit}"
    value = f"{figure} ({lead.relatable})" if lead.relatable else figure
    last = ranking[min(top_n, len(ranking)) - 1]
    if len(ranking) == 1:
        return (
            f"On {where}, {lead.model} ({lead.config}) does the most work per joule: {value}; "
            "it is the only model that qualifies."
        )
    if lead.tied:
        tied = [s for s in ranking[1:] if s.best == 1]
        text = (
            f"On {where}, {lead.model} ({lead.config}) does the most work per joule "
            f"({', '.join(filter(None, (figure, lead.relatable)))}), "
            f"but {names([s.model for s in tied])} "
            f"{'is' if len(tied) == 1 else 'are'} within measurement noise of it "
            f"(places {rank_text(1, lead.worst)} shared)"
        )
        if last is lead or last in tied:
            return f"{text}."
        return (
            f"{text}; it does {ratio_with_interval(lead, last, noise)} the work of {last.model} "
            f"({place(last, min(top_n, len(ranking)))})."
        )
    others = [ranking[1]]
    if len(ranking) > 2 and last is not ranking[1]:
        others.append(last)
    beyond = ", beyond measurement noise" if lead.u is not None and noise.known else ""
    return (
        f"On {where}, {lead.model} ({lead.config}) does the most work per joule{beyond}: "
        f"{value}, "
        + " and ".join(
            f"{ratio_with_interval(lead, o, noise)} the work of {o.model} ({place(o, i)})"
            for o, i in zip(others, (2, min(top_n, len(ranking))), strict=False)
        )
        + "."
    )


def summary(ranking: Sequence[Standing], unit: str, rule: str, noise: Noise = UNKNOWN) -> str:
    """The answer in brief, for the home page's card of a task (its title, deadline and top
    rows stand beside it): ``GPT OSS 20B leads with 35.15 tokens/J; GPT OSS 120B is within
    measurement noise of it.``"""
    if not ranking:
        return "No configuration qualifies."
    lead = ranking[0]
    value = f"{show(rule, lead.efficiency)} {unit}"
    if len(ranking) == 1:
        return f"{lead.model} is the only model that qualifies: {value}."
    if lead.tied:
        tied = [s for s in ranking[1:] if s.best == 1]
        return (
            f"{lead.model} leads with {value}; {names([s.model for s in tied])} "
            f"{'is' if len(tied) == 1 else 'are'} within measurement noise of it."
            + unlike_outputs([lead, *tied])
        )
    second = ranking[1]
    beyond = " beyond measurement noise" if lead.u is not None and noise.known else ""
    return (
        f"{lead.model} leads{beyond} with {value}: {ratio_with_interval(lead, second, noise)} "
        f"the work of {second.model} ({place(second, 2)})." + unlike_outputs([lead, second])
    )


def same_order(a: Sequence[Standing], b: Sequence[Standing]) -> bool:
    """Whether two rankings list the same models, in the same order, with the same figures."""
    return [(s.model, s.efficiency) for s in a] == [(s.model, s.efficiency) for s in b]


@dataclass(frozen=True, slots=True)
class Move:
    """A model's change of place between two rankings: its point places (``now`` None when
    it drops out) and the places as sentences name them (``3rd–4th``)."""

    model: str
    was: int
    now: int | None
    was_text: str
    now_text: str
    overlap: bool = False  # the two ranges share a place: the move may not be real


def shares_a_place(a: Standing, at_a: int, b: Standing, at_b: int) -> bool:
    """Whether two standings' ranges (or exact places) have a place in common."""
    low_a, high_a = (a.best, a.worst) if a.best else (at_a, at_a)
    low_b, high_b = (b.best, b.worst) if b.best else (at_b, at_b)
    return low_a <= high_b and low_b <= high_a


def biggest_move(before: Sequence[Standing], after: Sequence[Standing]) -> Move | None:
    """The model whose places change most (dropping out counts as the largest fall); ties go
    to the higher-ranked model. A model whose places read the same before and after (2nd–4th
    in both, its point place moved within them) has not moved for a reader; one whose point
    place holds while its range changes (3rd to 2nd–3rd) has, by as much as an end moved."""
    where = {s.model: (i, s) for i, s in enumerate(after, start=1)}
    best: tuple[float, Move] | None = None
    for i, s in enumerate(before, start=1):
        now = where.get(s.model)
        shift = (
            float("inf")
            if now is None
            else max(abs(now[0] - i), abs(now[1].best - s.best), abs(now[1].worst - s.worst))
        )
        if now is not None and place(s, i) == place(now[1], now[0]):
            continue
        if shift > 0 and (best is None or shift > best[0]):
            move = Move(
                s.model,
                i,
                None if now is None else now[0],
                place(s, i),
                "" if now is None else place(now[1], now[0]),
                now is not None and shares_a_place(s, i, now[1], now[0]),
            )
            best = (shift, move)
    return None if best is None else best[1]


def leader_clause(
    ranking: Sequence[Standing], default: Sequence[Standing], unit: str, rule: str
) -> str:
    """Who leads a ranking, compared with the default's leader."""
    if not ranking:
        return "no model qualifies"
    lead = ranking[0]
    value = f"{show(rule, lead.efficiency)} {unit}"
    tied = [s.model for s in ranking[1:] if s.best == 1] if lead.tied else []
    within = f", within measurement noise of {names(tied)}" if tied else ""
    if default and lead.model == default[0].model:
        return f"{lead.model} still leads, with {value}{within}"
    return f"{lead.model} leads ({lead.config}), with {value}{within}"


def move_clause(
    default: Sequence[Standing], other: Sequence[Standing], unit: str, rule: str
) -> str:
    """The biggest change of places from ``default`` to ``other``; with none, a model that
    only ``other`` ranks, or else the biggest change of a figure (the places can hold while
    the figures move)."""
    move = biggest_move(default, other)
    if move is None:
        shown = {s.model for s in default}
        joined = [(i, s) for i, s in enumerate(other, start=1) if s.model not in shown]
        if joined:
            rank, standing = joined[0]
            more = f" (and {len(joined) - 1} more)" if len(joined) > 1 else ""
            return f"{standing.model} joins at {place(standing, rank)}{more}"
        # The leader's figure is in the leader clause already.
        now = {s.model: s for s in other}
        changed = [
            (a, now[a.model])
            for a in default[1:]
            if a.model in now and a.efficiency != now[a.model].efficiency
        ]
        if not changed:
            return "the places are unchanged"
        a, b = max(changed, key=lambda pair: abs(pair[1].efficiency / pair[0].efficiency - 1))
        return (
            f"the places hold, but {a.model} goes from {show(rule, a.efficiency)} to "
            f"{show(rule, b.efficiency)} {unit}"
        )
    if move.now is None:
        return f"{move.model} drops out"
    way = "moves" if move.overlap else "rises" if move.now < move.was else "falls"
    return f"{move.model} {way} from {move.was_text} to {move.now_text}"


def leader_text(s: Scenario, default: Sequence[Standing], unit: str, rule: str) -> str:
    """``On H100 alone: GPT OSS 20B still leads, with 22.62 tokens/J.``"""
    return f"{capital(s.label)}: {leader_clause(s.ranking, default, unit, rule)}."


def tighter_text(s: Scenario, default: Sequence[Standing], unit: str, rule: str) -> str:
    """The leader at a tighter deadline and the biggest rank change it causes."""
    return (
        f"{capital(s.label)}: {leader_clause(s.ranking, default, unit, rule)}; "
        f"{move_clause(default, s.ranking, unit, rule)}."
    )


def binding_text(
    deadline: str, unbounded: Sequence[Standing], default: Sequence[Standing], unit: str, rule: str
) -> str:
    """Whether the default deadline binds: the ranking with no deadline at all."""
    if same_order(unbounded, default):
        return (
            f"The {deadline} deadline does not bind: with no deadline at all the "
            "ranking is identical."
        )
    return (
        f"The {deadline} deadline binds: with no deadline, "
        f"{leader_clause(unbounded, default, unit, rule)}; "
        f"{move_clause(default, unbounded, unit, rule)}."
    )


def finding(
    where: str,
    deadline: str,
    default: Sequence[Standing],
    unbounded: Sequence[Standing],
    tighter: Scenario | None,
    gpus: Sequence[Scenario],
    precisions: Sequence[Scenario],
    unit: str,
    rule: str,
    top_n: int,
    noise: Noise = UNKNOWN,
) -> Finding:
    """A task's finding: the headline and the "what changes it" strip.

    ``where``: "Chat, with median inter-token latency ≤ 300 ms"; ``deadline``: "300 ms";
    ``unbounded``: the ranking with no deadline; ``tighter``: at a tighter deadline;
    ``gpus``/``precisions``: one scenario per GPU alone and per precision alone (only
    worth listing when there are two or more); ``unit``/``rule``: how efficiency prints."""
    changes = [binding_text(deadline, unbounded, default, unit, rule)]
    if tighter is not None:
        changes.append(tighter_text(tighter, default, unit, rule))
    for group in (gpus, precisions):
        if len(group) > 1:
            changes.extend(leader_text(s, default, unit, rule) for s in group)
    return Finding(headline(where, default, unit, rule, top_n, noise), tuple(changes))
