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

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from jouleboard.core.problems import ValidationFailed
from jouleboard.core.shapes import Row
from jouleboard.loading.dataset import Dataset, load_dataset

if TYPE_CHECKING:  # pandas is optional: imported only by Ranking.to_dataframe
    import pandas

    from jouleboard.kinds.base import Latency
    from jouleboard.measure.units import TaskUnits
    from jouleboard.rank.ranking import Deadline, Rankable


# How an argument is named where an error mentions it: the Python API's keyword names; the
# command line passes its option names (commands/rank.py), so each caller reads its own terms.
MAX_PRINTED_ROWS = 60  # past it, str() shows the first and last 5 rows (pandas' default)

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

    def __str__(self) -> str:
        """The rows as a text table, as ``print`` shows a pandas DataFrame: the columns
        that fit the terminal (``COLUMNS``; all of them are in ``columns``), the first and
        last 5 rows past 60, then the shape."""
        from jouleboard.core.console import HEADERS, terminal_width, text_table
        from jouleboard.core.escape import text_line
        from jouleboard.measure.formats import format_value

        rows = self.records
        if len(rows) > MAX_PRINTED_ROWS:
            rows = [*rows[:5], *rows[-5:]]
        cells = {c: [text_line(format_value(c, r.get(c))) for r in rows] for c in self.columns}
        room, shown = terminal_width(), list[str]()
        for c in self.columns:  # in their order, each that still fits (wide ones left out)
            size = max([len(HEADERS.get(c, c)), *map(len, cells[c])]) + 2 * bool(shown)
            if size <= room:
                shown.append(c)
                room -= size
        lines = text_table(rows, shown, cells, None).splitlines()
        if len(rows) < len(self.records):
            lines.insert(6, "...")
        return "\n".join([*lines, self._shape(len(shown))]) + "\n"

    def _shape(self, shown: int) -> str:
        """``[7 rows x 26 columns]``, and how many the table shows when not all."""
        more = f", {shown} shown; .columns names all" if shown < len(self.columns) else ""
        return f"[{len(self.records):,} rows x {len(self.columns)} columns{more}]"

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

    units: TaskUnits | None = field(default=None, compare=False)  # how the table shows amounts

    def __repr__(self) -> str:
        rows = f"{len(self.records)} model{'s' * (len(self.records) != 1)}"
        return (
            f"Ranking(task={self.task!r}, deadline_ms={self.deadline_ms:g}, "
            f"percentile={self.percentile!r}, {rows})"
        )

    def __str__(self) -> str:
        """The ranking as ``jouleboard rank`` prints it: the table (places such as 1–2,
        the columns that fit the terminal), what the places mean, and the shape; or why no
        model qualifies."""
        from jouleboard.core.console import terminal_width
        from jouleboard.rank.text import ranking_table

        if not self.records:
            return f"no model qualifies: {self.why_empty or 'no configuration'}\n"
        table = ranking_table(self.records, self.columns, terminal_width(), self.units)
        shown = len(re.split(r"\s{2,}", table.split("\n", 1)[0].strip()))  # header cells
        return f"{table}{self.places_note}\n{self._shape(shown)}\n"


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
        """The task ids of tasks.yaml, in its order (what :meth:`rank` takes).

        >>> board.tasks[:3]
        ['gpqa', 'lm-arena-chat', 'sourcegraph-fim']
        """
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
        """Each model's best configuration on ``task`` under a latency deadline, best first.

        task: a task id of tasks.yaml (``board.tasks`` lists them).
        deadline_ms: the latency deadline in milliseconds (default: the task's), on the
            latency the task's kind ranks by: the inter-token latency of language models,
            the batch latency of image and video generation.
        percentile: "p50", "p90", "p95" or "p99": which latency percentile must meet the
            deadline, where the task's kind has percentiles (default: the task's).
        gpus: the GPUs allowed, one id ("B200") or a list (default: site.yaml's
            default_gpus).
        top: keep the first ``top`` rows (default: all).
        energy_budget: leave out configurations above this many joules per output (token,
            image, video...).
        by: what each model's choice and the order minimise: "energy_per_token" (energy per
            output), "energy_per_response" or "energy_per_correct_answer" (needs published
            accuracy: data/quality/<task>.yaml).

        Returns a :class:`Ranking`: ``.records`` (dicts, full precision, units in the
        keys), ``.to_dataframe()``, ``print()`` shows the table. Raises ValueError naming
        the argument for an unknown task or GPU or a bad value.

        >>> ranking = board.rank("gpqa", deadline_ms=300, top=2)
        >>> [(r["nickname"], round(r["tokens_per_joule"], 2)) for r in ranking.records]
        [('GPT OSS 20B', 35.15), ('GPT OSS 120B', 25.21)]
        """
        return rank_task(self.dataset, task, deadline_ms, percentile, gpus, top, energy_budget, by)

    def configurations(self, task: str | None = None, kind: str | None = None) -> Configurations:
        """Every configuration (repeat runs folded, ``runs`` says how many), one row each,
        in the full data-set download's columns.

        task: only this task's configurations (a task id of tasks.yaml).
        kind: else every configuration of one kind of task: "token" (the default: language
            and multimodal chat) or "diffusion" (text to image and video).

        Returns :class:`Configurations`: ``.records``, ``.columns``, ``.to_dataframe()``.

        >>> rows = board.configurations(task="gpqa")
        >>> len(rows.records), rows.records[0]["task"]
        (186, 'gpqa')
        """

        reg = self.dataset.registry
        if task is not None and task not in reg.tasks:
            raise ValueError(_unknown("task", task, reg.tasks))
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
        """Every MLPerf Inference power result, one row each, in the site's download
        columns: measured throughput and power, the derived figures and the result they
        come from. Its energy is the whole system at the wall (``energy_boundary``
        system-ac), never comparable with the GPU-only configurations.

        benchmark: only this benchmark's results (e.g. "llama2-70b-99"; default: all).

        Returns :class:`MLPerfResults`: ``.records``, ``.columns``, ``.to_dataframe()``.

        >>> results = board.mlperf("gptj-99")
        >>> sorted(r["scenario"] for r in results.records)
        ['Offline', 'Server']
        """
        from jouleboard.plan.mlperf import DOWNLOAD_COLUMNS, record

        known = sorted({r.result.benchmark for r in self.dataset.mlperf})
        if benchmark is not None and benchmark not in known:
            if not known:
                raise ValueError(f"unknown benchmark {benchmark!r}: this data has no MLPerf result")
            raise ValueError(_unknown("benchmark", benchmark, known))
        rows = [
            record(r)
            for r in self.dataset.mlperf
            if benchmark is None or r.result.benchmark == benchmark
        ]
        return MLPerfResults(benchmark, DOWNLOAD_COLUMNS, rows)


def load(data: str | Path = "data", allow_kind_code: bool = False) -> Leaderboard:
    """Read and validate a data folder (the one holding site.yaml) into a
    :class:`Leaderboard`.

    data: the data folder's path (default: ``data`` in the working folder).
    allow_kind_code: run the kinds of task site.yaml declares (Python code; also
        JOULEBOARD_ALLOW_KIND_CODE=1); without it each is a ``kinds.not-allowed`` problem.

    Raises ValidationFailed listing every problem (``.problems``; ``.report()`` prints
    them), or FileNotFoundError when there is no folder at ``data``.

    >>> board = jouleboard.load("data")
    >>> board.tasks[0]
    'gpqa'
    """
    folder = Path(data)
    if not folder.is_dir():
        raise FileNotFoundError(_no_data_folder(folder))  # the message names the path once
    try:
        return Leaderboard(load_dataset(folder, allow_kind_code=allow_kind_code))
    except ValidationFailed as e:  # a notebook prints str(e): every problem, not a count
        e.args = (e.report(),)
        raise


def _no_data_folder(folder: Path) -> str:
    """Why ``jouleboard.load(folder)`` found nothing, in the API's words."""
    from jouleboard.loading.layout import site_folder_above

    shown = folder.as_posix()
    above = site_folder_above(folder)
    if above is not None:
        where = f"; {above}/{shown} is one: jouleboard.load({f'{above}/{shown}'!r})"
    elif (folder.parent / "site.yaml").is_file():
        here = folder.parent.as_posix()
        where = f"; {here} holds site.yaml: jouleboard.load({here!r})"
    else:
        where = " (a folder made by `jouleboard init DIR` has it at DIR/data)"
    return (
        f"no data folder at {shown!r} (from {Path.cwd()}): give jouleboard.load() the path "
        f"of the folder holding site.yaml{where}"
    )


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
    from jouleboard.config.fields import RANK_BY
    from jouleboard.config.schema import PERCENTILES
    from jouleboard.rank.noise import table_note
    from jouleboard.rank.ranking import Deadline, emptied_by, objective_for, rank
    from jouleboard.rank.tables import noise_columns, with_noise

    reg = data.registry
    task = reg.tasks.get(task_id)
    if task is None:
        raise ValueError(_unknown("task", task_id, reg.tasks))
    allowed = [gpus] if isinstance(gpus, str) else list(gpus or reg.site.default_gpus)
    unknown = [g for g in allowed if g not in reg.gpus]
    if unknown:
        raise ValueError(_unknown("GPU", unknown[0], reg.gpus))
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
        kind.units(task),
    )


def _unknown(what: str, value: str, known: Iterable[str]) -> str:
    """``unknown GPU 'MI325x'; did you mean 'MI300X'? valid: B200, ...``."""
    from jouleboard.core.problems import did_you_mean

    return (
        f"unknown {what} {value!r}; {did_you_mean(value, known)}valid: {', '.join(sorted(known))}"
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
