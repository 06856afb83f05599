"""``jouleboard import-aiperf``: NVIDIA AIPerf runs with GPU telemetry into a data folder."""

from __future__ import annotations

import argparse

from jouleboard.commands import serving_import

HELP = "import NVIDIA AIPerf runs with GPU telemetry (profile_export_aiperf.json)"
IMPORTER = "import-aiperf"


def add_arguments(p: argparse.ArgumentParser) -> None:
    serving_import.add_arguments(
        p,
        "an AIPerf export (profile_export_aiperf.json) or an artifact folder holding them "
        "(one run per concurrency or request rate)",
        default_dataset="AIPerf runs",
    )


def run(args: argparse.Namespace) -> int:
    from jouleboard.importers.aiperf import read_exports

    return serving_import.run_import(args, IMPORTER, read_exports)
