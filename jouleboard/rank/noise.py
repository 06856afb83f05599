"""Measurement noise: how precise an energy figure is, and the ranks it can support.

The rule (docs/measurement-format.md, "Repeat runs and measurement noise"; the browser's
templates/assets/js/rank.js follows it, kept equal by tests/ranking_cases.json):

- One run's energy per output has a relative standard uncertainty ``s`` on the log scale:
  declared in site.yaml (``uncertainty.relative``), or estimated from the data's own repeat
  runs as the pooled sample standard deviation of ln(energy per output),
  s^2 = sum over groups of (k - 1) var_g / sum over groups of (k - 1).
- A configuration measured ``n`` times (its runs folded into one, loading/repeats.py) has
  u = s / sqrt(n). With no repeats and nothing declared, u is unknown and ranks stay exact.
- With z the two-sided normal quantile of the confidence (1.96 at 95%), a value v has the
  interval [v exp(-z u), v exp(z u)]; model j is surely better than model i when
  ln(E_i / E_j) > z sqrt(u_i^2 + u_j^2), E being what the ranking minimises;
  rank_best(i) = 1 + #(surely better than i), rank_worst(i) = N - #(surely worse than i).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from statistics import NormalDist

DEFAULT_CONFIDENCE = 0.95


def z_of(confidence: float) -> float:
    """The two-sided standard normal quantile: 1.959963984540054 at 0.95."""
    return NormalDist().inv_cdf((1 + confidence) / 2)


@dataclass(frozen=True, slots=True)
class RepeatGroup:
    """The runs of one configuration measured more than once: their sources and energy per
    output (J), in the order of their repeat numbers."""

    sources: tuple[str, ...]
    energy_per_output_joules: tuple[float, ...]
    dataset: str = ""  # the data set (provenance) the runs come from; "" when not stated

    @property
    def spread(self) -> float:
        """max / min - 1: how far the runs lie apart (0.19 = 19%)."""
        return max(self.energy_per_output_joules) / min(self.energy_per_output_joules) - 1


def pooled_log_sd(groups: Sequence[Sequence[float]]) -> float | None:
    """The pooled sample standard deviation of ln(value) over groups of two or more values;
    None when no group has two."""
    squares, freedom = 0.0, 0
    for values in groups:
        if len(values) < 2:
            continue
        logs = [math.log(v) for v in values]
        mean = math.fsum(logs) / len(logs)
        squares += math.fsum((x - mean) ** 2 for x in logs)  # = (k - 1) x sample variance
        freedom += len(logs) - 1
    return math.sqrt(squares / freedom) if freedom else None


@dataclass(frozen=True, slots=True)
class Noise:
    """How precise one run is (``per_run`` = s, None: unknown), at which confidence, and why.

    ``declared`` is site.yaml's basis when s was declared; otherwise s was estimated from
    ``groups`` (none: unknown)."""

    per_run: float | None
    confidence: float = DEFAULT_CONFIDENCE
    declared: str | None = None
    groups: tuple[RepeatGroup, ...] = ()

    @classmethod
    def of(
        cls,
        groups: Sequence[RepeatGroup],
        relative: float | None = None,
        confidence: float = DEFAULT_CONFIDENCE,
        basis: str = "",
    ) -> Noise:
        """Declared (``relative``), else estimated from the repeat groups."""
        if relative is not None:
            return cls(relative, confidence, basis or "declared in site.yaml", tuple(groups))
        estimate = pooled_log_sd([g.energy_per_output_joules for g in groups])
        return cls(estimate, confidence, None, tuple(groups))

    def for_datasets(self, datasets: Collection[str]) -> Noise:
        """The noise of measurements from ``datasets``: a declared figure holds for all; an
        estimate comes from those data sets' own repeats (unknown when they have none), so
        one data set's noise never stands for another's."""
        if self.declared is not None:
            return self
        mine = [g for g in self.groups if g.dataset in datasets]
        if len(mine) == len(self.groups):
            return self
        return Noise.of(mine, confidence=self.confidence)

    @property
    def z(self) -> float:
        return z_of(self.confidence)

    @property
    def known(self) -> bool:
        return self.per_run is not None

    def u(self, runs: int) -> float | None:
        """The relative standard uncertainty of a configuration measured ``runs`` times."""
        return None if self.per_run is None else self.per_run / math.sqrt(runs)

    def interval(self, value: float, u: float | None) -> tuple[float, float]:
        """[v exp(-z u), v exp(z u)]; (v, v) when u is unknown."""
        if u is None:
            return value, value
        spread = math.exp(self.z * u)
        return value / spread, value * spread

    def surely_lower(self, a: float, u_a: float | None, b: float, u_b: float | None) -> bool:
        """``a`` is lower than ``b`` beyond the noise: ln(b / a) > z sqrt(u_a^2 + u_b^2).
        With either uncertainty unknown, a plain comparison."""
        if u_a is None or u_b is None:
            return a < b
        return math.log(b / a) > self.z * math.hypot(u_a, u_b)

    def within(self, before: float, after: float, u: float | None) -> bool:
        """A change of one configuration's value lies within the noise of two measurements
        of it: |ln(after / before)| <= z u sqrt(2). Never, when u is unknown."""
        if u is None:
            return False
        return abs(math.log(after / before)) <= self.z * u * math.sqrt(2)

    def browser(self) -> dict[str, float] | None:
        """What the browser's re-ranking needs (rank.js ``noise``), or None when unknown."""
        if self.per_run is None:
            return None
        return {"s": self.per_run, "z": self.z}


UNKNOWN = Noise(None)


def rank_ranges(
    values: Sequence[float], us: Sequence[float | None], noise: Noise
) -> list[tuple[int, int]]:
    """(rank_best, rank_worst) of each of ``values`` (ordered best first, lower is better)
    with uncertainties ``us``. Unknown noise, or any unknown u: the exact places."""
    n = len(values)
    if not noise.known or any(u is None for u in us):
        return [(i, i) for i in range(1, n + 1)]
    ranges = []
    for i, (v, u) in enumerate(zip(values, us, strict=True)):
        better = sum(
            noise.surely_lower(w, uw, v, u)
            for j, (w, uw) in enumerate(zip(values, us, strict=True))
            if j != i
        )
        worse = sum(
            noise.surely_lower(v, u, w, uw)
            for j, (w, uw) in enumerate(zip(values, us, strict=True))
            if j != i
        )
        ranges.append((1 + better, n - worse))
    return ranges


def rank_text(best: int, worst: int) -> str:
    """``3`` or ``2–4`` (an en dash, as every page prints a range)."""
    return str(best) if best == worst else f"{best}–{worst}"


def percent(x: float) -> str:
    """0.0837 -> ``8.4%``."""
    return f"{x * 100:.2g}%" if x < 0.1 else f"{x * 100:.3g}%"


def table_note(noise: Noise) -> str:
    """The line beside every ranking table saying what its places mean."""
    if noise.per_run is None:
        return "Measurement noise unknown: places are by point value."
    return (
        "A range such as 2–4 marks places shared within measurement noise "
        f"(±{percent(noise.per_run)} per run, {percent(noise.confidence)} confidence)."
    )


def describe(noise: Noise) -> str:
    """How precise the figures are and where that comes from, in plain words (method page)."""
    if noise.per_run is None:
        return (
            "Measurement noise unknown: no configuration was measured more than once and "
            "site.yaml declares no uncertainty, so every place is by point value and no range "
            "is shown."
        )
    if noise.declared is not None:
        where = f"declared by the site ({noise.declared})"
    else:
        n = len(noise.groups)
        where = (
            f"estimated from the {n} configuration{'s' if n != 1 else ''} measured more than "
            "once (the pooled standard deviation of the logarithm of their runs' energy)"
        )
    return (
        f"One run's energy per output is uncertain by ±{percent(noise.per_run)} (relative "
        f"standard uncertainty), {where}; a configuration measured n times, by that over √n. "
        f"Intervals and rank ranges are at {percent(noise.confidence)} confidence "
        f"(z = {noise.z:.2f}): a model ranks surely ahead of another only when their energies "
        f"differ by more than a factor exp(z √(u₁² + u₂²)), "
        f"{math.exp(noise.z * noise.per_run * math.sqrt(2)):.2f}× for two single runs."
    )
