"""Python API for notebooks and scripts: load a data folder, rank a task under any deadline
and percentile, get the rows as plain records or a pandas DataFrame.

    >>> import jouleboard
    >>> board = jouleboard.load("data")
    >>> ranking = board.rank("gpqa", deadline_ms=300, percentile="p50")
    >>> ranking.records[0]["nickname"], round(ranking.records[0]["tokens_per_joule"], 2)
    ('GPT OSS 20B', 35.15)
    >>> ranking.to_dataframe()  # needs pandas: pip install 'jouleboard[pandas]'

The command line's ``jouleboard rank`` uses the same function, so both give the same rows.
Units are in the column names (``_joules`` J, ``_ms`` milliseconds, ``_watts`` W).
"""

from __future__ import annotations

import errno
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from jouleboard.core.shapes import Row
from jouleboard.loading.dataset import Dataset, data_folder_missing, load_dataset

if TYPE_CHECKING:  # pandas is optional: imported only by Ranking.to_dataframe
    import pandas

    from jouleboard.kinds.base import Latency
    from jouleboard.rank.ranking import Deadline, Rankable


# How an argument is named where an error mentions it: the Python API's keyword names; the
# command line passes its option names (commands/rank.py), so each caller reads its own terms.
API_NAMES = {
    "deadline_ms": "deadline_ms",
    "top": "top",
    "energy_budget": "energy_budget",
    "gpus": "gpus",
    "by": "by",
    "percentile": "percentile",
}


class _Rows:
    """Rows of one kind of record: ``columns`` and ``records`` (full precision, units in the
    column names), as plain dicts, a pandas DataFrame or a notebook's HTML table."""

    columns: tuple[str, ...]
    records: list[Row]

    def to_records(self) -> list[Row]:
        """The rows as plain dicts (copies), full precision, keys in ``columns`` order."""
        return [dict(r) for r in self.records]

    def _repr_html_(self, rows: int = 10) -> str:
        """The first ``rows`` rows as an HTML table (notebooks show it), every value
        escaped."""
        from jouleboard.core.escape import markup

        head = "".join(f"<th>{markup(c)}</th>" for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{markup(_cell(r.get(c)))}</td>" for c in self.columns) + "</tr>"
            for r in self.records[:rows]
        )
        more = len(self.records) - rows
        caption = markup(repr(self)) + (f" (first {rows} shown)" if more > 0 else "")
        return (
            f"<table><caption>{caption}</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>"
        )

    def to_dataframe(self) -> pandas.DataFrame:
        """The rows as a pandas DataFrame (``pip install 'jouleboard[pandas]'``)."""
        try:
            import pandas
        except ImportError as e:
            raise ImportError(
                f"{type(self).__name__}.to_dataframe needs pandas: pip install 'jouleboard[pandas]'"
            ) from e
        return pandas.DataFrame(self.records, columns=list(self.columns))


@dataclass(frozen=True, repr=False)
class Ranking(_Rows):
    """One task's ranking: a row per model (its best configuration), best first."""

    task: str
    deadline_ms: float  # on the latency the task's kind ranks by (jouleboard/kinds/)
    percentile: str
    columns: tuple[str, ...]
    records: list[Row] = field(default_factory=list)
    unranked: tuple[str, ...] = ()  # models left out for lack of a published accuracy
    why_empty: str | None = None  # when no model qualifies: which condition left none
    places_note: str = ""  # what the places mean: shared within measurement noise, or exact

    def __repr__(self) -> str:
        rows = f"{len(self.records)} model{'s' * (len(self.records) != 1)}"
        return (
            f"Ranking(task={self.task!r}, deadline_ms={self.deadline_ms:g}, "
            f"percentile={self.percentile!r}, {rows})"
        )


@dataclass(frozen=True, repr=False)
class Configurations(_Rows):
    """Every configuration of one kind of task (token or diffusion), one row each, in the
    columns of the site's full data-set download; ``task``: only that task's."""

    kind: str
    task: str | None
    columns: tuple[str, ...]
    records: list[Row] = field(default_factory=list)

    def __repr__(self) -> str:
        where = f"task={self.task!r}" if self.task else f"kind={self.kind!r}"
        return f"Configurations({where}, {len(self.records):,} rows)"


@dataclass(frozen=True, repr=False)
class MLPerfResults(_Rows):
    """MLPerf Inference power results, one row each (``energy_boundary`` system-ac)."""

    benchmark: str | None
    columns: tuple[str, ...]
    records: list[Row] = field(default_factory=list)

    def __repr__(self) -> str:
        where = f"benchmark={self.benchmark!r}, " if self.benchmark else ""
        return f"MLPerfResults({where}{len(self.records):,} rows)"


def _cell(value: object) -> str:
    return "" if value is None else f"{value:.4g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True, repr=False)
class Leaderboard:
    """A validated data folder."""

    dataset: Dataset

    def __repr__(self) -> str:
        reg = self.dataset.registry
        configs = self.dataset.configurations
        models = len({c.model_id for c in configs})
        return (
            f"Leaderboard({len(configs):,} configurations of {models} models; tasks "
            f"{', '.join(reg.tasks)}; GPUs {', '.join(reg.gpus)})"
        )

    @property
    def tasks(self) -> list[str]:
        return list(self.dataset.registry.tasks)

    def rank(
        self,
        task: str,
        deadline_ms: float | None = None,
        percentile: str | None = None,
        gpus: str | Sequence[str] | None = None,
        top: int | None = None,
        energy_budget: float | None = None,
        by: str = "energy_per_token",
    ) -> Ranking:
        """Rank ``task`` (see :func:`rank_task`)."""
        return rank_task(self.dataset, task, deadline_ms, percentile, gpus, top, energy_budget, by)

    def configurations(self, task: str | None = None, kind: str | None = None) -> Configurations:
        """Every configuration (repeat runs folded, ``runs`` says how many), one row each,
        in the full data-set download's columns: of ``task``, or of one kind of task
        (``token`` by default, ``diffusion``); ``.to_dataframe()`` for pandas."""

        reg = self.dataset.registry
        if task is not None and task not in reg.tasks:
            raise ValueError(f"unknown task {task!r}; valid: {', '.join(sorted(reg.tasks))}")
        known = self.dataset.kinds
        by_name = {k.name: k for k in known.all()}
        chosen = known.of(reg.tasks[task]) if task else by_name.get(kind or "token")
        if chosen is None:
            raise ValueError(f"unknown kind {kind!r}; valid: {', '.join(sorted(by_name))}")
        if task and kind and chosen.name != kind:
            raise ValueError(f"task {task!r} is of kind {chosen.name!r}, not {kind!r}")
        from jouleboard.plan.downloads import APPENDED_COLUMNS, configuration_row

        records = [
            configuration_row(chosen, c, reg)
            for c in self.dataset.configurations
            if (c.task == task if task else known.of(reg.tasks[c.task]) is chosen)
        ]
        columns = (*chosen.configuration_columns, *APPENDED_COLUMNS)
        return Configurations(chosen.name, task, columns, records)

    def mlperf(self, benchmark: str | None = None) -> MLPerfResults:
        """Every MLPerf Inference power result (whole system at the wall: never comparable
        with the GPU-only configurations), one row each, in the site's download columns:
        measured throughput and power, the derived figures and the result they come from;
        ``benchmark``: only that one (e.g. ``llama2-70b-99``)."""
        from jouleboard.plan.mlperf import DOWNLOAD_COLUMNS, record

        known = sorted({r.result.benchmark for r in self.dataset.mlperf})
        if benchmark is not None and benchmark not in known:
            raise ValueError(
                f"unknown benchmark {benchmark!r}; valid: {', '.join(known) or 'none (no results)'}"
            )
        rows = [
            record(r)
            for r in self.dataset.mlperf
            if benchmark is None or r.result.benchmark == benchmark
        ]
        return MLPerfResults(benchmark, DOWNLOAD_COLUMNS, rows)


def load(data: str | Path = "data", allow_kind_code: bool = False) -> Leaderboard:
    """Read and validate a data folder; raises ValidationFailed listing every problem, or
    FileNotFoundError when there is no folder at ``data``. The kinds site.yaml declares are
    Python code: they run only with ``allow_kind_code=True`` (or
    JOULEBOARD_ALLOW_KIND_CODE=1), else each is a ``kinds.not-allowed`` problem."""
    folder = Path(data)
    if not folder.is_dir():
        raise FileNotFoundError(errno.ENOENT, data_folder_missing(folder), str(folder))
    return Leaderboard(load_dataset(folder, allow_kind_code=allow_kind_code))


def rank_task(
    data: Dataset,
    task_id: str,
    deadline_ms: float | None = None,
    percentile: str | None = None,
    gpus: str | Sequence[str] | None = None,
    top: int | None = None,
    energy_budget: float | None = None,
    by: str = "energy_per_token",
    names: Mapping[str, str] = API_NAMES,
) -> Ranking:
    """Each model's best configuration on ``task_id`` that meets the deadline, best first.

    ``deadline_ms`` (default: the task's) bounds the latency the task's kind ranks by, at
    ``percentile`` (p50/p90/p95/p99, default the task's) where the kind has percentiles; ``gpus``
    (default: site.yaml's default_gpus) are the allowed GPU ids (one id as a string, or a
    list); ``energy_budget`` drops
    configurations above that many J per output (token, image...); ``by`` is what the
    choice and order minimise. Raises ValueError for an unknown task, GPU, percentile or a
    bad number, naming each argument as ``names`` spells it (the command line: its options)."""
    from jouleboard.config.schema import PERCENTILES
    from jouleboard.rank.noise import table_note
    from jouleboard.rank.ranking import RANK_BY, Deadline, emptied_by, objective_for, rank
    from jouleboard.rank.tables import noise_columns, with_noise

    reg = data.registry
    task = reg.tasks.get(task_id)
    if task is None:
        raise ValueError(f"unknown task {task_id!r}; valid: {', '.join(sorted(reg.tasks))}")
    allowed = [gpus] if isinstance(gpus, str) else list(gpus or reg.site.default_gpus)
    unknown = [g for g in allowed if g not in reg.gpus]
    if unknown:
        raise ValueError(f"unknown GPU {unknown[0]!r}; valid: {', '.join(sorted(reg.gpus))}")
    ms = task.default_deadline.ms if deadline_ms is None else deadline_ms
    if not (math.isfinite(ms) and ms > 0):
        raise ValueError(f"{names['deadline_ms']} must be a positive number of ms, got {ms}")
    if top is not None and top < 1:
        raise ValueError(f"{names['top']} must be 1 or more, got {top}")
    if energy_budget is not None and not (math.isfinite(energy_budget) and energy_budget > 0):
        raise ValueError(
            f"{names['energy_budget']} must be a positive number of J per "
            f"{task.output_unit}, got {energy_budget}"
        )
    if percentile is not None and percentile not in PERCENTILES:
        raise ValueError(f"{names['percentile']} must be one of {', '.join(PERCENTILES)}")
    if by not in RANK_BY:
        raise ValueError(f"{names['by']} must be one of {', '.join(RANK_BY)}")
    deadline = Deadline(ms, percentile or task.default_deadline.percentile)

    def accuracy(model_id: str) -> float | None:
        score = reg.accuracy(task_id, model_id)
        return score.accuracy_percent if score else None

    configs = data.for_task(task_id)
    noise = data.noise_for(configs)  # the task's data set's measurement noise
    rows = rank(
        configs,
        deadline,
        gpus=set(allowed),
        top=top,
        energy_budget_joules_per_token=energy_budget,
        objective=objective_for(by, accuracy),
        noise=noise,
    )
    unranked = (
        tuple(sorted({c.model_id for c in configs if accuracy(c.model_id) is None}))
        if by == "energy_per_correct_answer"
        else ()
    )
    kind = data.kinds.of(task)
    why = None
    if not rows:
        cause = emptied_by(
            configs, deadline, set(allowed), energy_budget, objective_for(by, accuracy)
        )
        why = _why_empty(
            cause, task_id, configs, deadline, allowed, kind.latency, task.output_unit, names
        )
    return Ranking(
        task_id,
        ms,
        deadline.percentile,
        (*kind.rank_columns, *noise_columns(kind.interval_columns)),
        [
            with_noise(
                kind.rank_record(
                    r.rank,
                    r.config,
                    reg.models[r.config.model_id].nickname,
                    accuracy(r.config.model_id),
                ),
                r,
                noise,
                kind.interval_columns,
            )
            for r in rows
        ],
        unranked,
        why,
        table_note(noise),
    )


def _why_empty(
    cause: str | None,
    task_id: str,
    configs: Sequence[Rankable],
    deadline: Deadline,
    gpus: Sequence[str],
    latency: Latency,
    unit: str,
    names: Mapping[str, str] = API_NAMES,
) -> str:
    """In words, why no model qualifies (``cause`` from :func:`jouleboard.rank.ranking.emptied_by`),
    with the figure that would let one in."""
    on_gpus = [c for c in configs if c.gpu_model in gpus]
    fast = [c for c in on_gpus if deadline.admits(c)]
    if cause == "measurements":
        return f"task {task_id} has no measurements"
    if cause == "gpus":
        measured = ", ".join(sorted({c.gpu_model for c in configs}))
        return (
            f"no configuration of {task_id} runs on {', '.join(gpus)} (measured on {measured}; "
            f"choose GPUs with {names['gpus']})"
        )
    if cause == "deadline":
        fastest = min(c.latency_ms(deadline.percentile) for c in on_gpus)
        in_ms = "" if latency.unit == "ms" else f" ({names['deadline_ms']} is in ms)"
        return (
            f"no configuration meets {latency.text(deadline.ms, deadline.percentile)}; the "
            f"fastest takes {latency.value(float(f'{fastest:.3g}'))}{in_ms}"
        )
    if cause == "energy_budget":
        lowest = min(c.energy_per_output_joules for c in fast)
        return (
            f"no configuration that meets the deadline fits the energy budget; the lowest "
            f"uses {lowest:.3g} J per {unit}"
        )
    if cause == "objective":
        return (
            f"no model has a published accuracy for {task_id}, which "
            f"{names['by']} energy_per_correct_answer needs (data/quality/<task>.yaml)"
        )
    return "no configuration qualifies"
