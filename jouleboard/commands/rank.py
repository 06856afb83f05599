"""``jouleboard rank``: a task's ranking under a latency deadline, as a table, CSV or JSON."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from jouleboard.commands.common import UsageError, kind_code_option
from jouleboard.config.fields import PERCENTILES, RANK_BY
from jouleboard.core.shapes import Scalar

HELP = "print a task's ranking under a latency deadline"


if TYPE_CHECKING:
    from jouleboard.measure.units import TaskUnits


def add_arguments(r: argparse.ArgumentParser) -> None:
    r.add_argument("--task", required=True, help="a task id of tasks.yaml")
    r.add_argument(
        "--deadline-ms",
        type=float,
        default=None,
        help="latency deadline in ms (default: the task's default)",
    )
    r.add_argument(
        "--percentile",
        choices=PERCENTILES,
        default=None,
        help="latency percentile the deadline applies to, where the task's kind "
        "has percentiles (default: the task's)",
    )
    r.add_argument(
        "--gpu",
        action="append",
        default=None,
        help="allowed GPU (repeatable; default: the site's default GPUs)",
    )
    r.add_argument("--top", type=int, default=None, help="keep the first N rows")
    r.add_argument(
        "--energy-budget",
        type=float,
        default=None,
        help="drop configurations above this many J per output (the task's "
        "unit: token, image, video...)",
    )
    r.add_argument(
        "--by",
        choices=RANK_BY,
        default="energy_per_token",
        help="what each model's configuration and the order minimise",
    )
    r.add_argument("--format", choices=("table", "csv", "json"), default="table")
    r.add_argument(
        "--columns",
        default=None,
        metavar="COL,COL",
        help="columns to print, comma-separated (default: as many as fit the "
        "terminal for a table, all for csv/json)",
    )
    r.add_argument("--data", type=Path, default=Path("data"), help="data folder (default: data)")
    kind_code_option(r)


# How errors name the arguments: this command's options (the API names its keywords).
OPTION_NAMES = {
    "deadline_ms": "--deadline-ms",
    "top": "--top",
    "energy_budget": "--energy-budget",
    "gpus": "--gpu",
    "by": "--by",
    "percentile": "--percentile",
}


def run(args: argparse.Namespace) -> int:
    from jouleboard.api import rank_task
    from jouleboard.loading.dataset import load_dataset

    data = load_dataset(args.data)
    try:
        ranking = rank_task(
            data,
            args.task,
            args.deadline_ms,
            args.percentile,
            args.gpu,
            args.top,
            args.energy_budget,
            args.by,
            OPTION_NAMES,
        )
    except ValueError as e:
        raise UsageError(str(e)) from None
    if ranking.unranked:
        print(f"not ranked (no published accuracy): {', '.join(ranking.unranked)}", file=sys.stderr)
    if ranking.why_empty is not None:  # stdout stays what its format is: an empty table
        print(f"nothing to rank: {ranking.why_empty}", file=sys.stderr)

    info = data.registry.tasks[args.task]
    sys.stdout.write(
        format_rank(
            ranking.records,
            args.format,
            ranking.columns,
            getattr(args, "columns", None),
            units=data.kinds.of(info).units(info),
        )
    )
    if args.format == "table" and ranking.records:
        sys.stdout.flush()  # the note follows the table, also where both share a terminal
        print(ranking.places_note, file=sys.stderr)
    return 0


def format_rank(
    records: Sequence[Mapping[str, Scalar]],
    fmt: str,
    columns: Sequence[str],
    picked: str | None = None,
    width: int | None = None,
    units: TaskUnits | None = None,
) -> str:
    """The ranking as JSON, CSV or a text table. ``picked`` (``--columns``) chooses and
    orders the columns; otherwise a table keeps what fits in ``width`` characters. A table
    reads as the site does (``units``: images per kJ and kJ per image, videos per MJ);
    JSON and CSV keep the columns' own units (per joule, joules), at full precision."""
    from jouleboard.core.console import terminal_width

    if picked is not None:
        from jouleboard.core.console import HEADERS

        by_header = {HEADERS.get(c, c).casefold(): c for c in columns}
        chosen = [
            c if c in columns else by_header.get(c.casefold(), c)
            for c in (c.strip() for c in picked.split(","))
            if c
        ]
        unknown = [c for c in chosen if c not in columns]
        if unknown or not chosen:
            raise UsageError(
                f"unknown column {unknown[0] if unknown else picked!r}; valid: {', '.join(columns)}"
            )
        columns = chosen
        records = [{c: r[c] for c in columns} for r in records]
    if fmt == "json":
        from jouleboard.render.downloads import to_json

        return to_json(records)
    if fmt == "csv":
        from jouleboard.render.downloads import to_csv

        return to_csv(columns, records)
    from jouleboard.rank.text import ranking_table

    fit = None if picked is not None else (width or terminal_width())
    return ranking_table(records, columns, fit, units)
