"""Where raw ML.ENERGY benchmark runs sit: finding run directories and what their path says.

Two layouts are read (shared docs/raw-run-format.md; docs/raw-runs.md), at any level:

    run/{llm,mllm}/{task}/results/{org}/{model}/{gpu_model}/{runtime_params}/results.json
    run/diffusion/{task}/{org}/{model}/{config}/results.json

and the same nested in the toolkit's benchmark root:
``llm/{gpu_family}/{snapshot}/run/...`` and ``diffusion/{gpu_family}/{snapshot}/run/...``,
with ``configs/vllm`` and ``configs/xdit`` beside ``llm/`` and ``diffusion/``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from jouleboard.core.problems import Problem, shown_path
from jouleboard.core.safe_read import refusal

PROVENANCE_FILE = "jouleboard-provenance.yaml"  # fields of the runs below it

LLM_KINDS = ("llm", "mllm")
DIFFUSION = "diffusion"
RESULTS_JSON = "results.json"
PROMETHEUS_JSON = "prometheus.json"
CURRENT_SNAPSHOT = "current"  # the toolkit reads only this snapshot of a benchmark root
_ANY_SIZE = 1 << 62  # files a reader does not read (logs) have no size cap
LAYOUT = (
    "run/{llm,mllm}/{task}/results/{org}/{model}/{gpu_model}/{runtime_params}/ or "
    "run/diffusion/{task}/{org}/{model}/{config}/"
)


@dataclass(frozen=True, slots=True)
class RunLocation:
    """What the path of a run directory says.

    ``gpu_model``: the GPU folder of an LLM run; for a diffusion run the toolkit's
    ``diffusion/{gpu_family}`` folder upper-cased, or None outside a benchmark root.
    ``snapshot``: the ``{snapshot}`` folder of a benchmark root, None outside one.
    """

    run_dir: Path
    kind: str
    task: str
    org: str
    model: str
    gpu_model: str | None
    params_folder: str
    snapshot: str | None = None

    @property
    def model_id(self) -> str:
        return f"{self.org}/{self.model}"

    @property
    def is_diffusion(self) -> bool:
        return self.kind == DIFFUSION

    @property
    def source(self) -> str:
        """Where-from of the run, the same on every machine."""
        if self.is_diffusion:
            tail = "/".join(("run", DIFFUSION, self.task, self.org, self.model, self.params_folder))
            return (
                f"{DIFFUSION}/{self.gpu_model}/{self.snapshot}/{tail}"
                if self.snapshot is not None
                else tail
            )
        return "/".join(
            (
                "run",
                self.kind,
                self.task,
                "results",
                self.org,
                self.model,
                str(self.gpu_model),
                self.params_folder,
            )
        )

    @property
    def group(self) -> tuple[str, str, str]:
        return (self.model_id, self.task, str(self.gpu_model))


def run_location(run_dir: Path) -> RunLocation | None:
    """The location when ``run_dir`` sits at the run level of either layout."""
    p = run_dir.parts
    if len(p) >= 7 and p[-5] == "results" and p[-7] in LLM_KINDS:
        snapshot = p[-9] if len(p) >= 11 and p[-8] == "run" and p[-11] == "llm" else None
        return RunLocation(
            run_dir,
            kind=p[-7],
            task=p[-6],
            org=p[-4],
            model=p[-3],
            gpu_model=p[-2],
            params_folder=p[-1],
            snapshot=snapshot,
        )
    if len(p) >= 6 and p[-6] == "run" and p[-5] == DIFFUSION:
        nested = len(p) >= 9 and p[-9] == DIFFUSION
        return RunLocation(
            run_dir,
            kind=DIFFUSION,
            task=p[-4],
            org=p[-3],
            model=p[-2],
            gpu_model=p[-8].upper() if nested else None,
            params_folder=p[-1],
            snapshot=p[-7] if nested else None,
        )
    return None


def is_run_tree(path: Path) -> bool:
    """Whether ``path`` is (inside) a run tree rather than measurement files."""
    path = Path(os.path.abspath(path))
    if path.name in (RESULTS_JSON, PROMETHEUS_JSON) or any(
        run_location(Path(*path.parts[:i])) for i in range(6, len(path.parts) + 1)
    ):
        return True
    if not path.is_dir():
        return False
    names = (*LLM_KINDS, DIFFUSION)
    return any(
        RESULTS_JSON in files or any(n in dirs for n in names) for _, dirs, files in os.walk(path)
    )


def configs_dir(loc: RunLocation) -> Path | None:
    """``configs/vllm`` (LLM) or ``configs/xdit`` (diffusion) of the run's benchmark: the
    nearest one in a folder above the run's ``run/`` folder, as the toolkit lays them out."""
    sub = "xdit" if loc.is_diffusion else "vllm"
    depth = 6 if loc.is_diffusion else 8  # run/ is this many levels above the run folder
    parts = loc.run_dir.parts
    for i in range(len(parts) - depth, 0, -1):
        candidate = Path(*parts[:i]) / "configs" / sub
        if candidate.is_dir():
            return candidate
    return None


def read_outside(given: Path) -> list[Path]:
    """What a build of the runs at or below ``given`` may read outside it: the provenance
    file in the folder above it (the nearest one is looked for up to there:
    run_provenance.ProvenanceFiles), and ``configs/vllm`` and ``configs/xdit`` in every
    folder above it (:func:`configs_dir` takes the nearest above a run's run/ folder). The
    input check reads their names, sizes and times with the runs'. By the path as given and
    through its links (the provenance lookup resolves them, the configs one does not)."""
    found: list[Path] = []
    for root in (Path(os.path.abspath(given)), Path(os.path.realpath(given))):
        found.append(root.parent / PROVENANCE_FILE)
        found += [folder / "configs" / sub for folder in root.parents for sub in ("vllm", "xdit")]
    return list(dict.fromkeys(found))


def find_run_dirs(paths: Iterable[Path]) -> tuple[list[RunLocation], list[Problem]]:
    """Every run directory at or below ``paths`` (sorted), and layout problems."""
    found: dict[Path, RunLocation] = {}
    problems: list[Problem] = []
    for given in paths:
        root = Path(os.path.abspath(given))
        if root.name == RESULTS_JSON and os.path.lexists(root) and not root.is_dir():
            root = root.parent  # the run's folder is walked: its results.json is checked there
        if not root.is_dir():
            problems.append(
                Problem(
                    shown_path(given), "", "file.missing", "no such run folder", "check the path"
                )
            )
            continue
        count, stray = len(found), len(problems)
        for folder, dirs, files in os.walk(root):
            here = Path(folder)
            problems.extend(not_regular(here, files))
            location = run_location(here)
            if location is not None:
                found.setdefault(here, location)
                dirs[:] = []
                continue
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "configs")
            linked = [d for d in dirs if os.path.islink(here / d)]
            problems.extend(
                Problem(
                    shown_path(here / d),
                    "",
                    "file.symlinked-folder",
                    "a symbolic link to a folder in a run tree: not followed",
                    "copy the folder itself here",
                )
                for d in linked
            )
            dirs[:] = [d for d in dirs if d not in linked]
            if RESULTS_JSON in files:
                problems.append(
                    Problem(
                        shown_path(here / RESULTS_JSON),
                        "",
                        "run.bad-layout",
                        "results.json outside the run layout",
                        f"put each run in {LAYOUT}",
                    )
                )
        if len(found) == count and len(problems) == stray:
            problems.append(
                Problem(
                    shown_path(given),
                    "",
                    "run.none-found",
                    "no run directory at or below this path",
                    f"expected {LAYOUT} holding results.json",
                )
            )
    unique: dict[str, RunLocation] = {}  # by source: two copies of one tree are one run
    for key in sorted(found):
        loc = found[key]
        first = unique.setdefault(loc.source, loc)
        if first is not loc:
            problems.append(
                Problem(
                    shown_path(loc.run_dir),
                    "",
                    "run.duplicate-run",
                    f"the same run as {shown_path(first.run_dir)}",
                    "give each run once; are these two copies of one tree?",
                )
            )
    return list(unique.values()), problems


def not_regular(folder: Path, names: Iterable[str]) -> list[Problem]:
    """A problem for each of ``names`` in ``folder`` that is not a regular file (a link, a
    pipe, a device), found without opening it: a run tree holds files and folders only, so
    nothing in it can point outside it or hang a reader."""
    found = []
    for name in sorted(names):
        why = refusal(folder / name, _ANY_SIZE)
        if why is not None and why.rule == "file.not-regular":
            found.append(Problem(shown_path(folder / name), "", why.rule, why.message, why.hint))
    return found


def not_current(loc: RunLocation) -> Problem | None:
    """A drop warning for a run in another snapshot than ``current`` of a benchmark root
    (the toolkit reads only ``current``)."""
    if loc.snapshot is None or loc.snapshot == CURRENT_SNAPSHOT:
        return None
    return Problem(
        shown_path(loc.run_dir),
        "",
        "run.not-current-snapshot",
        f"in snapshot {loc.snapshot!r}, not {CURRENT_SNAPSHOT!r}: dropped, as the "
        "ML.ENERGY toolkit reads only the current snapshot",
        "move the run under current/ to publish it",
    )
