"""Views: what each template receives (typed, no logic beyond tiny helpers), and the
public per-task view every page builder shares (:class:`TaskView`, computed once)."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from jouleboard.config.registry import Registry
from jouleboard.config.schema import Percentile, TaskInfo, data_set_name, known_details
from jouleboard.core.shapes import JsonObject, Row
from jouleboard.core.urls import Urls, chart_id
from jouleboard.kinds import Kinds, registered
from jouleboard.kinds.base import Record, TaskKind
from jouleboard.kinds.mlperf import SystemResult
from jouleboard.measure import metrics
from jouleboard.measure.checks import boundary_of
from jouleboard.measure.units import TaskUnits
from jouleboard.rank.noise import UNKNOWN, Noise
from jouleboard.rank.ranking import Deadline, RankedRow, runs_of
from jouleboard.rank.tables import Table
from jouleboard.render.citation import measured_by
from jouleboard.render.finding import Finding
from jouleboard.render.footprint import FootprintInputs


@dataclass(frozen=True)
class Link:
    label: str
    url: str
    description: str = ""


@dataclass(frozen=True)
class LiveView:
    """What a chart's embed page needs to draw it at a reader's own settings (the task
    page's controls, carried in its embed code's query string; js/embed-view.js): the
    task's explore data and defaults, and which of js/charts.js's drawings it is."""

    draw: str  # "scatter" or "bar"
    task_name: str
    data_url: str
    deadline_ms: float
    percentile: str
    gpus: tuple[str, ...]  # ticked by default
    top_n: int


@dataclass(frozen=True)
class ChartRef:
    """A chart on a page: static SVG by default, the Vega-Lite spec for interaction."""

    id: str
    title: str
    alt: str  # the text alternative, whole where the chart is alone (its embed page)
    spec: JsonObject
    page_url: str  # the page that shows the chart in full context
    note: str  # what the chart depends on besides the data, e.g. the deadline
    table_id: str = ""
    boundary: str = ""  # what its energy includes ("GPU energy only"), "" for none
    live: LiveView | None = None  # a chart that follows the task page's controls
    # The data its citation and embed credit where not the site's measurements (an MLPerf
    # chart's: "MLPerf Inference v4.1 and v5.1 (MLCommons)"); "" for the site's.
    cites: str = ""
    # The data sets of the measurements it draws, for its embed credit and for its citation
    # (render/citation.py measured_by: short, full); None: the site's.
    measured: tuple[str, str] | None = None
    # What the page's own table holds of it ("the ranking table lists the chosen ones"):
    # said on the page, not on the embed page, which has no table (page_alt).
    table_alt: str = ""

    @property
    def page_alt(self) -> str:
        """The text alternative on its page: :attr:`alt`, then what the page's table holds."""
        return f"{self.alt} {self.table_alt}" if self.table_alt else self.alt

    def export(self, urls: Urls, ext: str) -> str:
        """URL of an export: svg, png, vl.json or csv."""
        return urls.url(urls.chart(self.id, ext))


@dataclass(frozen=True)
class TaskSection:
    task_name: str
    task_url: str
    description_html: str
    deadline_text: str
    table: Table
    chart: ChartRef | None
    group: str = ""
    finding: Finding | None = None


@dataclass(frozen=True)
class MiniBar:
    """One of a home card's top rows: its places ("1–2"), model, figure and bar length (the
    figure as a percentage of the leader's, "71.72")."""

    places: str
    model: str
    model_url: str
    value: str
    width: str


@dataclass(frozen=True)
class HomeCard:
    """A task at a glance on the home page: the answer in brief and its top rows as bars."""

    task_name: str
    task_url: str
    summary: str
    unit: str  # "Tokens/J"
    deadline: str  # "median ITL ≤ 300 ms"
    bars: tuple[MiniBar, ...]


@dataclass(frozen=True)
class HomeBody:
    intro: str
    sections: tuple[TaskSection, ...]
    # The MLPerf pages, at the wall (plan/mlperf.py): a closing section links them.
    mlperf: Link | None = None
    cards: tuple[HomeCard, ...] = ()
    ranked_by: str = "tokens per joule"  # what the site's tasks rank by, each wording once


@dataclass(frozen=True)
class MoreRows:
    """A table cut to its first rows on a page's first view: how many rows it has in all,
    the page that shows every row (no script needed), and the caption of the whole table
    (the page script shows it once every row is in)."""

    shown: int
    total: int
    full_url: str
    full_caption: str


@dataclass(frozen=True)
class PresetRanking:
    label: str
    table: Table
    downloads: tuple[Link, ...]


@dataclass(frozen=True)
class QualitySource:
    nickname: str
    model_url: str
    accuracy: str
    setting: str
    source_url: str
    source_detail: str
    confidence: str
    matches_energy_run: bool


@dataclass(frozen=True)
class QualitySection:
    """Energy per correct answer: only for tasks with published accuracy (data/quality/)."""

    benchmark: str
    note_html: str
    table: Table
    chart: ChartRef | None
    sources: tuple[QualitySource, ...]
    unscored: tuple[Link, ...]  # models in the ranking without a published accuracy


@dataclass(frozen=True)
class TaskBody:
    task_name: str
    benchmark: str
    description_html: str
    deadline_text: str
    gpus_text: str
    table: Table
    presets: tuple[PresetRanking, ...]
    scatter: ChartRef
    bar: ChartRef | None
    downloads: tuple[Link, ...]
    explorer: Explorer | None
    calculator: Calculator | None
    quality: QualitySection | None
    finding: Finding | None = None
    sensitivity: ChartRef | None = None
    # Tables cut on the first view, by table id (empty on a full view), and the full view.
    more: dict[str, MoreRows] = field(default_factory=dict)
    full_url: str = ""
    scatter_note: str = ""  # how the configurations chart samples a large task, or ""
    sensitivity_note: str = ""  # what the default deadline does to the deadline chart


@dataclass(frozen=True)
class Explorer:
    """What the task page's controls need (they stay hidden without JavaScript)."""

    task: str
    data_url: str
    deadline_ms: float
    percentile: Percentile
    min_ms: float
    max_ms: float
    gpus: tuple[tuple[str, bool], ...]  # GPU id, allowed by default
    precisions: tuple[tuple[str, str], ...]  # value, label
    top_n: int
    compare_url: str
    latency_unit: str = "ms"  # what the deadline box shows (the data stay in ms)
    latency_scale_ms: float = 1.0
    percentiles: tuple[str, ...] = ("p50", "p90", "p95", "p99")
    budget_unit: str = "J/token"  # what the budget box reads in (the state and URL keep J)
    budget_scale_joules: int = 1


@dataclass(frozen=True)
class Calculator:
    inputs: FootprintInputs
    table: Table


@dataclass(frozen=True)
class ModelTaskSection:
    task_name: str
    task_url: str
    anchor: str
    standing: str  # "Rank 3 of 12 ..." or why it has no rank
    gpu_table: Table
    configs_table: Table
    pareto: ChartRef
    lengths: ChartRef | None
    label: LabelRef | None
    quality: QualitySource | None
    # Configurations measured more than once: which runs each row is the mean of.
    repeated: tuple[str, ...] = ()


@dataclass(frozen=True)
class DataSource:
    """One data set behind a model page's configurations, cited once below its tables (a
    theme's model.html may read each field as its provenance states it)."""

    dataset: str
    version: str
    date: str
    license: str
    citation: str
    window: str  # the part of each run its energy covers, in words ("": not stated)
    configurations: int
    measurements: int = 0  # runs behind them (more than configurations where repeated)

    @property
    def name(self) -> str:
        """With its version, where it states one its name does not (data_set_name)."""
        return data_set_name(self.dataset, self.version)

    @property
    def details(self) -> str:
        """Its date and licence, those known: ``2026-02-16, Apache-2.0``."""
        return known_details(self.date, self.license)


@dataclass(frozen=True)
class ModelBody:
    nickname: str
    model_id: str
    builder: str
    facts: tuple[tuple[str, str], ...]
    links: tuple[Link, ...]
    description_html: str
    sections: tuple[ModelTaskSection, ...]
    sources: tuple[DataSource, ...] = ()
    mlperf: MLPerfSection | None = None  # the model's MLPerf results, at the wall


@dataclass(frozen=True)
class GpuTaskSection:
    task_name: str
    task_url: str
    table: Table
    downloads: tuple[Link, ...]
    comparisons: tuple[Table, ...]
    chart: ChartRef | None
    # The section's answer in brief (render/finding.py summary), for the page's first lines,
    # and the section's anchor.
    summary: str = ""
    anchor: str = ""


@dataclass(frozen=True)
class GpuBody:
    name: str
    facts: tuple[tuple[str, str], ...]
    sections: tuple[GpuTaskSection, ...]
    mlperf: MLPerfSection | None = None  # MLPerf systems with this GPU, at the wall
    # Tables cut on the first view, by table id (empty on a full view), and the full view.
    more: dict[str, MoreRows] = field(default_factory=dict)
    full_url: str = ""
    # Said in place of the tables when no task has a configuration on this GPU.
    unmeasured: str = ""


@dataclass(frozen=True)
class CompareTask:
    id: str
    name: str
    data_url: str
    deadline_ms: float
    percentile: Percentile
    deadline_unit: str = "ms"  # the deadline box's unit: the kind's (ms, s...)
    deadline_scale_ms: float = 1.0  # ms per unit of the box
    percentiles: tuple[str, ...] = ("p50",)  # the latency percentiles a deadline can use

    @property
    def deadline_shown(self) -> str:
        """The default deadline in the box's unit: ``300``, ``30``."""
        return f"{self.deadline_ms / self.deadline_scale_ms:g}"


@dataclass(frozen=True)
class CompareBody:
    """The comparison tool: a form that works as a plain GET form, rendered by script."""

    tasks: tuple[CompareTask, ...]
    chart_template_url: str
    table: Table  # empty: the script fills it
    calculator: Calculator
    max_models: int = 6


@dataclass(frozen=True)
class EmbedBody:
    chart: ChartRef


@dataclass(frozen=True)
class LabelRef:
    """A model's energy label on a task."""

    url: str
    band: str
    alt: str
    snippet: str  # the <img> HTML to paste
    height: int = 96  # px; every label is 240 px wide (render/labels.py)


@dataclass(frozen=True)
class IndexBody:
    intro: str
    table: Table


@dataclass(frozen=True)
class ProseBody:
    html: str


@dataclass(frozen=True)
class DownloadItem:
    """One data file in its formats: ``files`` links each (label "CSV, 3.1 kB"). As
    planned, a label is the format alone and ``sizes`` holds the output path of each file;
    :func:`jouleboard.plan.site.sized` adds the sizes once the files are made."""

    name: str
    description: str
    rows: int | None  # records in it (None: not a table, e.g. the schema)
    files: tuple[Link, ...]
    sizes: tuple[str, ...] = ()  # per file of ``files``: the output path its size is of


@dataclass(frozen=True)
class DownloadsBody:
    groups: tuple[tuple[str, tuple[DownloadItem, ...]], ...]
    columns: tuple[tuple[str, str], ...] = ()  # each column's name and meaning


@dataclass(frozen=True)
class MLPerfScenario:
    """One scenario of an MLPerf benchmark: what its results had to meet, and their ranking."""

    scenario: str
    constraint: str
    table: Table


@dataclass(frozen=True)
class MLPerfBody:
    """An MLPerf benchmark's page (``scenarios``, ``chart``), or the index of them
    (``leaders``: one table per unit, so no sortable column mixes two)."""

    name: str
    benchmark: str
    intro: str
    boundary: str
    scenarios: tuple[MLPerfScenario, ...]
    model: str
    model_url: str
    downloads: tuple[Link, ...]
    attribution: str
    leaders: tuple[Table, ...] = ()
    # What confounds the comparison (rounds, software) and explains identical rows, if any.
    notes: tuple[str, ...] = ()
    chart: ChartRef | None = None


@dataclass(frozen=True)
class MLPerfSection:
    """A model's or a GPU's MLPerf results (whole system at the wall), apart from its
    GPU-only rankings."""

    heading: str
    boundary: str
    tables: tuple[Table, ...]
    index_url: str


Body = (
    HomeBody
    | TaskBody
    | ModelBody
    | GpuBody
    | IndexBody
    | ProseBody
    | DownloadsBody
    | CompareBody
    | EmbedBody
    | MLPerfBody
)


@dataclass(frozen=True)
class Page:
    path: str
    template: str
    title: str
    description: str
    body: Body
    in_sitemap: bool = True
    # The page search engines should list for this one (its rel=canonical, when the site's
    # origin is known): "" for itself, a first view's path for its full view.
    canonical: str = ""


@dataclass(frozen=True)
class Download:
    """A data file the site publishes: ``records`` go out as CSV and JSON."""

    path: str
    columns: tuple[str, ...]
    records: list[Row]
    group: str = "Rankings"  # its section of the downloads page
    description: str = ""


@dataclass(frozen=True)
class Part:
    """What a page builder returns: its pages, the charts and downloads they show, and the
    other files they need (label SVGs, explore JSON, chart templates), by path."""

    pages: tuple[Page, ...] = ()
    charts: tuple[ChartRef, ...] = ()
    downloads: tuple[Download, ...] = ()
    files: tuple[tuple[str, str], ...] = ()

    def __add__(self, other: Part) -> Part:
        return Part(
            self.pages + other.pages,
            self.charts + other.charts,
            self.downloads + other.downloads,
            self.files + other.files,
        )


def parts(items: Iterable[Part]) -> Part:
    """``items`` in one Part, in order. A chain of ``+`` copies what it has gathered at
    every step, which over the site's pages grows with their square (17,000 pages at
    100,000 configurations)."""
    pages: list[Page] = []
    charts: list[ChartRef] = []
    downloads: list[Download] = []
    files: list[tuple[str, str]] = []
    for item in items:
        pages += item.pages
        charts += item.charts
        downloads += item.downloads
        files += item.files
    return Part(tuple(pages), tuple(charts), tuple(downloads), tuple(files))


@dataclass(frozen=True)
class Plan:
    """Every output of the site, in memory, before anything is rendered or written."""

    pages: tuple[Page, ...]
    charts: dict[str, ChartRef]
    downloads: tuple[Download, ...]
    files: dict[str, str]  # path -> text (labels, explore data, chart templates, feeds...)

    @classmethod
    def of(cls, part: Part) -> Plan:
        charts: dict[str, ChartRef] = {}
        for ref in part.charts:
            known = charts.setdefault(ref.id, ref)
            if known.spec != ref.spec:
                raise ValueError(f"chart id {ref.id!r} names two different charts")
        files: dict[str, str] = {}
        for path, text in part.files:
            if files.setdefault(path, text) != text:
                raise ValueError(f"two different files claim {path!r}")
        downloads: dict[str, Download] = {}
        for d in part.downloads:
            if downloads.setdefault(d.path, d) != d:
                raise ValueError(f"two different downloads claim {d.path!r}")
        return cls(part.pages, charts, tuple(downloads.values()), files)


def chart_ref(
    urls: Urls,
    kind: str,
    parts: Sequence[str],
    title: str,
    alt: str,
    spec: JsonObject,
    page: str,
    note: str = "",
    table_id: str = "",
    boundary: str = "",
    live: LiveView | None = None,
    cites: str = "",
    table_alt: str = "",
    data: Iterable[Record] | None = None,
) -> ChartRef:
    """A chart of a page; its id names it (see urls.chart_id); ``boundary``: what its
    energy figures include ("GPU energy only": measure/units.py), "" for none; ``live``:
    how its embed page draws it at a reader's settings (None: it has no settings);
    ``cites``: the data it credits where not the site's measurements; ``data``: the
    measurements it draws from, whose data sets it credits (None: the site's)."""
    drawn = None if data is None else list(data)
    return ChartRef(
        chart_id(kind, *parts),
        title,
        alt,
        spec,
        urls.url(page),
        note,
        table_id,
        boundary,
        live,
        cites,
        None if drawn is None else (measured_by(drawn, full=False), measured_by(drawn)),
        table_alt,
    )


@dataclass(frozen=True)
class TaskView:
    """One task as every page shows it, computed once: its kind and units, the default
    deadline, its configurations, the default ranking (default GPUs) and each model's best
    configuration per GPU."""

    id: str
    info: TaskInfo
    kind: TaskKind
    units: TaskUnits
    deadline: Deadline
    configs: tuple[Record, ...]
    ranking: tuple[RankedRow[Record], ...]
    best_by_gpu: dict[tuple[str, str], Record]
    accuracy: dict[str, float]  # model id -> published accuracy, %
    noise: Noise = UNKNOWN  # how precise one run is: rank ranges (rank/noise.py)

    @functools.cached_property
    def ranked(self) -> dict[str, RankedRow[Record]]:
        """Each ranked model's row of :attr:`ranking`, by model id (found once: every model
        section looks its model up, and a scan per section made the plan grow with the
        square of the models)."""
        rows: dict[str, RankedRow[Record]] = {}
        for row in self.ranking:
            rows.setdefault(row.config.model_id, row)
        return rows

    @property
    def boundary(self) -> str:
        """What the task's energy figures include ("gpu", "system-ac"): one per task
        (measure/checks.py check_boundaries)."""
        return boundary_of(self.configs[0]) if self.configs else "gpu"

    def energy_interval(self, c: Record) -> tuple[float, float]:
        """The interval of ``c``'s energy per output the measurement noise allows."""
        return self.noise.interval(c.energy_per_output_joules, self.noise.u(runs_of(c)))

    def deadline_text(self, ms: float | None = None) -> str:
        return self.kind.latency.text(
            self.deadline.ms if ms is None else ms, self.deadline.percentile
        )

    def values(self, c: Record) -> Row:
        """Every column value of ``c`` (the kind's, and accuracy where published)."""
        acc = self.accuracy.get(c.model_id)
        return {
            **self.kind.values(c, self.units),
            "accuracy_percent": acc,
            "energy_per_correct_answer_joules": None
            if acc is None
            else metrics.energy_per_correct_answer(c.energy_per_response_joules, acc),
        }

    def deadline_rows(self, ms: float | None = None) -> list[Row]:
        """The deadline rule of a chart: ``latency`` in the chart's latency unit (s for a
        diffusion task: never a field named ms holding seconds)."""
        ms = self.deadline.ms if ms is None else ms
        return [
            {
                "latency": ms / self.kind.latency.scale_ms,
                "label": f"deadline {self.kind.latency.value(ms)}",
            }
        ]


@dataclass(frozen=True)
class SiteView:
    """What every page builder reads: the registry, URLs and the task views."""

    registry: Registry
    urls: Urls
    tasks: dict[str, TaskView]
    by_model: dict[str, dict[str, list[Record]]]  # model -> task -> configurations
    gpu_counts: dict[str, int]
    # Each task's finding, computed once (it ranks the task about ten times) for the home
    # page and the task page.
    findings: dict[str, Finding] = field(default_factory=dict)
    # MLPerf results (whole system at the wall): shown apart, never in a task's ranking.
    mlperf: tuple[SystemResult, ...] = ()
    kinds: Kinds = field(default_factory=registered)  # which kind serves each task

    @property
    def default_gpus(self) -> set[str]:
        return set(self.registry.site.default_gpus)

    @property
    def top_n(self) -> int:
        return self.registry.site.top_n

    @property
    def table_rows(self) -> int:
        """Rows a task or GPU page's tables hold on its first view (site.yaml table_rows)."""
        return self.registry.site.table_rows
