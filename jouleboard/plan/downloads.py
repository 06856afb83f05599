"""The full data set as downloads: every configuration, one file pair per kind of task."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from jouleboard.kinds import kind_of, kinds
from jouleboard.loading.dataset import Dataset
from jouleboard.plan.views import Download
from jouleboard.rank.ranking import runs_of
from jouleboard.render.downloads import csv_chunks, json_chunks


def configuration_downloads(
    data: Dataset, path: Callable[[str, str], str], group: str, description: str
) -> list[Download]:
    """CSV and JSON of every configuration, one pair per kind that has any; ``path(ext,
    name)`` places them."""
    out = []
    for kind in kinds():
        models = data.registry.models
        records = [
            {
                **kind.configuration_record(
                    c, models[c.model_id].nickname, models[c.model_id].builder
                ),
                "runs": runs_of(c),  # repeat runs folded into this row (loading/repeats.py)
            }
            for c in data.configurations
            if kind_of(data.registry.tasks[c.task]) is kind
        ]
        if records:
            tasks = " and ".join(sorted(set(kind.task_kinds.values()))).lower()
            out += [
                Download(
                    path(ext, kind.download_name),
                    (*kind.configuration_columns, "runs"),
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
