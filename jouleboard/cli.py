"""Command line: parses ``jouleboard <command> ...`` and dispatches to the command's module
in jouleboard/commands/ (one module per command). Each command imports what it runs when it
runs, so ``jouleboard --help``, ``validate`` and ``rank`` start fast.
"""

from __future__ import annotations

import argparse
import atexit
import difflib
import os
import sys
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from jouleboard.commands import (
    build,
    diff,
    docs,
    import_aiperf,
    import_bench,
    import_mlenergy,
    import_mlperf,
    import_runs,
    init,
    rank,
    schema,
    serve,
    validate,
)
from jouleboard.commands.common import UsageError, github_annotations, problem_report
from jouleboard.core.problems import RenderFailed, ValidationFailed
from jouleboard.output.folder import OutputRefused

INTERRUPTED = 130  # exit status after Ctrl-C (128 + SIGINT), as shells report it
# In the order --help lists them.
COMMANDS: dict[str, ModuleType] = {
    "init": init,
    "build": build,
    "validate": validate,
    "diff": diff,
    "rank": rank,
    "serve": serve,
    "schema": schema,
    "docs": docs,
    "import-mlenergy": import_mlenergy,
    "import-runs": import_runs,
    "import-mlperf": import_mlperf,
    "import-aiperf": import_aiperf,
    "import-bench": import_bench,
}
# The commands that read --data, which must then be a folder.
READS_DATA = frozenset({"build", "validate", "rank", "diff", "serve"})

ENVIRONMENT_HELP = """environment variables:
  JOULEBOARD_CACHE         folder of rendered charts, shared by every build, and of
                           the measurement files the last builds parsed (by their bytes)
                           (default: $XDG_CACHE_HOME/jouleboard, else ~/.cache/jouleboard)
  XDG_CACHE_HOME           base of the default chart cache
  JOULEBOARD_LOCK_TIMEOUT  seconds a build waits for another build of the same --out
  JOULEBOARD_ALLOW_KIND_CODE
                           1: run the kinds site.yaml declares (Python code), as
                           --allow-kind-code does; never for untrusted data (a PR's files)
  FONTCONFIG_FILE, XDG_CONFIG_HOME, XDG_DATA_HOME
                           where the system's fonts are: a chart with a character the
                           charts' own font lacks (Chinese, say) is drawn with them, and
                           drawn again when they change
  COLUMNS                  terminal width the rank table fits (default: the terminal's)
  JOULEBOARD_CHROMIUM      Chromium for the browser tests (tests only)

start a new leaderboard with `jouleboard init DIR`, then `jouleboard build` in DIR."""


def _parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The command line's parser, and each command's own (for its usage and options)."""
    from jouleboard import __version__

    # -q/-v before or after the command (`python build.py -q` passes them after "build");
    # SUPPRESS keeps a command's parser from resetting what was given before it (the
    # actions are shared, so no default is set on them: see commands.common.VERBOSITY).
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
    parsers = {}
    for name, module in COMMANDS.items():
        parsers[name] = commands.add_parser(name, help=module.HELP, parents=[talk])
        module.add_arguments(parsers[name])
    return p, parsers


def _unrecognized(parser: argparse.ArgumentParser, extras: Sequence[str]) -> NoReturn:
    """argparse's "unrecognized arguments" error, with the option each misspelt one is
    closest to (``--output``: did you mean ``--out``?); exits with status 2."""
    known = [s for action in parser._actions for s in action.option_strings]
    hints = []
    for word in extras:
        name = word.split("=", 1)[0]
        if name.startswith("-") and (close := difflib.get_close_matches(name, known, n=1)):
            hints.append(f"did you mean {close[0]} for {name}?")
    parser.error(f"unrecognized arguments: {' '.join(extras)}" + "".join(f"; {h}" for h in hints))


def main(argv: Sequence[str] | None = None) -> int:
    parser, commands = _parser()
    args, extras = parser.parse_known_args(argv)
    if extras:
        _unrecognized(commands[args.command], extras)
    if hasattr(args, "allow_kind_code"):  # a command that loads data: consent or not
        from jouleboard.core.consent import allow_kind_code

        allow_kind_code(args.allow_kind_code)
    try:
        _require_data(args)
        return int(COMMANDS[args.command].run(args))
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
    # An --out a build may not replace, or charts no worker could draw: nothing was touched.
    except (OutputRefused, RenderFailed) as e:
        print(f"jouleboard {args.command}: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # a file or port the command needs: one line, no traceback
        print(f"jouleboard {args.command}: error: {os_error_text(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C: one line, the shell's status for SIGINT
        print(f"jouleboard {args.command}: interrupted", file=sys.stderr)
        return INTERRUPTED


def run(argv: Sequence[str] | None = None) -> NoReturn:
    """The ``jouleboard`` command (and ``python -m jouleboard``, ``python build.py``):
    :func:`main`, then :func:`exit_now`."""
    _collect_less_often()
    exit_now(main(argv))


def _collect_less_often() -> None:
    """Run the cyclic garbage collector after 200,000 new objects instead of 700, as mypy's
    command line does. A build makes millions of objects and frees nearly all of them by
    their reference counts; each young collection also walks what the last ones kept, and the
    default thresholds spent about 90 ms of an edit rebuild's 1.0 s of CPU on it. Only the
    command's own process: a program that imports jouleboard keeps its own settings."""
    if sys.implementation.name == "cpython":
        import gc

        gc.set_threshold(200_000, 30, 30)


def exit_now(code: int) -> NoReturn:
    """End the process with status ``code`` without the interpreter's teardown, which
    frees every module and object one at a time: about 45 ms after a build (a rebuild's
    whole time is about 1.2 s), as mypy's command line does. First what a normal exit
    does that matters: the ``atexit`` functions (multiprocessing's finalizers, temporary
    folders not yet removed) and flushing stdout and stderr. A process that still runs a
    thread of its own (a server's, a build's) exits normally, joining it as it would."""
    if threading.active_count() > 1:
        sys.exit(code)
    try:
        atexit._run_exitfuncs()  # (they run once: the list is empty after)
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # a closed pipe, say: the normal exit reports it as it always has
        sys.exit(code)
    os._exit(code)


def os_error_text(error: OSError) -> str:
    """``strerror: filename`` (or the message an OSError was raised with)."""
    if error.strerror and error.filename is not None:
        return f"{error.strerror}: {error.filename}"
    return error.strerror or str(error)


def _require_data(args: argparse.Namespace) -> None:
    """A command that reads --data names a missing folder: one line, before any work."""
    data = getattr(args, "data", None)
    if data is None or args.command not in READS_DATA:
        return
    if args.command == "validate" and any((p / "site.yaml").exists() for p in args.paths):
        return  # the data folders are given as paths
    if not data.is_dir():
        from jouleboard.loading.layout import data_folder_missing

        raise UsageError(data_folder_missing(data))
