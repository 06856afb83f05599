"""Terminal output of the command line: build progress on stderr, tables that fit the width.

Progress goes to stderr so stdout stays the command's result (a table, CSV, a summary):
stage lines as each build stage ends, and while charts render a bar on a terminal or a few
plain lines when stderr is a file or a CI log. Quiet (-q) prints nothing; verbose (-v) adds
where things come from.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Mapping, Sequence
from typing import TextIO

QUIET, NORMAL, VERBOSE = 0, 1, 2
_BAR_WIDTH = 30
_PLAIN_STEPS = 4  # lines per rendering run when stderr is not a terminal (25 %, 50 %, ...)


class Progress:
    """Receives build events; prints them according to ``level`` on ``stream``."""

    def __init__(self, level: int = NORMAL, stream: TextIO | None = None) -> None:
        self.level = level
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._what, self._total, self._done, self._shown = "", 0, 0, 0

    def _print(self, text: str, end: str = "\n") -> None:
        self.stream.write(text + end)
        self.stream.flush()

    def detail(self, text: str) -> None:
        """Only with -v."""
        if self.level >= VERBOSE:
            self._print(text)

    def stage(self, name: str, seconds: float) -> None:
        """A build stage has ended after ``seconds`` s."""
        if self.level >= NORMAL:
            self._print(f"{name:<14} {seconds:6.2f} s")

    def start(self, what: str, total: int) -> None:
        """``total`` items of ``what`` are about to be processed (nothing shown for 0)."""
        self._what, self._total, self._done, self._shown = what, total, 0, 0
        if self.level >= NORMAL and total and not self.tty:
            self._print(f"{what}: 0/{total}")

    def advance(self, count: int = 1) -> None:
        self._done = min(self._total, self._done + count)
        if self.level < NORMAL or not self._total:
            return
        if self.tty:
            filled = _BAR_WIDTH * self._done // self._total
            bar = "#" * filled + "." * (_BAR_WIDTH - filled)
            self._print(
                f"\r{self._what} [{bar}] {self._done}/{self._total}",
                end="\n" if self._done == self._total else "",
            )
            return
        step = self._total * (self._shown + 1) / _PLAIN_STEPS
        if self._done >= step or self._done == self._total:
            self._shown = _PLAIN_STEPS * self._done // self._total
            self._print(f"{self._what}: {self._done}/{self._total}")


SILENT = Progress(QUIET)


def terminal_width(default: int = 100) -> int:
    """Columns of the terminal (COLUMNS when set; ``default`` when not a terminal)."""
    return shutil.get_terminal_size((default, 24)).columns


def fit_columns(
    columns: Sequence[str], widths: dict[str, int], limit: int, keep: Sequence[str] = ()
) -> list[str]:
    """The columns to show within ``limit`` characters (two spaces between columns): drop
    columns from the right, never one of ``keep``, until the row fits (or only ``keep``
    is left)."""
    shown = list(columns)

    def width() -> int:
        return sum(widths[c] for c in shown) + 2 * (len(shown) - 1)

    for column in reversed(list(columns)):
        if width() <= limit:
            break
        if column not in keep:
            shown.remove(column)
    return shown


# Short headers for the terminal table (CSV and JSON keep the full column names).
HEADERS = {
    "rank": "#",
    "model_id": "model id",
    "nickname": "model",
    "gpu_model": "GPU",
    "num_gpus": "GPUs",
    "weight_precision": "precision",
    "max_num_seqs": "max seqs",
    "median_itl_ms": "median ITL ms",
    "energy_per_token_joules": "J/token",
    "tokens_per_joule": "tokens/J",
    "energy_per_response_joules": "J/response",
    "avg_power_watts": "W",
    "output_throughput_tokens_per_sec": "tokens/s",
    "accuracy_percent": "accuracy %",
    "energy_per_correct_answer_joules": "J/correct",
    "batch_size": "batch",
    "inference_steps": "steps",
    "width_px": "width",
    "height_px": "height",
    "num_frames": "frames",
    "ulysses_degree": "ulysses",
    "ring_degree": "ring",
    "batch_latency_s": "batch s",
    "energy_per_output_joules": "J/output",
    "outputs_per_joule": "outputs/J",
    "throughput_outputs_per_sec": "outputs/s",
}
# The order columns are shown in, most important first: the rightmost go first when the
# terminal is too narrow. Columns not listed follow in their own order.
TABLE_PRIORITY = (
    "rank",
    "nickname",
    "num_gpus",
    "gpu_model",
    "weight_precision",
    "tokens_per_joule",
    "outputs_per_joule",
    "energy_per_token_joules",
    "energy_per_output_joules",
    "energy_per_response_joules",
    "median_itl_ms",
    "batch_latency_s",
    "accuracy_percent",
    "energy_per_correct_answer_joules",
    "avg_power_watts",
    "output_throughput_tokens_per_sec",
    "throughput_outputs_per_sec",
    "max_num_seqs",
    "batch_size",
    "inference_steps",
)
_ALWAYS = ("rank", "nickname")


def text_table(
    records: Sequence[Mapping[str, object]],
    columns: Sequence[str],
    cell: dict[str, list[str]],
    width: int | None,
    headers: dict[str, str] | None = None,
) -> str:
    """Aligned table of ``records``; ``cell[column]`` holds each row's display text;
    ``headers`` overrides a column's header (default: :data:`HEADERS`).

    With a ``width``, columns are put in TABLE_PRIORITY order, columns empty in every row
    are left out, and the least important ones are dropped until the table fits."""
    shown = list(columns)
    if width is not None:
        order = {c: i for i, c in enumerate(TABLE_PRIORITY)}
        shown = sorted(
            (
                c
                for c in columns
                if c in _ALWAYS or not records or any(r.get(c) is not None for r in records)
            ),
            key=lambda c: order.get(c, len(order)),
        )
    names = {**HEADERS, **(headers or {})}
    sizes = {c: max([len(names.get(c, c)), *(len(v) for v in cell[c])]) for c in shown}
    if width is not None:
        shown = fit_columns(shown, sizes, width, keep=_ALWAYS)

    def numeric(c: str) -> bool:
        return any(isinstance(r.get(c), int | float) for r in records)

    def line(values: list[str]) -> str:
        return "  ".join(
            v.rjust(sizes[c]) if numeric(c) else v.ljust(sizes[c])
            for c, v in zip(shown, values, strict=True)
        ).rstrip()

    lines = [line([names.get(c, c) for c in shown])]
    lines += [line([cell[c][i] for c in shown]) for i in range(len(records))]
    return "\n".join(lines) + "\n"
