"""``jouleboard import-bench``: TensorRT-LLM benchmark_serving results with an energy block
into a data folder."""

from __future__ import annotations

import argparse

from jouleboard.commands import serving_import

HELP = "import TensorRT-LLM benchmark_serving results that recorded GPU energy"
IMPORTER = "import-bench"


def add_arguments(p: argparse.ArgumentParser) -> None:
    serving_import.add_arguments(
        p,
        "a benchmark_serving.py --save-result file, or a folder of them (--result-dir); "
        "give --gpu and --num-gpus: the result does not name the GPUs",
        default_dataset="TensorRT-LLM benchmark_serving runs",
    )


def run(args: argparse.Namespace) -> int:
    from jouleboard.importers.trtllm_bench import read_results

    return serving_import.run_import(args, IMPORTER, read_results)
