"""The full data set as downloads: every configuration, one file pair per kind of task."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from jouleboard.config.registry import Registry
from jouleboard.config.schema import data_set_name
from jouleboard.core.shapes import Row
from jouleboard.kinds.base import Record, TaskKind
from jouleboard.loading.dataset import Dataset
from jouleboard.measure.checks import boundary_of, window_of
from jouleboard.plan.views import Download
from jouleboard.rank.ranking import runs_of
from jouleboard.render.downloads import csv_chunks, json_chunks

# Appended to a kind's configuration columns in the full data set (downloads and the API).
APPENDED_COLUMNS = ("runs", "energy_boundary", "energy_window", "dataset", "license")


def configuration_row(kind: TaskKind, c: Record, registry: Registry) -> Row:
    """A full-data-set row: the kind's columns, the repeat runs folded into it
    (loading/repeats.py), what its energy includes (gpu or system-ac), the part of each
    run it covers (steady-state or whole-run; None: not stated), and the data set it comes
    from and that data set's licence (a site may publish runs of several)."""
    info = registry.models[c.model_id]
    p = c.provenance
    return {
        **kind.configuration_record(c, info.nickname, info.builder),
        "runs": runs_of(c),
        "energy_boundary": boundary_of(c),
        "energy_window": window_of(c),
        "dataset": None if p is None else data_set_name(p.dataset, p.version),
        "license": None if p is None else p.license,
    }


# What makes every configuration's full-data-set row of a data set, by kind (the kinds that
# have any): :func:`configuration_records`, or :func:`shared_records`'s.
Records = Callable[[Dataset], list[tuple[TaskKind, list[Row]]]]


def configuration_records(data: Dataset) -> list[tuple[TaskKind, list[Row]]]:
    """A :data:`Records`, made anew at each call."""
    out = []
    for kind in data.kinds.all():
        records = [
            configuration_row(kind, c, data.registry)
            for c in data.configurations
            if data.kinds.of(data.registry.tasks[c.task]) is kind
        ]
        if records:
            out.append((kind, records))
    return out


def shared_records() -> Records:
    """A :data:`Records` that makes each data set's rows once (for one plan: the newest
    release's data is the working data, so one set of rows serves both its permanent
    downloads and the full data set's, the largest value a plan holds)."""
    made: dict[int, tuple[Dataset, list[tuple[TaskKind, list[Row]]]]] = {}

    def records(data: Dataset) -> list[tuple[TaskKind, list[Row]]]:
        if id(data) not in made:  # (the data set is held with its rows: the id stays its)
            made[id(data)] = (data, configuration_records(data))
        return made[id(data)][1]

    return records


def configuration_downloads(
    data: Dataset,
    path: Callable[[str, str], str],
    group: str,
    description: str,
    rows: Records = configuration_records,
) -> list[Download]:
    """CSV and JSON of every configuration, one pair per kind that has any; ``path(ext,
    name)`` places them."""
    out = []
    # The kinds of task the data has ("text", not "multimodal and text" on a text-only site:
    # a kind's every possible one).
    present = {data.registry.tasks[c.task].kind for c in data.configurations}
    for kind, records in rows(data):  # (only kinds that have any)
        tasks = " and ".join(
            sorted(name for k, name in kind.task_kinds.items() if k in present)
        ).lower()
        out += [
            Download(
                path(ext, kind.download_name),
                (*kind.configuration_columns, *APPENDED_COLUMNS),
                records,
                group,
                f"{description} ({tasks})",
            )
            for ext in ("csv", "json")
        ]
    return out


def download_chunks(download: Download) -> Iterator[str]:
    """A download's text in pieces of a few thousand records (see
    :mod:`jouleboard.render.downloads`): a build writes it, and the downloads page sizes
    it, without ever holding the whole text."""
    if download.path.endswith(".csv"):
        return csv_chunks(download.columns, download.records)
    return json_chunks(download.records)
