"""The site folder's prose (content/about.md), read as carefully as the data.

A symbolic link could publish any file the builder can read (a link to /etc/passwd did,
issue 14), so content files must be regular files reached without following links; they
must be UTF-8, under a size cap, and within the markdown limits. Each failure is a located
problem, so the build stops with a clear line and writes nothing.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from jouleboard.core.markdown_limits import ABOUT_MAX_BYTES, markdown_problems
from jouleboard.core.problems import Problem, ValidationFailed
from jouleboard.core.resources import content_dir


def about_markdown(project: Path) -> str | None:
    """The text of ``project``/content/about.md, else of the packaged one, else None.

    Raises :class:`ValidationFailed` when the site folder's file is a link, not a regular
    file, not UTF-8, over :data:`ABOUT_MAX_BYTES` or past the markdown limits."""
    own = project / "content" / "about.md"
    for path in (own, content_dir() / "about.md"):
        if os.path.lexists(path) or os.path.islink(path.parent):
            text, problems = read_content(path)
            if problems:
                raise ValidationFailed(problems)
            return text
    return None


LOGO_MAX_BYTES = 1024 * 1024


def logo_file(name: str, template_dirs: list[Path], site_yaml: str) -> bytes:
    """The bytes of site.yaml's ``logo``: templates/assets/``name`` of the first template
    folder that has it. Raises :class:`ValidationFailed`, located at site.yaml's /logo,
    when no folder has it or it is a link, not a regular file, or over 1 MiB."""
    for folder in template_dirs:
        path = folder / "assets" / name
        if not os.path.lexists(path):
            continue
        raw, problems = _read_regular(path, LOGO_MAX_BYTES)
        if not problems:
            return raw
        raise ValidationFailed(
            [
                Problem(site_yaml, "/logo", rule, f"{path}: {message}", hint)
                for rule, message, hint in problems
            ]
        )
    raise ValidationFailed(
        [
            Problem(
                site_yaml,
                "/logo",
                "site.logo-missing",
                f"no {name} in {template_dirs[0] / 'assets'}",
                "put the logo in templates/assets/ of the site folder, or remove logo",
            )
        ]
    )


def _read_regular(path: Path, max_bytes: int) -> tuple[bytes, list[tuple[str, str, str]]]:
    """At most ``max_bytes`` of ``path``, refusing links and anything but a regular file;
    problems as (rule, message, hint)."""
    for link in (path.parent, path):
        if link.is_symlink():
            return b"", [
                (
                    "content.not-regular",
                    f"{link.name} is a symbolic link",
                    "replace the link with the file (or folder) itself",
                )
            ]
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except OSError as e:
        return b"", [
            (
                "file.unreadable",
                f"cannot open it: {e.strerror or e}",
                "make it a readable regular file",
            )
        ]
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
        return b"", [("content.not-regular", f"is {kind}", "make it a regular file")]
    with os.fdopen(fd, "rb") as f:
        raw = f.read(max_bytes + 1)  # bounded even if the file grows meanwhile
    if len(raw) > max_bytes:
        return b"", [
            ("content.too-large", f"over the {max_bytes:,}-byte cap", "make the file smaller")
        ]
    return raw, []


def read_content(path: Path, max_bytes: int = ABOUT_MAX_BYTES) -> tuple[str, list[Problem]]:
    """``path``'s markdown, or the problems that keep it from being published."""
    shown = str(path)
    raw, problems = _read_regular(path, max_bytes)
    if problems:
        return "", [Problem(shown, "", rule, message, hint) for rule, message, hint in problems]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return "", [
            Problem(
                shown,
                "",
                "content.not-utf8",
                f"byte {e.start} is not UTF-8",
                "save the file as UTF-8",
            )
        ]
    return text, markdown_problems(text, shown, "")
