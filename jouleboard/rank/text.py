"""A ranking as a text table, as the terminal shows it: ``jouleboard rank`` and
``print(ranking)`` of the Python API."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from jouleboard.core.console import text_table
from jouleboard.core.escape import text_line
from jouleboard.core.shapes import Scalar
from jouleboard.measure.formats import format_value, show
from jouleboard.rank.noise import rank_text

if TYPE_CHECKING:
    from jouleboard.measure.units import TaskUnits


def ranking_table(
    records: Sequence[Mapping[str, Scalar]],
    columns: Sequence[str],
    width: int | None,
    units: TaskUnits | None = None,
) -> str:
    """The rows as a text table: each row's places (``2–4``), the task's units (``units``:
    images per kJ, videos per MJ) and, with a ``width``, the columns that fit it."""
    cells = {c: [text_line(format_value(c, r[c])) for r in records] for c in columns}
    headers = scaled_columns(units, records, cells) if units is not None else {}
    if "rank" in cells and all("rank_best" in r for r in records):  # the places: "2–4"
        cells["rank"] = [places(r["rank_best"], r["rank_worst"]) for r in records]
    return text_table(records, columns, cells, width, headers)


def places(best: Scalar, worst: Scalar) -> str:
    """A row's places (``2–4``), from the whole numbers its record holds."""
    if not (isinstance(best, int) and isinstance(worst, int)):
        raise TypeError(f"rank_best and rank_worst are {best!r} and {worst!r}, not places")
    return rank_text(best, worst)


def scaled_columns(
    units: TaskUnits, records: Sequence[Mapping[str, Scalar]], cells: dict[str, list[str]]
) -> dict[str, str]:
    """Rewrite ``cells`` of a diffusion ranking's per-joule columns in the task's scale, as the
    site's tables print them (Images/kJ 2.96, kJ/image 0.338), and return their headers; a
    task counted per joule (tokens) keeps its columns."""
    if units.scale_joules == 1:
        return {}
    headers = {"throughput_outputs_per_sec": f"{units.output}s/s"}
    for key, label, factor, rule in (
        ("outputs_per_joule", units.efficiency_label, units.scale_joules, units.efficiency_show),
        ("energy_per_output_joules", units.energy_scaled_label, 1 / units.scale_joules, "sig3"),
    ):
        for column in (key, f"{key}_low", f"{key}_high"):
            if column in cells:
                cells[column] = [
                    show(rule, float(v) * factor) if isinstance(v, (int, float)) else "–"
                    for v in (r[column] for r in records)
                ]
                headers[column] = label + column[len(key) :].replace("_", " ")
    return headers
