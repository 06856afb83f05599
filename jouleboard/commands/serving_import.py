"""What ``import-aiperf`` and ``import-bench`` share: the options a serving benchmark's
result does not record, and the import itself (read every result, check everything against
the data folder, then write all files or none; importers/serving_runs.py)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, get_args

from jouleboard.commands.common import UsageError, warn

if TYPE_CHECKING:
    from jouleboard.core.problems import Problem
    from jouleboard.importers.contract import Skipped
    from jouleboard.importers.serving_runs import RunResult, ServingOptions

Reader = Callable[[Sequence[Path]], "tuple[list[RunResult], list[Skipped], list[Problem]]"]


def positive(text: str) -> int:
    """A whole number of at least 1 (an option's value)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is less than 1")
    return value


def add_arguments(p: argparse.ArgumentParser, what: str, default_dataset: str) -> None:
    """The paths, --out and the options of a run the result does not record."""
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH", help=what)
    p.add_argument("--out", type=Path, default=Path("data"), help="data folder to add them to")
    p.add_argument("--task", required=True, help="the tasks.yaml task the runs measure")
    p.add_argument("--model", help="models.yaml id of the model (default: the served name)")
    p.add_argument(
        "--model-map",
        action="append",
        default=[],
        metavar="SERVED=ID",
        help="the models.yaml id of a served model name (repeatable)",
    )
    p.add_argument(
        "--precision",
        help="weight precision, e.g. bfloat16 or fp8 (default: the model's in models.yaml)",
    )
    p.add_argument("--gpu", metavar="ID", help="gpus.yaml id of the GPUs")
    p.add_argument(
        "--gpu-map",
        action="append",
        default=[],
        metavar="NAME=ID",
        help="the gpus.yaml id of a GPU name the telemetry reports (repeatable)",
    )
    p.add_argument(
        "--num-gpus",
        type=positive,
        metavar="N",
        help="GPUs the energy covers, where the result does not say",
    )
    for degree in ("tensor", "expert", "data"):
        p.add_argument(
            f"--{degree}-parallel",
            type=positive,
            metavar="N",
            help=f"{degree} parallel degree of the server (default 1; on more than one GPU, "
            "give at least one degree)",
        )
    p.add_argument(
        "--max-num-seqs",
        type=positive,
        metavar="N",
        help="the server's batch cap (default: the run's concurrency)",
    )
    p.add_argument("--engine", default="", help="serving engine, e.g. vLLM (shown in notes)")
    p.add_argument("--engine-version", default="", help="its version, e.g. 0.11.0")
    p.add_argument(
        "--dataset",
        default=default_dataset,
        help=f"provenance data set name (default: {default_dataset!r})",
    )
    p.add_argument("--version", default="unknown", help="provenance version of the data set")
    p.add_argument("--license", default="NOASSERTION", help="SPDX license of the data")
    p.add_argument("--citation", default="", help="how to cite the data")


def _pairs(values: Sequence[str], option: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        key, sep, target = value.rpartition("=")
        if not sep or not key or not target:
            raise UsageError(f"{option} {value!r} must be NAME=ID")
        pairs[key] = target
    return pairs


def options_from(args: argparse.Namespace) -> ServingOptions:
    # Here, not at the top: the command line starts without pydantic (config.schema).
    from jouleboard.config.schema import Precision
    from jouleboard.importers.serving_runs import ServingOptions

    allowed = get_args(Precision)
    if args.precision is not None and args.precision not in allowed:
        raise UsageError(f"--precision {args.precision!r} is not one of: {', '.join(allowed)}")

    for name in ("engine", "engine_version", "dataset", "version", "license"):
        if len(getattr(args, name)) > 100:
            raise UsageError(f"--{name.replace('_', '-')} is over 100 characters")
    return ServingOptions(
        task=args.task,
        model=args.model,
        model_map=_pairs(args.model_map, "--model-map"),
        precision=args.precision,
        num_gpus=args.num_gpus,
        gpu=args.gpu,
        gpu_map=_pairs(args.gpu_map, "--gpu-map"),
        tensor_parallel=args.tensor_parallel,
        expert_parallel=args.expert_parallel,
        data_parallel=args.data_parallel,
        max_num_seqs=args.max_num_seqs,
        engine=" ".join(filter(None, (args.engine, args.engine_version))),
        dataset=args.dataset,
        version=args.version,
        license=args.license,
        citation=args.citation,
    )


def run_import(args: argparse.Namespace, importer: str, read: Reader) -> int:
    """Read every result, check all against the data folder, write all files or none."""
    from jouleboard.core.problems import ValidationFailed
    from jouleboard.importers.contract import not_a_data_folder, write_plan
    from jouleboard.importers.serving_runs import plan_runs
    from jouleboard.loading.dataset import load_dataset

    why = not_a_data_folder(args.out)
    if why is not None:
        raise UsageError(why)
    options = options_from(args)
    data = load_dataset(args.out)  # its registries, and the configurations it already has
    runs, skipped, problems = read(args.paths)
    plan, more = plan_runs(importer, runs, options, data.registry, args.out, data.configurations)
    if problems or more:
        raise ValidationFailed(problems + more)
    done = write_plan(plan, args.out, skipped)
    for s in done.skipped:
        print(f"skipped {s.where}: {s.why}")
    for line in done.changes:
        print(f"changed {line}")
    for rel in sorted(plan.files):
        print(f"{'unchanged' if rel in done.unchanged else 'wrote'} {args.out / rel}")
    warn([w for run in runs for w in run.warnings], strict=False)  # imported, but told
    print(
        f"{len(runs)} runs read: {len(done.written)} measurement files written, "
        f"{len(done.unchanged)} already there unchanged, {len(done.skipped)} files skipped"
    )
    return 0
