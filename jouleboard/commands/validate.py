"""``jouleboard validate``: check measurement files, registries, raw runs and release refs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from jouleboard.commands.common import (
    UsageError,
    github_annotations,
    kind_code_option,
    require_prometheus_option,
    warn,
)
from jouleboard.core.problems import Problem, ValidationFailed

if TYPE_CHECKING:
    from jouleboard.loading.dataset import Dataset

HELP = "check measurement files and registries"


def add_arguments(v: argparse.ArgumentParser) -> None:
    v.add_argument(
        "paths",
        nargs="*",
        type=Path,
        help="data folders, or measurement files/folders or raw ML.ENERGY run "
        "trees checked against --data",
    )
    v.add_argument("--data", type=Path, default=Path("data"), help="data folder (default: data)")
    v.add_argument(
        "--strict", action="store_true", help="fail on warnings (dropped runs, files not read)"
    )
    require_prometheus_option(v)
    v.add_argument(
        "--format",
        choices=("text", "github"),
        default="text",
        help="github: also print problems and warnings as GitHub Actions annotations",
    )
    kind_code_option(v)


def run(args: argparse.Namespace) -> int:
    from jouleboard.config.content import about_markdown
    from jouleboard.engine.build import find_project
    from jouleboard.engine.sources import Sources, check_links, checked_pages, site_urls
    from jouleboard.importers.mlenergy_runs import is_run_tree
    from jouleboard.loading.dataset import load_dataset
    from jouleboard.loading.layout import RULE as UNREAD
    from jouleboard.plan.diff import Side
    from jouleboard.plan.releases import load_releases
    from jouleboard.plan.site import plan_site
    from jouleboard.rank.ranking import runs_of

    for p in args.paths:  # read as a measurement file, it failed as "not valid JSON"
        if p.suffix in (".yaml", ".yml") and p.is_file():
            raise UsageError(
                f"{p} is not a measurement file: validate checks a data folder's YAML files "
                f"(the registries, quality/) with the folder; give it ({p.parent}), or no "
                "path to check --data"
            )
    data_dirs = [p for p in args.paths if (p / "site.yaml").exists()] or [args.data]
    others = [p for p in args.paths if not (p / "site.yaml").exists()]
    runs = [p for p in others if is_run_tree(p)]
    extra = [p for p in others if p not in runs]
    problems = []
    warnings: list[Problem] = []
    total = measured = repeated = mlperf = given = 0
    for data in data_dirs:
        try:
            dataset = load_dataset(data, extra, runs, require_prometheus=args.require_prometheus)
            given += given_measurements(dataset, data, extra) if extra or runs else 0
            total += len(dataset.configurations)
            measured += sum(runs_of(c) for c in dataset.configurations)
            repeated += sum(runs_of(c) > 1 for c in dataset.configurations)
            mlperf += len(dataset.mlperf)
            warnings.extend(dataset.warnings)
            for gpu, n in dataset.outside_default_gpus().items():  # a note, not a warning
                print(
                    f"note: {gpu} has {n} configuration{'s' * (n != 1)} but is not in "
                    f"site.yaml default_gpus, so the main rankings leave it out (add it there "
                    "to rank it; its GPU page and comparisons show it either way)",
                    file=sys.stderr,
                )
            # Each older release's ref must give its data/ (what build publishes from it).
            releases = load_releases(dataset, data, read=lambda _folder: Side(None))
            # The site's own pages (content/<name>.md) and the nav targets naming them.
            project = find_project(data)
            pages = checked_pages(dataset, data, project)
            # Links between pages: against every page the site would have.
            about = about_markdown(project)
            sources = Sources(dataset, about, (), b"", tuple(releases), pages)
            urls = site_urls(dataset.registry.site, None, None)
            plan = plan_site(dataset, urls, releases, about, pages)
            check_links(plan, urls, sources, data, project)
        except ValidationFailed as e:
            problems.extend(e.problems)
    if problems:
        raise ValidationFailed(problems)
    warn(warnings, args.strict)
    if args.format == "github" and warnings:  # on the pull request, not only in its log
        print("\n".join(github_annotations(warnings, "warning")))
    runs_dropped = sum(w.rule != UNREAD for w in warnings)  # the rest: files not read
    unread = len(warnings) - runs_dropped
    said = [
        *([f"{runs_dropped} run{'s' * (runs_dropped != 1)} dropped"] if runs_dropped else []),
        *(
            [f"{unread} file{'s' * (unread != 1)} or folder{'s' * (unread != 1)} not read"]
            if unread
            else []
        ),
    ]
    dropped = f" ({', '.join(said)}: see the warnings)" if said else ""
    if extra or runs:  # what was asked about, apart from the data it was checked with
        own, folders = measured - given, ", ".join(f"{d.as_posix()}/" for d in data_dirs)
        print(
            f"ok: {given} measurement{'s' * (given != 1)} valid in the files and runs given, "
            f"checked with the registries of {folders} "
            + (
                f"(its other {own} measurement{'s' * (own != 1)} "
                f"{'are' if own != 1 else 'is'} valid too)"
                if own
                else "(no other measurement)"
            )
            + dropped
        )
    elif repeated:  # repeat runs are folded: say how many files made how many rows
        print(
            f"ok: {measured} measurements valid ({total} configurations, {repeated} of them "
            f"measured more than once){dropped}"
        )
    else:
        print(f"ok: {total} configuration{'s' * (total != 1)} valid{dropped}")
    if mlperf:
        print(f"ok: {mlperf} MLPerf result{'s' * (mlperf != 1)} valid (whole system at the wall)")
    return 0


def given_measurements(dataset: Dataset, data: Path, extra: Sequence[Path]) -> int:
    """How many of ``dataset``'s measurements (files and raw runs, repeats counted one by
    one) come from the paths given rather than from ``data``'s own measurements/."""
    from jouleboard.core.problems import resolved
    from jouleboard.loading import MEASUREMENTS_DIR
    from jouleboard.loading.dataset import measurement_files, source_of

    root = resolved(data)
    own = {source_of(p, root) for p in measurement_files([data / MEASUREMENTS_DIR])[0]}
    named = {source_of(p, root) for p in measurement_files(extra)[0]}
    sources = [
        s for c in dataset.configurations for s in (getattr(c, "run_sources", ()) or (c.source,))
    ]
    return sum(1 for s in sources if s in named or s not in own)
