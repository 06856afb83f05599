"""Ranking: the energy-optimal configuration of each model under a latency deadline.

Pure functions over configuration records of any kind (docs/metrics.md, "The
energy-optimal configuration under a latency deadline"): a record says which latency its
deadline applies to (``latency_ms(percentile)``: inter-token latency at a percentile for
token tasks, batch latency for image and video tasks) and its own last tie-break keys.

Tie-break (the one place that defines it): configurations compare by
1. the objective (energy per token, image or video, J, lower first);
2. the latency the deadline applies to (lower first);
3. the number of GPUs (fewer first);
4. model id, GPU model, then the record's own ``tie_break()`` (its kind's serving settings,
   precision and repeat, ascending; see jouleboard/kinds/), which identify a configuration
   uniquely in a valid data set;
5. the source file path, so the order is total even on data that was not validated.
The same key chooses each model's configuration and orders the models, so the order
is total and does not depend on input order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from jouleboard.config.fields import RANK_BY, Percentile
from jouleboard.measure import metrics
from jouleboard.rank.noise import UNKNOWN, Noise, rank_ranges, rank_text


class Rankable(Protocol):
    """What ranking reads of a record (every kind's record has it; read-only)."""

    @property
    def model_id(self) -> str: ...

    @property
    def gpu_model(self) -> str: ...

    @property
    def num_gpus(self) -> int: ...

    @property
    def weight_precision(self) -> str: ...

    @property
    def source(self) -> str: ...

    @property
    def energy_per_output_joules(self) -> float: ...

    @property
    def energy_per_response_joules(self) -> float: ...

    def latency_ms(self, percentile: Percentile) -> float: ...

    def tie_break(self) -> tuple[int | str, ...]: ...


C = TypeVar("C", bound=Rankable)


def runs_of(c: object) -> int:
    """How many runs a configuration's figures are the geometric mean of (a record's
    ``runs``; 1 for a kind whose records have none: loading/repeats.py folds repeats)."""
    runs = getattr(c, "runs", 1)
    return runs if isinstance(runs, int) and runs > 0 else 1


Objective = Callable[[Rankable], float]


def energy_per_output(c: Rankable) -> float:
    """The default objective: energy per token, per image or per video, J."""
    return c.energy_per_output_joules


energy_per_token = energy_per_output  # for LLM configurations, the same thing


def energy_per_response(c: Rankable) -> float:
    return c.energy_per_response_joules


def objective_for(by: str, accuracy: Callable[[str], float | None]) -> Objective:
    """The objective a ranking minimises. ``accuracy(model_id)`` gives a model's accuracy in
    percent, or None; a model without one cannot be ranked by energy per correct answer
    (its objective is infinite, and :func:`rank` leaves it out)."""
    if by == "energy_per_token":
        return energy_per_token
    if by == "energy_per_response":
        return energy_per_response
    if by == "energy_per_correct_answer":

        def per_correct_answer(c: Rankable) -> float:
            acc = accuracy(c.model_id)
            return (
                math.inf
                if acc is None
                else metrics.energy_per_correct_answer(c.energy_per_response_joules, acc)
            )

        return per_correct_answer
    raise ValueError(f"unknown ranking metric {by!r}; valid: {', '.join(RANK_BY)}")


@dataclass(frozen=True, slots=True)
class Deadline:
    """A latency limit: ``percentile`` ITL must be <= ``ms``."""

    ms: float
    percentile: Percentile = "p50"

    def admits(self, c: Rankable) -> bool:
        return c.latency_ms(self.percentile) <= self.ms


@dataclass(frozen=True, slots=True)
class RankedRow(Generic[C]):
    """A model's place: ``rank`` by point value; ``rank_best``..``rank_worst`` the places the
    measurement noise allows (equal to ``rank`` when it is unknown); ``u`` the relative
    standard uncertainty of its objective (None: unknown); ``value`` the objective."""

    rank: int
    config: C
    rank_best: int = 0
    rank_worst: int = 0
    u: float | None = None
    value: float = math.nan

    @property
    def shared(self) -> bool:
        """The noise allows more than one place."""
        return self.rank_best != self.rank_worst

    @property
    def places(self) -> str:
        """``3`` or ``2–4``."""
        return rank_text(self.rank_best or self.rank, self.rank_worst or self.rank)


def sort_key(
    c: Rankable, percentile: Percentile = "p50", objective: Objective = energy_per_output
) -> tuple[float | int | str, ...]:
    """The documented total order of configurations (see module docstring)."""
    return (
        objective(c),
        c.latency_ms(percentile),
        c.num_gpus,
        c.model_id,
        c.gpu_model,
        *c.tie_break(),
    )


def eligible(
    configs: Iterable[C],
    deadline: Deadline,
    gpus: Collection[str] | None = None,
    energy_budget_joules_per_token: float | None = None,
    precisions: Collection[str] | None = None,
) -> list[C]:
    """Configurations that meet the deadline, run on an allowed GPU and precision, and fit
    the energy budget (J per token, image or video)."""
    return [
        c
        for c in configs
        if deadline.admits(c)
        and (gpus is None or c.gpu_model in gpus)
        and (precisions is None or c.weight_precision in precisions)
        and (
            energy_budget_joules_per_token is None
            or c.energy_per_output_joules <= energy_budget_joules_per_token
        )
    ]


def best_per_model(
    configs: Iterable[C], percentile: Percentile = "p50", objective: Objective = energy_per_token
) -> dict[str, C]:
    """For each model, its best configuration by :func:`sort_key`."""
    best: dict[str, C] = {}
    for c in configs:
        current = best.get(c.model_id)
        if current is None or sort_key(c, percentile, objective) < sort_key(
            current, percentile, objective
        ):
            best[c.model_id] = c
    return best


def rank(
    configs: Iterable[C],
    deadline: Deadline,
    gpus: Collection[str] | None = None,
    top: int | None = None,
    energy_budget_joules_per_token: float | None = None,
    objective: Objective = energy_per_token,
    precisions: Collection[str] | None = None,
    noise: Noise = UNKNOWN,
) -> list[RankedRow[C]]:
    """One row per model: its energy-optimal configuration under ``deadline``, best first,
    with the places ``noise`` allows it (rank/noise.py; ranges count every qualifying
    model, also past ``top``).

    The browser's re-ranking (templates/assets/js/rank.js) implements the same rule; the
    shared cases in tests/ranking_cases.json keep the two in step."""
    kept = [
        c
        for c in eligible(configs, deadline, gpus, energy_budget_joules_per_token, precisions)
        if math.isfinite(objective(c))
    ]
    best = best_per_model(kept, deadline.percentile, objective)
    ordered = sorted(best.values(), key=lambda c: sort_key(c, deadline.percentile, objective))
    values = [objective(c) for c in ordered]
    us = [noise.u(runs_of(c)) for c in ordered]
    rows = [
        RankedRow(i, c, best, worst, u, v)
        for i, (c, (best, worst), u, v) in enumerate(
            zip(ordered, rank_ranges(values, us, noise), us, values, strict=True), start=1
        )
    ]
    return rows if top is None else rows[:top]


def emptied_by(
    configs: Iterable[Rankable],
    deadline: Deadline,
    gpus: Collection[str] | None = None,
    energy_budget_joules_per_token: float | None = None,
    objective: Objective = energy_per_token,
) -> str | None:
    """Why :func:`rank` with these arguments has no row: the first of its filters, in the
    order a reader would check them, that leaves nothing ("measurements", "gpus",
    "deadline", "energy_budget", "objective"); None when some configuration qualifies."""
    left = list(configs)
    steps: tuple[tuple[str, Callable[[Rankable], bool]], ...] = (
        ("gpus", lambda c: gpus is None or c.gpu_model in gpus),
        ("deadline", deadline.admits),
        (
            "energy_budget",
            lambda c: (
                energy_budget_joules_per_token is None
                or c.energy_per_output_joules <= energy_budget_joules_per_token
            ),
        ),
        ("objective", lambda c: math.isfinite(objective(c))),
    )
    if not left:
        return "measurements"
    for name, keep in steps:
        left = [c for c in left if keep(c)]
        if not left:
            return name
    return None


def pareto_frontier(configs: Iterable[C], percentile: Percentile = "p50") -> list[C]:
    """Configurations no other beats on both energy per output and ``percentile`` latency.

    Returned by latency ascending (energy then descends). Of exact duplicates on both
    axes, the first by :func:`sort_key` is kept.
    """
    ordered = sorted(configs, key=lambda c: (c.latency_ms(percentile), *sort_key(c, percentile)))
    frontier: list[C] = []
    for c in ordered:
        if not frontier or c.energy_per_output_joules < frontier[-1].energy_per_output_joules:
            frontier.append(c)
    return frontier


def best_per_model_and_gpu(configs: Iterable[C], deadline: Deadline) -> dict[tuple[str, str], C]:
    """For GPU comparisons: the best configuration of each (model, GPU) under ``deadline``."""
    groups: dict[tuple[str, str], list[C]] = {}
    for c in eligible(configs, deadline):
        groups.setdefault((c.model_id, c.gpu_model), []).append(c)
    return {
        key: min(group, key=lambda c: sort_key(c, deadline.percentile))
        for key, group in sorted(groups.items())
    }
