"""``jouleboard import-runs``: convert raw ML.ENERGY benchmark runs into measurement files."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from jouleboard.commands.common import (
    UsageError,
    kind_code_option,
    require_prometheus_option,
    warn,
)

if TYPE_CHECKING:
    from jouleboard.importers.mlenergy_runs import ImportSummary, RunOptions

HELP = "convert raw ML.ENERGY benchmark runs into measurement files"


def add_arguments(ir: argparse.ArgumentParser) -> None:
    ir.add_argument(
        "runs",
        nargs="+",
        type=Path,
        metavar="RUN_DIR",
        help="run/ or any folder below it, down to one run directory",
    )
    ir.add_argument(
        "--out",
        type=Path,
        default=Path("data"),
        help="data folder to add the files to (its registries are used)",
    )
    for name in ("dataset", "version", "date", "license", "citation"):
        default = (
            "the run's own date" if name == "date" else "jouleboard-provenance.yaml beside the runs"
        )
        ir.add_argument(
            f"--{name}",
            default=None,
            help=f"provenance {name} (default: {default}; see docs/raw-runs.md)",
        )
    require_prometheus_option(ir)
    ir.add_argument(
        "--add-models",
        action="store_true",
        help="add models missing from models.yaml, from the runs' model_info.json",
    )
    ir.add_argument("--strict", action="store_true", help="fail on warnings (dropped runs)")
    kind_code_option(ir)


def run(args: argparse.Namespace) -> int:
    from jouleboard.importers.contract import not_a_data_folder
    from jouleboard.importers.mlenergy_runs import RunOptions, RunPolicy
    from jouleboard.importers.run_provenance import FIELDS, latest_date, run_date, with_options

    why = not_a_data_folder(args.out)
    if why is not None:
        raise UsageError(why)
    if args.date is not None and run_date(args.date) != args.date:
        raise UsageError(f"--date must be YYYY-MM-DD, got {args.date!r}")
    if args.date is not None and args.date > latest_date().isoformat():
        raise UsageError(f"--date {args.date} is in the future")
    provenance, explicit = with_options({k: getattr(args, k) for k in FIELDS})
    options = RunOptions(
        provenance,
        frozenset(explicit),
        RunPolicy(require_prometheus=args.require_prometheus),
        args.add_models,
    )
    summary = import_runs(args.runs, args.out, options, strict=args.strict)
    warn(summary.warnings, strict=False)
    if summary.added_models:
        print(f"added to models.yaml: {', '.join(summary.added_models)}")
    print(f"wrote {len(summary.written)} measurement files to {args.out / 'measurements'}")
    if summary.report is not None:
        print(summary.report.summary())
    return 0


def import_runs(
    paths: Iterable[Path], data_dir: Path, options: RunOptions | None = None, strict: bool = False
) -> ImportSummary:
    """Write a measurement file per published run into ``data_dir``; on any error (or, with
    ``strict``, any dropped run), none. The data folder is loaded first (its registries and
    measurements are what the runs are checked against), so this sits above loading/."""
    from jouleboard.core.problems import Problem, ValidationFailed, shown_path
    from jouleboard.importers.contract import commit, not_a_data_folder
    from jouleboard.importers.mlenergy_runs import ImportSummary, load_runs, plan_import
    from jouleboard.loading.dataset import load_dataset

    why = not_a_data_folder(data_dir)
    if why is not None:
        raise ValidationFailed([Problem(shown_path(data_dir), "", "import.not-a-data-folder", why)])
    data = load_dataset(data_dir)
    report = load_runs(paths, data.registry, options)
    models = data_dir / "models.yaml"
    plan, problems = plan_import(
        report, data_dir, data.configurations, models.read_text(encoding="utf-8")
    )
    if report.errors or problems or (strict and report.warnings):
        raise ValidationFailed([*report.errors, *problems, *(report.warnings if strict else ())])
    done = commit(plan, data_dir)
    return ImportSummary(done.written, report.warnings, report, tuple(sorted(report.new_models)))
