"""Streaming readers of a run's results.json and prometheus.json (ML.ENERGY Benchmark v3).

results.json can hold hundreds of MB of per-request prompt and output text, so it is read
as a stream of ijson events in one pass: top-level scalars are picked up wherever they sit,
each request's gaps are smoothed when the request ends (kept only if it succeeded), and
text is never kept. Problems carry a JSON pointer into the file they are about.

The stream is bounded so that time and memory grow with the file, not faster: the file is
checked (a regular file, not a link, at most its cap) before a byte is read; nesting deeper
than :data:`MAX_DEPTH` is refused as soon as it is met (ijson.parse builds a path string per
level for every event, which costs memory with the square of the depth, so paths are kept
here, one per open container); a single value of :data:`MAX_VALUE_BYTES` or more is refused
before the parser holds it (yajl rescans a value split over read buffers, which costs time
with its square); a key given twice in one object is refused, as the strict JSON rule of
measurement files refuses it (readers disagree on which value wins).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import ijson  # type: ignore[import-untyped]

from jouleboard.core import jsonio
from jouleboard.core.problems import Problem, pointer
from jouleboard.core.safe_read import FileRefused, open_regular
from jouleboard.core.shapes import Scalar
from jouleboard.importers.itl import ItlStats, itl_stats, smooth_itl
from jouleboard.importers.run_provenance import date_problem
from jouleboard.measure import metrics

BATCH_METRIC = "vllm:num_requests_running"
MAX_REQUEST_PROBLEMS = 5  # per file: one bad field in every request should not print a million
MAX_RESULTS_BYTES = 4 * 1024**3  # results.json: real runs with full prompt text stay far below
MAX_PROMETHEUS_BYTES = 1024**3  # prometheus.json: a text snapshot a second for hours fits
MAX_DEPTH = jsonio.MAX_DEPTH  # runs nest 4 levels deep; measurement files may nest this deep
READ_CHUNK_BYTES = 256 * 1024  # yajl rescans a value split over chunks: fewer, bigger
MAX_VALUE_BYTES = 16 * 1024 * 1024  # one string (a prompt, an output) or number
_MAX_QUIET_READS = MAX_VALUE_BYTES // READ_CHUNK_BYTES
_MAX_PATH_KEY = 200  # longer keys are no field this reader looks for


class RawJsonError(Exception):
    """Why a raw JSON file cannot be read on: a pointer into it, a rule, a message, a hint."""

    def __init__(self, where: str, rule: str, message: str, hint: str) -> None:
        super().__init__(where, rule, message, hint)
        self.where, self.rule, self.message, self.hint = where, rule, message, hint


class _ValueTooLong(Exception):
    pass


class _Chunks:
    """The file, read in chunks, refusing a run of chunks in which no JSON event completes
    (a value, or a blank stretch, of :data:`MAX_VALUE_BYTES` or more)."""

    def __init__(self, f: BinaryIO) -> None:
        self.f = f
        self.quiet_reads = 0  # reads since the last event: reset by the event loop

    def read(self, size: int) -> bytes:
        self.quiet_reads += 1
        if self.quiet_reads > _MAX_QUIET_READS:
            raise _ValueTooLong
        return self.f.read(size)


def raw_events(
    f: BinaryIO, numbers: tuple[str, Callable[[float], object]] | None = None
) -> Iterator[tuple[str, str, Scalar]]:
    """ijson.parse's ``(prefix, event, value)`` events (map keys left out) of a raw JSON
    file, refusing (:class:`RawJsonError`) nesting deeper than :data:`MAX_DEPTH`, a key
    twice in one object, a value of :data:`MAX_VALUE_BYTES` or more, and invalid JSON.

    ``numbers``: (an array item prefix, a function): each number there is handed to the
    function instead of being yielded (one per generated token: the hot path)."""
    sink_prefix, sink = numbers or ("\0", _no_sink)
    chunks = _Chunks(f)
    # The open container's own prefix, keys seen (None: an array) and current key or index;
    # those of the containers around it wait on the stack.
    stack: list[tuple[str, set[str] | None, str | int]] = []
    own: str = ""
    keys: set[str] | None = None
    at: str | int = 0  # no container open: at the top
    prefix = ""  # prefix of the next value
    try:
        for event, value in ijson.basic_parse(chunks, buf_size=READ_CHUNK_BYTES, use_float=True):
            chunks.quiet_reads = 0
            if prefix == sink_prefix and event == "number":
                at += 1  # type: ignore[operator]  # the sink's prefix is an array's items
                sink(value)
                continue
            if event == "map_key":
                assert keys is not None
                if value in keys:
                    raise RawJsonError(
                        _pointer(stack, value),
                        "json.duplicate-key",
                        f"key {value[:80]!r} appears more than once",
                        "keep one entry; JSON readers disagree on which wins",
                    )
                keys.add(value)
                at = value
                name = value if len(value) <= _MAX_PATH_KEY else "\0long-key"
                prefix = f"{own}.{name}" if own else name
                continue
            if event == "end_map" or event == "end_array":
                prefix = own
                own, keys, at = stack.pop()
                yield prefix, event, None
                continue
            if keys is None and stack:
                at += 1  # type: ignore[operator]  # an array's index
            yield prefix, event, value
            if event == "start_map" or event == "start_array":
                if len(stack) >= MAX_DEPTH:
                    raise RawJsonError(
                        _pointer(stack, at),
                        "json.too-deep",
                        f"nesting deeper than {MAX_DEPTH} levels",
                        "raw run files nest a few levels; use the file the benchmark wrote",
                    )
                stack.append((own, keys, at))
                own = prefix
                if event == "start_map":
                    keys, at = set(), ""
                else:
                    keys, at = None, -1
                    prefix = f"{prefix}.item" if prefix else "item"
    except _ValueTooLong:
        raise RawJsonError(
            _pointer(stack, at),
            "json.value-too-long",
            f"a value (or blank stretch) of {MAX_VALUE_BYTES:,} bytes or more after this point",
            "use the file the benchmark wrote; no prompt or output is that long",
        ) from None
    except (ijson.JSONError, UnicodeDecodeError, ValueError) as e:
        raise RawJsonError(
            "",
            "run.json-syntax",
            "not valid JSON: " + " ".join(str(e).split())[:300],
            "use the file the benchmark wrote; NaN and Infinity are not JSON",
        ) from None


def _no_sink(value: float) -> None:
    raise AssertionError("no prefix matches the sink of no numbers")


def _pointer(stack: list[tuple[str, set[str] | None, str | int]], *last: str | int) -> str:
    """The JSON pointer of the current place: the key or index in each open container
    (the outermost entry of ``stack`` is the top level, which has none)."""
    return pointer(*(entry[2] for entry in stack[1:]), *last) if stack else ""


def _refused(shown: str, refused: FileRefused) -> Problem:
    return Problem(shown, "", refused.rule, refused.message, refused.hint)


@dataclass(frozen=True, slots=True)
class RunResults:
    """What results.json reduces to (no per-request data is kept)."""

    model_id: str
    gpu_model: str
    num_gpus: int
    max_num_seqs: int
    completed: int
    total_output_tokens: float
    steady_state_duration_s: float
    steady_state_energy_joules: float
    energy_per_token_joules: float
    successful_requests: int
    failed_requests: int
    itl: ItlStats | None  # None: no successful request had a gap
    date: str | None = None  # results.json "date" as written (the benchmark client's clock)


_REQUIRED = {
    "model_id": "string",
    "gpu_model": "string",
    "num_gpus": "integer",
    "max_num_seqs": "integer",
    "completed": "integer",
    "total_output_tokens": "number",
    "steady_state_duration": "number",
    "steady_state_energy": "number",
}
_ENERGY_PER_TOKEN = {
    "steady_state_energy_per_token": "number",  # or the next one
    "steady_state_output_tokens": "number",
}
_TOP_FIELDS = _REQUIRED | _ENERGY_PER_TOKEN | {"date": "string"}
_ITL_ITEM, _REQUEST, _SUCCESS, _ITL = (
    "results.item.itl.item",
    "results.item",
    "results.item.success",
    "results.item.itl",
)
_SCALAR_EVENTS = ("number", "string", "boolean", "null")
_NOT_A_LIST = (*_SCALAR_EVENTS, "start_map")


class _Requests:
    """Tally of results[] while it streams past: gaps of successful requests, never text."""

    def __init__(self, shown: str) -> None:
        self.shown = shown
        self.gaps_s = array("d")
        self.successful = self.failed = 0
        self.problems: list[Problem] = []
        self.unreported = 0
        self.index = -1
        self.itl_s = array("d")
        self.success: bool | None = None

    def start(self) -> None:
        self.index += 1
        del self.itl_s[:]  # emptied, not replaced: the stream appends to this very array
        self.success = None

    def problem(self, where: str, rule: str, message: str, hint: str) -> None:
        if len(self.problems) < MAX_REQUEST_PROBLEMS:
            self.problems.append(Problem(self.shown, where, rule, message, hint))
        else:
            self.unreported += 1

    def finish(self) -> None:
        here = pointer("results", self.index)
        if self.success is None:
            self.problem(
                here + "/success",
                "run.missing-field",
                "request has no success flag",
                'each request needs "success": true or false',
            )
        elif not self.success:
            self.failed += 1
        elif self.itl_s and min(self.itl_s) < 0:
            self.problem(
                here + "/itl",
                "run.bad-itl",
                "negative inter-token gap",
                "gaps are seconds since the previous token, never negative",
            )
        else:
            self.successful += 1
            self.gaps_s.extend(smooth_itl(self.itl_s))

    def all_problems(self) -> list[Problem]:
        if not self.unreported:
            return self.problems
        return [
            *self.problems,
            Problem(
                self.shown,
                "/results",
                "run.more-problems",
                f"{self.unreported} more problem(s) in requests",
                "fix the ones above; the rest are likely alike",
            ),
        ]


def _stream(
    events: Iterable[tuple[str, str, Scalar]], requests: _Requests
) -> tuple[dict[str, tuple[str, Scalar]], str | None]:
    """One pass over results.json events: top-level fields (first event of each wanted key)
    and the event that opened ``results``; requests are tallied as they pass."""
    top: dict[str, tuple[str, Scalar]] = {}
    results_event: str | None = None
    for prefix, event, value in events:
        if prefix == _ITL_ITEM:  # numbers went to requests.itl_s: anything else is wrong
            requests.problem(
                pointer("results", requests.index, "itl", len(requests.itl_s)),
                "run.wrong-type",
                f"inter-token gap is a {event}, not a number",
                "itl holds one number (seconds) per generated token",
            )
        elif prefix == _REQUEST:
            if event == "start_map":
                requests.start()
            elif event == "end_map":
                requests.finish()
            elif event in _SCALAR_EVENTS or event == "start_array":
                requests.index += 1
                requests.problem(
                    pointer("results", requests.index),
                    "run.wrong-type",
                    f"request is a {event.removeprefix('start_')}, not an object",
                    "results holds one object per request",
                )
        elif prefix == _SUCCESS:
            if event == "boolean" and isinstance(value, bool):
                requests.success = value
            else:
                requests.problem(
                    pointer("results", requests.index, "success"),
                    "run.wrong-type",
                    f"success is a {event}, not true or false",
                    "use true or false",
                )
        elif prefix == _ITL and event in _NOT_A_LIST:
            requests.problem(
                pointer("results", requests.index, "itl"),
                "run.wrong-type",
                "itl is not a list",
                "itl lists one gap (s) per generated token",
            )
        elif prefix == "results":
            results_event = results_event or event
        elif prefix in _TOP_FIELDS:
            top.setdefault(prefix, (event, value))
        elif prefix == "" and event not in ("start_map", "map_key", "end_map"):
            top.setdefault("", (event, value))
    return top, results_event


def _top_value(
    top: dict[str, tuple[str, Scalar]], name: str, shown: str, problems: list[Problem]
) -> Scalar:
    """The value of top-level field ``name`` of its declared type (a string, a float, an int),
    else None + a problem."""
    want = _TOP_FIELDS[name]
    if name not in top:
        problems.append(
            Problem(
                shown,
                pointer(name),
                "run.missing-field",
                f"{name} is missing",
                "results.json of the ML.ENERGY Benchmark v3 has it; "
                "use the file the benchmark wrote",
            )
        )
        return None
    event, value = top[name]
    if want == "string" and event == "string":
        return value
    number = value if event == "number" and isinstance(value, int | float) else None
    if want == "number" and number is not None:
        return float(number)
    if want == "integer" and number is not None and float(number).is_integer():
        return int(number)
    problems.append(
        Problem(
            shown,
            pointer(name),
            "run.wrong-type",
            f"{name} is a {event.removeprefix('start_')}, not a {want}",
            f"give {name} as a JSON {want}",
        )
    )
    return None


def _top_text(
    top: dict[str, tuple[str, Scalar]], name: str, shown: str, problems: list[Problem]
) -> str | None:
    value = _top_value(top, name, shown, problems)
    return value if isinstance(value, str) else None


def _top_number(
    top: dict[str, tuple[str, Scalar]], name: str, shown: str, problems: list[Problem]
) -> float | None:
    value = _top_value(top, name, shown, problems)
    return value if isinstance(value, float) else None


def _top_int(
    top: dict[str, tuple[str, Scalar]], name: str, shown: str, problems: list[Problem]
) -> int | None:
    value = _top_value(top, name, shown, problems)
    return value if isinstance(value, int) else None


def read_results(path: Path, shown: str) -> tuple[RunResults | None, list[Problem]]:
    """Stream results.json: top-level scalars, and the smoothed gaps of successful requests."""
    requests = _Requests(shown)
    try:
        with open_regular(path, MAX_RESULTS_BYTES) as f:
            events = raw_events(f, numbers=(_ITL_ITEM, requests.itl_s.append))
            top, results_event = _stream(events, requests)
    except FileRefused as e:
        return None, [_refused(shown, e)]
    except RawJsonError as e:
        return None, [Problem(shown, e.where, e.rule, e.message, e.hint)]
    except OSError as e:
        return None, [
            Problem(
                shown, "", "file.unreadable", e.strerror or str(e), "check the path and permissions"
            )
        ]
    if "" in top:
        return None, [
            Problem(
                shown,
                "",
                "run.wrong-type",
                "results.json is not a JSON object",
                "results.json holds one object",
            )
        ]
    problems = requests.all_problems()
    if results_event is None:
        problems.append(
            Problem(
                shown,
                "/results",
                "run.missing-field",
                "results is missing",
                "results lists one object per request",
            )
        )
    elif results_event != "start_array":
        problems.append(
            Problem(
                shown,
                "/results",
                "run.wrong-type",
                "results is not a list",
                "results lists one object per request",
            )
        )
    # In _REQUIRED's order, as each adds its problem.
    model_id = _top_text(top, "model_id", shown, problems)
    gpu_model = _top_text(top, "gpu_model", shown, problems)
    num_gpus = _top_int(top, "num_gpus", shown, problems)
    max_num_seqs = _top_int(top, "max_num_seqs", shown, problems)
    completed = _top_int(top, "completed", shown, problems)
    total_output_tokens = _top_number(top, "total_output_tokens", shown, problems)
    duration_s = _top_number(top, "steady_state_duration", shown, problems)
    energy_joules = _top_number(top, "steady_state_energy", shown, problems)
    counts = {
        "num_gpus": num_gpus,
        "max_num_seqs": max_num_seqs,
        "completed": completed,
        "total_output_tokens": total_output_tokens,
        "steady_state_duration": duration_s,
    }
    problems.extend(_out_of_range(counts, shown))
    energy_per_token = _energy_per_token(top, energy_joules, shown, problems)
    date: str | None = None
    if "date" in top:
        date = _top_text(top, "date", shown, problems)
        wrong = date_problem(date, shown, "/date") if date is not None else None
        if wrong is not None:
            problems.append(wrong)
    if (
        problems  # else every value is there (a missing one is a problem)
        or model_id is None
        or gpu_model is None
        or num_gpus is None
        or max_num_seqs is None
        or completed is None
        or total_output_tokens is None
        or duration_s is None
        or energy_joules is None
    ):
        return None, problems
    gaps_s = requests.gaps_s
    return RunResults(
        model_id=model_id,
        gpu_model=gpu_model,
        num_gpus=num_gpus,
        max_num_seqs=max_num_seqs,
        completed=completed,
        total_output_tokens=total_output_tokens,
        steady_state_duration_s=duration_s,
        steady_state_energy_joules=energy_joules,
        energy_per_token_joules=energy_per_token,
        successful_requests=requests.successful,
        failed_requests=requests.failed,
        itl=itl_stats(gaps_s) if gaps_s else None,
        date=date,
    ), []


_AT_LEAST = {
    "completed": 0,
    "total_output_tokens": 0,
    "steady_state_duration": 0,
    "num_gpus": 1,
    "max_num_seqs": 1,
}


def _out_of_range(values: Mapping[str, float | None], shown: str) -> list[Problem]:
    """Counts and durations below what they can be (``completed: -5`` is not "no request
    succeeded", it is a broken file)."""
    return [
        Problem(
            shown,
            pointer(name),
            "run.bad-value",
            f"{name} is {value:g}, below {least}",
            "use the results.json the benchmark wrote; counts and durations are never negative",
        )
        for name, least in _AT_LEAST.items()
        if (value := values.get(name)) is not None and value < least
    ]


def _energy_per_token(
    top: dict[str, tuple[str, Scalar]],
    energy_joules: float | None,
    shown: str,
    problems: list[Problem],
) -> float:
    """steady_state_energy_per_token, else steady-state energy / steady-state output tokens.
    (total_output_tokens counts the whole benchmark, not the steady window: not usable.)"""
    if "steady_state_energy_per_token" in top or "steady_state_output_tokens" not in top:
        value = _top_number(top, "steady_state_energy_per_token", shown, problems)
        return 0.0 if value is None else value
    tokens = _top_number(top, "steady_state_output_tokens", shown, problems)
    if tokens is None or energy_joules is None or tokens <= 0:
        return 0.0  # a problem is reported, or the run is unstable (no energy per token)
    return metrics.energy_per_token(energy_joules, tokens)


def read_avg_batch_size(path: Path, shown: str) -> tuple[float | None, list[Problem]]:
    """steady_state_stats."vllm:num_requests_running" of prometheus.json (streamed to the
    end, so that a second copy of the field further on is refused, not ignored)."""
    target, where = (
        f"steady_state_stats.{BATCH_METRIC}",
        pointer("steady_state_stats", BATCH_METRIC),
    )
    found: tuple[str, Scalar] | None = None
    try:
        with open_regular(path, MAX_PROMETHEUS_BYTES) as f:
            for prefix, event, value in raw_events(f):
                if prefix == target and found is None:
                    found = (event, value)
    except FileRefused as e:
        return None, [_refused(shown, e)]
    except RawJsonError as e:
        return None, [
            Problem(
                shown, e.where, e.rule, e.message, e.hint.replace("the file", "the prometheus.json")
            )
        ]
    except OSError as e:
        return None, [
            Problem(
                shown, "", "file.unreadable", e.strerror or str(e), "check the path and permissions"
            )
        ]
    if found is None:
        return None, []  # as the toolkit: no average batch size, utilisation is not checked
    event, value = found
    if event == "number" and isinstance(value, int | float) and value >= 0:
        return float(value), []
    return None, [
        Problem(
            shown,
            where,
            "run.wrong-type",
            f"average batch size is a {event}, not a number >= 0",
            "use the prometheus.json the benchmark wrote",
        )
    ]
