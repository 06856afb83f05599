"""Writing a file whole: a new file in the same folder renamed over the old one, so a reader
never sees half a file, and a link at the path is replaced, never followed."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def replace_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (UTF-8), readable by all as a file made by hand is."""
    fd, staged = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            os.fchmod(f.fileno(), 0o644)  # mkstemp makes it private
            f.write(text)
        os.replace(staged, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(staged)
        raise
