"""``jouleboard diff``: a markdown report of how the rankings would change."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from jouleboard.commands.common import UsageError, check_out, kind_code_option, write_out

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
    d.add_argument(
        "--out",
        type=Path,
        default=None,
        help="also write the report here (it replaces only a report it wrote)",
    )
    kind_code_option(d)


def run(args: argparse.Namespace) -> int:
    from jouleboard.plan.diff import base_data, diff_markdown, is_report, load_side

    if args.out:  # before the work, which may take a while
        check_out(args.out, is_report, "a report of jouleboard diff")
    head = load_side(args.data)
    if not Path(args.base).is_dir() and (why := _no_revisions(args.data)) is not None:
        raise UsageError(
            f"cannot read base {args.base!r}: {why}; --base is a git revision of the "
            "repository holding the data folder, or a folder holding another copy of the "
            "data (a second checkout)"
        )
    try:
        with base_data(args.base, args.data) as folder:
            base = load_side(folder)
    except (subprocess.CalledProcessError, ValueError) as e:
        raise UsageError(f"cannot read base {args.base!r}: {e}") from None
    report = diff_markdown(base, head, args.threshold)
    sys.stdout.write(report)
    if args.out:
        check_out(args.out, is_report, "a report of jouleboard diff")  # again, after the work
        write_out(args.out, report)
    return 1 if head.problems else 0


def _no_revisions(data: Path) -> str | None:
    """Why ``data`` has no git revisions to compare with (not in a git repository, git
    missing, or no commit yet), or None when it has."""

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", "-C", str(data), *args], capture_output=True, text=True, timeout=30
        )

    try:
        if git("rev-parse", "--show-toplevel").returncode != 0:
            return f"the data folder {data.as_posix()}/ is in no git repository (git init)"
        if git("rev-parse", "--verify", "--quiet", "HEAD").returncode != 0:
            return "the git repository holding the data folder has no commit yet (git commit)"
    except (OSError, subprocess.SubprocessError):
        return "git is not installed, so no revision can be read"
    return None
