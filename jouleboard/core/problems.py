"""Located problems: what a contributor needs to fix bad input."""

from __future__ import annotations

import difflib
import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from jouleboard.core.text_rules import printable


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    """One problem in one file: ``file: /json/pointer: rule-id: message (hint)``."""

    file: str
    pointer: str
    rule: str
    message: str
    hint: str = ""

    def __str__(self) -> str:
        text = f"{self.file}: {self.pointer or '/'}: {self.rule}: {self.message}"
        return f"{text} ({self.hint})" if self.hint else text


class ValidationFailed(Exception):
    """Raised with every problem found; nothing has been written when it is raised."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems)
        super().__init__(f"{len(self.problems)} problem(s)")

    def report(self) -> str:
        lines = [str(p) for p in self.problems]
        files = len({p.file for p in self.problems})
        lines.append(f"{len(self.problems)} problem(s) in {files} file(s)")
        return "\n".join(lines)


class RenderFailed(Exception):
    """The charts could not be drawn, whatever the input: vl-convert did not start, or a
    chart worker process ended abruptly (killed, out of memory). Its text is one line: what
    happened and what to do. Nothing has been written when it is raised."""


def closest(value: str, known: Iterable[str]) -> str | None:
    """The one of ``known`` that ``value`` was most likely meant to be (a typo, or the
    wrong case: ``h100`` for ``H100``), or None when none is near."""
    by_folded: dict[str, str] = {}
    for name in sorted(known):
        by_folded.setdefault(name.casefold(), name)
    close = difflib.get_close_matches(value.casefold(), list(by_folded), n=1)
    return by_folded[close[0]] if close else None


def did_you_mean(value: str, known: Iterable[str]) -> str:
    """``"did you mean 'H100'? "`` when ``value`` is near one of ``known``, else ``""``:
    the start of a hint."""
    near = closest(value, known)
    return f"did you mean {near!r}? " if near is not None else ""


def pointer(*parts: object) -> str:
    """JSON pointer (RFC 6901) for a path of keys and indices; a key YAML read as null or a
    boolean is spelt as the file has it (``null``, ``true``), not as Python does."""
    return "".join("/" + _token(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _token(part: object) -> str:
    return "null" if part is None else str(part).lower() if isinstance(part, bool) else str(part)


@functools.lru_cache(maxsize=4)
def _resolved_cwd(cwd: str) -> Path:
    return Path(cwd).resolve()


def resolved(path: Path) -> Path:
    """``path.resolve()``, or the absolute path when it cannot be resolved (a symlink loop
    raises RuntimeError; the loop is reported where the path is read)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()


@functools.lru_cache(maxsize=1024)
def _resolved_folder(folder: Path) -> Path:
    return resolved(folder)  # files of one folder share it: resolved once per build


def resolved_file(path: Path) -> Path:
    """``resolved(path)`` with its folder resolved once per build (one check of the file
    itself, not of every folder above it, for each of thousands of files)."""
    return resolved(path) if path.is_symlink() else _resolved_folder(path.parent) / path.name


def forget_resolved_folders() -> None:
    """Forget the folders resolved so far: a long-running process (serve) sees them change."""
    _resolved_folder.cache_clear()


def shown_path(path: Path) -> str:
    """How a path is named in messages: relative to the working folder when inside it, with
    control characters and bytes that are not UTF-8 escaped (one name, one report line)."""
    try:  # the name itself unresolved: a link is named as the link, not as its target
        shown = (
            (_resolved_folder(path.parent) / path.name)
            .relative_to(_resolved_cwd(os.getcwd()))
            .as_posix()
        )
    except ValueError:
        shown = path.as_posix()
    return printable(shown)
