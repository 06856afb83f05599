"""Tables: Table / Column / Cell, values kept apart from display, built from a kind's
fields (jouleboard/kinds/). Nothing here knows a kind of task."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from jouleboard.config.registry import Registry
from jouleboard.config.schema import Provenance, data_set_name, known_details
from jouleboard.core.frozen import quick_pickle
from jouleboard.core.shapes import JsonObject, Row, Scalar
from jouleboard.core.urls import Urls
from jouleboard.measure.checks import boundary_of, window_of
from jouleboard.measure.formats import FORMATS, capital, show
from jouleboard.measure.units import boundary_words
from jouleboard.rank.glossary import column_term
from jouleboard.rank.noise import UNKNOWN, Noise, table_note
from jouleboard.rank.ranking import Rankable, RankedRow, runs_of


class LatencyNames(Protocol):
    """How a kind names its latency at each percentile (jouleboard/kinds/base.py Latency)."""

    @property
    def words(self) -> Mapping[str, str]:
        """Percentile -> "median inter-token latency"."""

    @property
    def short(self) -> Mapping[str, str]:
        """Percentile -> "median ITL"."""


class Tabled(Rankable, Protocol):
    """What a table reads of a record besides the :class:`Rankable` part: where its
    measurement comes from (every kind's record has it; jouleboard/kinds/base.py Record)."""

    @property
    def provenance(self) -> Provenance | None:
        """Where the measurement comes from (None: not known)."""


R = TypeVar("R", bound=Tabled)


@quick_pickle
@dataclass(frozen=True, slots=True)
class Column:
    key: str
    label: str
    unit: str = ""
    numeric: bool = False
    title: str = ""  # longer explanation for the header's tooltip

    @property
    def term(self) -> str:
        """The glossary anchor that defines this column, or ""."""
        return column_term(self.key)


@quick_pickle  # every page's key pickles its cells (engine/fresh.py): 28,000 in the bundled site
@dataclass(frozen=True, slots=True)
class Cell:
    value: str | int | float | None  # for sorting, CSV and JSON
    display: str
    href: str | None = None
    note: str = ""  # secondary text under the display (e.g. model builder)


@quick_pickle
@dataclass(frozen=True, slots=True)
class RowGroup:
    """Rows of a table that belong together (a model's configurations on one GPU count):
    a header row before row ``start`` says what they share."""

    start: int
    label: str


@quick_pickle
@dataclass(frozen=True, slots=True)
class Table:
    id: str
    caption: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Cell, ...], ...]
    empty_text: str = "No configuration meets this deadline."
    ranked: str = ""  # the key of the column the rows are ranked by (marked in the header)
    glossary_url: str = ""  # where the headers' terms are defined (a link per header)
    # Ranking tables: what their places mean (rank/noise.py table_note), and where the
    # method page explains the noise.
    rank_note: str = ""
    rank_note_url: str = ""
    # What the energy figures include ("GPU energy only", measure/units.py), after the
    # caption; "" for tables without energy.
    boundary: str = ""
    # Row groups, in row order (each a <tbody> with a header row); () for one plain body.
    groups: tuple[RowGroup, ...] = ()

    @property
    def bodies(self) -> tuple[tuple[str, tuple[tuple[Cell, ...], ...]], ...]:
        """The rows as the template writes them: (group label, rows) per <tbody>; one
        unlabelled body without groups."""
        if not self.groups:
            return (("", self.rows),)
        ends = [g.start for g in self.groups[1:]] + [len(self.rows)]
        return tuple(
            (g.label, self.rows[g.start : end]) for g, end in zip(self.groups, ends, strict=True)
        )

    @property
    def cell_classes(self) -> tuple[str, ...]:
        """Each column's ``class`` attribute for its cells, in column order (the table
        macro reads it once per table instead of working it out again in every cell)."""
        return tuple(
            f"{'num ' if c.numeric else ''}col-{c.key}{' ranked' if c.key == self.ranked else ''}"
            for c in self.columns
        )

    def records(self) -> list[Row]:
        """Rows as plain records (column key -> value) for CSV and JSON downloads."""
        return [
            {c.key: cell.value for c, cell in zip(self.columns, row, strict=True)}
            for row in self.rows
        ]


@dataclass(frozen=True, slots=True)
class Field:
    """A column of a kind's table and how its cells read. ``show`` is a display rule of
    measure/formats.py (``fixed2``, ``sig3``, ``int``, ``text``, ``precision``) or a cell
    built from the configuration itself (``gpu``). The browser gets the same descriptor
    (:meth:`browser`), so both sides print a value the same way."""

    column: Column
    show: str = "sig3"
    # The latency column follows the deadline's percentile: key per percentile (see at).
    by_percentile: Mapping[str, str] | None = None
    value_key: str = ""  # what the cells read, when not the column's key (see at)

    def at(self, percentile: str, latency: LatencyNames) -> Field:
        """The field in a table ranked at ``percentile``: the latency column shows that
        percentile's figure, headed with its name (a p90 deadline's table showed the median
        under "Median ITL"). Its key stays, as the browser's table keeps it when its
        percentile control changes (js/table.js columnField, js/task.js
        labelLatencyColumn)."""
        key = (self.by_percentile or {}).get(percentile, self.column.key)
        if key == self.column.key:
            return self
        column = dataclasses.replace(
            self.column,
            label=capital(latency.short[percentile]),
            title=f"{capital(latency.words[percentile])}.",
        )
        return dataclasses.replace(self, column=column, value_key=key)

    def browser(self) -> JsonObject:
        c = self.column
        return {
            "key": c.key,
            "label": c.label,
            "unit": c.unit,
            "show": self.show,
            "numeric": c.numeric,
            **({"by_percentile": dict(self.by_percentile)} if self.by_percentile else {}),
            # The header's tooltip and glossary term, as the server's header has them.
            **({"title": c.title} if c.title else {}),
            **({"term": c.term} if c.term else {}),
        }


def number(
    key: str,
    label: str | None = None,
    title: str = "",
    show_as: str | None = None,
    by_percentile: Mapping[str, str] | None = None,
) -> Field:
    """A numeric field whose label, unit and digits come from measure/formats.py."""
    fmt = FORMATS[key]
    rule = show_as or (
        f"fixed{fmt.fixed_decimals}"
        if fmt.fixed_decimals is not None
        else "int"
        if fmt.digits == 0
        else f"sig{fmt.digits}"
    )
    return Field(
        Column(key, label or fmt.label, fmt.unit, numeric=True, title=title), rule, by_percentile
    )


RANK = number("rank").column
MODEL = Column("model", "Model")
GPU = Field(Column("gpu", "GPU"), "gpu")
PRECISION = Field(Column("weight_precision", "Precision"), "precision")
NOTE = Field(Column("note", "Note"), "text")
SOURCE = Field(
    Column(
        "provenance",
        "Source",
        title="Data set the measurement comes from: "
        "version, data date and licence (its citation is below the tables).",
    ),
    "provenance",
)
POWER = number("avg_power_watts", title="Average GPU power, all GPUs together.")
ACCURACY = number(
    "accuracy_percent",
    title="Published benchmark accuracy (vendor-reported, not measured with the energy run).",
)
PER_CORRECT = number(
    "energy_per_correct_answer_joules",
    title="Energy per response divided by accuracy. Lower is better.",
)
QUALITY_FIELDS = (ACCURACY, PER_CORRECT)  # tasks with published accuracy (data/quality/)


# Cells are values: the columns whose values repeat (the GPUs, their count, precision,
# batch cap, parallelism, notes, the data set) share one Cell per value, made once. A site's
# model pages list every configuration, so at 100,000 configurations these are ~800,000
# cells, and sharing them leaves ~100 MB less in memory while planning.
SHARED_CELLS = 1024  # distinct values kept, per kind of cell


def gpu_cell(c: Rankable, urls: Urls) -> Cell:
    return _gpu_cell(c.num_gpus, c.gpu_model, urls)


@functools.lru_cache(maxsize=SHARED_CELLS)
def _gpu_cell(num_gpus: int, gpu_model: str, urls: Urls) -> Cell:
    return Cell(
        f"{num_gpus}x {gpu_model}", f"{num_gpus}× {gpu_model}", urls.url(urls.gpu(gpu_model))
    )


def model_cell(model_id: str, registry: Registry, urls: Urls) -> Cell:
    info = registry.models[model_id]
    return Cell(
        info.nickname, info.nickname, href=urls.url(urls.model(model_id)), note=info.builder
    )


def source_text(c: Tabled) -> str:
    """``The ML.ENERGY Benchmark v3 (2026-02-16, Apache-2.0)``, of what the record's provenance
    states; "" when it has none."""
    p = c.provenance
    if p is None:
        return ""
    details = known_details(p.date, p.license)
    return data_set_name(p.dataset, p.version) + (f" ({details})" if details else "")


def provenance_cell(c: Tabled) -> Cell:
    """Data set and version, then date and licence, of a record's provenance, those it states
    (– when unknown; the page cites each data set once, below its tables)."""
    return _provenance_cell(c.provenance)


@functools.lru_cache(maxsize=SHARED_CELLS)
def _provenance_cell(p: Provenance | None) -> Cell:
    if p is None:
        return Cell(None, "–")
    details = known_details(p.date, p.license)
    return Cell(p.dataset, data_set_name(p.dataset, p.version), note=details)


def field_cell(f: Field, c: Tabled, values: Mapping[str, Scalar], urls: Urls) -> Cell:
    if f.show == "gpu":
        return gpu_cell(c, urls)
    if f.show == "provenance":
        return provenance_cell(c)
    value = values[f.value_key or f.column.key]
    if value is None or isinstance(value, str | int):  # a float: nearly every one differs
        return _shared_cell(f.show, value)
    return Cell(value, show(f.show, value))


@functools.lru_cache(maxsize=SHARED_CELLS, typed=True)  # typed: 1, 1.0 and True differ
def _shared_cell(rule: str, value: Scalar) -> Cell:
    return Cell(value, show(rule, value))


def ranking_table(
    table_id: str,
    caption: str,
    fields: Sequence[Field],
    rows: Sequence[RankedRow[R]],
    values: Callable[[R], Mapping[str, Scalar]],
    registry: Registry,
    urls: Urls,
    ranked: str = "",
    noise: Noise = UNKNOWN,
) -> Table:
    """The leaderboard table: rank (the places the measurement noise allows, "2–4"), model,
    then the kind's fields of the chosen configuration; ``ranked``: the key of the column
    the order follows."""
    body = tuple(
        (
            Cell(r.rank, r.places),
            model_cell(r.config.model_id, registry, urls),
            *(field_cell(f, r.config, v, urls) for f in fields),
        )
        for r in rows
        for v in (values(r.config),)
    )
    return Table(
        table_id,
        caption,
        (RANK, MODEL, *(f.column for f in fields)),
        body,
        ranked=ranked,
        glossary_url=urls.url(urls.glossary),
        rank_note=table_note(noise),
        rank_note_url=urls.url(urls.glossary) + "#noise",
        boundary=boundary_words(boundary_of(rows[0].config)) if rows else "",
    )


def figure_second(fields: Sequence[Field], key: str) -> tuple[Field, ...]:
    """``fields`` with the column ``key`` (what the task ranks by) moved to follow the first
    (the GPU): a phone's first screen of a model's table then shows each row's figure beside
    its GPU, as a task's table shows it beside the model, not columns alike in every row."""
    figure = tuple(f for f in fields if f.column.key == key)
    rest = tuple(f for f in fields if f.column.key != key)
    return (*rest[:1], *figure, *rest[1:])


def configurations_table(
    table_id: str,
    caption: str,
    fields: Sequence[Field],
    configs: Iterable[R],
    values: Callable[[R], Mapping[str, Scalar]],
    urls: Urls,
    marked: Callable[[R], str] | None = None,
    sourced: bool = False,
    grouped: Callable[[R], str] | None = None,
) -> Table:
    """Configurations one per row (model pages): the kind's fields, then a note, then
    (``sourced``) where each measurement comes from. ``grouped(c)`` names each row's group
    (e.g. "1× B200"): the rows then come group by group, the group with the least energy
    per output first and each group's rows best first, under a header row."""
    configs = list(configs)
    # One source for every row is said once, in the caption, not repeated in a column.
    sources = {source_text(c) for c in configs}
    if sourced and len(sources) == 1 and "" not in sources:
        caption, sourced = f"{caption}, from {sources.pop()}", False
    body, shown = [], (*fields, NOTE, *((SOURCE,) if sourced else ()))
    groups: list[RowGroup] = []
    if grouped is not None:
        members: dict[str, list[R]] = {}
        for c in sorted(configs, key=lambda c: c.energy_per_output_joules):
            members.setdefault(grouped(c), []).append(c)
        configs = []
        for label, same in members.items():  # in the order of each group's best
            n = len(same)
            groups.append(RowGroup(len(configs), f"{label}: {n} configuration{'s' * (n != 1)}"))
            configs += same
    for c in configs:
        v = {**values(c), "note": marked(c) if marked else ""}
        body.append(tuple(field_cell(f, c, v, urls) for f in shown))
    return Table(
        table_id,
        caption,
        tuple(f.column for f in shown),
        tuple(body),
        glossary_url=urls.url(urls.glossary),
        boundary=boundary_words(boundary_of(configs[0])) if configs else "",
        groups=tuple(groups),
    )


# Appended to every ranking download (CSV, JSON, `jouleboard rank`, the API) after the kind's
# own columns, so readers of the older columns keep working; then ``<metric>_low`` and
# ``<metric>_high`` for each of the kind's ``interval_columns``.
NOISE_COLUMNS = (
    "runs",
    "relative_uncertainty",
    "rank_best",
    "rank_worst",
    "critical_value",
    "degrees_of_freedom",
)


def noise_columns(interval: Sequence[str]) -> tuple[str, ...]:
    """The columns :func:`with_noise` appends: the noise ones, each interval's bounds, and
    what the energy includes (``energy_boundary``: gpu or system-ac) and the part of each run
    it covers (``energy_window``)."""
    return (
        *NOISE_COLUMNS,
        *(f"{c}_{end}" for c in interval for end in ("low", "high")),
        "energy_boundary",
        "energy_window",
    )


def with_noise(
    record: Mapping[str, Scalar], row: RankedRow[R], noise: Noise, interval: Sequence[str]
) -> Row:
    """A ranking download row with the noise columns: how many runs, the relative standard
    uncertainty of its energy (None: unknown), its places, the critical value c they and the
    intervals used and the degrees of freedom of s behind it (None: unknown, or s taken as
    exact), and each interval metric's bounds at the noise's confidence (None when the
    noise is unknown: the value repeated would read as exact)."""
    bounds: Row = {}
    for key in interval:
        value = record[key]
        if not isinstance(value, int | float):
            raise TypeError(f"{key} has no interval: {value!r} is not a number")
        low, high = (None, None) if row.u is None else noise.interval(value, row.u)
        bounds[f"{key}_low"], bounds[f"{key}_high"] = low, high
    return {
        **record,
        "runs": runs_of(row.config),
        "relative_uncertainty": row.u,
        "rank_best": row.rank_best,
        "rank_worst": row.rank_worst,
        "critical_value": noise.critical if noise.known else None,
        "degrees_of_freedom": noise.freedom,
        **bounds,
        "energy_boundary": boundary_of(row.config),
        "energy_window": window_of(row.config),
    }


def num_cell(key: str, value: float | int) -> Cell:
    """A cell of a numeric column of measure/formats.py."""
    f = number(key)
    return Cell(value, show(f.show, value))
