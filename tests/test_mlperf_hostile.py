"""import-mlperf against hostile variations of the real results (issue 41 items 6 and 9):
every number read by one strict rule, node and accelerator counts as positive whole
numbers (in JSON or as decimal ASCII text), a key the importer reads logged twice with two
values refused with both lines, a bad value quoted briefly, and the submitter one safe path
segment. Before, a 401-digit throughput was an OverflowError traceback, number_of_nodes
"²" a ValueError traceback, a line of 100,000 "[" a RecursionError; "٣", "２" and 0 nodes
and Watts written 1_0_4_0_0 were read without a word, "8" accelerators per node refused.

Each case breaks one copy of one real result (the fixture's SR680a llama2-70b-99 Server)
and imports it in this process; one command-line run imports several broken results at
once, under a timeout, its memory measured.
"""

from __future__ import annotations

import datetime
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from jouleboard.config.registry import load_registry
from jouleboard.core.problems import Problem, ValidationFailed
from jouleboard.importers.mlperf import plan_import
from jouleboard.importers.mlperf_logs import SPL_TIME
from jouleboard.kinds import task_kind_order
from tests.measured import run_measured
from tests.test_mlperf_import import unpacked

REPO = Path(__file__).resolve().parents[1]
SUMMARY = REPO / "tests" / "fixtures" / "mlperf" / "summary_results-v5.1-power.json"
SUBMISSION = Path("inference_results_v5.1/closed/Lenovo")
SYSTEM = "SR680a_V3_B200SXMx8_TRT"
RESULT = Path("results") / SYSTEM / "llama2-70b-99" / "Server"
MEMORY_BOUND = 512 * 1024 * 1024  # bytes: issue 41's bound on the largest input's peak


@pytest.fixture(scope="module")
def official(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return unpacked(tmp_path_factory.mktemp("mlperf"))


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> object:
    data = tmp_path_factory.mktemp("data") / "data"
    shutil.copytree(REPO / "jouleboard" / "skeleton" / "data", data)
    found, problems = load_registry(data, task_kind_order())
    assert found is not None, problems
    return found


def one_result(official: Path, root: Path, folder: Path = RESULT) -> Path:
    """The submission folder with one result of the fixture and its system's file."""
    submission = root / SUBMISSION
    (submission / "systems").mkdir(parents=True)
    shutil.copy(official / SUBMISSION / "systems" / f"{SYSTEM}.json", submission / "systems")
    shutil.copytree(official / SUBMISSION / folder, submission / folder)
    return submission


def _edit_system(submission: Path, **values: object) -> None:
    path = submission / "systems" / f"{SYSTEM}.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc.update(values)
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")


def _edit_lines(path: Path, edit: Callable[[list[str]], list[str]]) -> None:
    path.write_text("\n".join(edit(path.read_text(encoding="utf-8").splitlines())) + "\n")


def _mllog(key: str, value: object) -> str:
    return ":::MLLOG " + json.dumps({"key": key, "value": value, "time_ms": 1.0})


def _replace_value(lines: list[str], key: str, raw: str) -> list[str]:
    """The MLLOG line of ``key`` with its value written as ``raw`` (JSON text)."""
    pattern = re.compile(r'("key": "' + re.escape(key) + r'", "value": )[^,]+')
    changed = [pattern.sub(lambda m: m.group(1) + raw, line) for line in lines]
    assert changed != lines, key
    return changed


def _watts(lines: list[str], raw: str) -> list[str]:
    """spl.txt with the Watts of every sample written as ``raw``."""
    return [re.sub(r"^(Time,[^,]*,Watts,)[^,]*", lambda m: m.group(1) + raw, x) for x in lines]


def _power_begin_twice(lines: list[str]) -> list[str]:
    """An earlier power_begin line, an hour before the one the benchmark wrote."""
    [index] = [i for i, x in enumerate(lines) if '"key": "power_begin"' in x]
    value = json.loads(lines[index][len(":::MLLOG ") :])["value"]
    stamp = datetime.datetime.strptime(value, SPL_TIME) - datetime.timedelta(hours=1)
    earlier = stamp.strftime(SPL_TIME)[:-3]  # milliseconds, as the benchmark writes them
    return [*lines[:10], _mllog("power_begin", earlier), *lines[10:]]


DETAIL = Path("performance/run_1/mlperf_log_detail.txt")  # in a result folder
SPL = Path("performance/run_1/spl.txt")
SUMMARY_TXT = Path("performance/run_1/mlperf_log_summary.txt")
SYSTEM_FILE = Path("../../../../systems") / f"{SYSTEM}.json"
AS_WRITTEN = Path("as-written")  # the problem names the result and the file it would be
TOO_DEEP = "[" * 100_000


def _in(result: Path, name: Path, edit: Callable[[list[str]], list[str]]) -> None:
    _edit_lines(result / name, edit)


def _system_values(**values: object) -> Callable[[Path], None]:
    return lambda result: _edit_system(result.parents[3], **values)


def _ns(lines: list[str]) -> list[str]:
    return [re.sub(r"^(ttft_latency \(ns\)\s*:\s*)\d+", r"\g<1>2_000_000_000", x) for x in lines]


# Each case: (how it breaks a result folder, the file named, JSON pointer, rule, words).
CASES: dict[str, tuple[Callable[[Path], None], Path, str, str, str]] = {
    "throughput-401-digits": (
        lambda r: _in(
            r, DETAIL, lambda x: _replace_value(x, "result_completed_tokens_per_second", "9" * 401)
        ),
        DETAIL,
        "",
        "mlperf.bad-log-line",
        "has more than 40 characters",
    ),
    "line-of-100000-brackets": (
        lambda r: _in(r, DETAIL, lambda x: [*x[:5], ":::MLLOG " + TOO_DEEP, *x[5:]]),
        DETAIL,
        "",
        "mlperf.bad-log-line",
        "line 6: not an MLLOG entry with a key and a value: nesting is too deep",
    ),
    "power-begin-twice": (
        lambda r: _in(r, DETAIL, _power_begin_twice),
        DETAIL,
        "",
        "mlperf.repeated-log-key",
        "lines 11 and 80 give power_begin different values "
        "('07-28-2025 03:22:26.087' and '07-28-2025 04:22:26.087')",
    ),
    **{
        f"nodes-{name}": (
            _system_values(number_of_nodes=value),
            SYSTEM_FILE,
            "/number_of_nodes",
            "mlperf.bad-system",
            f"number_of_nodes is {shown}, not a positive whole number",
        )
        for name, value, shown in (
            ("superscript-two", "²", "'²'"),
            ("arabic-indic-three", "٣", "'٣'"),
            ("fullwidth-two", "２", "'２'"),
            ("zero", 0, "0"),
            ("negative", -1, "-1"),
            ("fraction", 1.5, "1.500"),
            ("true", True, "True"),
        )
    },
    "accelerators-fullwidth": (
        _system_values(accelerators_per_node="８"),
        SYSTEM_FILE,
        "/accelerators_per_node",
        "mlperf.bad-system",
        "accelerators_per_node is '８', not a positive whole number",
    ),
    **{
        f"watts-{name}": (
            lambda r, raw=raw: _in(r, SPL, lambda x: _watts(x, raw)),  # type: ignore[misc]
            SPL,
            "",
            "mlperf.bad-power-line",
            shown,
        )
        for name, raw, shown in (
            ("underscores", "1_0_4_0_0", "'1_0_4_0_0' is not a number"),
            ("arabic-indic", "١٠٤٠٠", "'١٠٤٠٠' is not a number"),
            ("nan", "nan", "'nan' is not a number"),
            ("two-dots", "10.40.0", "'10.40.0' is not a number"),
            ("1e400", "1e400", "'1e400' is too large for a number"),
            ("45-digits", "1" * 45, "is longer than 40 characters"),
        )
    },
    "watts-1e300": (
        lambda r: _in(r, SPL, lambda x: _watts(x, "1e300")),
        AS_WRITTEN,
        "/avg_power_watts",
        "mlperf.power-out-of-range",
        "1.000e+300 W for 8 accelerators is 1.250e+299 W each",
    ),
    "latency-ns-with-underscores": (
        lambda r: _in(r, SUMMARY_TXT, _ns),
        SUMMARY_TXT,
        "",
        "mlperf.bad-summary-value",
        "ttft_latency (ns): '2_000_000_000' is not a whole number",
    ),
}


def _import(paths: list[Path], registry: object) -> list[Problem]:
    with pytest.raises(ValidationFailed) as failed:
        plan_import(paths, registry)  # type: ignore[arg-type]
    return failed.value.problems


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_value_is_one_located_problem(
    case: str, official: Path, registry: object, tmp_path: Path
) -> None:
    breaks, where, at, rule, words = CASES[case]
    submission = one_result(official, tmp_path)
    breaks(submission / RESULT)
    [problem] = _import([submission], registry)
    assert (problem.pointer, problem.rule) == (at, rule), problem
    if where == AS_WRITTEN:
        assert problem.file == (
            f"inference_results_v5.1/closed/Lenovo/{RESULT.as_posix()} (as mlperf/v5.1/Lenovo/"
            f"{SYSTEM}/llama2-70b-99/Server.json)"
        )
    else:
        assert problem.file == str((submission / RESULT / where).resolve()), problem.file
    assert words in problem.message, problem.message
    assert len(problem.message) < 300 and "\n" not in problem.message


def _system_of(submission: Path, registry: object) -> dict[str, object]:
    plan, _ = plan_import([submission], registry)  # type: ignore[arg-type]
    [text] = plan.files.values()
    system: dict[str, object] = json.loads(text)["system"]
    return system


@pytest.mark.parametrize(
    ("values", "nodes", "accelerators"),
    [
        ({}, 1, 8),  # as submitted: 1 node of 8
        ({"number_of_nodes": "2"}, 2, 16),  # before: 16 accelerators published with nodes 1
        ({"number_of_nodes": 2.0}, 2, 16),
        ({"accelerators_per_node": "8"}, 1, 8),  # before: refused, "greater than 0"
        ({"number_of_nodes": "2", "accelerators_per_node": "4"}, 2, 8),
    ],
)
def test_counts_in_json_or_decimal_text_are_read_alike(
    values: dict[str, object],
    nodes: int,
    accelerators: int,
    official: Path,
    registry: object,
    tmp_path: Path,
) -> None:
    submission = one_result(official, tmp_path)
    _edit_system(submission, **values)
    system = _system_of(submission, registry)
    assert (system["nodes"], system["accelerators"]) == (nodes, accelerators)


@pytest.mark.parametrize(
    ("submitter", "words"),
    [("", "String should match pattern"), ("Evil/Nested", "String should match pattern")],
)
def test_a_submitter_that_is_not_one_safe_path_segment_is_refused(
    submitter: str, words: str, registry: object, tmp_path: Path
) -> None:
    """The summary's Submitter names the result's folder: "" wrote one folder higher,
    "Evil/Nested" nested two."""
    rows = json.loads(SUMMARY.read_text(encoding="utf-8"))
    rows[0]["Submitter"] = submitter
    summary = tmp_path / "summary_results.json"
    summary.write_text(json.dumps(rows), encoding="utf-8")
    problems = _import([summary], registry)
    assert [p.pointer for p in problems] == ["/submitter"], problems
    assert words in problems[0].message


def test_a_summary_row_whose_count_is_not_a_whole_number_is_located(
    registry: object, tmp_path: Path
) -> None:
    rows = json.loads(SUMMARY.read_text(encoding="utf-8"))
    rows[0]["Nodes"], rows[1]["a#"] = "٣", 0
    summary = tmp_path / "summary_results.json"
    summary.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    problems = _import([summary], registry)
    assert [(p.pointer, p.rule) for p in problems] == [
        ("/0/Nodes", "mlperf.bad-system"),
        ("/1/a#", "mlperf.bad-system"),
    ]


@pytest.mark.slow  # runs the command line
def test_the_command_line_reports_every_broken_result_in_one_line_each(
    official: Path, tmp_path: Path
) -> None:
    """Three results broken three ways (a 401-digit throughput, a line of 100,000 "[",
    two power_begin lines) in one import: three located lines, no traceback, nothing
    written."""
    submission = one_result(official, tmp_path)
    results = [
        RESULT,
        RESULT.parent / "Offline",
        RESULT.parent.parent / "llama2-70b-99.9" / "Server",
    ]
    for folder in results[1:]:
        shutil.copytree(official / SUBMISSION / folder, submission / folder)
    breaks = ("throughput-401-digits", "line-of-100000-brackets", "power-begin-twice")
    for case, folder in zip(breaks, results, strict=True):
        CASES[case][0](submission / folder)
    data = tmp_path / "data"
    shutil.copytree(REPO / "jouleboard" / "skeleton" / "data", data)
    done, peak = run_measured("import-mlperf", submission.parents[1], "--out", data)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    lines = [x for x in done.stderr.splitlines() if ": mlperf." in x]
    assert len(lines) == len(breaks), done.stderr
    assert not (data / "mlperf").exists()
    assert peak < MEMORY_BOUND, f"{peak / 1e6:.0f} MB"
