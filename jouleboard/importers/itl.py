"""Inter-token latency of a benchmark run: chunk smoothing and exact percentiles.

Pure functions over per-token gaps (seconds in, milliseconds out).

- Smoothing: a positive gap g followed by k zeros is one chunk of k+1 tokens, each g/(k+1).
  Zeros before the first positive gap arrived in the first chunk, with the first token: their
  wait is the time to first token, not an inter-token gap, so they are dropped (as the
  ML.ENERGY data toolkit does).
- Percentiles: numpy.percentile's default ("linear") definition bit for bit, computed from a
  float array of the gaps without a sorted copy of it, so tens of millions of tokens stay cheap.
"""

from __future__ import annotations

import math
import random
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate

ITL_PERCENTILES = (50.0, 90.0, 95.0, 99.0)


@dataclass(frozen=True, slots=True)
class ItlStats:
    """Inter-token latency of the successful requests' smoothed gaps, ms."""

    mean_ms: float
    median_ms: float
    p90_ms: float
    p95_ms: float
    p99_ms: float
    gaps: int


def smooth_itl(itl_s: Sequence[float]) -> list[float]:
    """Per-token gaps with each chunk's gap shared evenly over its tokens.

    ``itl_s``: one non-negative gap per generated token, s; zeros mark tokens that arrived
    in the chunk of the previous positive gap. Leading zeros are dropped.
    """
    n, i = len(itl_s), 0
    while i < n and itl_s[i] == 0:
        i += 1
    out: list[float] = []
    while i < n:  # itl_s[i] > 0 opens a chunk
        try:
            zero = itl_s.index(0, i)  # C-speed scan: most tokens come alone
        except ValueError:
            zero = n
        end = zero
        while end < n and itl_s[end] == 0:
            end += 1
        out.extend(itl_s[i : zero - 1])  # single-token chunks
        tokens = end - zero + 1  # the last positive gap and the zeros after it
        out.extend([itl_s[zero - 1] / tokens] * tokens)
        i = end
    return out


def order_statistics(
    values: Sequence[float],
    ranks: Iterable[int],
    *,
    sort_limit: int = 1 << 16,
    sample_size: int = 1 << 16,
    margin_sigmas: float = 6.0,
) -> dict[int, float]:
    """``sorted(values)[r]`` for each 0-based rank r, exactly, without sorting all values.

    A seeded random sample brackets each rank with a value window (``margin_sigmas``
    binomial standard deviations wide); one pass counts the values below each window and
    keeps those inside, and only the windows are sorted. Should a rank fall outside its
    window (a sample that far off), every value is sorted: the answer is exact either way.
    """
    wanted, n = sorted(set(ranks)), len(values)
    if n <= sort_limit:
        ordered = sorted(values)
        return {r: ordered[r] for r in wanted}
    rng = random.Random(n)  # seeded: the same values take the same path (the answer is exact)
    # With replacement: no index list or set, just the sampled floats.
    sample = sorted(values[rng.randrange(n)] for _ in range(sample_size))
    last = len(sample) - 1
    windows: list[tuple[float, float]] = []  # half-open [lo, hi) around each wanted rank
    for r in wanted:
        f = r / (n - 1)
        margin = margin_sigmas * math.sqrt(f * (1 - f) * len(sample)) + 2
        lo, hi = math.floor(f * last - margin), math.ceil(f * last + margin)
        windows.append(
            (
                -math.inf if lo <= 0 else sample[lo],
                math.inf if hi >= last else math.nextafter(sample[hi], math.inf),
            )
        )
    merged: list[tuple[float, float]] = []  # overlapping windows as one (p50's two ranks)
    for lo_v, hi_v in sorted(windows):
        if merged and lo_v <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi_v, merged[-1][1]))
        else:
            merged.append((lo_v, hi_v))
    edges = [e for window in merged for e in window]  # strictly increasing
    counts = [0] * (len(edges) + 1)
    inside = [array("d") for _ in merged]
    for v in values:
        k = bisect_right(edges, v)  # odd k: inside window k // 2
        counts[k] += 1
        if k & 1:
            inside[k >> 1].append(v)
    starts = list(accumulate(counts, initial=0))  # starts[k]: values below bucket k
    ordered_windows: dict[int, list[float]] = {}
    result: dict[int, float] = {}
    for r in wanted:
        k = bisect_right(starts, r) - 1  # the bucket holding rank r
        if not k & 1:
            ordered = sorted(values)
            return {r: ordered[r] for r in wanted}
        if k not in ordered_windows:
            ordered_windows[k] = sorted(inside[k >> 1])
        result[r] = ordered_windows[k][r - starts[k]]
    return result


def percentiles(values: Sequence[float], qs: Sequence[float]) -> tuple[float, ...]:
    """numpy.percentile(values, qs) with the default "linear" method, bit for bit."""
    n = len(values)
    if n == 0:
        raise ValueError("percentiles of no values")
    positions = []
    for q in qs:
        h = (n - 1) * (q / 100)
        lo = math.floor(h)
        positions.append((lo, min(lo + 1, n - 1), h - lo))
    stats = order_statistics(values, [i for lo, hi, _ in positions for i in (lo, hi)])
    return tuple(_lerp(stats[lo], stats[hi], t) for lo, hi, t in positions)


def _lerp(a: float, b: float, t: float) -> float:
    # numpy's _lerp: from the nearer end, so t = 1 gives b exactly.
    return b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t


def itl_stats(gaps_s: Sequence[float]) -> ItlStats:
    """Mean and percentiles of per-token gaps (s), in ms."""
    p50, p90, p95, p99 = percentiles(gaps_s, ITL_PERCENTILES)
    return ItlStats(
        mean_ms=math.fsum(gaps_s) / len(gaps_s) * 1000,
        median_ms=p50 * 1000,
        p90_ms=p90 * 1000,
        p95_ms=p95 * 1000,
        p99_ms=p99 * 1000,
        gaps=len(gaps_s),
    )
