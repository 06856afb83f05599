"""Where the packaged files are: templates, assets, default content, the schema, examples.

A wheel carries them in ``jouleboard/_resources/`` (copied there at build time by
setup.py's build hook). A checkout or an editable install has no such folder and reads the
repository's top-level folders (templates/, content/, schema/, data/) directly, so an edit
to a template shows at the next build.
"""

from __future__ import annotations

import functools
from importlib.resources import files
from pathlib import Path

RESOURCES_PACKAGE_DIR = "_resources"
# The bundled example: a folder in a checkout, one archive in a wheel (1,858 small JSON
# files compress from 3.8 MB to about 0.3 MB as one archive; a wheel zips them one by one).
EXAMPLES = ("mlenergy-v3",)
EXAMPLE_ARCHIVE = "examples/{name}.tar.gz"


@functools.cache
def packaged_root() -> Path | None:
    """``jouleboard/_resources`` of an installed wheel, None in a checkout."""
    root = files("jouleboard").joinpath(RESOURCES_PACKAGE_DIR)
    return Path(str(root)) if root.is_dir() else None


def checkout_root() -> Path:
    """The repository this package runs from (checkout or editable install)."""
    return Path(__file__).resolve().parents[2]  # jouleboard/core/resources.py


def resource_root() -> Path:
    """The folder holding templates/, content/, schema/ and docs/ of this installation."""
    return packaged_root() or checkout_root()


def templates_dir() -> Path:
    return resource_root() / "templates"


def content_dir() -> Path:
    return resource_root() / "content"


def docs_dir() -> Path:
    """The documentation (docs/*.md) of this installation: `jouleboard docs` prints it."""
    return resource_root() / "docs"


def example_source(name: str) -> Path:
    """The bundled example ``name``: an archive (wheel) or the checkout's repository root,
    whose data/ and NOTICE make the example."""
    if name not in EXAMPLES:
        raise ValueError(f"unknown example {name!r}; known: {', '.join(EXAMPLES)}")
    packaged = packaged_root()
    if packaged is not None:
        return packaged / EXAMPLE_ARCHIVE.format(name=name)
    return checkout_root()


def example_members(root: Path) -> list[tuple[str, Path]]:
    """``(name in the new site folder, file)`` of the example at repository ``root``: every
    file of data/ (no hidden ones) and the NOTICE that attributes it, sorted.

    setup.py packs these into the wheel's archive; ``jouleboard init`` copies them from a
    checkout: one list for both.
    """
    members = [
        (path.relative_to(root).as_posix(), path)
        for path in sorted((root / "data").rglob("*"))
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(root).parts)
    ]
    return [*members, ("NOTICE", root / "NOTICE")]
