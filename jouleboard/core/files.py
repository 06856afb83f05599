"""Writing a file whole: a new file in the same folder renamed over the old one, so a reader
never sees half a file, and a link at the path is replaced, never followed."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path


def replace_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (UTF-8). A file replaced keeps its permissions; a new one
    (or one replacing a link) gets those the umask gives, as a file made by hand does."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        st = None
    # A link's own mode (0777) is not a file's: a file replacing a link is made as new.
    mode = stat.S_IMODE(st.st_mode) if st is not None and stat.S_ISREG(st.st_mode) else None
    while True:  # a new name of its own (O_EXCL: never a file or link planted there)
        staged = path.parent / f".{path.name}-{secrets.token_hex(4)}"
        try:
            fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        if mode is not None:
            os.chmod(staged, mode)
        os.replace(staged, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(staged)
        raise
