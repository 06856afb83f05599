"""``jouleboard schema``: the JSON Schema of a measurement file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "print the JSON Schema of a measurement file"


def add_arguments(s: argparse.ArgumentParser) -> None:
    s.add_argument("--out", type=Path, default=None, help="write to this file instead")


def run(args: argparse.Namespace) -> int:
    from jouleboard.kinds import registered
    from jouleboard.plan.site import measurement_schema_text

    text = measurement_schema_text(registered())
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
    return 0
