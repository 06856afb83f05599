"""Command line: build, validate, rank, import-mlenergy.

Heavy libraries (altair, vl_convert) are imported by the commands that need them, so
``jouleboard --help``, ``validate`` and ``rank`` start fast.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from jouleboard.config.schema import PERCENTILES
from jouleboard.core.escape import text_line
from jouleboard.core.problems import Problem, ValidationFailed
from jouleboard.core.resources import EXAMPLES
from jouleboard.output.folder import OutputRefused
from jouleboard.rank.ranking import RANK_BY
from jouleboard.render.downloads import to_csv, to_json

INTERRUPTED = 130  # exit status after Ctrl-C (128 + SIGINT), as shells report it


class UsageError(Exception):
    """A bad command-line value: printed as one line, exit status 2."""


ENVIRONMENT_HELP = """environment variables:
  JOULEBOARD_CACHE         folder of rendered charts, shared by every build
                           (default: $XDG_CACHE_HOME/jouleboard, else ~/.cache/jouleboard)
  XDG_CACHE_HOME           base of the default chart cache
  JOULEBOARD_LOCK_TIMEOUT  seconds a build waits for another build of the same --out
  JOULEBOARD_ALLOW_KIND_CODE
                           1: run the kinds site.yaml declares (Python code), as
                           --allow-kind-code does; never for untrusted data (a PR's files)
  COLUMNS                  terminal width the rank table fits (default: the terminal's)
  JOULEBOARD_CHROMIUM      Chromium for the browser tests (tests only)

start a new leaderboard with `jouleboard init DIR`, then `jouleboard build` in DIR."""


def _port(text: str) -> int:
    """A TCP port number for ``serve --port`` (0 lets the system pick a free one)."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 0 to 65535, got {text!r}")
    return port


VERBOSITY = 1  # without -q or -v: stage lines and warnings


def _parser() -> argparse.ArgumentParser:
    from jouleboard import __version__

    # -q/-v before or after the command (`python build.py -q` passes them after "build");
    # SUPPRESS keeps a command's parser from resetting what was given before it (the
    # actions are shared, so no default is set on them: see VERBOSITY).
    talk = argparse.ArgumentParser(add_help=False)
    group = talk.add_mutually_exclusive_group()
    group.add_argument(
        "-q",
        "--quiet",
        action="store_const",
        dest="verbosity",
        const=0,
        default=argparse.SUPPRESS,
        help="print only results, warnings and errors",
    )
    group.add_argument(
        "-v",
        "--verbose",
        action="store_const",
        dest="verbosity",
        const=2,
        default=argparse.SUPPRESS,
        help="also print where templates, data and the chart cache are",
    )
    p = argparse.ArgumentParser(
        prog="jouleboard",
        description=("Publish GPU energy-efficiency leaderboards of AI models as a static site."),
        epilog=ENVIRONMENT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[talk],
    )
    p.add_argument("--version", action="version", version=f"jouleboard {__version__}")
    commands = p.add_subparsers(dest="command", required=True)

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, help=help, parents=[talk])

    n = command(
        "init",
        help="make a new leaderboard folder (registries, an example "
        "measurement, site.yaml, GitHub workflows)",
    )
    n.add_argument("dir", type=Path, help="the new folder (must not exist or be empty)")
    n.add_argument(
        "--example",
        choices=EXAMPLES,
        default=None,
        help="start from bundled data instead of the one example measurement",
    )

    b = command("build", help="validate the data and build the static site")
    b.add_argument("--data", type=Path, default=Path("data"), help="data folder (default: data)")
    b.add_argument("--out", type=Path, default=Path("site"), help="output folder (default: site)")
    b.add_argument("--base-url", help="URL path the site is served under, e.g. /leaderboard/")
    b.add_argument(
        "--site-url",
        default=None,
        help="origin the site is published at, e.g. https://example.org "
        "(default: site.yaml's site_url)",
    )
    b.add_argument(
        "--project",
        type=Path,
        default=None,
        help="folder with templates/ and content/ (default: beside --data)",
    )
    b.add_argument(
        "--runs",
        type=Path,
        action="append",
        default=[],
        metavar="RUN_DIR",
        help="raw ML.ENERGY benchmark runs to publish with the measurement files "
        "(run/ or any folder below it; repeatable)",
    )
    b.add_argument("--strict", action="store_true", help="fail on warnings (dropped runs)")
    b.add_argument(
        "--png",
        action="store_true",
        help="also render every chart as a 2x PNG (link previews, oEmbed "
        "thumbnails, 'PNG (2×)' links); the deploy workflow passes it",
    )
    _require_prometheus_option(b)
    _kind_code_option(b)

    v = command("validate", help="check measurement files and registries")
    v.add_argument(
        "paths",
        nargs="*",
        type=Path,
        help="data folders, or measurement files/folders or raw ML.ENERGY run "
        "trees checked against --data",
    )
    v.add_argument("--data", type=Path, default=Path("data"))
    v.add_argument("--strict", action="store_true", help="fail on warnings (dropped runs)")
    _require_prometheus_option(v)
    v.add_argument(
        "--format",
        choices=("text", "github"),
        default="text",
        help="github: also print problems as GitHub Actions error annotations",
    )
    _kind_code_option(v)

    d = command("diff", help="markdown report of how the rankings would change")
    d.add_argument(
        "--base", required=True, help="a git revision (e.g. origin/main), else a data folder"
    )
    d.add_argument("--data", type=Path, default=Path("data"))
    d.add_argument(
        "--threshold",
        type=float,
        default=0.01,
        help="relative change of a configuration's energy per output worth listing "
        "(default 0.01: 1%%)",
    )
    d.add_argument("--out", type=Path, default=None, help="also write the report here")
    _kind_code_option(d)

    r = command("rank", help="print a task's ranking under a latency deadline")
    r.add_argument("--task", required=True, help="a task id of tasks.yaml")
    r.add_argument(
        "--deadline-ms",
        type=float,
        default=None,
        help="latency deadline in ms (default: the task's default)",
    )
    r.add_argument(
        "--percentile",
        choices=PERCENTILES,
        default=None,
        help="latency percentile the deadline applies to, where the task's kind "
        "has percentiles (default: the task's)",
    )
    r.add_argument(
        "--gpu",
        action="append",
        default=None,
        help="allowed GPU (repeatable; default: the site's default GPUs)",
    )
    r.add_argument("--top", type=int, default=None, help="keep the first N rows")
    r.add_argument(
        "--energy-budget",
        type=float,
        default=None,
        help="drop configurations above this many J per output (the task's "
        "unit: token, image, video...)",
    )
    r.add_argument(
        "--by",
        choices=RANK_BY,
        default="energy_per_token",
        help="what each model's configuration and the order minimise",
    )
    r.add_argument("--format", choices=("table", "csv", "json"), default="table")
    r.add_argument(
        "--columns",
        default=None,
        metavar="COL,COL",
        help="columns to print, comma-separated (default: as many as fit the "
        "terminal for a table, all for csv/json)",
    )
    r.add_argument("--data", type=Path, default=Path("data"))
    _kind_code_option(r)

    sv = command("serve", help="preview on 127.0.0.1, rebuilding on every change")
    sv.add_argument("--data", type=Path, default=Path("data"))
    sv.add_argument(
        "--out",
        type=Path,
        default=Path(".jouleboard-preview"),
        help="preview build folder (default: .jouleboard-preview)",
    )
    sv.add_argument("--port", type=_port, default=8000, help="0 picks a free port")
    sv.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default: 127.0.0.1, this machine only)",
    )
    sv.add_argument("--open", action="store_true", help="open the site in a web browser")
    _kind_code_option(sv)

    s = command("schema", help="print the JSON Schema of a measurement file")
    s.add_argument("--out", type=Path, default=None, help="write to this file instead")

    i = command("import-mlenergy", help="convert ML.ENERGY leaderboard site data")
    i.add_argument("src", type=Path, help="folder with index.json, tasks/ and models/")
    i.add_argument("--out", type=Path, default=Path("data"))

    ir = command("import-runs", help="convert raw ML.ENERGY benchmark runs into measurement files")
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
        ir.add_argument(
            f"--{name}",
            default=None,
            help=f"provenance {name} (default: jouleboard-provenance.yaml beside the "
            "runs; date: the run's own; see docs/raw-runs.md)",
        )
    _require_prometheus_option(ir)
    ir.add_argument(
        "--add-models",
        action="store_true",
        help="add models missing from models.yaml, from the runs' model_info.json",
    )
    ir.add_argument("--strict", action="store_true", help="fail on warnings (dropped runs)")
    _kind_code_option(ir)
    return p


def _kind_code_option(parser: argparse.ArgumentParser) -> None:
    """The consent to run a site's kinds (code), on every command that loads a data folder."""
    parser.add_argument(
        "--allow-kind-code",
        action="store_true",
        help="run the Python files site.yaml lists under kinds (code: review "
        "them first; without this they are refused)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if hasattr(args, "allow_kind_code"):  # a command that loads data: consent or not
        from jouleboard.kinds.site_kinds import allow_kind_code

        allow_kind_code(args.allow_kind_code)
    try:
        _require_data(args)
        if args.command == "init":
            return _init(args)
        if args.command == "build":
            return _build(args)
        if args.command == "validate":
            return _validate(args)
        if args.command == "rank":
            return _rank(args)
        if args.command == "import-mlenergy":
            return _import(args)
        if args.command == "import-runs":
            return _import_runs(args)
        if args.command == "schema":
            return _schema(args)
        if args.command == "diff":
            return _diff(args)
        if args.command == "serve":
            from jouleboard.commands.serve import serve

            serve(args.data, args.out, args.port, host=args.host, open_browser=args.open)
            return 0
    except ValidationFailed as e:
        print(problem_report(e), file=sys.stderr)
        if getattr(args, "format", None) == "github":
            print("\n".join(github_annotations(e.problems)))
        print(
            "nothing was written" if args.command == "build" else "validation failed",
            file=sys.stderr,
        )
        return 1
    except UsageError as e:
        print(f"jouleboard {args.command}: error: {e}", file=sys.stderr)
        return 2
    except OutputRefused as e:  # an --out a build may not replace: nothing was touched
        print(f"jouleboard {args.command}: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # a file or port the command needs: one line, no traceback
        print(f"jouleboard {args.command}: error: {os_error_text(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C: one line, the shell's status for SIGINT
        print(f"jouleboard {args.command}: interrupted", file=sys.stderr)
        return INTERRUPTED
    return 2


def os_error_text(error: OSError) -> str:
    """``strerror: filename`` (or the message an OSError was raised with)."""
    if error.strerror and error.filename is not None:
        return f"{error.strerror}: {error.filename}"
    return error.strerror or str(error)


def _require_data(args: argparse.Namespace) -> None:
    """A command that reads --data names a missing folder: one line, before any work."""
    data = getattr(args, "data", None)
    if data is None or args.command not in {"build", "validate", "rank", "diff", "serve"}:
        return
    if args.command == "validate" and any((p / "site.yaml").exists() for p in args.paths):
        return  # the data folders are given as paths
    if not data.is_dir():
        from jouleboard.loading.dataset import data_folder_missing

        raise UsageError(data_folder_missing(data))


def _init(args: argparse.Namespace) -> int:
    from jouleboard.commands.init import InitRefused, init_site

    try:
        written = init_site(args.dir, example=args.example)
    except InitRefused as e:
        raise UsageError(str(e)) from None
    what = f"the {args.example} example" if args.example else "an example measurement"
    print(
        f"made {args.dir} ({len(written)} files, with {what}); next:\n"
        f"  cd {args.dir}\n  jouleboard build     # the site, into site/\n"
        f"  jouleboard serve     # preview at http://127.0.0.1:8000/"
    )
    return 0


def _build(args: argparse.Namespace) -> int:
    import re

    from jouleboard.config.schema import BASE_URL_PATTERN, SITE_URL_PATTERN
    from jouleboard.core.console import Progress
    from jouleboard.engine.build import build_site

    if args.base_url is not None and not re.fullmatch(BASE_URL_PATTERN, args.base_url):
        raise UsageError(
            f"--base-url must be a URL path such as / or /leaderboard/ (letters, "
            f"digits, '.', '_', '~', '-'; ending in '/'), got {args.base_url!r}"
        )
    if args.site_url is not None and not re.fullmatch(SITE_URL_PATTERN, args.site_url):
        raise UsageError(
            f"--site-url must be an origin such as https://example.org (no "
            f"path), got {args.site_url!r}"
        )
    progress = Progress(getattr(args, "verbosity", VERBOSITY))
    summary = build_site(
        args.data,
        args.out,
        base_url=args.base_url,
        project=args.project,
        runs=args.runs,
        strict=args.strict,
        site_url=args.site_url,
        progress=progress,
        require_prometheus=args.require_prometheus,
        png=args.png,
        one_shot=True,
    )
    _warn(summary.warnings, strict=False)
    if not summary.site_url:
        print(
            "warning: site_url is empty, so embed codes, citations, feeds and og:image "
            "links are relative to this site; set site_url in site.yaml or pass --site-url",
            file=sys.stderr,
        )
    print(summary)
    return 0


def _require_prometheus_option(parser: argparse.ArgumentParser) -> None:
    """The one raw-run policy flag, the same on import-runs, validate and build."""
    parser.add_argument(
        "--require-prometheus",
        action="store_true",
        help="drop raw runs without prometheus.json (stricter than the "
        "ML.ENERGY toolkit, which keeps them)",
    )


def _warn(warnings: Sequence[Problem], strict: bool) -> None:
    """Print warnings (dropped runs); in strict mode they fail like errors."""
    if strict and warnings:
        raise ValidationFailed(list(warnings))
    for w in warnings:
        print(f"warning: {text_line(w)}", file=sys.stderr)


def _validate(args: argparse.Namespace) -> int:
    from jouleboard.importers.mlenergy_runs import is_run_tree
    from jouleboard.loading.dataset import load_dataset
    from jouleboard.plan.diff import Side
    from jouleboard.plan.releases import load_releases

    data_dirs = [p for p in args.paths if (p / "site.yaml").exists()] or [args.data]
    others = [p for p in args.paths if not (p / "site.yaml").exists()]
    runs = [p for p in others if is_run_tree(p)]
    extra = [p for p in others if p not in runs]
    problems = []
    warnings: list[Problem] = []
    total = 0
    for data in data_dirs:
        try:
            dataset = load_dataset(data, extra, runs, require_prometheus=args.require_prometheus)
            total += len(dataset.configurations)
            warnings.extend(dataset.warnings)
            # Each older release's ref must give its data/ (what build publishes from it).
            load_releases(dataset, data, read=lambda _folder: Side(None))
        except ValidationFailed as e:
            problems.extend(e.problems)
    if problems:
        raise ValidationFailed(problems)
    _warn(warnings, args.strict)
    dropped = (
        f" ({len(warnings)} run{'s' * (len(warnings) != 1)} dropped: see the warnings)"
        if warnings
        else ""
    )
    print(f"ok: {total} configuration{'s' * (total != 1)} valid{dropped}")
    return 0


def _rank(args: argparse.Namespace) -> int:
    from jouleboard.api import rank_task
    from jouleboard.loading.dataset import load_dataset

    data = load_dataset(args.data)
    try:
        ranking = rank_task(
            data,
            args.task,
            args.deadline_ms,
            args.percentile,
            args.gpu,
            args.top,
            args.energy_budget,
            args.by,
        )
    except ValueError as e:
        raise UsageError(str(e)) from None
    if ranking.unranked:
        print(f"not ranked (no published accuracy): {', '.join(ranking.unranked)}", file=sys.stderr)
    if ranking.why_empty is not None:  # stdout stays what its format is: an empty table
        print(f"nothing to rank: {ranking.why_empty}", file=sys.stderr)
    sys.stdout.write(
        format_rank(ranking.records, args.format, ranking.columns, getattr(args, "columns", None))
    )
    return 0


def format_rank(
    records: list[dict[str, object]],
    fmt: str,
    columns: Sequence[str],
    picked: str | None = None,
    width: int | None = None,
) -> str:
    """The ranking as JSON, CSV or a text table. ``picked`` (``--columns``) chooses and
    orders the columns; otherwise a table keeps what fits in ``width`` characters."""
    from jouleboard.core.console import terminal_width, text_table

    if picked is not None:
        from jouleboard.core.console import HEADERS

        by_header = {HEADERS.get(c, c).casefold(): c for c in columns}
        chosen = [
            c if c in columns else by_header.get(c.casefold(), c)
            for c in (c.strip() for c in picked.split(","))
            if c
        ]
        unknown = [c for c in chosen if c not in columns]
        if unknown or not chosen:
            raise UsageError(
                f"unknown column {unknown[0] if unknown else picked!r}; valid: {', '.join(columns)}"
            )
        columns = chosen
        records = [{c: r[c] for c in columns} for r in records]
    if fmt == "json":
        return to_json(records)
    if fmt == "csv":
        return to_csv(columns, records)
    from jouleboard.measure.formats import format_value

    cells = {c: [text_line(format_value(c, r[c])) for r in records] for c in columns}
    fit = None if picked is not None else (width or terminal_width())
    return text_table(records, columns, cells, fit)


def _import(args: argparse.Namespace) -> int:
    from jouleboard.importers.contract import not_a_data_folder
    from jouleboard.importers.mlenergy_site import import_mlenergy

    if not (args.src / "index.json").exists():
        raise UsageError(f"{args.src} has no index.json; expected the ML.ENERGY site data folder")
    why = not_a_data_folder(args.out, may_create=True)
    if why is not None:
        raise UsageError(why)
    counts = import_mlenergy(args.src, args.out)
    for task, n in counts.items():
        print(f"{task}: {n} configurations")
    total = sum(counts.values())
    print(f"wrote {total} measurement files to {args.out / 'measurements'}")
    print(f"{total} configurations found, {total} published, 0 dropped")
    return 0


def _import_runs(args: argparse.Namespace) -> int:
    from jouleboard.importers.contract import not_a_data_folder
    from jouleboard.importers.mlenergy_runs import RunOptions, RunPolicy, import_runs
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
    _warn(summary.warnings, strict=False)
    if summary.added_models:
        print(f"added to models.yaml: {', '.join(summary.added_models)}")
    print(f"wrote {len(summary.written)} measurement files to {args.out / 'measurements'}")
    if summary.report is not None:
        print(summary.report.summary())
    return 0


def _schema(args: argparse.Namespace) -> int:
    from jouleboard.plan.site import measurement_schema_text

    text = measurement_schema_text()
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
    return 0


def problem_report(error: ValidationFailed) -> str:
    """The text report, one line per problem: a file name or value with a newline in it
    shows the newline as ``\\n`` instead of forging a line of its own."""
    total = error.report().rsplit("\n", 1)[-1]  # "N problem(s) in M file(s)"
    return "\n".join([*(text_line(p) for p in error.problems), total])


def github_annotations(problems: Sequence[Problem]) -> list[str]:
    """``::error`` workflow commands, so a pull request shows each problem on its file."""

    def clean(text: str) -> str:
        return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")

    lines = []
    for p in problems:
        line = _line_of(p)
        where = f"file={clean(p.file).replace(',', '%2C')}" + (f",line={line}" if line else "")
        lines.append(f"::error {where},title={clean(p.rule)}::{clean(str(p))}")
    return lines


def _line_of(problem: Problem) -> int | None:
    """The line where the pointer's last key appears in the file (best effort)."""
    key = problem.pointer.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
    if not key or key.isdigit():
        return None
    try:
        text = Path(problem.file).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for number, line in enumerate(text.splitlines(), start=1):
        if f'"{key}"' in line or line.lstrip().startswith(f"{key}:"):
            return number
    return None


def _diff(args: argparse.Namespace) -> int:
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
