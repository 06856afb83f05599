"""The site folder's prose (content/about.md and pages of its own, content/<name>.md), read
as carefully as the data.

A symbolic link could publish any file the builder can read (a link to /etc/passwd did,
issue 14), so content files must be regular files reached without following links; they
must be UTF-8, under a size cap, and within the markdown limits. Each failure is a located
problem, so the build stops with a clear line and writes nothing.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from jouleboard.config.schema import NAV_PAGES, NavLink
from jouleboard.core.markdown_limits import ABOUT_MAX_BYTES, markdown_problems
from jouleboard.core.problems import Problem, ValidationFailed, shown_path
from jouleboard.core.resources import content_dir
from jouleboard.core.safe_read import read_bounded
from jouleboard.core.urls import PAGE_NAME_PATTERN, RESERVED_PAGE_NAMES


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
        raw = read_bounded(f, max_bytes)  # bounded even if the file grows meanwhile
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


@dataclass(frozen=True)
class OwnPage:
    """A page of the site's own: content/<name>.md of the site folder, published at
    ``<name>/``, titled by its first ``# `` heading."""

    name: str
    title: str
    markdown: str  # the text after the title line


def own_pages(project: Path) -> tuple[OwnPage, ...]:
    """Every content/*.md of the site folder but about.md, as pages (sorted by name).

    Raises :class:`ValidationFailed` listing every file that cannot be published: a name
    that is not a page name or is one the site uses itself, no title, and what
    :func:`read_content` refuses (links, size, UTF-8, markdown limits)."""
    folder = project / "content"
    if not folder.is_dir() or folder.is_symlink():
        return ()
    pages, problems = [], []
    for path in sorted(folder.glob("*.md")):
        name = path.name.removesuffix(".md")
        if name == "about" or name.startswith("."):
            continue
        shown = shown_path(path)
        if not re.match(PAGE_NAME_PATTERN, name):
            problems.append(
                Problem(
                    shown,
                    "",
                    "content.bad-name",
                    f"{path.name!r} cannot name a page: it becomes the page's address",
                    "name it with lowercase letters, digits and hyphens, starting with a "
                    "letter, up to 40 characters (team.md, how-we-measure.md)",
                )
            )
            continue
        if name in RESERVED_PAGE_NAMES:
            problems.append(
                Problem(
                    shown,
                    "",
                    "content.reserved-name",
                    f"{name!r} is a part of the site jouleboard makes itself",
                    "choose another file name (the page's address is /<name>/)",
                )
            )
            continue
        text, read_problems = read_content(path)
        if read_problems:
            problems.extend(read_problems)
            continue
        first, _, rest = text.lstrip("\ufeff").partition("\n")
        title = first[2:].strip() if first.startswith("# ") else ""
        if not title:
            problems.append(
                Problem(
                    shown,
                    "",
                    "content.no-title",
                    "the first line is not a '# ' heading, the page's title",
                    "start the file with a line such as '# Our team'",
                )
            )
            continue
        pages.append(OwnPage(name, title, rest))
    if problems:
        raise ValidationFailed(problems)
    return tuple(pages)


def nav_problems(nav: Sequence[NavLink], pages: Sequence[OwnPage], site_yaml: str) -> list[Problem]:
    """site.yaml ``nav`` targets that name no page: neither a built-in page, nor an https
    URL, nor a page of the site's own."""
    known = sorted({*NAV_PAGES, *(p.name for p in pages)})
    problems = []
    for i, item in enumerate(nav):
        if item.target in known or item.target.startswith("https://"):
            continue
        close = difflib.get_close_matches(item.target, known, n=1)
        problems.append(
            Problem(
                site_yaml,
                f"/nav/{i}/target",
                "registry.unknown-nav-target",
                f"no page named {item.target!r}: not a built-in page and no "
                f"content/{item.target}.md",
                (f"did you mean {close[0]!r}? " if close else "")
                + f"a target is one of {', '.join(known)}, or an https:// URL; a page of "
                "your own is a content/<name>.md file",
            )
        )
    return problems
