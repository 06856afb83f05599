"""How the leaderboard would change: rankings of a base data set vs the working data set.

The output is markdown for a pull request's job summary (or a terminal): validation
problems, new and removed models and configurations, metric changes beyond a threshold,
and rank moves in every task at the default deadline and the preset deadlines. Every
contributor string (names, ids, file names in problems) goes through
:func:`jouleboard.core.escape.markdown_text`, so none can add a line, a table cell, a link, an
image or HTML to the report.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from jouleboard.core.escape import markdown_text
from jouleboard.core.git import commit_of, ref_problem
from jouleboard.core.problems import Problem, ValidationFailed
from jouleboard.core.safe_read import ArchiveRefused, extract_tar_stream
from jouleboard.kinds.base import Record
from jouleboard.loading.dataset import Dataset, load_dataset
from jouleboard.measure import metrics
from jouleboard.measure.formats import show
from jouleboard.plan.diff_mlperf import mlperf_markdown
from jouleboard.plan.entities import run_sources
from jouleboard.rank.noise import Noise, critical_words
from jouleboard.rank.ranking import Deadline, RankedRow, rank, runs_of

MAX_LISTED = 30
REGISTRIES = ("site.yaml", "models.yaml", "gpus.yaml", "tasks.yaml")  # what a data folder has


@dataclass(frozen=True)
class Side:
    """One data set, or the problems that stopped it from loading."""

    data: Dataset | None
    problems: tuple[Problem, ...] = ()


def load_side(data_dir: Path) -> Side:
    try:
        return Side(load_dataset(data_dir))
    except ValidationFailed as e:
        return Side(None, tuple(e.problems))


class RefRefused(ValueError):
    """A release's ``ref`` that is not a git ref name, or that names a folder: a release's
    data comes from the site's own repository only."""


@contextmanager
def git_data(rev: str, data_dir: Path) -> Iterator[Path]:
    """``data_dir`` as committed at ``rev``, a branch, tag or commit of the repository that
    holds ``data_dir`` (never a folder path), in a temporary folder. ``git archive`` is
    streamed into it under a data folder's caps (core/safe_read.py): a file over
    DATA_FILE_CAP, or more than DATA_FOLDER_CAP bytes in all, stops it at that file's
    header with :class:`ArchiveRefused` naming the ref and the file (a commit can hold a
    1 GiB file that compresses to a few kB)."""
    root, commit = commit_of(rev, data_dir)
    inside = data_dir.resolve().relative_to(root.resolve()).as_posix()
    with tempfile.TemporaryDirectory(prefix="jouleboard-base-") as tmp:
        _unpack(root, commit, inside, Path(tmp), rev)
        yield Path(tmp) / inside


def _unpack(root: Path, commit: str, inside: str, target: Path, rev: str) -> None:
    """``git archive`` of ``inside`` at ``commit``, unpacked into ``target`` as it comes;
    git is stopped at the first file over a cap."""
    command = ["git", "archive", "--format=tar", commit, "--", inside]
    # git's messages go to a file: a pipe left unread could fill and block it.
    with tempfile.TemporaryFile() as errors, _started(command, root, errors) as git:
        assert git.stdout is not None
        try:
            extract_tar_stream(git.stdout, target)
            while git.stdout.read(1 << 16):  # the archive's end padding: git ends by itself
                pass
        except ValueError as e:
            git.kill()  # (a git that has ended keeps its own status)
            if git.wait() > 0:
                raise ValueError(f"commit {rev!r} has no {inside}/ folder") from None
            if isinstance(e, ArchiveRefused):
                raise ArchiveRefused(e.rule, f"commit {rev!r}: {e.message}", e.hint) from None
            raise
        if git.wait() != 0:
            raise ValueError(f"commit {rev!r} has no {inside}/ folder")


def _started(command: list[str], cwd: Path, errors: IO[bytes]) -> subprocess.Popen[bytes]:
    """``command`` running with its output on a pipe (ValueError when it cannot start);
    leaving it as a context manager closes the pipe and waits for it."""
    try:
        return subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=errors)
    except OSError as e:
        raise ValueError(f"cannot run git: {e.strerror or e}") from None


@contextmanager
def release_data(ref: str, data_dir: Path) -> Iterator[Path]:
    """An older release's data: its ``ref`` is a git ref of the site's repository, never a
    folder (a ref once read as a path published another folder's data as the release's
    downloads). RefRefused for a ref that is not a ref name or that names a folder."""
    why = ref_problem(ref)
    if why is not None:
        raise RefRefused(f"ref {ref!r}: {why}")
    try:
        commit_of(ref, data_dir)
    except ValueError:
        if Path(ref).is_dir() or (data_dir.parent / ref).is_dir():
            raise RefRefused(
                f"ref {ref!r} names a folder, not a git branch, tag or commit"
            ) from None
        raise
    with git_data(ref, data_dir) as folder:
        yield folder


@contextmanager
def base_data(base: str, data_dir: Path) -> Iterator[Path]:
    """The base of ``jouleboard diff --base``: a git revision of the repository holding
    ``data_dir`` (whose ``data_dir`` is used) or, by design, a data folder to compare with
    (a second checkout). A revision wins, so a folder added under a branch's name (say
    origin/main) cannot stand in for that branch."""
    try:
        commit_of(base, data_dir)
    except ValueError:
        if Path(base).is_dir():
            missing = [n for n in REGISTRIES if not (Path(base) / n).is_file()]
            if missing:  # /etc is a folder, not a data folder: 763 problems of nothing
                raise ValueError(
                    f"{base!r} is a folder but not a data folder (it has no {', '.join(missing)})"
                ) from None
            yield Path(base)
            return
        raise ValueError(
            f"{base!r} is neither a commit of the git repository holding "
            "the data folder nor a folder"
        ) from None
    with git_data(base, data_dir) as folder:
        yield folder


def _views(data: Dataset) -> dict[tuple[str, float], tuple[str, list[RankedRow[Record]]]]:
    """Every ranking the site publishes, by task id and deadline (a task renamed is the same
    task): its heading, and its rows."""
    views = {}
    gpus = set(data.registry.site.default_gpus)
    for task, info in data.registry.tasks.items():
        d, latency = info.default_deadline, data.kinds.of(info).latency
        for ms in sorted({d.ms, *info.preset_deadlines_ms}):
            # In the kind's words and unit: "median inter-token latency ≤ 300 ms" (tokens),
            # "batch latency ≤ 30 s" (images and videos).
            label = f"{markdown_text(info.name)} at {latency.text(ms, d.percentile)}"
            configs = data.for_task(task)
            views[(task, ms)] = (
                label,
                rank(configs, Deadline(ms, d.percentile), gpus=gpus, noise=data.noise_for(configs)),
            )
    return views


def _efficiency(data: Dataset, task: str) -> tuple[str, Callable[[Record], str]]:
    """The figure a task's tables show (tokens/J, images/kJ, ...): its label, and a function
    printing it for a configuration as the tables do."""
    info = data.registry.tasks[task]
    units = data.kinds.of(info).units(info)
    return units.efficiency_unit, lambda c: show(
        units.efficiency_show, units.efficiency(c.energy_per_output_joules)
    )


def _name(data: Dataset, model_id: str) -> str:
    """The model's nickname (else its id) as markdown text."""
    info = data.registry.models.get(model_id)
    return markdown_text(info.nickname if info else model_id)


def _config_text(data: Dataset, c: Record) -> str:
    setting = data.kinds.of(data.registry.tasks[c.task]).setting_text(c)
    task, model, gpu, precision = (
        markdown_text(v) for v in (c.task, c.model_id, c.gpu_model, c.weight_precision)
    )
    return f"{task}: {model} on {c.num_gpus}x {gpu}, {precision}, {setting}" + (
        f", repeat {c.repeat}" if c.repeat > 1 else ""
    )


def _listing(title: str, items: list[str]) -> list[str]:
    if not items:
        return []
    lines = [f"**{title}** ({len(items)})", ""]
    lines += [f"- {item}" for item in items[:MAX_LISTED]]
    if len(items) > MAX_LISTED:
        lines.append(f"- … and {len(items) - MAX_LISTED} more")
    return [*lines, ""]


REPORT_TITLE = "## Leaderboard changes"


def is_report(text: str) -> bool:
    """Whether ``text`` is a report :func:`diff_markdown` made (``diff --out`` replaces
    only such a file)."""
    return text.startswith(REPORT_TITLE + "\n")


def diff_markdown(base: Side, head: Side, threshold: float = 0.01) -> str:
    """The change report. ``threshold`` is the relative change in J/token worth listing."""
    out = [REPORT_TITLE, ""]
    if head.problems:
        out += [
            f"**The new data does not validate** ({len(head.problems)} problem(s)); "
            "nothing can be ranked until they are fixed:",
            "",
        ]
        # A list, not a code block: a file name could close a fence, never an escaped line.
        out += [f"- {markdown_text(p)}" for p in head.problems[:100]] + [""]
        return "\n".join(out)
    assert head.data is not None
    if base.data is None:
        out += [
            f"The base data did not validate ({len(base.problems)} problem(s)); "
            "everything below is new.",
            "",
        ]
    old = {c.identity: c for c in base.data.configurations} if base.data else {}
    new = {c.identity: c for c in head.data.configurations}
    added = sorted(new.keys() - old.keys())
    removed = sorted(old.keys() - new.keys())
    noise = head.data.noise
    changed: list[str] = []
    within: list[str] = []
    for key in sorted(old.keys() & new.keys()):
        a, b = old[key].energy_per_output_joules, new[key].energy_per_output_joules
        if metrics.relative_difference(a, b) > threshold:
            line = (
                f"{_config_text(head.data, new[key])}: J/output {a:.4g} → {b:.4g} "
                f"({(b - a) / a:+.1%})"
            )
            quiet = _changed_within(old[key], new[key], head.data.noise_for([new[key]]))
            (within if quiet else changed).append(line)
    old_models = {c.model_id for c in old.values()}
    new_models = {c.model_id for c in new.values()}
    out.append(
        f"{len(added)} configuration(s) added, {len(removed)} removed, "
        f"{len(changed) + len(within)} changed by more than {threshold:.0%} in energy per output"
        + (f" ({len(within)} of them within measurement noise)." if within else ".")
    )
    out.append("")
    if noise.known:
        out += [
            "A change is within measurement noise when it is smaller than two measurements of "
            f"the same configuration differ at {noise.confidence:.0%} confidence "
            f"(|ln ratio| ≤ c·u·√2, u = {noise.per_run:.3g}/√runs, {critical_words(noise)}; "
            "tasks of a kind or data set without repeat runs have no noise estimate). Places "
            f"are rank ranges from comparisons of each pair at {noise.confidence:.0%} "
            "confidence, not a simultaneous statement.",
            "",
        ]
    if base.data and _estimate(base.data.noise) != _estimate(noise):
        out += [
            f"**The noise estimate changed**: {_estimate(base.data.noise)} → {_estimate(noise)}. "
            "Every rank range it serves may move, even where no measurement did.",
            "",
        ]
    out += _listing(
        "New models",
        [f"{_name(head.data, m)} ({markdown_text(m)})" for m in sorted(new_models - old_models)],
    )
    out += _listing("Removed models", [markdown_text(m) for m in sorted(old_models - new_models)])
    out += _listing("Added configurations", [_config_text(head.data, new[k]) for k in added])
    out += _listing(
        "Removed configurations",
        [_config_text(base.data, old[k]) for k in removed] if base.data else [],
    )
    out += _listing("Changed measurements", changed)
    out += _listing("Changed within measurement noise", within)

    before = _views(base.data) if base.data else {}
    moved_any = False
    for view, (label, rows) in _views(head.data).items():
        beyond, inside = _rank_moves(
            before.get(view, ("", []))[1], rows, head.data, *_efficiency(head.data, view[0])
        )
        if beyond or inside:
            moved_any = True
            out += [f"### {label}", "", *([*beyond, ""] if beyond else [])]
            if inside:
                out += ["Within measurement noise:", "", *inside, ""]
    if not moved_any:
        out += ["No ranking changes at the default or preset deadlines.", ""]
    out += mlperf_markdown(base.data.mlperf if base.data else (), head.data.mlperf, threshold)
    return "\n".join(out)


def _estimate(noise: Noise) -> str:
    """The noise of one run as the report states it: ``s = 0.0837 per run (Student's t
    with 3 degrees of freedom, c = 3.18)``, or ``unknown``."""
    if noise.per_run is None:
        return "unknown"
    return f"s = {noise.per_run:.3g} per run ({critical_words(noise)})"


def _changed_within(old: Record, new: Record, noise: Noise) -> bool:
    """One configuration's change of energy per output (what the noise is estimated on)
    lies within its measurements' noise, counting how many runs each side is the mean of
    and whether one side's runs are the other's and more (a repeat added or removed)."""
    a, b = set(run_sources(old) or (old.source,)), set(run_sources(new) or (new.source,))
    return noise.within(
        old.energy_per_output_joules,
        new.energy_per_output_joules,
        (runs_of(old), runs_of(new)),
        nested=a < b or b < a,
    )


def _within_noise(o: RankedRow[Record], r: RankedRow[Record], noise: Noise) -> bool:
    """A model's move that the measurement noise explains: the same configuration, whose
    energy changed by no more than two measurements of it differ, and its new place lies in
    its old range. A model now chosen in another configuration moved for a real reason."""
    return (
        o.config.identity == r.config.identity
        and _changed_within(o.config, r.config, noise)
        and o.rank_best <= r.rank <= o.rank_worst
        and r.rank_best <= o.rank <= r.rank_worst
    )


def _rank_moves(
    before: list[RankedRow[Record]],
    after: list[RankedRow[Record]],
    data: Dataset,
    unit: str,
    eff: Callable[[Record], str],
) -> tuple[list[str], list[str]]:
    """The table of moves beyond measurement noise, and the one of moves within it (each
    empty when it has no row); places print as rank ranges ("2–4")."""
    old = {r.config.model_id: r for r in before}
    new = {r.config.model_id: r for r in after}
    real: list[str] = []
    noisy: list[str] = []
    for r in after:
        o = old.get(r.config.model_id)
        if o is None:
            real.append(
                f"| {r.places} | {_name(data, r.config.model_id)} | new | {eff(r.config)} |"
            )
        elif (
            (o.rank_best, o.rank_worst) != (r.rank_best, r.rank_worst)
            or o.config.identity != r.config.identity
            or o.config.energy_per_output_joules != r.config.energy_per_output_joules
        ):
            line = (
                f"| {r.places} | {_name(data, r.config.model_id)} | {_move(o, r)} from "
                f"{o.places} | {eff(o.config)} → "
                f"{eff(r.config)} |"
            )
            noise = data.noise_for([r.config])
            (noisy if _within_noise(o, r, noise) else real).append(line)
    for model_id, o in old.items():
        if model_id not in new:
            real.append(
                f"| – | {markdown_text(model_id)} | dropped out (was {o.places}) | "
                f"{eff(o.config)} → – |"
            )
    head = [f"| rank | model | move | {markdown_text(unit)} |", "|---:|---|---|---:|"]
    return ([*head, *real] if real else []), ([*head, *noisy] if noisy else [])


def _move(o: RankedRow[Record], r: RankedRow[Record]) -> str:
    """How a model's places moved, as the tables print them (rank ranges, not the order
    within one): "=" (the same), "↑" or "↓" (one end or both, the same way), else
    "widened" or "narrowed"."""
    best, worst = r.rank_best - o.rank_best, r.rank_worst - o.rank_worst
    if best == worst == 0:
        return "="
    if best <= 0 and worst <= 0:
        return "↑"
    if best >= 0 and worst >= 0:
        return "↓"
    return "widened" if best < 0 else "narrowed"
