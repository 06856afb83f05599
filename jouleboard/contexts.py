"""Typed page contexts: what each template receives (no logic beyond tiny helpers)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from jouleboard.present.footprint import FootprintInputs
from jouleboard.present.tables import Table
from jouleboard.records import Percentile
from jouleboard.urls import Urls, chart_id


@dataclass(frozen=True)
class Link:
    label: str
    url: str
    description: str = ""


@dataclass(frozen=True)
class ChartRef:
    """A chart on a page: static SVG by default, the Vega-Lite spec for interaction."""

    id: str
    title: str
    alt: str  # the text alternative; the table it visualises is linked too
    spec: dict[str, Any]
    page_url: str  # the page that shows the chart in full context
    note: str  # what the chart depends on besides the data, e.g. the deadline
    table_id: str = ""

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


GROUPS = {"llm": "Text", "mllm": "Multimodal", "diffusion": "Image and video generation"}


@dataclass(frozen=True)
class HomeBody:
    intro: str
    sections: tuple[TaskSection, ...]


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
    explorer: Explorer | None  # token tasks only
    calculator: Calculator | None
    quality: QualitySection | None


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


@dataclass(frozen=True)
class ModelBody:
    nickname: str
    model_id: str
    builder: str
    facts: tuple[tuple[str, str], ...]
    links: tuple[Link, ...]
    description_html: str
    sections: tuple[ModelTaskSection, ...]


@dataclass(frozen=True)
class GpuTaskSection:
    task_name: str
    task_url: str
    table: Table
    downloads: tuple[Link, ...]
    comparisons: tuple[Table, ...]
    chart: ChartRef | None


@dataclass(frozen=True)
class GpuBody:
    name: str
    facts: tuple[tuple[str, str], ...]
    sections: tuple[GpuTaskSection, ...]


@dataclass(frozen=True)
class CompareTask:
    id: str
    name: str
    data_url: str
    deadline_ms: float
    percentile: Percentile


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


@dataclass(frozen=True)
class IndexBody:
    intro: str
    table: Table


@dataclass(frozen=True)
class ProseBody:
    html: str


@dataclass(frozen=True)
class DownloadsBody:
    groups: tuple[tuple[str, tuple[Link, ...]], ...]


Body = (HomeBody | TaskBody | ModelBody | GpuBody | IndexBody | ProseBody | DownloadsBody
        | CompareBody | EmbedBody)


@dataclass(frozen=True)
class Page:
    path: str
    template: str
    title: str
    description: str
    body: Body
    in_sitemap: bool = True


@dataclass(frozen=True)
class Download:
    """A data file the site publishes: ``records`` go out as CSV and JSON."""

    path: str
    columns: tuple[str, ...]
    records: list[dict[str, Any]]


@dataclass
class Plan:
    pages: list[Page] = field(default_factory=list)
    charts: dict[str, ChartRef] = field(default_factory=dict)
    downloads: list[Download] = field(default_factory=list)
    explore_data: dict[str, str] = field(default_factory=dict)  # path -> task
    chart_templates: dict[str, dict[str, Any]] = field(default_factory=dict)  # path -> spec
    labels: dict[str, str] = field(default_factory=dict)  # path -> SVG text

    def chart(self, urls: Urls, kind: str, parts: Sequence[str], title: str, alt: str,
              spec: dict[str, Any], page: str, note: str = "", table_id: str = ""
              ) -> ChartRef:
        cid = chart_id(kind, *parts)
        ref = ChartRef(cid, title, alt, spec, urls.url(page), note, table_id)
        known = self.charts.setdefault(cid, ref)
        if known.spec != spec:
            raise ValueError(f"chart id {cid!r} names two different charts")
        return ref
