"""Load a whole data folder: registries + every measurement file, all checked together."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields, is_dataclass, replace
from pathlib import Path

from pydantic import ValidationError

from jouleboard.config.registry import Registry, load_registry
from jouleboard.config.schema import Provenance
from jouleboard.core.problems import (
    Problem,
    ValidationFailed,
    forget_resolved_folders,
    resolved,
    resolved_file,
    shown_path,
)
from jouleboard.core.safe_read import DATA_FILE_CAP, refusal
from jouleboard.core.schema_errors import problems_from
from jouleboard.core.text_rules import hidden_characters
from jouleboard.kinds import Kinds, Parsed, check_parsed, parse_measurement, registered
from jouleboard.kinds.base import Record, TaskKind
from jouleboard.kinds.mlperf import MLPERF_DIR, Result, SystemResult
from jouleboard.kinds.mlperf import check as mlperf_check
from jouleboard.kinds.site_kinds import load_site_kinds
from jouleboard.loading import MEASUREMENTS_DIR
from jouleboard.loading.layout import unread_problems
from jouleboard.loading.repeats import dataset_of, fold_repeats
from jouleboard.measure.checks import check_boundaries, check_duplicates, read_json
from jouleboard.rank.noise import UNKNOWN, Noise, RepeatGroup

# The MLPerf results of a data folder, checked against its registries: (data folder,
# registries, the data folder resolved) -> (results, problems); see :func:`load_mlperf`.
MLPerfLoader = Callable[[Path, Registry, Path], tuple[tuple[SystemResult, ...], list[Problem]]]


@dataclass(frozen=True)
class Dataset:
    registry: Registry
    # Sorted by what a configuration is, not by file name: renaming files changes nothing.
    # Repeat runs of one configuration are one record (loading/repeats.py).
    configurations: tuple[Record, ...]
    # Raw runs dropped as unstable, and what the data folder holds that nothing reads
    # (loading/unread.py): reported, not fatal (errors with --strict).
    warnings: tuple[Problem, ...] = ()
    # How precise one run is (declared in site.yaml or estimated from the repeats).
    noise: Noise = UNKNOWN
    # MLPerf Inference power results (data/mlperf/): systems ranked per benchmark, at the
    # wall; never mixed with the configurations (kinds/mlperf.py).
    mlperf: tuple[SystemResult, ...] = ()
    # Which kind serves each task: the registered kinds and site.yaml's (kinds/__init__.py).
    kinds: Kinds = field(default_factory=registered)

    def for_task(self, task: str) -> list[Record]:
        """A task's configurations (all of one kind: the task's)."""
        return [c for c in self.configurations if c.task == task]

    def noise_for(self, configs: Iterable[Record]) -> Noise:
        """The measurement noise of ``configs``: estimated from the repeats of the data sets
        and task kinds they come from (one estimate per data source and kind: an image
        model's noise is not a language model's), or the one site.yaml declares."""
        datasets, kinds = set(), set()
        for c in configs:
            datasets.add(dataset_of(c))
            kinds.add(self.kinds.of(self.registry.tasks[c.task]).name)
        return self.noise.scoped(datasets, kinds)

    @property
    def datasets(self) -> tuple[str, ...]:
        """The data sets the measurements come from, by name ("" for none stated)."""
        return tuple(sorted({dataset_of(c) for c in self.configurations}))

    def outside_default_gpus(self) -> dict[str, int]:
        """GPUs with measurements that site.yaml's ``default_gpus`` leaves out of the main
        rankings (they show on their GPU pages and in comparisons): GPU -> configurations."""
        chosen = set(self.registry.site.default_gpus)
        counts: dict[str, int] = {}
        for c in self.configurations:
            if c.gpu_model not in chosen:
                counts[c.gpu_model] = counts.get(c.gpu_model, 0) + 1
        return dict(sorted(counts.items()))


def name_problem(path: Path) -> Problem | None:
    """File and folder names must be UTF-8 with no control or invisible characters: they
    appear in reports, pages and downloads."""
    hidden = hidden_characters(path.name)
    if not hidden:
        return None
    undecodable = any(0xDC80 <= ord(c) <= 0xDCFF for c in path.name)
    what = "is not UTF-8" if undecodable else f"contains {', '.join(hidden)}"
    return Problem(
        shown_path(path),
        "",
        "file.bad-name",
        f"the file or folder name {what}",
        "rename it with printable UTF-8 characters only",
    )


def _name_problem_at(folder: str, name: str) -> Problem | None:
    """:func:`name_problem` of ``folder/name``, making a Path only for a bad name."""
    return name_problem(Path(folder, name)) if hidden_characters(name) else None


def _walk_problem(error: OSError) -> Problem:
    """A folder os.walk could not list (unreadable, path over the OS limit): never skipped.
    One gone meanwhile (moved away while `serve` watched it) is missing, as a folder never
    there is."""
    if error.errno == errno.ENOENT:
        return Problem(
            shown_path(Path(os.fsdecode(error.filename or ""))),
            "",
            "file.missing",
            "no such file or folder",
            "check the path",
        )
    return Problem(
        shown_path(Path(os.fsdecode(error.filename or ""))),
        "",
        "file.unreadable",
        f"cannot list this folder: {error.strerror or error}",
        "check its permissions; keep paths under the OS limit (4,096 bytes)",
    )


def _symlinked_folder(path: Path) -> Problem:
    return Problem(
        shown_path(path),
        "",
        "file.symlinked-folder",
        "a symbolic link to a folder: its measurements would not be read",
        "commit the folder itself, not a link to it",
    )


_QUIET_HIDDEN = {".git"}  # measurements/ as a git submodule or checkout of its own


def _hidden(path: Path) -> Problem:
    """A measurement file or folder whose name starts with a dot: it would not be read."""
    what = "folder" if path.is_dir() and not path.is_symlink() else "measurement file"
    return Problem(
        shown_path(path),
        "",
        "file.hidden",
        f"a {what} whose name starts with '.' is not read: its measurements would not be published",
        "rename it without the leading dot, or move it out of the data folder",
    )


def data_folder_problems(data_dir: Path) -> list[Problem]:
    """Every file of the data folder outside measurements/ (whose files are checked as they
    are found) that is a link, pipe, device or over :data:`DATA_FILE_CAP`: checked before
    anything of the folder is read, so none of them is ever opened. Hidden names and Python
    byte-code caches are not read by any build and not looked at."""
    problems: list[Problem] = []
    for folder, dirs, names in os.walk(
        data_dir, onerror=lambda e: problems.append(_walk_problem(e))
    ):
        top = Path(folder) == data_dir
        dirs[:] = sorted(
            d
            for d in dirs
            if not (d.startswith(".") or d == "__pycache__" or (top and d == MEASUREMENTS_DIR))
        )
        for name in sorted(names):
            path = Path(folder) / name
            refused = None if name.startswith(".") else refusal(path, DATA_FILE_CAP)
            if refused is not None:
                problems.append(
                    Problem(
                        shown_path(path),
                        "",
                        refused.rule,
                        refused.message,
                        refused.hint
                        if refused.rule != "file.too-large"
                        else "move it out of the data folder: no data file is "
                        f"that large (cap {DATA_FILE_CAP:,} bytes)",
                    )
                )
    return problems


def _walk(root: Path, found: list[str], problems: list[Problem]) -> None:
    """Every *.json below ``root`` into ``found`` (as paths' text: a Path per file cost
    more than the rest of the walk); links to folders, unlistable folders, bad names and
    other files into ``problems``."""
    for folder, dirs, files in os.walk(root, onerror=lambda e: problems.append(_walk_problem(e))):
        dirs[:] = [d for d in dirs if d != "__pycache__"]  # byte code: never read (layout.py)
        for name in sorted(dirs):
            if name.startswith("."):
                if name not in _QUIET_HIDDEN:
                    problems.append(_hidden(Path(folder, name)))
            elif os.path.islink(os.path.join(folder, name)):
                problems.append(_symlinked_folder(Path(folder, name)))
            elif bad := _name_problem_at(folder, name):
                problems.append(bad)
        # os.walk does not follow links to folders itself
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not hidden_characters(d))
        for name in sorted(files):
            if name.startswith(".") and name.endswith(".json"):
                problems.append(_hidden(Path(folder, name)))
                continue
            if name.startswith(".") or name in {"README.md"}:
                continue  # .gitkeep, .DS_Store...: not measurements, and never read
            if bad := _name_problem_at(folder, name):
                problems.append(bad)
            elif name.endswith(".json"):
                found.append(os.path.join(folder, name))
            else:
                problems.append(
                    Problem(
                        shown_path(Path(folder, name)),
                        "",
                        "file.unexpected",
                        "not a .json measurement file",
                        "measurement files end in .json; remove other files",
                    )
                )


def measurement_files(paths: Iterable[Path]) -> tuple[list[Path], list[Problem]]:
    """Every *.json below the given files/folders, sorted (as paths sort: by their parts);
    other files are problems."""
    found: list[Path] = []
    walked: list[str] = []
    problems: list[Problem] = []
    for root in paths:
        if root.is_symlink() and root.is_dir():
            problems.append(_symlinked_folder(root))
        elif root.is_file() or root.is_symlink():  # a link to a file: read_json refuses it
            found.append(root)
        elif root.is_dir():
            _walk(root, walked, problems)
        elif os.path.lexists(root):  # a pipe, device or socket: never opened
            refused = refusal(root, 0)
            assert refused is not None
            problems.append(
                Problem(shown_path(root), "", refused.rule, refused.message, refused.hint)
            )
        else:
            problems.append(
                Problem(
                    shown_path(root), "", "file.missing", "no such file or folder", "check the path"
                )
            )
    return sorted({*found, *map(Path, walked)}, key=lambda path: path.parts), problems


@dataclass(frozen=True)
class MeasurementFile:
    """One measurement file read and parsed, before the registries are consulted."""

    name: str  # as messages show it
    source: str  # its path relative to the data folder
    parsed: Parsed | None  # its kind and measurement model, if it parsed
    problems: tuple[Problem, ...]


def source_of(path: Path, data_root: Path) -> str:
    """A measurement file's ``source``: its path relative to the (resolved) data folder, or
    as messages name it when it lies outside."""
    try:
        return resolved_file(path).relative_to(data_root).as_posix()
    except ValueError:
        return shown_path(path)


def read_measurement(
    path: Path, data_root: Path, known: Kinds | None = None, raw: bytes | None = None
) -> MeasurementFile:
    """Read and parse one measurement file (what needs no registry) as one of ``known``
    (default: the registered kinds). ``raw``: its bytes, already read safely."""
    name = shown_path(path)
    source = source_of(path, data_root)
    value, problems = read_json(path, name, raw)
    parsed = None
    if not problems:
        parsed, problems = parse_measurement(value, name, known)
    return MeasurementFile(name, source, parsed, tuple(problems))


def check_file(file: MeasurementFile, registry: Registry) -> tuple[Record | None, list[Problem]]:
    """A read file checked against the registries: its record, or None and the problems."""
    if file.parsed is None:
        return None, list(file.problems)
    record, problems = check_parsed(file.parsed, file.name, file.source, registry)
    return record, problems


def registries_of(data_dir: Path, known: Kinds) -> tuple[Registry | None, list[Problem]]:
    """The registries of ``data_dir``, checked for the kinds ``known``."""
    return load_registry(data_dir, known.order())


def load_dataset(
    data_dir: Path,
    extra: Iterable[Path] = (),
    runs: Iterable[Path] = (),
    require_prometheus: bool = False,
    read: Callable[[Path, Path, Kinds], MeasurementFile] = read_measurement,
    check: Callable[[MeasurementFile, Registry], tuple[Record | None, list[Problem]]] = check_file,
    allow_kind_code: bool = False,
    registries: Callable[[Path, Kinds], tuple[Registry | None, list[Problem]]] = registries_of,
    mlperf: MLPerfLoader | None = None,
) -> Dataset:
    """Read and validate everything (measurement files, and raw ML.ENERGY run trees in
    ``runs``; ``require_prometheus`` drops runs without prometheus.json, with a warning);
    raise ValidationFailed listing every problem. ``read`` and ``check`` do each file's
    two halves, ``registries`` loads the registries for the kinds known and ``mlperf`` the
    MLPerf results (a long-running process passes memoised ones, a command-line build kept
    ones: jouleboard/engine/state.py; default :func:`load_mlperf`).
    The kinds site.yaml declares are code: they run only with ``allow_kind_code`` or the
    process's consent (jouleboard/kinds/site_kinds.py), else each is a located problem."""
    forget_resolved_folders()
    if unsafe := data_folder_problems(data_dir):  # before any file of the folder is read
        raise ValidationFailed(unsafe)
    try:
        return _load(
            data_dir,
            extra,
            runs,
            require_prometheus,
            read,
            check,
            allow_kind_code,
            registries,
            mlperf or load_mlperf,
        )
    except ValidationFailed as e:  # what is misplaced often explains what is missing
        raise ValidationFailed([*e.problems, *unread_problems(data_dir)]) from None


def _load(
    data_dir: Path,
    extra: Iterable[Path],
    runs: Iterable[Path],
    require_prometheus: bool,
    read: Callable[[Path, Path, Kinds], MeasurementFile],
    check: Callable[[MeasurementFile, Registry], tuple[Record | None, list[Problem]]],
    allow_kind_code: bool,
    registries: Callable[[Path, Kinds], tuple[Registry | None, list[Problem]]],
    mlperf: MLPerfLoader,
) -> Dataset:
    """:func:`load_dataset` once the data folder is known to be safe to read."""
    site_kinds: list[TaskKind] = []  # before tasks name their kinds
    kind_problems = load_site_kinds(data_dir, site_kinds.append, allowed=allow_kind_code)
    known = registered()
    for kind in site_kinds:
        known = known.with_kind(kind)
    registry, problems = registries(data_dir, known)
    roots = [data_dir / MEASUREMENTS_DIR, *extra]
    data_root = resolved(data_dir)
    if registry is None or kind_problems:
        # A file that cannot be read as JSON at all is broken whatever the registries say,
        # so it is listed too. Its schema waits: with a task's kind refused or unknown, each
        # file of that kind would repeat the registry's one problem.
        files, listed = measurement_files(roots)
        unreadable = [p for f in files for p in read(f, data_root, known).problems]
        problems += listed + [p for p in unreadable if p.rule.startswith(("json.", "file."))]
        raise ValidationFailed(kind_problems + problems)
    files, problems = measurement_files(roots)
    configs: list[Record] = []
    shown: dict[str, str] = {}
    for path in files:
        file = read(path, data_root, known)
        shown[file.source] = file.name
        config, file_problems = check(file, registry)
        if config is not None:
            configs.append(config)
        problems.extend(file_problems)
    run_warnings: Sequence[Problem] = ()
    if runs:  # the raw-run importer is loaded only for raw runs
        from jouleboard.importers.mlenergy_runs import RunOptions, RunPolicy, load_runs

        report = load_runs(
            runs, registry, RunOptions(policy=RunPolicy(require_prometheus=require_prometheus))
        )
        configs.extend(report.configurations)
        shown.update(report.shown)
        problems.extend(report.errors)
        run_warnings = report.warnings
    problems.extend(check_duplicates(configs, shown))
    problems.extend(check_boundaries(configs, shown))
    if problems:
        raise ValidationFailed(problems)
    share_provenances(configs)
    results, problems = mlperf(data_dir, registry, data_root)
    if problems:
        raise ValidationFailed(problems)
    folded, repeats = fold_repeats(sorted(configs, key=lambda c: (c.identity, c.source)))
    declared = registry.site.uncertainty
    noise = Noise.of(
        [placed(g, registry, known) for g in repeats],
        declared.relative,
        declared.confidence,
        declared.basis,
        declared.degrees_of_freedom,
    )
    return Dataset(
        registry=registry,
        configurations=tuple(folded),
        warnings=(*run_warnings, *unread_problems(data_dir)),
        noise=noise,
        mlperf=results,
        kinds=known,
    )


def share_provenances(records: Iterable[Record]) -> None:
    """Give records with equal provenances one object of it: each file's parse made its own,
    and most files of a data set have the same. A record is a value and stays equal to
    itself; at 100,000 configurations this leaves 140 MB less in memory while planning.
    A record whose type has no provenance field (a kind's own code may compute it) is left
    as it is."""
    shared: dict[Provenance, Provenance] = {}
    fielded: dict[type, bool] = {}  # record type -> whether provenance is a field of it
    for record in records:
        kind = type(record)
        if kind not in fielded:
            fielded[kind] = is_dataclass(kind) and "provenance" in {f.name for f in fields(kind)}
        own = getattr(record, "provenance", None)
        if not fielded[kind] or not isinstance(own, Provenance):
            continue
        first = shared.setdefault(own, own)
        if first is not own:
            object.__setattr__(record, "provenance", first)  # frozen: set as __init__ sets it


def placed(group: RepeatGroup, registry: Registry, known: Kinds) -> RepeatGroup:
    """A repeat group with the task kind it estimates noise for and its words."""
    task = registry.tasks[group.task]
    model = registry.models[group.model].nickname
    label = f"{model} on {task.name}, {group.num_gpus}× {group.gpu}"
    return replace(group, kind=known.of(task).name, label=label)


def load_mlperf(
    data_dir: Path, registry: Registry, data_root: Path
) -> tuple[tuple[SystemResult, ...], list[Problem]]:
    """The MLPerf results of the data folder's mlperf/ (none when it has none), checked."""
    folder = data_dir / MLPERF_DIR
    if not folder.exists():
        return (), []
    files, problems = measurement_files([folder])
    results = []
    for path in files:
        name = shown_path(path)
        value, found = read_json(path, name)
        if not found:
            try:
                result = Result.model_validate(value)
            except ValidationError as e:
                found = problems_from(e, name, Result, schema="mlperf-result")
            else:
                found = mlperf_check(result, name, registry)
        if found:
            problems += found
            continue
        source = resolved_file(path).relative_to(data_root).as_posix()
        results.append(SystemResult(source, result))
    keys: dict[tuple[str, ...], str] = {}
    for r in results:
        key = (*r.system_key, r.result.benchmark, r.result.scenario)
        if key in keys:
            problems.append(
                Problem(
                    r.source,
                    "",
                    "dataset.duplicate-result",
                    f"the same result as {keys[key]}",
                    "keep one file per round, system, benchmark and scenario",
                )
            )
        keys.setdefault(key, r.source)
    return tuple(sorted(results, key=lambda r: r.source)), problems
