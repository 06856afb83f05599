"""What several commands share: usage errors, the options every data-loading command takes,
and how problems and warnings are printed."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from jouleboard.core.escape import text_line
from jouleboard.core.files import replace_text
from jouleboard.core.problems import Problem, ValidationFailed, shown_path
from jouleboard.core.safe_read import FileRefused, read_capped

VERBOSITY = 1  # without -q or -v: stage lines and warnings


class UsageError(Exception):
    """A bad command-line value: printed as one line, exit status 2."""


# The largest file an --out may name that is read to see whether it is one jouleboard wrote.
_OUT_FILE_CAP = 16 * 1024 * 1024


def check_out(path: Path, ours: Callable[[str], bool], what: str) -> None:
    """Refuse, before any work, an ``--out`` file that cannot be written: its folder is
    missing, or a file is there that is not ``what`` (``ours`` recognises the text an
    earlier run wrote). Another file, a link or a folder is never replaced, as the build
    never replaces a folder it did not make."""
    if not path.parent.is_dir():
        raise UsageError(
            f"cannot write --out {shown_path(path)}: there is no folder "
            f"{shown_path(path.parent)} (No such file or directory)"
        )
    if not (path.is_symlink() or path.exists()):
        return
    reason = ""
    try:
        old = read_capped(path, _OUT_FILE_CAP).decode("utf-8")
    except FileRefused as e:
        reason, old = f" ({e.message})", ""
    except UnicodeDecodeError:
        old = ""
    if reason or not ours(old):
        raise UsageError(
            f"--out {shown_path(path)} is there and is not {what}{reason}; jouleboard "
            "replaces only a file it wrote: give another file name, or remove this one "
            "yourself"
        )


def write_out(path: Path, text: str) -> None:
    """Write an ``--out`` file whole (see :func:`replace_text`; first :func:`check_out`)."""
    try:
        replace_text(path, text)
    except OSError as e:
        raise UsageError(f"cannot write --out {shown_path(path)}: {e.strerror or e}") from None


def kind_code_option(parser: argparse.ArgumentParser) -> None:
    """The consent to run a site's kinds (code), on every command that loads a data folder."""
    parser.add_argument(
        "--allow-kind-code",
        action="store_true",
        help="run the Python files site.yaml lists under kinds (code: review "
        "them first; without this they are refused)",
    )


def require_prometheus_option(parser: argparse.ArgumentParser) -> None:
    """The one raw-run policy flag, the same on import-runs, validate and build."""
    parser.add_argument(
        "--require-prometheus",
        action="store_true",
        help="drop raw runs without prometheus.json (stricter than the "
        "ML.ENERGY toolkit, which keeps them)",
    )


def warn(warnings: Sequence[Problem], strict: bool) -> None:
    """Print warnings (dropped runs); in strict mode they fail like errors."""
    if strict and warnings:
        raise ValidationFailed(list(warnings))
    for w in warnings:
        print(f"warning: {text_line(w)}", file=sys.stderr)


def problem_report(error: ValidationFailed) -> str:
    """The text report, one line per problem: a file name or value with a newline in it
    shows the newline as ``\\n`` instead of forging a line of its own."""
    total = error.report().rsplit("\n", 1)[-1]  # "N problem(s) in M file(s)"
    return "\n".join([*(text_line(p) for p in error.problems), total])


def github_annotations(problems: Sequence[Problem], level: str = "error") -> list[str]:
    """``::error`` (or ``::warning``) workflow commands, so a pull request shows each
    problem on its file, at its line and column where they can be told (core/locate.py).
    Escaped as GitHub's own toolkit escapes them: a message's ``%``, CR and LF; a
    property's ``:`` and ``,`` too, so a file name holding ``::`` cannot end the properties
    early. A message shows its controls (a bidi override, say) escaped, as the text report
    does (core/escape.py text_line)."""
    from jouleboard.core.locate import positions

    def data(text: str) -> str:
        return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")

    def prop(text: str) -> str:
        return data(text).replace(":", "%3A").replace(",", "%2C")

    lines = []
    for p, at in zip(problems, positions(problems), strict=True):
        where = f"file={prop(p.file)}" + (f",line={at[0]},col={at[1]}" if at else "")
        lines.append(f"::{level} {where},title={prop(p.rule)}::{data(text_line(str(p)))}")
    return lines
