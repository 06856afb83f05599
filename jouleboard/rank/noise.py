"""Measurement noise: how precise an energy figure is, and the ranks it can support.

The rule (docs/measurement-format.md, "Repeat runs and measurement noise"; the browser's
templates/assets/js/rank.js follows it with the numbers :meth:`Noise.browser` hands it,
kept equal by tests/ranking_cases.json):

- One run's energy per output has a relative standard uncertainty ``s`` on the log scale:
  declared in site.yaml (``uncertainty.relative``, with ``degrees_of_freedom`` when it was
  itself estimated), or estimated from the data's own repeat runs as the pooled sample
  standard deviation of ln(energy per output),
  s^2 = sum over groups of (k - 1) var_g / nu, with nu = sum over groups of (k - 1).
  An estimate holds only where it was measured: repeat groups are pooled per data set and
  per task kind (:meth:`Noise.scoped`), so image tasks never borrow a language model's.
- A configuration measured ``n`` times (its runs folded into one, loading/repeats.py) has
  u = s / sqrt(n). With no repeats and nothing declared, u is unknown and ranks stay exact.
- The critical value ``c`` follows how s is known: Student's t quantile with nu degrees of
  freedom at the confidence (3.18 for nu = 3 at 95%) when s was estimated, the normal
  quantile (1.96) when s is declared exact. A value v has the interval
  [v exp(-c u), v exp(c u)]; model j is surely better than model i when
  ln(E_i / E_j) > c sqrt(u_i^2 + u_j^2), E being what the ranking minimises;
  rank_best(i) = 1 + #(surely better than i), rank_worst(i) = N - #(surely worse than i).
  Each comparison is a pair's, at the confidence: a range is not a simultaneous statement
  about the whole table.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from statistics import NormalDist

from jouleboard.config.fields import MAX_CONFIDENCE
from jouleboard.rank.quantiles import chi_square_quantile, student_t_quantile

DEFAULT_CONFIDENCE = 0.95
# Under this many degrees of freedom the method page says the estimate rests on few repeats.
FEW_DEGREES = 10


def z_of(confidence: float) -> float:
    """The two-sided standard normal quantile: 1.959963984540054 at 0.95 (a confidence
    from 0.5 to MAX_CONFIDENCE, as site.yaml allows)."""
    if not 0.5 <= confidence <= MAX_CONFIDENCE:
        raise ValueError(f"a confidence must lie from 0.5 to {MAX_CONFIDENCE}, not {confidence}")
    return NormalDist().inv_cdf((1 + confidence) / 2)


@functools.cache
def critical_value(confidence: float, freedom: float | None) -> float:
    """The two-sided critical value at ``confidence``: Student's t quantile with ``freedom``
    degrees of freedom (3.182446305284263 for 3 at 0.95), or the normal quantile when
    ``freedom`` is None (s taken as exact)."""
    z = z_of(confidence)  # checks the confidence
    if freedom is None:
        return z
    return student_t_quantile((1 + confidence) / 2, freedom)


@dataclass(frozen=True, slots=True)
class RepeatGroup:
    """The runs of one configuration measured more than once: their sources and energy per
    output (J), in the order of their repeat numbers, and where they were measured."""

    sources: tuple[str, ...]
    energy_per_output_joules: tuple[float, ...]
    dataset: str = ""  # the data set (provenance) the runs come from; "" when not stated
    kind: str = ""  # the task kind's name (token, diffusion, ...): an estimate's scope
    task: str = ""  # where the configuration ran: task id, model id, GPU model and count
    model: str = ""
    gpu: str = ""
    num_gpus: int = 0
    label: str = ""  # what was repeated, in words: "GPT OSS 20B on Chat, 2× H100"

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


def degrees_of_freedom(groups: Sequence[RepeatGroup]) -> int:
    """nu = sum over groups of (k - 1): what the pooled estimate rests on."""
    return sum(len(g.energy_per_output_joules) - 1 for g in groups)


@dataclass(frozen=True, slots=True)
class Noise:
    """How precise one run is (``per_run`` = s, None: unknown), at which confidence, and why.

    ``declared`` is site.yaml's basis when s was declared; otherwise s was estimated from
    ``groups`` (none: unknown). ``freedom``: the degrees of freedom of s (None: s is taken
    as exact, as a declared s without ``degrees_of_freedom`` is)."""

    per_run: float | None
    confidence: float = DEFAULT_CONFIDENCE
    declared: str | None = None
    groups: tuple[RepeatGroup, ...] = ()
    freedom: float | None = None

    @classmethod
    def of(
        cls,
        groups: Sequence[RepeatGroup],
        relative: float | None = None,
        confidence: float = DEFAULT_CONFIDENCE,
        basis: str = "",
        freedom: float | None = None,
    ) -> Noise:
        """Declared (``relative``, with its ``freedom`` if it was itself estimated), else
        estimated from the repeat groups with their degrees of freedom."""
        if relative is not None:
            declared = basis or "declared in site.yaml"
            return cls(relative, confidence, declared, tuple(groups), freedom)
        estimate = pooled_log_sd([g.energy_per_output_joules for g in groups])
        nu = degrees_of_freedom(groups)
        return cls(estimate, confidence, None, tuple(groups), nu if estimate is not None else None)

    def scoped(self, datasets: Collection[str], kinds: Collection[str]) -> Noise:
        """The noise of measurements from ``datasets`` of tasks of ``kinds``: a declared
        figure holds for all; an estimate comes from those data sets' and kinds' own repeats
        (unknown when they have none), so one data set's or kind's noise never stands for
        another's."""
        if self.declared is not None:
            return self
        mine = [g for g in self.groups if g.dataset in datasets and g.kind in kinds]
        if len(mine) == len(self.groups):
            return self
        return Noise.of(mine, confidence=self.confidence)

    @property
    def critical(self) -> float:
        """c: Student's t with ``freedom`` degrees of freedom, or the normal quantile."""
        return critical_value(self.confidence, self.freedom)

    @property
    def known(self) -> bool:
        return self.per_run is not None

    def u(self, runs: int) -> float | None:
        """The relative standard uncertainty of a configuration measured ``runs`` times."""
        return None if self.per_run is None else self.per_run / math.sqrt(runs)

    def interval(self, value: float, u: float | None) -> tuple[float, float]:
        """[v exp(-c u), v exp(c u)]; (v, v) when u is unknown."""
        if u is None:
            return value, value
        spread = math.exp(self.critical * u)
        return value / spread, value * spread

    def surely_lower(self, a: float, u_a: float | None, b: float, u_b: float | None) -> bool:
        """``a`` is lower than ``b`` beyond the noise: ln(b / a) > c sqrt(u_a^2 + u_b^2).
        With either uncertainty unknown, a plain comparison."""
        if u_a is None or u_b is None:
            return a < b
        return math.log(b / a) > self.critical * math.hypot(u_a, u_b)

    def within(
        self, before: float, after: float, runs: tuple[int, int], nested: bool = False
    ) -> bool:
        """A configuration's value changed from ``before`` (the geometric mean of
        ``runs[0]`` runs) to ``after`` (of ``runs[1]``) by no more than its measurements'
        noise allows: |ln(after / before)| <= c s sqrt(v). The two means share no run (a
        configuration measured again): v = 1/n0 + 1/n1, so 2 for single runs. One's runs are
        the other's and more (``nested``: a repeat added or removed): the shared runs cancel,
        v = |1/n0 - 1/n1| (1/2 for a second run added). Never, when s is unknown."""
        if self.per_run is None:
            return False
        n0, n1 = runs
        v = abs(1 / n0 - 1 / n1) if nested else 1 / n0 + 1 / n1
        return abs(math.log(after / before)) <= self.critical * self.per_run * math.sqrt(v)

    def s_interval(self) -> tuple[float, float] | None:
        """The interval of s itself at the confidence, from the chi-square distribution with
        ``freedom`` degrees of freedom: [s sqrt(nu / chi2_high), s sqrt(nu / chi2_low)];
        None when s is unknown or taken as exact."""
        if self.per_run is None or self.freedom is None:
            return None
        tail = (1 - self.confidence) / 2
        nu = self.freedom
        return (
            self.per_run * math.sqrt(nu / chi_square_quantile(1 - tail, nu)),
            self.per_run * math.sqrt(nu / chi_square_quantile(tail, nu)),
        )

    def runs_to_separate(self, ratio: float) -> int | None:
        """How many runs of each of two configurations whose energies stand at ``ratio``
        would separate them if their point values held: the least n with
        n > 2 (c s / ln ratio)^2 (c kept as it is). None when s is unknown or ratio is 1."""
        if self.per_run is None or ratio <= 0 or ratio == 1:
            return None
        t = self.critical * self.per_run / math.log(ratio)
        need = 2 * t * t  # as rank.js runsToSeparate computes it
        return max(1, math.floor(need) + 1)

    def browser(self) -> dict[str, float | None] | None:
        """What the browser's re-ranking needs (rank.js ``noise``): s and the critical value
        c, so it needs no distribution of its own, nu for the view's download (None: s taken
        as exact) and the confidence its sentences state; None when unknown."""
        if self.per_run is None:
            return None
        return {
            "s": self.per_run,
            "c": self.critical,
            "nu": self.freedom,
            "confidence": self.confidence,
        }


UNKNOWN = Noise(None)


def _count_while(ordered: Sequence[float], holds: Callable[[float], bool], from_low: bool) -> int:
    """How many of ``ordered`` (ascending) satisfy ``holds``, which holds for a prefix
    (``from_low``) or a suffix of them: a binary search asking ``holds`` itself, so the count
    is exactly what testing each one would give."""
    low, high = 0, len(ordered)  # the boundary lies in [low, high]
    while low < high:
        middle = (low + high) // 2
        inside = holds(ordered[middle])
        if inside == from_low:
            low = middle + 1
        else:
            high = middle
    return low if from_low else len(ordered) - low


def _below(v: float, threshold: float, w: float) -> bool:
    """``w`` is surely lower than ``v``: ln(v / w) > threshold."""
    return math.log(v / w) > threshold


def _above(v: float, threshold: float, w: float) -> bool:
    """``w`` is surely higher than ``v``: ln(w / v) > threshold."""
    return math.log(w / v) > threshold


def rank_ranges(
    values: Sequence[float], us: Sequence[float | None], noise: Noise
) -> list[tuple[int, int]]:
    """(rank_best, rank_worst) of each of ``values`` (ordered best first, lower is better)
    with uncertainties ``us``. Unknown noise, or any unknown u: the exact places.

    Each count is the pairwise rule's (:meth:`Noise.surely_lower` against every other value),
    found by binary search among the values of each uncertainty (one per number of runs):
    "w is surely lower than v" holds for the lowest w only, so the search asks the same
    comparison about O(log n) of them and the whole costs O(n log n), not O(n²)."""
    n = len(values)
    if not noise.known or any(u is None for u in us):
        return [(i, i) for i in range(1, n + 1)]
    known = [u for u in us if u is not None]
    by_u: dict[float, list[float]] = {}
    for v, u in zip(values, known, strict=True):
        by_u.setdefault(u, []).append(v)
    groups = [(u, sorted(vs)) for u, vs in sorted(by_u.items())]
    c = noise.critical
    ranges = []
    for v, u in zip(values, known, strict=True):
        better = worse = 0
        for u_group, ordered in groups:
            # as surely_lower(w, u_group, v, u) and surely_lower(v, u, w, u_group) compute it
            ahead, behind = c * math.hypot(u_group, u), c * math.hypot(u, u_group)
            better += _count_while(ordered, functools.partial(_below, v, ahead), True)
            worse += _count_while(ordered, functools.partial(_above, v, behind), False)
        ranges.append((1 + better, n - worse))
    return ranges


def rank_text(best: int, worst: int) -> str:
    """``3`` or ``2–4`` (an en dash, as every page prints a range)."""
    return str(best) if best == worst else f"{best}–{worst}"


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st."""
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


def place_words(best: int, worst: int) -> str:
    """A place as a sentence names it: ``3rd``, or ``6th–7th`` when the noise lets a model
    share places (the table prints the same range as ``6–7``)."""
    return ordinal(best) if best == worst else f"{ordinal(best)}–{ordinal(worst)}"


def percent(x: float) -> str:
    """0.0837 -> ``8.4%``."""
    return f"{x * 100:.2g}%" if x < 0.1 else f"{x * 100:.3g}%"


def signed_percent(x: float) -> str:
    """-0.234 -> ``−23%``, 0.305 -> ``+31%`` (two significant figures)."""
    sign = "−" if x < 0 else "+"
    return f"{sign}{abs(x) * 100:.2g}%"


def one_run_bounds(noise: Noise) -> tuple[float, float]:
    """The factors the whiskers of a single run span: exp(-c s) and exp(c s)."""
    assert noise.per_run is not None
    spread = math.exp(noise.critical * noise.per_run)
    return 1 / spread, spread


def critical_words(noise: Noise) -> str:
    """How the critical value was chosen, e.g. ``Student's t with 3 degrees of freedom,
    c = 3.18`` or ``the normal quantile, c = 1.96, s taken as exact``."""
    if noise.freedom is None:
        return f"the normal quantile, c = {noise.critical:.2f}, s taken as exact"
    nu = noise.freedom
    degrees = f"{nu:g} degree{'' if nu == 1 else 's'} of freedom"
    return f"Student's t with {degrees}, c = {noise.critical:.2f}"


def table_note(noise: Noise) -> str:
    """The line beside every ranking table saying what its places mean: the interval the
    whiskers draw for one run, at the confidence, compared pair by pair."""
    if noise.per_run is None:
        return "Measurement noise unknown: places are by point value."
    low, high = one_run_bounds(noise)
    return (
        "A range such as 2–4 marks places the measurements cannot separate: at "
        f"{percent(noise.confidence)} confidence one run's energy lies within "
        f"{signed_percent(low - 1)} to {signed_percent(high - 1)} of its value (the whiskers), "
        "and each pair of models is compared on its own."
    )


def describe(noise: Noise) -> str:
    """How precise the figures are, where that comes from and how sure that is, in plain
    words (the glossary's section on measurement noise)."""
    if noise.per_run is None:
        return (
            "Measurement noise unknown: no configuration was measured more than once and "
            "the leaderboard states no uncertainty, so every place is by point value and no "
            "range is shown."
        )
    s, conf = noise.per_run, percent(noise.confidence)
    if noise.declared is not None:
        where = f"declared by the site ({noise.declared})"
        if noise.freedom is not None:
            where += f", itself estimated with {noise.freedom:g} degrees of freedom"
    else:
        n = len(noise.groups)
        where = (
            f"estimated from {n} configuration{'s' if n != 1 else ''} measured more than once "
            "(the pooled standard deviation of the logarithm of their runs' energy), with "
            f"{noise.freedom:g} degree{'' if noise.freedom == 1 else 's'} of freedom "
            "(one per run beyond each configuration's first)"
        )
    low, high = one_run_bounds(noise)
    pair = math.exp(noise.critical * s * math.sqrt(2))
    text = (
        f"One run's energy per output is uncertain by s = {percent(s)} (relative standard "
        f"uncertainty), {where}; a configuration measured n times, by s/√n. "
    )
    bounds = noise.s_interval()
    if bounds is not None:
        text += (
            f"Being an estimate, s is itself uncertain: at {conf} confidence it lies "
            f"between {percent(bounds[0])} and {percent(bounds[1])} (chi-square with "
            f"{noise.freedom:g} degrees of freedom). "
        )
    text += (
        f"Intervals and rank ranges use {critical_words(noise)}: at {conf} confidence one "
        f"run's energy lies within {signed_percent(low - 1)} to {signed_percent(high - 1)} of "
        f"its value, and a model ranks ahead of another at {conf} confidence only when their "
        f"energies differ by more than a factor exp(c √(u₁² + u₂²)), {pair:.2f}× for two "
        f"single runs. Each such comparison is of one pair at {conf} confidence; a range is "
        "not a simultaneous statement about the whole table."
    )
    # An estimate from the data's repeats gains from more of them; a declared one does not
    # (site.yaml states it, whatever the data holds).
    if noise.declared is None and noise.freedom is not None and noise.freedom < FEW_DEGREES:
        more = noise.freedom + 10
        later = critical_value(noise.confidence, more)
        text += (
            f" This estimate rests on few repeats. Each further run of a configuration adds "
            f"one degree of freedom: ten more would bring c from {noise.critical:.2f} to "
            f"{later:.2f} and narrow the interval of s, and if s held at {percent(s)}, two "
            f"single runs would then need to differ by "
            f"{math.exp(later * s * math.sqrt(2)):.2f}× rather than {pair:.2f}× to be told "
            "apart."
        )
    return text
