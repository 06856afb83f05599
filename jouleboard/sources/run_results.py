"""Streaming readers of a run's results.json and prometheus.json (ML.ENERGY Benchmark v3).

results.json can hold hundreds of MB of per-request prompt and output text, so it is read
as a stream of ijson events in one pass: top-level scalars are picked up wherever they sit,
each request's gaps are smoothed when the request ends (kept only if it succeeded), and
text is never kept. Problems carry a JSON pointer into the file they are about.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ijson  # type: ignore[import-untyped]

from jouleboard import metrics
from jouleboard.problems import Problem, pointer
from jouleboard.sources.itl import ItlStats, itl_stats, smooth_itl

BATCH_METRIC = "vllm:num_requests_running"
MAX_REQUEST_PROBLEMS = 5  # per file: one bad field in every request should not print a million


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


_REQUIRED = {"model_id": "string", "gpu_model": "string", "num_gpus": "integer",
             "max_num_seqs": "integer", "completed": "integer", "total_output_tokens": "number",
             "steady_state_duration": "number", "steady_state_energy": "number"}
_ENERGY_PER_TOKEN = {"steady_state_energy_per_token": "number",  # or the next one
                     "steady_state_output_tokens": "number"}
_TOP_FIELDS = _REQUIRED | _ENERGY_PER_TOKEN | {"date": "string"}
_ITL_ITEM, _REQUEST, _SUCCESS, _ITL = ("results.item.itl.item", "results.item",
                                       "results.item.success", "results.item.itl")
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
        self.itl_s = array("d")
        self.success = None

    def problem(self, where: str, rule: str, message: str, hint: str) -> None:
        if len(self.problems) < MAX_REQUEST_PROBLEMS:
            self.problems.append(Problem(self.shown, where, rule, message, hint))
        else:
            self.unreported += 1

    def finish(self) -> None:
        here = pointer("results", self.index)
        if self.success is None:
            self.problem(here + "/success", "run.missing-field", "request has no success flag",
                         "each request needs \"success\": true or false")
        elif not self.success:
            self.failed += 1
        elif self.itl_s and min(self.itl_s) < 0:
            self.problem(here + "/itl", "run.bad-itl", "negative inter-token gap",
                         "gaps are seconds since the previous token, never negative")
        else:
            self.successful += 1
            self.gaps_s.extend(smooth_itl(self.itl_s))

    def all_problems(self) -> list[Problem]:
        if not self.unreported:
            return self.problems
        return [*self.problems, Problem(self.shown, "/results", "run.more-problems",
                                        f"{self.unreported} more problem(s) in requests",
                                        "fix the ones above; the rest are likely alike")]


def _stream(events: Iterable[tuple[str, str, Any]], requests: _Requests
            ) -> tuple[dict[str, tuple[str, Any]], str | None]:
    """One pass over results.json events: top-level fields (first event of each wanted key)
    and the event that opened ``results``; requests are tallied as they pass."""
    top: dict[str, tuple[str, Any]] = {}
    results_event: str | None = None
    append_gap = requests.itl_s.append  # hot loop: one lookup per request, not per token
    for prefix, event, value in events:
        if prefix == _ITL_ITEM:  # most events: one per generated token
            if event == "number":
                append_gap(value)
            else:
                requests.problem(pointer("results", requests.index, "itl", len(requests.itl_s)),
                                 "run.wrong-type", f"inter-token gap is a {event}, not a number",
                                 "itl holds one number (seconds) per generated token")
        elif prefix == _REQUEST:
            if event == "start_map":
                requests.start()
                append_gap = requests.itl_s.append
            elif event == "end_map":
                requests.finish()
            elif event in _SCALAR_EVENTS or event == "start_array":
                requests.index += 1
                requests.problem(pointer("results", requests.index), "run.wrong-type",
                                 f"request is a {event.removeprefix('start_')}, not an object",
                                 "results holds one object per request")
        elif prefix == _SUCCESS:
            if event == "boolean":
                requests.success = value
            else:
                requests.problem(pointer("results", requests.index, "success"), "run.wrong-type",
                                 f"success is a {event}, not true or false", "use true or false")
        elif prefix == _ITL and event in _NOT_A_LIST:
            requests.problem(pointer("results", requests.index, "itl"), "run.wrong-type",
                             "itl is not a list", "itl lists one gap (s) per generated token")
        elif prefix == "results":
            results_event = results_event or event
        elif prefix in _TOP_FIELDS:
            top.setdefault(prefix, (event, value))
        elif prefix == "" and event not in ("start_map", "map_key", "end_map"):
            top.setdefault("", (event, value))
    return top, results_event


def _top_value(top: dict[str, tuple[str, Any]], name: str, shown: str,
               problems: list[Problem]) -> Any:
    """The value of top-level field ``name`` of its declared type, else None + a problem."""
    want = _TOP_FIELDS[name]
    if name not in top:
        problems.append(Problem(shown, pointer(name), "run.missing-field", f"{name} is missing",
                                "results.json of the ML.ENERGY Benchmark v3 has it; "
                                "use the file the benchmark wrote"))
        return None
    event, value = top[name]
    if want == "string" and event == "string":
        return value
    if want == "number" and event == "number":
        return float(value)
    if want == "integer" and event == "number" and float(value).is_integer():
        return int(value)
    problems.append(Problem(shown, pointer(name), "run.wrong-type",
                            f"{name} is a {event.removeprefix('start_')}, not a {want}",
                            f"give {name} as a JSON {want}"))
    return None


def read_results(path: Path, shown: str) -> tuple[RunResults | None, list[Problem]]:
    """Stream results.json: top-level scalars, and the smoothed gaps of successful requests."""
    requests = _Requests(shown)
    try:
        with path.open("rb") as f:
            top, results_event = _stream(ijson.parse(f, use_float=True), requests)
    except OSError as e:
        return None, [Problem(shown, "", "file.unreadable", e.strerror or str(e),
                              "check the path and permissions")]
    except (ijson.JSONError, UnicodeDecodeError) as e:
        return None, [Problem(shown, "", "run.json-syntax",
                              "not valid JSON: " + " ".join(str(e).split())[:300],
                              "use the file the benchmark wrote; NaN and Infinity are not JSON")]
    if "" in top:
        return None, [Problem(shown, "", "run.wrong-type", "results.json is not a JSON object",
                              "results.json holds one object")]
    problems = requests.all_problems()
    if results_event is None:
        problems.append(Problem(shown, "/results", "run.missing-field", "results is missing",
                                "results lists one object per request"))
    elif results_event != "start_array":
        problems.append(Problem(shown, "/results", "run.wrong-type", "results is not a list",
                                "results lists one object per request"))
    values = {name: _top_value(top, name, shown, problems) for name in _REQUIRED}
    energy_per_token = _energy_per_token(top, values["steady_state_energy"], shown, problems)
    if problems:
        return None, problems
    gaps_s = requests.gaps_s
    return RunResults(
        model_id=values["model_id"], gpu_model=values["gpu_model"],
        num_gpus=values["num_gpus"], max_num_seqs=values["max_num_seqs"],
        completed=values["completed"], total_output_tokens=values["total_output_tokens"],
        steady_state_duration_s=values["steady_state_duration"],
        steady_state_energy_joules=values["steady_state_energy"],
        energy_per_token_joules=energy_per_token,
        successful_requests=requests.successful, failed_requests=requests.failed,
        itl=itl_stats(gaps_s) if gaps_s else None,
        date=top["date"][1] if top.get("date", ("", None))[0] == "string" else None), []


def _energy_per_token(top: dict[str, tuple[str, Any]], energy_joules: float | None, shown: str,
                      problems: list[Problem]) -> float:
    """steady_state_energy_per_token, else steady-state energy / steady-state output tokens.
    (total_output_tokens counts the whole benchmark, not the steady window: not usable.)"""
    if "steady_state_energy_per_token" in top or "steady_state_output_tokens" not in top:
        value = _top_value(top, "steady_state_energy_per_token", shown, problems)
        return 0.0 if value is None else float(value)
    tokens = _top_value(top, "steady_state_output_tokens", shown, problems)
    if tokens is None or energy_joules is None or tokens <= 0:
        return 0.0  # a problem is reported, or the run is unstable (no energy per token)
    return metrics.energy_per_token(energy_joules, tokens)


def read_avg_batch_size(path: Path, shown: str) -> tuple[float | None, list[Problem]]:
    """steady_state_stats."vllm:num_requests_running" of prometheus.json (streamed)."""
    target, where = f"steady_state_stats.{BATCH_METRIC}", pointer("steady_state_stats",
                                                                   BATCH_METRIC)
    try:
        with path.open("rb") as f:
            for prefix, event, value in ijson.parse(f, use_float=True):
                if prefix != target:
                    continue
                if event == "number" and value >= 0:
                    return float(value), []
                return None, [Problem(shown, where, "run.wrong-type",
                                      f"average batch size is a {event}, not a number >= 0",
                                      "use the prometheus.json the benchmark wrote")]
    except OSError as e:
        return None, [Problem(shown, "", "file.unreadable", e.strerror or str(e),
                              "check the path and permissions")]
    except (ijson.JSONError, UnicodeDecodeError) as e:
        return None, [Problem(shown, "", "run.json-syntax",
                              "not valid JSON: " + " ".join(str(e).split())[:300],
                              "use the prometheus.json the benchmark wrote")]
    return None, []  # as the toolkit: no average batch size, the utilisation is not checked


