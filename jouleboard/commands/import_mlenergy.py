"""``jouleboard import-mlenergy``: convert ML.ENERGY leaderboard site data."""

from __future__ import annotations

import argparse
from pathlib import Path

from jouleboard.commands.common import UsageError

HELP = "convert ML.ENERGY leaderboard site data"


def add_arguments(i: argparse.ArgumentParser) -> None:
    i.add_argument("src", type=Path, help="folder with index.json, tasks/ and models/")
    i.add_argument("--out", type=Path, default=Path("data"))


def run(args: argparse.Namespace) -> int:
    from jouleboard.importers.contract import not_a_data_folder
    from jouleboard.importers.mlenergy_site import import_mlenergy

    if not (args.src / "index.json").exists():
        raise UsageError(f"{args.src} has no index.json; expected the ML.ENERGY site data folder")
    why = not_a_data_folder(args.out, may_create=True)
    if why is not None:
        raise UsageError(why)
    done = import_mlenergy(args.src, args.out)
    for task, n in done.counts.items():
        print(f"{task}: {n} configurations")
    total = sum(done.counts.values())
    print(f"wrote {total} measurement files to {args.out / 'measurements'}")
    # What the import did to the registries (comments, order and hand edits are kept).
    for change in done.registry_changes:
        print(change)
    if not done.registry_changes:
        print("registries unchanged")
    print(f"{total} configurations found, {total} published, 0 dropped")
    return 0
