"""Build hook: the wheel carries the repository's top-level templates/, content/, schema/
and docs/ in jouleboard/_resources/, and the bundled ML.ENERGY v3 example as one archive.

The repository keeps its layout (templates/, data/, content/ at the top); jouleboard finds
these files with importlib.resources when installed from a wheel and reads the checkout
directly in an editable install (so template edits show at once). Everything else is in
pyproject.toml.
"""

from __future__ import annotations

import gzip
import importlib.util
import io
import os
import shutil
import tarfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
COPIED = ("templates", "content", "schema", "docs")


def _resources_module():  # type: ignore[no-untyped-def]
    """jouleboard/core/resources.py alone: the build environment has none of its dependencies."""
    spec = importlib.util.spec_from_file_location(
        "_jb_resources", ROOT / "jouleboard" / "core" / "resources.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _deterministic_tar_gz(members: list[tuple[str, Path]], target: Path) -> None:
    """Same files -> same bytes: sorted names, fixed times, owners and modes."""
    mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, path in members:
            data = path.read_bytes()
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), mtime, 0o644
            tar.addfile(info, io.BytesIO(data))
    target.parent.mkdir(parents=True, exist_ok=True)
    with (
        open(target, "wb") as out,
        gzip.GzipFile(fileobj=out, mode="wb", mtime=mtime, filename="", compresslevel=9) as gz,
    ):
        gz.write(raw.getvalue())


class BuildWithResources(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the checkout itself
        resources = _resources_module()
        target = Path(self.build_lib) / "jouleboard" / resources.RESOURCES_PACKAGE_DIR
        shutil.rmtree(target, ignore_errors=True)
        for folder in COPIED:
            shutil.copytree(
                ROOT / folder, target / folder, ignore=shutil.ignore_patterns(".*", "__pycache__")
            )
        for name in resources.EXAMPLES:
            _deterministic_tar_gz(
                resources.example_members(ROOT),
                target / resources.EXAMPLE_ARCHIVE.format(name=name),
            )


setup(cmdclass={"build_py": BuildWithResources})
