"""Provenance of raw runs: what they are, whose, under which licence, and when they ran.

Nothing is taken from site.yaml (the site's data date is not the date of a team's run).
Each field comes from, first to last:

- date: ``--date``; else the run's own date (results.json ``date``: the benchmark client
  writes ``YYYYMMDD-HHMMSS``; ISO dates are read too; anything else, or a date after the
  import, is an error); else the provenance file's ``date``; else ``unknown``.
- dataset, version, license, citation: the command-line option; else the provenance file;
  else ``ML.ENERGY Benchmark run`` (what the tree is), ``unknown``, ``NOASSERTION`` (SPDX: the
  owner has not said) and no citation.

The provenance file is ``jouleboard-provenance.yaml`` in the run's folder or any folder above
it up to the one holding the path given on the command line (the nearest wins), e.g. beside
``run/`` or a benchmark root's ``llm/``: a YAML mapping with any of dataset, version, date
(YYYY-MM-DD), license (SPDX id) and citation.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, replace
from pathlib import Path

from jouleboard.config.schema import GPU_COUNTERS
from jouleboard.core.problems import Problem, pointer, shown_path
from jouleboard.core.shapes import YamlValue
from jouleboard.core.yamlio import read_yaml
from jouleboard.importers.run_layout import PROVENANCE_FILE

FIELDS = ("dataset", "version", "date", "license", "citation")
# Zeus reads each vendor's own energy counters: NVML on NVIDIA GPUs, AMD SMI on AMD ones.
ZEUS_COUNTERS = {"NVIDIA": GPU_COUNTERS, "AMD": "AMD SMI energy counters (Zeus)"}
UNKNOWN_DATE = "unknown"
_MAX_CHARS = {"dataset": 200, "version": 200, "license": 200, "citation": 500}


@dataclass(frozen=True, slots=True)
class RunProvenance:
    """Provenance fields a run directory does not hold (its ``source`` is the run).
    ``date`` None: the run's own date, else the file's, else unknown."""

    dataset: str = "ML.ENERGY Benchmark run"
    version: str = "unknown"
    date: str | None = None
    license: str = "NOASSERTION"
    citation: str = ""


def run_date(value: str | None) -> str | None:
    """YYYY-MM-DD from a results.json ``date`` (``20260301-142233`` or ISO), else None."""
    if not value:
        return None
    match = re.fullmatch(r"(\d{4})-?(\d{2})-?(\d{2})(?:[-T ].*)?", value.strip())
    if match is None:
        return None
    try:
        return datetime.date(*map(int, match.groups())).isoformat()
    except ValueError:
        return None


def latest_date() -> datetime.date:
    """The latest date a run can have been made on: today somewhere on Earth (UTC+14), as
    this command runs. A later date is a broken clock or a typo, never a run."""
    return (datetime.datetime.now(datetime.UTC) + datetime.timedelta(hours=14)).date()


def date_problem(value: str, shown: str, where: str) -> Problem | None:
    """Why a run's date (results.json ``date``) cannot be published, or None: a date that
    is not a calendar date (``2026-13-45`` is not "unknown", it is wrong), or one after
    the time of the import."""
    date = run_date(value)
    if date is None:
        return Problem(
            shown,
            where,
            "run.bad-date",
            f"date {value[:40]!r} is not a date",
            "the benchmark writes YYYYMMDD-HHMMSS; an ISO date is read too",
        )
    if datetime.date.fromisoformat(date) > latest_date():
        return Problem(
            shown,
            where,
            "run.future-date",
            f"date {date} is in the future",
            "check the clock of the machine that ran the benchmark, or fix the date",
        )
    return None


def _check(doc: YamlValue, where: str) -> tuple[dict[str, str], list[Problem]]:
    if not isinstance(doc, dict):
        return {}, [
            Problem(
                where,
                "",
                "run.provenance-invalid",
                "not a YAML mapping",
                f"give any of {', '.join(FIELDS)} as key: value",
            )
        ]
    values: dict[str, str] = {}
    problems = []
    for key, value in doc.items():
        if not isinstance(key, str) or key not in FIELDS:
            problems.append(
                Problem(
                    where,
                    pointer(key),
                    "run.provenance-invalid",
                    f"unknown field {key!r}",
                    f"fields: {', '.join(FIELDS)}",
                )
            )
        elif isinstance(value, datetime.date) and key == "date":
            late = date_problem(value.isoformat(), where, pointer(key))
            if late is not None:
                problems.append(late)
            else:
                values[key] = value.isoformat()
        elif (
            not isinstance(value, str) or not value.strip() or len(value) > _MAX_CHARS.get(key, 10)
        ):
            problems.append(
                Problem(
                    where,
                    pointer(key),
                    "run.provenance-invalid",
                    f"{key} must be non-empty text of at most {_MAX_CHARS.get(key, 10)} characters",
                    "quote the value",
                )
            )
        elif key == "date" and run_date(value) != value:
            problems.append(
                Problem(
                    where,
                    pointer(key),
                    "run.provenance-invalid",
                    f"date {value!r} is not YYYY-MM-DD",
                    "e.g. date: 2026-03-01",
                )
            )
        elif key == "date" and (late := date_problem(value, where, pointer(key))) is not None:
            problems.append(late)
        else:
            values[key] = value
    return values, problems


class ProvenanceFiles:
    """The provenance files above runs, each read once."""

    def __init__(self, stops: list[Path]) -> None:
        self.stops = {p.resolve() for p in stops}
        self.cache: dict[Path, tuple[dict[str, str] | None, list[Problem]]] = {}

    def _read(self, folder: Path) -> tuple[dict[str, str] | None, list[Problem]]:
        if folder not in self.cache:
            path = folder / PROVENANCE_FILE
            if not path.is_file():
                self.cache[folder] = (None, [])
            else:
                doc, error, rule = read_yaml(path)
                if error:
                    self.cache[folder] = (
                        {},
                        [Problem(shown_path(path), "", rule, error, "fix the YAML")],
                    )
                else:
                    self.cache[folder] = _check(doc, shown_path(path))
        return self.cache[folder]

    def for_run(self, run_dir: Path) -> tuple[dict[str, str], list[Problem]]:
        """The nearest provenance file's fields (none: empty) and its problems."""
        for folder in (run_dir.resolve(), *run_dir.resolve().parents):
            values, problems = self._read(folder)
            if values is not None:
                return values, problems
            if folder in self.stops:
                break
        return {}, []


def zeus_counters(vendor: str | None) -> str:
    """How Zeus read the energy of a GPU of ``vendor`` (gpus.yaml; None: not in it)."""
    first = (vendor or "").split()[:1]
    return ZEUS_COUNTERS.get(first[0].upper() if first else "", "GPU energy counters (Zeus)")


def resolve(
    given: RunProvenance,
    explicit: set[str],
    from_file: dict[str, str],
    own_date: str | None,
    vendor: str | None,
) -> dict[str, str]:
    """The provenance of one run; ``explicit``: fields set on the command line; ``vendor``:
    its GPU's (gpus.yaml)."""
    fields = {
        k: getattr(given, k) if k in explicit or k not in from_file else from_file[k]
        for k in ("dataset", "version", "license", "citation")
    }
    if "date" in explicit and given.date:
        date = given.date
    else:
        date = own_date or from_file.get("date") or UNKNOWN_DATE
    # Raw runs are the ML.ENERGY toolkit's: GPU energy from the GPUs' counters (through Zeus),
    # in each run's steady window (an LLM run's) or its full batches (a diffusion run's).
    return {
        **fields,
        "date": date,
        "boundary": "gpu",
        "instrument": zeus_counters(vendor),
        "window": "steady-state",
    }


def with_options(options: dict[str, str | None]) -> tuple[RunProvenance, set[str]]:
    """RunProvenance with the command-line values given (None: not given)."""
    given = {k: v for k, v in options.items() if v is not None}
    return replace(RunProvenance(), **given), set(given)
