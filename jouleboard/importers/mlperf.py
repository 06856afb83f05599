"""MLPerf Inference power results into a data folder (``jouleboard import-mlperf``).

Sources, any mix of them:
- the official results layout, ``inference_results_v<round>/<division>/<Submitter>/``
  (``systems/<system>.json``, ``results/<system>/<benchmark>/<Scenario>/``), given as the
  repository or any folder below it down to one result folder;
- a round's ``summary_results.json`` (MLCommons' own table): its rows with power.

From the logs (docs/mlperf.md, checked against the official figures):
- throughput: the MLLOG key ``result_tokens_per_second`` / ``result_completed_tokens_per_second``
  (token workloads, Offline / Server) or ``result_samples_per_second`` /
  ``result_completed_samples_per_sec`` of mlperf_log_detail.txt;
- average power: the mean ``Watts`` (the fourth field) of the spl.txt lines whose timestamp
  lies in [power_begin, power_end] of the MLLOG lines, both ends included;
- validity, p99 latencies and the Server constraints: mlperf_log_summary.txt;
- accuracy: accuracy/accuracy.txt; the system: systems/<system>.json.

A result that is not VALID, or has no power measurement, is skipped and the summary says
why; a malformed file stops the import with a located problem and nothing is written
(importers/contract.py). A result given both ways must agree (the summary adds its result ID).
"""

from __future__ import annotations

import ast
import datetime
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from jouleboard.config.registry import Registry
from jouleboard.config.schema import SCHEMA_VERSION
from jouleboard.core.jsonio import dumps_canonical, parse_strict
from jouleboard.core.problems import Problem, ValidationFailed, pointer, shown_path
from jouleboard.core.safe_read import FileRefused, read_capped
from jouleboard.core.schema_errors import problems_from
from jouleboard.core.shapes import JsonObject, json_object, text_field
from jouleboard.importers.contract import ImportPlan, same_source, write_plan
from jouleboard.importers.mlperf_logs import (
    RESTORE_LOG,
    SPL_TIME,
    Logged,
    average_power,
    count,
    mllog,
    quoted,
    server_latency,
    summary_fields,
    timestamp,
)
from jouleboard.kinds.mlperf import (
    MLPERF_DIR,
    SYSTEM_AC_INSTRUMENT,
    WORKLOADS,
    Result,
    check,
    workload_of,
)

IMPORTER = "import-mlperf"
DATASET = "MLPerf Inference"
LOG_CAP = 64 * 1024 * 1024  # spl.txt of a 40-minute run is ~600 kB; detail logs ~100 kB
SMALL_CAP = 4 * 1024 * 1024  # summaries, system descriptions, accuracy scores
REPO = re.compile(r"^inference_results_(v[0-9]{1,2}\.[0-9]{1,2})$")
# The licence each round's repository carries at its root (SPDX); NOASSERTION where it has none.
ROUND_LICENSES = {"v4.0": "Apache-2.0", "v4.1": "Apache-2.0", "v5.0": "Apache-2.0"}
RESULTS_URL = "https://github.com/mlcommons/inference_results_{round}/tree/main/{path}"
MATCH_TOLERANCE = 1e-9  # relative: the summary and the logs give the same figures


@dataclass(frozen=True)
class Skipped:
    where: str  # the result folder or summary row
    why: str


@dataclass
class Imported:
    written: tuple[str, ...] = ()
    skipped: list[Skipped] = field(default_factory=list)
    unchanged: int = 0
    changes: tuple[str, ...] = ()  # field by field, in the result files it replaced


# --- the raw layout --------------------------------------------------------------------------


@dataclass(frozen=True)
class Location:
    """Where a result folder sits in its results repository."""

    folder: Path
    round: str
    division: str
    submitter: str
    system: str
    benchmark: str
    scenario: str

    @property
    def path(self) -> str:
        """division/submitter/results/system/benchmark/scenario (MLCommons' "Location")."""
        return "/".join(
            (self.division, self.submitter, "results", self.system, self.benchmark, self.scenario)
        )

    @property
    def submitter_dir(self) -> Path:
        return self.folder.parents[3]


def locate(folder: Path) -> Location | Problem:
    """A result folder's place: .../inference_results_vX.Y/<division>/<Submitter>/results/
    <system>/<benchmark>/<Scenario>."""
    resolved = folder.resolve()  # "." inside a result folder has no parents to read
    parts = resolved.parts
    if len(parts) >= 8 and parts[-4] == "results" and (m := REPO.match(parts[-7])):
        return Location(resolved, m.group(1), parts[-6], parts[-5], *parts[-3:])
    return Problem(
        shown_path(folder),
        "",
        "mlperf.not-in-results-layout",
        "cannot tell this result's round, submitter and system: it is not inside "
        "inference_results_vX.Y/<division>/<Submitter>/results/<system>/<benchmark>/<Scenario>",
        "import from the results repository (or a folder below it) as MLCommons publishes it",
    )


def result_folders(root: Path) -> list[Path]:
    """Every result folder below ``root`` (``root`` itself included): a folder with
    performance/run_1/ (scenario folders of the official layout)."""
    if (root / "performance" / "run_1").is_dir():
        return [root]
    found = [
        p.parent.parent
        for p in root.rglob("run_1")
        if p.is_dir() and p.parent.name == "performance" and not p.is_symlink()
    ]
    return sorted(set(found))


def _read_text(path: Path, cap: int) -> tuple[str | None, Problem | None]:
    try:
        return read_capped(path, cap).decode("utf-8", errors="replace"), None
    except FileRefused as e:
        return None, Problem(shown_path(path), "", e.rule, e.message, e.hint)


def accuracy_text(text: str) -> str:
    """The scores of accuracy.txt in a line: ``rouge1 44.563, rouge2 22.1578, ...``."""
    for line in text.splitlines():
        start = line.find("{")
        if start < 0:
            continue
        try:
            scores = ast.literal_eval(line[start : line.rindex("}") + 1])
        except (ValueError, SyntaxError):
            continue
        if isinstance(scores, dict):
            kept = [
                f"{k} {v:g}"
                for k, v in scores.items()
                if isinstance(k, str)
                and isinstance(v, (int, float))
                and not k.startswith("gen_")
                and k != "tokens_per_sample"
            ]
            return ", ".join(kept)[:200]
    return ""


def _throughput_key(output: str, scenario: str) -> str:
    if output == "token":
        return (
            "result_tokens_per_second"
            if scenario == "Offline"
            else ("result_completed_tokens_per_second")
        )
    return (
        "result_samples_per_second"
        if scenario == "Offline"
        else ("result_completed_samples_per_sec")
    )


def host_text(cpu: str, count: object) -> str:
    """``2x Intel(R) Xeon(R) Platinum 8568Y+``; the CPU alone when the count is not given."""
    return f"{count}x {cpu}" if cpu and count else cpu


def system_fields(doc: JsonObject, gpus: Iterable[str], nodes: int, per_node: int) -> JsonObject:
    """The system part of a result from systems/<system>.json, whose counts are checked."""
    text = {k: str(v).strip() for k, v in doc.items() if isinstance(v, (str, int, float))}
    accelerator = text.get("accelerator_model_name", "")
    host = text.get("host_processor_model_name", "")
    count = text.get("host_processors_per_node", "")
    return {
        "name": text.get("system_name", ""),
        "accelerator": accelerator,
        "gpu_model": gpu_id(accelerator, gpus),
        "accelerators": per_node * nodes,
        "nodes": nodes,
        "host": host_text(host, count),
        "software": text.get("framework", ""),
        "power_settings": "; ".join(
            v for v in (text.get("hw_notes", ""), text.get("power_management", "")) if v
        ),
        "cooling": text.get("cooling", ""),
    }


def system_counts(doc: JsonObject, shown: str) -> tuple[int, int] | list[Problem]:
    """(nodes, accelerators per node) of systems/<system>.json: positive whole numbers
    (number_of_nodes 1 when not given), each located where it is not."""
    got: dict[str, int] = {}
    problems = []
    for name in ("number_of_nodes", "accelerators_per_node"):
        value = doc.get(name)
        if value is None and name == "number_of_nodes":
            got[name] = 1
            continue
        checked = count(value) if value is not None else "missing"
        if isinstance(checked, int):
            got[name] = checked
            continue
        problems.append(
            Problem(
                shown,
                pointer(name),
                "mlperf.bad-system",
                f"{name} is {checked}",
                "restore systems/<system>.json as submitted",
            )
        )
    return problems or (got["number_of_nodes"], got["accelerators_per_node"])


def gpu_id(accelerator: str, gpus: Iterable[str]) -> str | None:
    """The gpus.yaml id an accelerator name contains as a word: B200 in
    "NVIDIA B200-SXM-180GB" (None: not registered)."""
    words = set(re.split(r"[\s_-]+", accelerator))
    return next((g for g in sorted(gpus) if g in words), None)


# The MLLOG keys the importer reads: a detail log giving one of them twice, with two
# values, is refused (the first was silently used: 10,401 W became 9,699 W).
READ_KEYS = frozenset(
    {
        "result_validity",
        "power_begin",
        "power_end",
        "result_tokens_per_second",
        "result_completed_tokens_per_second",
        "result_samples_per_second",
        "result_completed_samples_per_sec",
        # Tokens a samples workload (gptj) inferred: what v4.1's summary reports for it.
        "result_inferred_tokens_per_second",
        "result_inferred_completed_tokens_per_second",
    }
)
INFERRED = {
    "Offline": "result_inferred_tokens_per_second",
    "Server": "result_inferred_completed_tokens_per_second",
}


def raw_result(loc: Location, gpus: Iterable[str]) -> JsonObject | Skipped | list[Problem]:
    """One result folder as a result document, a reason to skip it, or its problems."""
    run = loc.folder / "performance" / "run_1"
    where = f"{loc.round} {loc.path}"
    found = workload_of(loc.benchmark)
    if found is None:
        return Skipped(where, f"workload {loc.benchmark} is not one jouleboard ranks")
    summary_text, p1 = _read_text(run / "mlperf_log_summary.txt", SMALL_CAP)
    detail_text, p2 = _read_text(run / "mlperf_log_detail.txt", LOG_CAP)
    if summary_text is None or detail_text is None:
        return [p for p in (p1, p2) if p]
    fields = summary_fields(summary_text)
    log, problems = mllog(detail_text, shown_path(run / "mlperf_log_detail.txt"), READ_KEYS)
    if problems:
        return problems
    validity = log.values.get("result_validity") or fields.get("Result is", (0, ""))[1]
    if validity != "VALID":
        return Skipped(where, f"the result is {validity or 'not marked VALID'}")
    if "power_begin" not in log.values and not (run / "spl.txt").exists():
        return Skipped(where, "no power measurement (a performance-only result)")
    measured = _measured(log, run, _throughput_key(WORKLOADS[found[0]].output, loc.scenario))
    if isinstance(measured, list):
        return measured
    throughput, begin, end = measured
    spl_text, refused = _read_text(run / "spl.txt", LOG_CAP)
    if spl_text is None:
        assert refused is not None
        return [refused]
    power = average_power(spl_text, begin, end, shown_path(run / "spl.txt"))
    if isinstance(power, Problem):
        return [power]
    system = _system(loc, gpus)
    if isinstance(system, list):
        return system
    accuracy, _ = _read_text(loc.folder / "accuracy" / "accuracy.txt", SMALL_CAP)
    doc: JsonObject = {
        "round": loc.round,
        "division": loc.division,
        "availability": system.pop("availability"),
        "submitter": loc.submitter,
        "benchmark": loc.benchmark,
        "scenario": loc.scenario,
        "model_id": WORKLOADS[found[0]].model_id,
        "system": system,
        "throughput_per_sec": throughput,
        "avg_power_watts": power[0],
        "power_samples": power[1],
        "accuracy": accuracy_text(accuracy or ""),
        "result_url": RESULTS_URL.format(round=loc.round, path=loc.path),
        "date": begin.date().isoformat(),
        "source": f"inference_results_{loc.round}/{loc.path}",
    }
    inferred = log.values.get(INFERRED.get(loc.scenario, ""))
    if isinstance(inferred, int | float) and not isinstance(inferred, bool):
        doc["_inferred_tokens"] = float(inferred)  # matched against a summary in tokens
    if loc.scenario == "Server":
        latency, problems = server_latency(fields, shown_path(run / "mlperf_log_summary.txt"))
        if problems:
            return problems
        doc["latency"] = dict(latency)
    return doc


def _measured(
    log: Logged, run: Path, key: str
) -> tuple[float, datetime.datetime, datetime.datetime] | list[Problem]:
    """The throughput and the power window a detail log gives, or its problem."""
    shown = shown_path(run / "mlperf_log_detail.txt")
    missing = [k for k in ("power_begin", "power_end") if k not in log.values]
    logged = log.values.get(key)
    throughput = None if isinstance(logged, bool) or not isinstance(logged, int | float) else logged
    if throughput is None:
        missing.append(key)
    if missing or throughput is None:
        return [
            Problem(
                shown,
                "",
                "mlperf.missing-log-key",
                f"no MLLOG {' and no '.join(missing)}",
                "restore the log the benchmark wrote (a result with power logs power_begin, "
                "power_end and its throughput)",
            )
        ]
    begin = timestamp(str(log.values["power_begin"]))
    end = timestamp(str(log.values["power_end"]))
    if begin is None or end is None or end < begin:
        return [
            Problem(
                shown,
                "",
                "mlperf.bad-power-window",
                f"lines {log.lines['power_begin']} and {log.lines['power_end']}: power_begin "
                f"{quoted(log.values['power_begin'])} and power_end "
                f"{quoted(log.values['power_end'])} are not a window "
                f"({SPL_TIME.replace('%', '')})",
                RESTORE_LOG,
            )
        ]
    return float(throughput), begin, end


def _system(loc: Location, gpus: Iterable[str]) -> JsonObject | list[Problem]:
    """The system part of a result (with its availability) from systems/<system>.json."""
    path = loc.submitter_dir / "systems" / f"{loc.system}.json"
    text, refused = _read_text(path, SMALL_CAP)
    doc = parse_strict(text)[0] if text is not None else None
    if not isinstance(doc, dict):
        return [
            refused
            or Problem(
                shown_path(path),
                "",
                "mlperf.bad-system",
                "not a JSON object describing the system",
                "restore systems/<system>.json as submitted",
            )
        ]
    counts = system_counts(doc, shown_path(path))
    if isinstance(counts, list):
        return counts
    return {
        "id": loc.system,
        **system_fields(doc, gpus, *counts),
        "availability": str(doc.get("status", "")),
    }


# --- summary_results.json ------------------------------------------------------------------


def summary_rows(
    path: Path, gpus: Iterable[str]
) -> tuple[list[JsonObject], list[Skipped], list[Problem]]:
    """The result documents of a round's summary_results.json (rows with power)."""
    shown = shown_path(path)
    text, refused = _read_text(path, LOG_CAP)
    if text is None:
        assert refused is not None
        return [], [], [refused]
    rows, issues = parse_strict(text)
    if issues:
        return [], [], [Problem(shown, i.pointer, i.rule, i.message, i.hint) for i in issues]
    if not isinstance(rows, list):
        return [], [], [Problem(shown, "", "schema.wrong-type", "not a list of results", "")]
    docs: list[JsonObject] = []
    skipped: list[Skipped] = []
    problems: list[Problem] = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            problems.append(Problem(shown, pointer(i), "schema.wrong-type", "not an object", ""))
            continue
        where = f"{row.get('version', '?')} {row.get('Location', f'row {i}')}"
        if not row.get("has_power") or row.get("Power_Result") in (None, ""):
            skipped.append(Skipped(where, "no power measurement"))
            continue
        found = workload_of(str(row.get("Model", "")))
        if found is None:
            skipped.append(
                Skipped(where, f"workload {row.get('Model')} is not one jouleboard ranks")
            )
            continue
        if row.get("errors") or row.get("inferred"):
            skipped.append(Skipped(where, "MLCommons marks the row with errors or inferred"))
            continue
        unit = str(row.get("Performance_Units", ""))
        output = WORKLOADS[found[0]].output
        # v4.1 reports gptj (counted in samples) in the tokens it inferred: such a row can
        # lend its result ID to the logs of the same result, which give the samples.
        inferred = output != "token" and unit == "Tokens/s"
        if (output == "token") != (unit == "Tokens/s") and not inferred:
            problems.append(
                Problem(
                    shown,
                    pointer(i, "Performance_Units"),
                    "mlperf.wrong-unit",
                    f"{row.get('Model')} counts {output}s, but the row gives {unit!r}",
                    "check that the row is the workload's performance result",
                )
            )
            continue
        counts = _row_counts(row, shown, i)
        if isinstance(counts, list):
            problems += counts
            continue
        nodes, per_node = counts
        location = str(row.get("Location", ""))
        host = str(row.get("Processor", ""))
        processors = row.get("host_processors_per_node")
        docs.append(
            {
                "round": str(row.get("version", "")),
                "division": str(row.get("Category", "")),
                "availability": str(row.get("Availability", "")),
                "submitter": str(row.get("Submitter", "")),
                "result_id": str(row.get("ID", "")),
                "benchmark": str(row.get("Model", "")),
                "scenario": str(row.get("Scenario", "")),
                "model_id": WORKLOADS[found[0]].model_id,
                "system": {
                    "id": str(row.get("Platform", "")),
                    "name": str(row.get("System", "")),
                    "accelerator": str(row.get("Accelerator", "")),
                    "gpu_model": gpu_id(str(row.get("Accelerator", "")), gpus),
                    "accelerators": per_node * nodes,
                    "nodes": nodes,
                    "host": host_text(host, processors),
                    "software": str(row.get("Software", "")),
                    "power_settings": str(row.get("Notes", "")),
                },
                "throughput_per_sec": row.get("Performance_Result"),
                "avg_power_watts": row.get("Power_Result"),
                "accuracy": str(row.get("Accuracy", ""))[:200],
                "result_url": RESULTS_URL.format(round=row.get("version", ""), path=location),
                "date": "unknown",
                "source": f"{path.name}{pointer(i)}: {location}",
                "_row": i,
                **({"_inferred_tokens": True} if inferred else {}),
            }
        )
    return docs, skipped, problems


def _row_counts(row: JsonObject, shown: str, i: int) -> tuple[int, int] | list[Problem]:
    """(nodes, accelerators per node) of a summary row: "Nodes" (1 when not given) and
    "a#", positive whole numbers, each located where it is not."""
    got = []
    problems = []
    for column in ("Nodes", "a#"):
        value = row.get(column)
        checked = 1 if value is None and column == "Nodes" else count(value)
        if isinstance(checked, int):
            got.append(checked)
        else:
            problems.append(
                Problem(
                    shown,
                    pointer(i, column),
                    "mlperf.bad-system",
                    f"{column} is {checked}",
                    "give the count as MLCommons' summary does",
                )
            )
    return problems or (got[0], got[1])


# --- the import ------------------------------------------------------------------------------


DOCUMENT = "a result document built here (raw_result, summary_rows)"


def _system_id(doc: JsonObject) -> str:
    return text_field(json_object(doc["system"], "system of a result document"), "id", "system")


def _key(doc: JsonObject) -> tuple[str, ...]:
    """Round, division, submitter, system, benchmark and scenario: what a result is."""
    head = [text_field(doc, name, DOCUMENT) for name in ("round", "division", "submitter")]
    tail = [text_field(doc, name, DOCUMENT) for name in ("benchmark", "scenario")]
    return (*head, _system_id(doc), *tail)


def relative_path(doc: JsonObject) -> str:
    """mlperf/<round>/<submitter>/<system>/<benchmark>/<Scenario>.json"""
    return "/".join((MLPERF_DIR, *_key(doc)[:1], *_key(doc)[2:])) + ".json"


def _merge(raw: JsonObject, row: JsonObject, shown: str) -> list[Problem]:
    """A result in both the logs and the summary: the figures must agree; the summary adds
    the result ID. A row in inferred tokens/s (v4.1's gptj) is matched against the tokens
    the logs inferred, which a log without them cannot match."""
    inferred = bool(row.get("_inferred_tokens"))
    problems = []
    for name, column, logged in (
        ("throughput_per_sec", "Performance_Result", "_inferred_tokens" if inferred else None),
        ("avg_power_watts", "Power_Result", None),
    ):
        a, b = raw.get(logged or name), row[name]
        if a is not None and not isinstance(a, float):  # raw_result's figures are floats
            raise TypeError(f"{name} of a result from the logs is {a!r}, not a number")
        if a is None or not isinstance(b, (int, float)) or abs(a - b) > MATCH_TOLERANCE * abs(a):
            what = "inferred tokens/s" if logged else name
            problems.append(
                Problem(
                    shown,
                    pointer(row["_row"], column),
                    "mlperf.summary-mismatch",
                    f"{what} {b!r} differs from the logs' {a!r} ({raw['source']})"
                    if a is not None
                    else f"{what} {b!r}: the logs give none to match ({raw['source']})",
                    "import the logs and the summary of the same round and submission",
                )
            )
    raw["result_id"] = row["result_id"]
    return problems


def _finish(doc: JsonObject) -> JsonObject:
    """A result document with its fixed parts and provenance."""
    body = {k: v for k, v in doc.items() if not k.startswith("_") and k not in ("date", "source")}
    rnd = text_field(doc, "round", DOCUMENT)
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "mlperf",
        **body,
        "provenance": {
            "dataset": DATASET,
            "version": rnd,
            "date": doc["date"],
            "license": ROUND_LICENSES.get(rnd, "NOASSERTION"),
            "source": doc["source"],
            "citation": f"MLCommons, MLPerf Inference {rnd} results "
            f"(https://github.com/mlcommons/inference_results_{rnd}). MLPerf is a "
            "trademark of MLCommons.",
            "boundary": "system-ac",
            "instrument": SYSTEM_AC_INSTRUMENT,
        },
    }


def plan_import(paths: Sequence[Path], registry: Registry) -> tuple[ImportPlan, list[Skipped]]:
    """Read and check everything ``paths`` hold; raise ValidationFailed with every problem."""
    gpus = list(registry.gpus)
    problems: list[Problem] = []
    skipped: list[Skipped] = []
    raw: dict[tuple[str, ...], JsonObject] = {}
    rows: list[tuple[JsonObject, str]] = []
    for path in paths:
        if path.is_file():
            found_rows, skips, found = summary_rows(path, gpus)
            rows += [(d, shown_path(path)) for d in found_rows]
            skipped += skips
            problems += found
            continue
        if not path.is_dir():
            problems.append(
                Problem(shown_path(path), "", "file.missing", "no such file or folder", "")
            )
            continue
        folders = result_folders(path)
        if not folders:
            problems.append(
                Problem(
                    shown_path(path),
                    "",
                    "mlperf.no-results",
                    "no result folder (<Scenario>/performance/run_1/) below this folder",
                    "give an inference_results_vX.Y repository, a folder below it, or a "
                    "round's summary_results.json",
                )
            )
        for folder in folders:
            loc = locate(folder)
            if isinstance(loc, Problem):
                problems.append(loc)
                continue
            got = raw_result(loc, gpus)
            if isinstance(got, Skipped):
                skipped.append(got)
            elif isinstance(got, list):
                problems += got
            else:
                raw[_key(got)] = got
    docs = dict(raw)
    for row, shown in rows:
        if _key(row) in raw:
            problems += _merge(raw[_key(row)], row, shown)
        elif row.get("_inferred_tokens"):
            skipped.append(
                Skipped(
                    text_field(row, "source", DOCUMENT),
                    f"the summary gives {row['benchmark']} in inferred tokens/s, but it is "
                    "counted in samples: import its logs with the summary",
                )
            )
        else:
            docs[_key(row)] = row
    plan = ImportPlan(IMPORTER, owns=same_source)
    for _, doc in sorted(docs.items()):
        final = _finish(doc)
        rel = relative_path(doc)
        try:
            result = Result.model_validate(final)
        except ValidationError as e:
            problems += problems_from(e, f"{doc['source']} (as {rel})", Result)
            continue
        problems += check(result, f"{doc['source']} (as {rel})", registry)
        plan.files[rel] = dumps_canonical(final, indent=2) + "\n"
    if problems:
        raise ValidationFailed(problems)
    return plan, skipped


def import_mlperf(paths: Sequence[Path], out: Path, registry: Registry) -> Imported:
    """Import every valid power result of ``paths`` into the data folder ``out``: all or
    nothing (importers/contract.py)."""
    plan, skipped = plan_import(paths, registry)
    done = write_plan(plan, out)
    return Imported(done.written, skipped, len(done.unchanged), done.changes)
