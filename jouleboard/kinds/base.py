"""What a kind of task is: the one seam between the measurements and everything above them.

A :class:`TaskKind` (token tasks, image and video tasks, or one defined elsewhere and registered
with :func:`jouleboard.kinds.register`) owns its measurement file model and flat record,
its physical checks, its units and wording, the latency its deadline applies to, its table
columns, its chart fields and the browser's column descriptors. Pages, charts, downloads,
diff, releases and the CLI only ever call these methods.

A record of any kind provides (see :class:`Record`): ``task``, ``model_id``, ``gpu_model``,
``num_gpus``, ``weight_precision``, ``repeat``, ``source``, ``avg_power_watts``,
``energy_per_output_joules``, ``energy_per_response_joules``, ``latency_ms(percentile)``,
``tie_break()``, ``identity`` and ``provenance``; rank.py needs only the first ones.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol, TypeVar

from pydantic import BaseModel

from jouleboard.config.registry import Registry
from jouleboard.config.schema import Percentile, TaskInfo
from jouleboard.core.problems import Problem
from jouleboard.core.shapes import JsonObject, Row, Scalar
from jouleboard.core.urls import deadline_slug
from jouleboard.measure.checks import MeasurementHead
from jouleboard.measure.formats import capital, significant
from jouleboard.measure.units import TaskUnits
from jouleboard.rank.tables import Column, Field, Tabled


class Record(Tabled, Protocol):
    """The fields every kind's flat record has (rank.py reads the :class:`Rankable` part,
    rank/tables.py the :class:`~jouleboard.rank.tables.Tabled` one; the plan reads these too)."""

    @property
    def task(self) -> str: ...

    @property
    def repeat(self) -> int: ...

    @property
    def avg_power_watts(self) -> float: ...

    @property
    def identity(self) -> tuple[object, ...]: ...


T = TypeVar("T")


def own(value: object, cls: type[T]) -> T:
    """``value`` as a kind's own class: each kind is handed only its own measurements and
    records (the dispatch is by the measurement's ``kind``, then by the record's task), so
    anything else is a bug, raised here rather than read as the wrong fields."""
    if not isinstance(value, cls):
        raise TypeError(f"expected a {cls.__name__}, got a {type(value).__name__}")
    return value


def field_value(c: object, key: str) -> Scalar:
    """A record's field ``key`` as a download or table cell holds it (one flat value)."""
    value = getattr(c, key)
    if value is None or isinstance(value, str | int | float):
        return value
    raise TypeError(f"{type(c).__name__}.{key} is not a flat value: {type(value).__name__}")


@dataclass(frozen=True, slots=True)
class Latency:
    """How a kind's deadline reads: ``words[percentile]`` ≤ ms / ``scale_ms`` ``unit``."""

    words: Mapping[str, str]  # percentile -> "median inter-token latency", "batch latency"
    short: Mapping[str, str]  # percentile -> "median ITL" (labels and table headers)
    unit: str  # "ms" or "s": what deadlines and chart axes show
    scale_ms: float  # ms per shown unit (1 or 1000)
    noun: str = "latency"  # "energy vs latency", "energy vs batch latency"

    def text(self, ms: float, percentile: Percentile) -> str:
        """``median inter-token latency ≤ 300 ms``, ``batch latency ≤ 30 s``."""
        return f"{self.words[percentile]} ≤ {ms / self.scale_ms:g} {self.unit}"

    def short_text(self, ms: float, percentile: Percentile) -> str:
        return f"{self.short[percentile]} ≤ {ms / self.scale_ms:g} {self.unit}"

    def value(self, ms: float) -> str:
        """``300 ms``, ``30 s``."""
        return f"{ms / self.scale_ms:g} {self.unit}"

    def axis_title(self, percentile: Percentile) -> str:
        return f"{capital(self.words[percentile])} ({self.unit}, log scale)"

    def browser(self) -> JsonObject:
        return {
            "words": dict(self.words),
            "short": dict(self.short),
            "unit": self.unit,
            "scale_ms": self.scale_ms,
        }


class TaskKind(ABC):
    """One kind of task. Subclasses set the class attributes and implement the methods."""

    name: ClassVar[str]  # e.g. "token"
    task_kinds: ClassVar[Mapping[str, str]]  # tasks.yaml ``kind`` -> home-page group title
    measurement: ClassVar[type[BaseModel]]  # the measurement file (pydantic, strict)
    percentiles: ClassVar[tuple[Percentile, ...]]  # latency percentiles a deadline can use
    latency: ClassVar[Latency]
    download_name: ClassVar[str]  # downloads/<name>.csv: every configuration of this kind
    # The ranking order as the browser computes it (templates/assets/js/rank.js): the record
    # field and factor giving latency_ms(percentile), the fields of tie_break() (a missing
    # value counts as 0), the energy per output and per response fields.
    latency_fields: ClassVar[Mapping[str, tuple[str, float]]]
    tie_fields: ClassVar[tuple[str, ...]]
    energy_field: ClassVar[str] = "energy_per_output_joules"
    ranked_key: ClassVar[str] = "efficiency"  # the column a leaderboard is ranked by
    response_field: ClassVar[str] = "energy_per_response_joules"

    def browser_order(self) -> JsonObject:
        """The ranking order for the page script (templates/assets/js/rank.js): each
        percentile's latency field and its factor to ms, the tie-break and the energy
        fields."""
        return {
            "latency": {p: [field, factor] for p, (field, factor) in self.latency_fields.items()},
            "tie": list(self.tie_fields),
            "energy": self.energy_field,
            "response": self.response_field,
        }

    # --- measurements -------------------------------------------------------------------

    @abstractmethod
    def check(self, m: MeasurementHead, shown: str, registry: Registry) -> list[Problem]:
        """Physical and consistency checks of a schema-valid measurement (rules documented
        in docs/measurement-format.md)."""

    @abstractmethod
    def to_record(self, m: MeasurementHead, source: str) -> Record:
        """The flat record of a valid measurement."""

    # --- units and wording --------------------------------------------------------------

    def units(self, task: TaskInfo) -> TaskUnits:
        return TaskUnits.of(task)

    def config_label(self, c: Record) -> str:
        """One configuration in a few words (chart tooltips)."""
        return f"{c.num_gpus}× {c.gpu_model}, {c.weight_precision}"

    def output_text(self, c: Record) -> str:
        """What one output of ``c`` is, where outputs of a task can differ (an image's size
        and steps, a video's frames): findings say so when they compare unlike outputs.
        "" where every output is alike (a token)."""
        return ""

    @abstractmethod
    def setting_text(self, c: Record) -> str:
        """The serving setting in a change report, e.g. ``max_num_seqs 48``."""

    def model_sort_key(self, c: Record) -> tuple[int | str, ...]:
        """The order of a model's configurations in its tables."""
        return (c.gpu_model, c.num_gpus, c.weight_precision, *c.tie_break())

    def chart_latency(self, c: Record, percentile: Percentile) -> float:
        """The latency a chart plots, in ``latency.unit``."""
        return float(c.latency_ms(percentile)) / self.latency.scale_ms

    def standing_value(self, units: TaskUnits, value: float) -> str:
        """A model's efficiency in its standing sentence, e.g. ``2.96 images per kJ``: three
        significant digits, as the tables show it (``0.150``, not ``0.15``)."""
        return f"{significant(value, 3)} {units.efficiency_words}"

    def download_slug(self, ms: float, percentile: Percentile) -> str:
        """The deadline in a download's file name, e.g. ``p50-300ms``."""
        return deadline_slug(ms, percentile)

    def output_lengths(
        self, configs: Sequence[Record]
    ) -> tuple[tuple[float, ...], list[int]] | None:
        """The output-length histogram of a model's configurations, where a kind has one."""
        return None

    # --- tables and downloads -----------------------------------------------------------

    @abstractmethod
    def ranking_fields(self, task: TaskInfo, quality: bool) -> tuple[Field, ...]:
        """Columns of a leaderboard table after rank and model (``quality``: the task has
        published accuracy)."""

    @abstractmethod
    def configuration_fields(self, task: TaskInfo) -> tuple[Field, ...]:
        """Columns of a model page's table of configurations (after GPU, before Note)."""

    @abstractmethod
    def values(self, c: Record, units: TaskUnits) -> Row:
        """Every column value of a configuration, by column key (tables and browser)."""

    rank_columns: ClassVar[tuple[str, ...]]  # ranking downloads (and `jouleboard rank`)
    # Columns of rank_columns whose interval a ranking download gives (<key>_low, _high):
    # the energy per output and the efficiency (rank/tables.py noise_columns).
    interval_columns: ClassVar[tuple[str, ...]] = ()
    configuration_columns: ClassVar[tuple[str, ...]]  # full data set download

    @abstractmethod
    def rank_record(
        self, rank: int, c: Record, nickname: str, accuracy_percent: float | None
    ) -> Row:
        """A ranking download row with exactly ``rank_columns``, at full precision."""

    @abstractmethod
    def configuration_record(self, c: Record, nickname: str, builder: str) -> Row:
        """A full-data-set row with exactly ``configuration_columns``."""

    def efficiency_column(self, units: TaskUnits, key: str, label: str) -> Column:
        return Column(key, label, numeric=True)

    # --- the calculator -----------------------------------------------------------------

    @abstractmethod
    def footprint_scales(self, units: TaskUnits) -> tuple[tuple[str, str, float, str], ...]:
        """The calculator's amounts: (key, "per 1,000 images", how many, which energy
        field: "energy_per_output_joules" or "energy_per_response_joules")."""
