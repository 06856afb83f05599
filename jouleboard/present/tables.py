"""Rankings and configurations -> Table / Column / Cell, values kept apart from display."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from jouleboard import metrics
from jouleboard.config import Registry
from jouleboard.present.formats import FORMATS, format_value, significant
from jouleboard.present.units import TaskUnits
from jouleboard.rank import RankedRow
from jouleboard.records import Configuration, DiffusionConfiguration
from jouleboard.urls import Urls


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    label: str
    unit: str = ""
    numeric: bool = False
    title: str = ""  # longer explanation for the header's tooltip


@dataclass(frozen=True, slots=True)
class Cell:
    value: str | int | float | None  # for sorting, CSV and JSON
    display: str
    href: str | None = None
    note: str = ""  # secondary text under the display (e.g. model builder)


@dataclass(frozen=True, slots=True)
class Table:
    id: str
    caption: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Cell, ...], ...]
    empty_text: str = "No configuration meets this deadline."

    def records(self) -> list[dict[str, object]]:
        """Rows as plain records (column key -> value) for CSV and JSON downloads."""
        return [{c.key: cell.value for c, cell in zip(self.columns, row, strict=True)}
                for row in self.rows]


def _num(key: str, label: str | None = None, title: str = "") -> Column:
    fmt = FORMATS[key]
    return Column(key, label or fmt.label, fmt.unit, numeric=True, title=title)


RANK = _num("rank")
MODEL = Column("model", "Model")
GPU = Column("gpu", "GPU")
PRECISION = Column("weight_precision", "Precision")
TASK = Column("task", "Task")
TOKENS_PER_J = _num("tokens_per_joule", title="Output tokens per joule of GPU energy "
                    "(= throughput / power). Higher is better.")
J_PER_TOKEN = _num("energy_per_token_joules", title="GPU energy per output token. Lower is better.")
J_PER_RESPONSE = _num("energy_per_response_joules",
                      title="GPU energy of an average response (J/token x average length).")
MEDIAN_ITL = _num("median_itl_ms", title="Median inter-token latency.")
BATCH = _num("max_num_seqs", title="Batch-size cap of the server (max_num_seqs).")
POWER = _num("avg_power_watts", title="Average GPU power, all GPUs together.")
THROUGHPUT = _num("output_throughput_tokens_per_sec")
P90_ITL = _num("p90_itl_ms")
P99_ITL = _num("p99_itl_ms")
AVG_LEN = _num("avg_output_len_tokens", title="Average output length.")

METRIC_COLUMNS = (TOKENS_PER_J, J_PER_TOKEN, J_PER_RESPONSE, MEDIAN_ITL)


def num_cell(column: Column, value: float | int) -> Cell:
    return Cell(value, format_value(column.key, value))


def gpu_cell(c: Configuration | DiffusionConfiguration, urls: Urls) -> Cell:
    return Cell(f"{c.num_gpus}x {c.gpu_model}", f"{c.num_gpus}× {c.gpu_model}",
                href=urls.url(urls.gpu(c.gpu_model)))


def model_cell(model_id: str, registry: Registry, urls: Urls) -> Cell:
    info = registry.models[model_id]
    return Cell(info.nickname, info.nickname, href=urls.url(urls.model(model_id)),
                note=info.builder)


def metric_cells(c: Configuration, columns: Iterable[Column]) -> tuple[Cell, ...]:
    return tuple(num_cell(col, getattr(c, col.key)) for col in columns)


ACCURACY = _num("accuracy_percent", title="Published benchmark accuracy (vendor-reported, "
               "not measured with the energy run).")
PER_CORRECT = _num("energy_per_correct_answer_joules",
                   title="Energy per response divided by accuracy. Lower is better.")


def quality_cells(task: str | None, c: Configuration, registry: Registry) -> tuple[Cell, ...]:
    """Accuracy and J per correct answer; a dash (never a zero) where none is published."""
    score = registry.accuracy(task, c.model_id) if task else None
    if score is None:
        return (Cell(None, "–"), Cell(None, "–"))
    per_correct = metrics.energy_per_correct_answer(c.energy_per_response_joules,
                                                    score.accuracy_percent)
    return (Cell(score.accuracy_percent, f"{score.accuracy_percent:.1f}"),
            num_cell(PER_CORRECT, per_correct))


def ranking_table(table_id: str, caption: str, rows: Sequence[RankedRow[Configuration]],
                  registry: Registry, urls: Urls, task: str | None = None) -> Table:
    """The leaderboard table: one row per model, its chosen configuration. Tasks with
    published accuracy (data/quality/) get two more columns at the end."""
    quality = task is not None and task in registry.quality
    columns = (RANK, MODEL, GPU, PRECISION, *METRIC_COLUMNS, BATCH,
               *((ACCURACY, PER_CORRECT) if quality else ()))
    body = tuple(
        (num_cell(RANK, r.rank), model_cell(r.config.model_id, registry, urls),
         gpu_cell(r.config, urls),
         Cell(r.config.weight_precision, format_value("weight_precision",
                                                       r.config.weight_precision)),
         *metric_cells(r.config, (*METRIC_COLUMNS, BATCH)),
         *(quality_cells(task, r.config, registry) if quality else ()))
        for r in rows)
    return Table(table_id, caption, columns, body)


def configurations_table(table_id: str, caption: str, configs: Iterable[Configuration],
                         urls: Urls, marked: Callable[[Configuration], str] | None = None
                         ) -> Table:
    """Every configuration of a model on a task (model pages)."""
    metrics = (*METRIC_COLUMNS, P90_ITL, P99_ITL, BATCH, POWER, THROUGHPUT)
    columns = (GPU, PRECISION, Column("parallel", "Parallelism"), *metrics,
               Column("note", "Note"))
    body = []
    for c in configs:
        parallel = f"TP{c.tensor_parallel} EP{c.expert_parallel} DP{c.data_parallel}"
        note = marked(c) if marked else ""
        body.append((gpu_cell(c, urls),
                     Cell(c.weight_precision, format_value("weight_precision",
                                                           c.weight_precision)),
                     Cell(parallel, parallel), *metric_cells(c, metrics), Cell(note, note)))
    return Table(table_id, caption, columns, tuple(body))


# --- diffusion (text-to-image, text-to-video) ---------------------------------------------

BATCH_LATENCY = Column("batch_latency_s", "Batch latency", "s", numeric=True,
                       title="Time to generate one batch.")
BATCH_SIZE = Column("batch_size", "Batch", numeric=True)
STEPS = Column("inference_steps", "Steps", numeric=True)
RESOLUTION = Column("resolution", "Output")


def _output_text(c: DiffusionConfiguration) -> str:
    size = f"{c.width_px}×{c.height_px}"
    return f"{size}, {c.num_frames} frames" if c.num_frames else size


def diffusion_metric_cells(c: DiffusionConfiguration, units: TaskUnits) -> tuple[Cell, ...]:
    efficiency = units.efficiency(c.energy_per_output_joules)
    return (Cell(efficiency, significant(efficiency, 3)),
            Cell(c.energy_per_output_joules, significant(c.energy_per_output_joules, 3)),
            Cell(c.batch_latency_s, significant(c.batch_latency_s, 3)),
            Cell(c.batch_size, f"{c.batch_size:,}"),
            Cell(c.inference_steps, str(c.inference_steps)),
            Cell(_output_text(c), _output_text(c)))


def _diffusion_columns(units: TaskUnits) -> tuple[Column, ...]:
    return (Column("efficiency", units.efficiency_label, numeric=True,
                   title=f"{units.efficiency_words.capitalize()} of GPU energy. Higher is "
                   "better."),
            Column("energy_per_output_joules", units.energy_label, numeric=True,
                   title=f"GPU energy per {units.output}. Lower is better."),
            BATCH_LATENCY, BATCH_SIZE, STEPS, RESOLUTION)


def diffusion_ranking_table(table_id: str, caption: str,
                            rows: Sequence[RankedRow[DiffusionConfiguration]],
                            registry: Registry, urls: Urls, units: TaskUnits) -> Table:
    columns = (RANK, MODEL, GPU, *_diffusion_columns(units))
    body = tuple((num_cell(RANK, r.rank), model_cell(r.config.model_id, registry, urls),
                  gpu_cell(r.config, urls), *diffusion_metric_cells(r.config, units))
                 for r in rows)
    return Table(table_id, caption, columns, body)


def diffusion_configurations_table(table_id: str, caption: str,
                                   configs: Iterable[DiffusionConfiguration], urls: Urls,
                                   units: TaskUnits,
                                   marked: Callable[[DiffusionConfiguration], str] | None = None
                                   ) -> Table:
    columns = (GPU, Column("parallel", "Parallelism"), *_diffusion_columns(units), POWER,
               Column("note", "Note"))
    body = []
    for c in configs:
        parallel = f"Ulysses {c.ulysses_degree}, ring {c.ring_degree}"
        note = marked(c) if marked else ""
        body.append((gpu_cell(c, urls), Cell(parallel, parallel),
                     *diffusion_metric_cells(c, units), num_cell(POWER, c.avg_power_watts),
                     Cell(note, note)))
    return Table(table_id, caption, columns, tuple(body))
