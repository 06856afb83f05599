"""``jouleboard schema [NAME]``: a published JSON Schema (jouleboard/plan/schemas.py): of a
measurement file (the default), site.yaml, a registry or an MLPerf result file."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HELP = "print the JSON Schema of a measurement file, site.yaml, a registry or an MLPerf result"
# Names, for the parser (jouleboard/plan/schemas.py SCHEMAS has the same keys; the parser is
# built without importing pydantic, so they are listed here and kept equal by a test).
NAMES = ("measurement", "site", "models", "gpus", "tasks", "quality", "releases", "mlperf-result")


def add_arguments(s: argparse.ArgumentParser) -> None:
    s.add_argument(
        "name",
        nargs="?",
        default="measurement",
        choices=(*NAMES, "all"),
        help="which file's schema (default: measurement); all: every one, into the folder "
        "--out names (as the repository's schema/ holds them)",
    )
    s.add_argument(
        "--out",
        type=Path,
        default=None,
        help="write to this file (all: folder); it replaces only a schema it wrote",
    )


def run(args: argparse.Namespace) -> int:
    from jouleboard.commands.common import UsageError, check_out, write_out
    from jouleboard.plan.schemas import SCHEMAS, schema_text

    if args.name != "all":
        text = schema_text(args.name)
        if args.out is None:
            sys.stdout.write(text)
        else:
            check_out(args.out, is_schema, "a JSON Schema of jouleboard's")
            write_out(args.out, text)
        return 0
    if args.out is None or not args.out.is_dir():
        raise UsageError("schema all writes one file per schema: give --out an existing folder")
    for file, _, _ in SCHEMAS.values():  # every one checked before any is written
        check_out(args.out / file, is_schema, "a JSON Schema of jouleboard's")
    for name, (file, what, _) in SCHEMAS.items():
        write_out(args.out / file, schema_text(name))
        print(f"{args.out / file}: {what}")
    return 0


def is_schema(text: str) -> bool:
    """Whether ``text`` is a schema this command wrote (in any version: a JSON Schema whose
    title starts with "jouleboard ")."""
    try:
        schema = json.loads(text)
    except ValueError:
        return False
    return (
        isinstance(schema, dict)
        and "$schema" in schema
        and str(schema.get("title", "")).startswith("jouleboard ")
    )
