"""Reading MLPerf Inference's logs and system descriptions: one rule for every number.

A number written as text (spl.txt's Watts, mlperf_log_summary.txt's latencies) is read by
:func:`number`: ASCII digits, at most one '.', an optional exponent, at most
:data:`MAX_NUMBER_CHARS` characters, finite as a double; never ``1_0_4_0_0``, ``²``,
``٣``, ``２``, ``nan`` or a 400-digit figure, which Python's ``float()`` and ``int()`` take
or choke on. A count (nodes, accelerators per node) is :func:`count`: a positive whole
number, in JSON or as decimal ASCII text ("8"). The ``:::MLLOG`` lines of a detail log are
JSON read by :func:`jouleboard.core.jsonio.parse_strict` (no duplicate key, NaN, overlong
number or deep nesting: a line of 100,000 "[" is one problem, not a RecursionError), and a
key the importer reads given twice with different values is refused, both lines named.
A message quotes a bad value briefly (:func:`quoted`).
"""

from __future__ import annotations

import datetime
import math
import re
from dataclasses import dataclass

from jouleboard.core.jsonio import MAX_NUMBER_CHARS, parse_strict
from jouleboard.core.problems import Problem
from jouleboard.core.shapes import JsonObject, JsonValue
from jouleboard.measure.formats import brief

SPL_TIME = "%m-%d-%Y %H:%M:%S.%f"  # 07-28-2025 04:17:29.622
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_COUNT = re.compile(r"[0-9]{1,6}")
MAX_COUNT = 100_000  # nodes or accelerators: far past any submitted system
RESTORE_LOG = "restore the log the benchmark wrote"


def quoted(value: object) -> str:
    """``value`` as a message quotes it: a number with at most four significant digits, a
    text as its first 24 characters."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 10**6:
        return f"{value:,}"
    if isinstance(value, float | int) and not isinstance(value, bool):
        return brief(float(value))
    text = repr(value)
    return text if len(text) <= 26 else text[:24] + "…" + text[-1]


def number(text: str) -> float | str:
    """The number ``text`` writes (surrounding spaces aside), or why it is none."""
    text = text.strip(" \t\r")
    if len(text) > MAX_NUMBER_CHARS:
        return f"{quoted(text)} is longer than {MAX_NUMBER_CHARS} characters"
    if not _NUMBER.fullmatch(text):
        return f"{quoted(text)} is not a number (ASCII digits, at most one '.', an exponent)"
    value = float(text)
    return value if math.isfinite(value) else f"{quoted(text)} is too large for a number"


def whole(text: str) -> int | str:
    """The whole number ``text`` writes (ASCII digits only), or why it is none."""
    text = text.strip(" \t\r")
    if len(text) > MAX_NUMBER_CHARS or not text.isascii() or not text.isdigit():
        return f"{quoted(text)} is not a whole number (ASCII digits)"
    return int(text)


def count(value: JsonValue) -> int | str:
    """A count as a submitter writes it: a positive whole number in JSON (2, 2.0) or as
    decimal ASCII text ("2"); why not otherwise (0, -1, 1.5, true, "²", "٣", "２", [1])."""
    if isinstance(value, str) and _COUNT.fullmatch(value.strip(" ")):
        value = int(value.strip(" "))
    elif isinstance(value, float) and value.is_integer() and abs(value) <= MAX_COUNT:
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_COUNT:
        return value
    return f"{quoted(value)}, not a positive whole number (at most {MAX_COUNT:,})"


@dataclass(frozen=True)
class Logged:
    """A detail log's MLLOG entries: the first value of each key, the line it is on."""

    values: JsonObject
    lines: dict[str, int]


def mllog(text: str, shown: str, read: frozenset[str]) -> tuple[Logged, list[Problem]]:
    """The ``:::MLLOG {...}`` lines of a detail log. A key in ``read`` (one the importer
    uses) given again with another value is a problem naming both lines: the first is not
    silently taken."""
    values: JsonObject = {}
    lines: dict[str, int] = {}
    problems = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.startswith(":::MLLOG "):
            continue
        entry, issues = parse_strict(line[len(":::MLLOG ") :])
        if not isinstance(entry, dict) or "key" not in entry or "value" not in entry:
            why = f": {issues[0].message}" if issues else ""
            problems.append(
                Problem(
                    shown,
                    "",
                    "mlperf.bad-log-line",
                    f"line {n}: not an MLLOG entry with a key and a value{why}",
                    "restore the file as the benchmark wrote it",
                )
            )
            continue
        key, value = entry["key"], entry["value"]
        if not isinstance(key, str):
            continue
        if key not in values:
            values[key], lines[key] = value, n
        elif key in read and values[key] != value:
            problems.append(
                Problem(
                    shown,
                    "",
                    "mlperf.repeated-log-key",
                    f"lines {lines[key]} and {n} give {key} different values "
                    f"({quoted(values[key])} and {quoted(value)})",
                    f"{RESTORE_LOG}: it logs {key} once",
                )
            )
    return Logged(values, lines), problems


def summary_fields(text: str) -> dict[str, tuple[int, str]]:
    """``name : value`` lines of mlperf_log_summary.txt: the first line and value of each."""
    out: dict[str, tuple[int, str]] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        name, sep, value = line.partition(":")
        if sep and name.strip():
            out.setdefault(" ".join(name.split()), (n, value.strip()))
    return out


def timestamp(text: str) -> datetime.datetime | None:
    try:
        return datetime.datetime.strptime(text.strip(), SPL_TIME)
    except ValueError:
        return None


def _not_a_sample(shown: str, number: int, why: str = "") -> Problem:
    return Problem(
        shown,
        "",
        "mlperf.bad-power-line",
        f"line {number}: " + (why or "not a power sample (Time,<timestamp>,Watts,<W>,...)"),
        "restore spl.txt as the power analyzer wrote it",
    )


def average_power(
    spl: str, begin: datetime.datetime, end: datetime.datetime, shown: str
) -> tuple[float, int] | Problem:
    """Mean Watts of the spl.txt samples within [begin, end], and how many there are."""
    total, n = 0.0, 0
    for line_number, line in enumerate(spl.splitlines(), start=1):
        fields = line.split(",")
        if len(fields) < 4 or fields[0] != "Time":
            if line.strip():
                return _not_a_sample(shown, line_number)
            continue
        stamp = timestamp(fields[1])
        if stamp is None:
            return _not_a_sample(shown, line_number)
        if not begin <= stamp <= end:
            continue
        watts = number(fields[3]) if fields[2] == "Watts" else "no Watts field"
        if isinstance(watts, str) or watts < 0:
            why = watts if isinstance(watts, str) else f"{quoted(watts)} W is negative"
            return _not_a_sample(
                shown, line_number, f"the power window holds a sample with no valid Watts: {why}"
            )
        total += watts
        n += 1
    if n == 0:
        return Problem(
            shown,
            "",
            "mlperf.empty-power-window",
            f"no sample lies in the power window {begin:%Y-%m-%d %H:%M:%S} – {end:%H:%M:%S}",
            "this spl.txt belongs to another run: restore the one recorded with the logs",
        )
    return total / n, n


# The summary's latency fields, ns: (field, name in the result, ms).
_LATENCIES = (
    ("99.00 percentile first token latency (ns)", "ttft_p99_ms"),
    ("99.00 percentile time to output token (ns)", "tpot_p99_ms"),
    ("ttft_latency (ns)", "ttft_limit_ms"),
    ("tpot_latency (ns)", "tpot_limit_ms"),
)
_QUERY_LATENCIES = (
    ("99.00 percentile latency (ns)", "query_p99_ms"),
    ("target_latency (ns)", "query_limit_ms"),
)


def server_latency(
    fields: dict[str, tuple[int, str]], shown: str
) -> tuple[dict[str, float], list[Problem]]:
    """The p99 latencies and the constraints of a Server run, ms (those the summary has);
    a value that is not a whole number of ns is a problem at its line."""
    got: dict[str, float] = {}
    problems = []
    token = "ttft_latency (ns)" in fields  # else a sample workload: the whole query's
    for field, name in _LATENCIES + (() if token else _QUERY_LATENCIES):
        if field not in fields:
            continue
        line, text = fields[field]
        value = whole(text)
        if isinstance(value, str):
            problems.append(
                Problem(
                    shown,
                    "",
                    "mlperf.bad-summary-value",
                    f"line {line}: {field}: {value}",
                    "restore mlperf_log_summary.txt as the benchmark wrote it",
                )
            )
        else:
            got[name] = value / 1e6
    return got, problems
