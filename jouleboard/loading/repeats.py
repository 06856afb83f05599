"""Repeat runs of one configuration folded into one record (docs/measurement-format.md,
"Repeat runs and measurement noise").

Measurements of the same configuration that differ only in their repeat number are one
configuration measured ``runs`` times: each measured figure (every float field of the record:
energy, power, throughput, latencies) is the geometric mean of the runs' figures, which keeps
ratios such as energy = power / throughput consistent. Settings and everything else come from
the first run. The runs' energy per output feed the noise estimate (rank/noise.py).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from jouleboard.config.schema import Provenance
from jouleboard.measure.checks import window_of
from jouleboard.rank.noise import RepeatGroup
from jouleboard.rank.ranking import Rankable

if TYPE_CHECKING:
    from _typeshed import DataclassInstance
    from typing_extensions import TypeIs


class Repeated(Rankable, Protocol):
    """What folding reads of a record (every kind's record has it: kinds/base.py Record):
    what ranking reads, and which run of which configuration of which task it is."""

    @property
    def repeat(self) -> int: ...

    @property
    def identity(self) -> tuple[object, ...]: ...

    @property
    def provenance(self) -> Provenance | None: ...

    @property
    def task(self) -> str: ...


if TYPE_CHECKING:

    class Foldable(DataclassInstance, Repeated, Protocol):
        """A record folding can copy with new figures: a dataclass (see :func:`_foldable`)."""


R = TypeVar("R", bound=Repeated)


def _foldable(c: Repeated) -> TypeIs[Foldable]:
    """Records with ``repeat``, ``runs`` and ``run_sources`` fields (the built-in kinds'); a
    site kind's records without them stay one row per file."""
    return _foldable_type(type(c))


@functools.cache
def _foldable_type(kind: type) -> bool:
    if not dataclasses.is_dataclass(kind):
        return False
    names = {f.name for f in dataclasses.fields(kind)}
    return {"repeat", "runs", "run_sources"} <= names


def configuration_key(c: Foldable) -> tuple[object, ...]:
    """What a configuration is, whatever run measured it: its identity with the repeat of a
    first run (1), so a first run's record is its own key (copying every record to set its
    repeat took 12 ms of a rebuild's 1,858)."""
    return (c if c.repeat == 1 else dataclasses.replace(c, repeat=1)).identity


def dataset_of(c: Repeated) -> str:
    """The data set a record's provenance names ("" when it states none)."""
    provenance = c.provenance
    return str(provenance.dataset) if provenance is not None else ""


def geometric_mean(values: Sequence[float]) -> float:
    """exp(mean(ln v)); the value itself when all runs agree (exp(ln v) may differ from v in
    the last bit), the arithmetic mean where a value is not positive."""
    if all(v == values[0] for v in values):
        return values[0]
    if min(values) <= 0:
        return math.fsum(values) / len(values)
    return math.exp(math.fsum(math.log(v) for v in values) / len(values))


def _fold(runs: Sequence[R]) -> R:
    first = runs[0]
    if not _foldable(first):  # fold_repeats groups foldable records only
        raise TypeError(f"{type(first).__name__} records are not folded")
    means: dict[str, float | tuple[int, ...] | None] = {}
    names = [f.name for f in dataclasses.fields(first)]
    for name in names:
        values = [getattr(r, name) for r in runs]
        if all(isinstance(v, float) for v in values) and len(set(values)) > 1:
            means[name] = geometric_mean(values)
        elif any(v is None for v in values) and any(isinstance(v, float) for v in values):
            means[name] = None  # measured by some runs only (e.g. avg_batch_size)
    # Histograms (``*_counts`` over bin edges every run shares): the runs' responses together.
    same_edges = all(
        len({getattr(r, n) for r in runs}) == 1
        for n in names
        if isinstance(getattr(first, n), tuple) and not n.endswith("_counts")
    )
    for name in (n for n in names if n.endswith("_counts")):
        counts = [getattr(r, name) for r in runs]
        if same_edges and all(isinstance(c, tuple) and len(c) == len(counts[0]) for c in counts):
            means[name] = tuple(sum(column) for column in zip(*counts, strict=True))
    return dataclasses.replace(
        first, **means, runs=len(runs), run_sources=tuple(r.source for r in runs)
    )


def fold_repeats(configs: Iterable[R]) -> tuple[list[R], list[RepeatGroup]]:
    """Configurations with their repeat runs folded (input order kept, each group at its first
    run), and the groups of two or more runs."""
    groups: dict[tuple[object, ...], list[R]] = {}
    order: list[tuple[object, ...] | int] = []
    single: list[R] = []
    for c in configs:
        if not _foldable(c):
            order.append(len(single))
            single.append(c)
            continue
        # Runs of two energy windows are not repeats of one measurement: the whole run's
        # figure is systematically above the steady state's, not noise around it.
        key = (*configuration_key(c), window_of(c))
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(c)
    folded: list[R] = []
    repeats: list[RepeatGroup] = []
    for entry in order:
        if isinstance(entry, int):
            folded.append(single[entry])
            continue
        runs = sorted(groups[entry], key=lambda c: (c.repeat, c.source))
        if len(runs) == 1:
            folded.append(runs[0])
            continue
        folded.append(_fold(runs))
        first = runs[0]
        repeats.append(
            RepeatGroup(
                tuple(r.source for r in runs),
                tuple(r.energy_per_output_joules for r in runs),
                dataset_of(first),
                task=first.task,
                model=first.model_id,
                gpu=first.gpu_model,
                num_gpus=first.num_gpus,
            )
        )
    return folded, repeats
