"""``jouleboard import-mlperf``: MLPerf Inference power results into a data folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from jouleboard.commands.common import UsageError

HELP = "import MLPerf Inference power results (whole system at the wall)"


def add_arguments(i: argparse.ArgumentParser) -> None:
    i.add_argument(
        "paths",
        nargs="+",
        type=Path,
        metavar="PATH",
        help="an inference_results_vX.Y repository or any folder below it, down to one "
        "result folder; or a round's summary_results.json",
    )
    i.add_argument(
        "--out",
        type=Path,
        default=Path("data"),
        help="data folder to add the results to (its gpus.yaml names the accelerators)",
    )


def run(args: argparse.Namespace) -> int:
    from jouleboard.config.registry import load_registry
    from jouleboard.core.problems import ValidationFailed
    from jouleboard.importers.contract import not_a_data_folder
    from jouleboard.importers.mlperf import import_mlperf
    from jouleboard.kinds import task_kind_order

    why = not_a_data_folder(args.out)
    if why is not None:
        raise UsageError(why)
    registry, problems = load_registry(args.out, task_kind_order())
    if registry is None:
        raise ValidationFailed(problems)
    done = import_mlperf(args.paths, args.out, registry)
    for s in done.skipped:
        print(f"skipped {s.where}: {s.why}")
    for line in done.changes:
        print(f"changed {line}")
    print(
        f"wrote {len(done.written)} result files to {args.out / 'mlperf'}"
        + (f" ({done.unchanged} already there, unchanged)" if done.unchanged else "")
    )
    total = len(done.written) + done.unchanged + len(done.skipped)
    print(
        f"{total} results found, {len(done.written) + done.unchanged} imported, "
        f"{len(done.skipped)} skipped"
    )
    return 0
