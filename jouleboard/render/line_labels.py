"""Direct labels at the ends of a chart's lines (as Our World in Data labels its line
charts): each line's name beside its last point, moved up or down only as far as it must
so that no two names overlap. Pure arithmetic on pixel positions; charts.py draws them."""

from __future__ import annotations

import math
from collections.abc import Sequence


def spread(
    wanted: Sequence[float], sizes: Sequence[float], top: float, bottom: float
) -> list[float]:
    """The centres (px, down from the top) of labels ``sizes`` px high, each as near its
    ``wanted`` centre as it can be with no two overlapping: labels that would overlap form
    a block, placed where its labels' mean distance from their wanted centres is nought,
    and kept inside ``top``..``bottom`` while the room lasts (labels taller in all than the
    room run past ``bottom``). The result is in the order of ``wanted``."""
    order = sorted(range(len(wanted)), key=lambda i: (wanted[i], i))
    # Blocks of touching labels: their members (in order) and the block's top.
    blocks: list[tuple[list[int], float]] = []
    for i in order:
        members, block_top = [i], wanted[i] - sizes[i] / 2
        while blocks and blocks[-1][1] + sum(sizes[k] for k in blocks[-1][0]) > block_top:
            members = blocks.pop()[0] + members
            offsets = _offsets(members, sizes)
            block_top = sum(wanted[k] - offsets[n] for n, k in enumerate(members)) / len(members)
        blocks.append((members, max(block_top, top)))
    centres = [0.0] * len(wanted)
    placed = [k for members, _ in blocks for k in members]
    position = {k: block_top + off for members, block_top in blocks
                for k, off in zip(members, _offsets(members, sizes), strict=True)}  # fmt: skip
    # Past the bottom: the last labels move up, each pushing the ones above it; then down
    # again where that pushed the first ones above the top (more labels than room).
    limit = bottom
    for k in reversed(placed):
        position[k] = min(position[k], limit - sizes[k] / 2)
        limit = position[k] - sizes[k] / 2
    floor = top
    for k in placed:
        position[k] = max(position[k], floor + sizes[k] / 2)
        floor = position[k] + sizes[k] / 2
    for k in placed:
        centres[k] = position[k]
    return centres


def _offsets(members: Sequence[int], sizes: Sequence[float]) -> list[float]:
    """Each member's centre below its block's top, the members stacked in order."""
    out, below = [], 0.0
    for k in members:
        out.append(below + sizes[k] / 2)
        below += sizes[k]
    return out


def log_pixels(value: float, low: float, high: float, height: float) -> float:
    """Where ``value`` is drawn on a log axis from ``low`` (at ``height``) to ``high`` (0)."""
    return height * (1 - math.log(value / low) / math.log(high / low))


def log_value(pixels: float, low: float, high: float, height: float) -> float:
    """The value a log axis from ``low`` (at ``height``) to ``high`` (at 0) draws at
    ``pixels`` down from its top: the inverse of :func:`log_pixels`."""
    return float(low * (high / low) ** (1 - pixels / height))
