"""``jouleboard diff``: a markdown report of how the rankings would change."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from jouleboard.commands.common import UsageError, kind_code_option

HELP = "markdown report of how the rankings would change"


def add_arguments(d: argparse.ArgumentParser) -> None:
    d.add_argument(
        "--base", required=True, help="a git revision (e.g. origin/main), else a data folder"
    )
    d.add_argument("--data", type=Path, default=Path("data"), help="data folder (default: data)")
    d.add_argument(
        "--threshold",
        type=float,
        default=0.01,
        help="relative change of a configuration's energy per output worth listing "
        "(default 0.01: 1%%)",
    )
    d.add_argument("--out", type=Path, default=None, help="also write the report here")
    kind_code_option(d)


def run(args: argparse.Namespace) -> int:
    from jouleboard.plan.diff import base_data, diff_markdown, load_side

    head = load_side(args.data)
    try:
        with base_data(args.base, args.data) as folder:
            base = load_side(folder)
    except (subprocess.CalledProcessError, ValueError) as e:
        raise UsageError(f"cannot read base {args.base!r}: {e}") from None
    report = diff_markdown(base, head, args.threshold)
    sys.stdout.write(report)
    if args.out:
        args.out.write_text(report, encoding="utf-8")
    return 1 if head.problems else 0
