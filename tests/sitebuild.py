"""Site builds shared by the whole test run: each data set is built once per run, not once
per module or per pytest-xdist worker (the fixtures in tests/conftest.py hand them out).

A shared site is read-only for the tests that use it: a test that changes a site or its
inputs builds its own (in its ``tmp_path``, from the smallest data that shows the property).

Right after collection the shared builds the selected tests need start in one background
process (:func:`start_background`, ``python -m tests.sitebuild``), so the workers run other
tests meanwhile instead of waiting for the first one that needs a site. A test that needs a
site before it is ready waits for it (:func:`build_once`); if the background build failed,
that test builds it again itself, so the failure is shown where it matters.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

_done: dict[str, Path] = {}  # this process's finished shared builds, by name
_background: list[subprocess.Popen[bytes]] = []  # the builder this process started, if any


def run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary folder every process of this test run shares: the session's base
    folder, or under pytest-xdist the controller's one, which holds each worker's."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def build_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]
) -> Path:
    """``run_root()/name``, made by ``build(folder)`` at most once per test run.

    Workers take a file lock, so a second worker waits for the first one's build and reuses
    it; a marker written after ``build`` returns tells a finished build from a failed one
    (which the next caller starts again from an empty folder).
    """
    if name in _done:
        return _done[name]
    root = run_root(tmp_path_factory)
    _made(root, name, build)
    _done[name] = root / name
    return root / name


def _made(root: Path, name: str, build: Callable[[Path], None]) -> None:
    """Returns once ``root/name`` is finished: made by another process (waited for) or here."""
    with open(root / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / f"{name}.built").exists():
            _make(root, name, build)


def _make(root: Path, name: str, build: Callable[[Path], None]) -> None:
    """Builds ``root/name`` from an empty folder, then marks it finished (the caller holds
    the name's lock)."""
    folder = root / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    build(folder)
    (root / f"{name}.built").write_text("ok\n")


def _build_default(folder: Path) -> None:
    # The deploy workflow's command: `python build.py --png`, every output the site can have.
    out = folder / "site"
    subprocess.run([sys.executable, "build.py", "--png", "--out", str(out)], cwd=REPO, check=True)
    if not (out / "index.html").is_file():
        pytest.fail(f"build.py --out {out} produced no index.html")


def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built from the committed data/ with --png (once per test run)."""
    return build_once(tmp_path_factory, "default-site", _build_default) / "site"


def _build_golden(folder: Path) -> None:
    from jouleboard.engine.build import build_site
    from tests.golden.tree import DATA

    build_site(DATA, folder / "site", project=REPO)


def golden_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built from tests/golden/data without --png (once per test run)."""
    return build_once(tmp_path_factory, "golden-site", _build_golden) / "site"


def copy_chart_cache(target: Path, *, link: bool = False) -> Path:
    """``target``, a chart cache holding the entries of the run's one (tests/conftest.py):
    the charts of every shared build made so far (the golden site's, after
    :func:`golden_site`), without the measurement files any output kept and without entries
    another worker is writing. ``link`` shares the entries (hard links) rather than copying
    them: for a test that never writes into an entry (a build replaces one, never writes
    into it)."""

    def add(source: str, into: str) -> None:
        try:
            if link and _linked(source, into):
                return
            shutil.copy2(source, into)
        except FileNotFoundError:  # replaced or removed by another worker's build meanwhile
            return

    shutil.copytree(
        os.environ["JOULEBOARD_CACHE"],
        target,
        ignore=shutil.ignore_patterns("kept-*", ".*.tmp"),
        copy_function=add,
    )
    return target


def _linked(source: str, into: str) -> bool:
    """Whether ``into`` is now a hard link to ``source`` (not across file systems)."""
    try:
        os.link(source, into)
    except FileNotFoundError:
        raise
    except OSError:
        return False
    return True


def _build_payloads(folder: Path) -> None:
    from jouleboard.engine.build import build_site
    from tests.payloads import write_payload_data, write_payload_project

    build_site(
        write_payload_data(folder / "data"),
        folder / "site",
        project=write_payload_project(folder / "project"),
    )


def payload_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built from the hostile contributor strings of tests/payloads.py (once per
    test run)."""
    return build_once(tmp_path_factory, "payload-site", _build_payloads) / "site"


def _build_cut(folder: Path) -> None:
    from tests.cut_site import build_cut

    build_cut(folder)


def _walk_default(folder: Path) -> None:
    from tests.browser.tour import build_tour

    # The default site is made before the walk by the same builder, or by another: both
    # workers start a builder, and when their collections end together each takes the locks
    # of some builds. The walk then found no site (HTTP 404), failed, and a worker walked
    # the site in a test (60 s) instead of the background.
    _made(folder.parent, "default-site", _build_default)
    build_tour(folder)


# Every shared build, in the order a background build makes them: the small ones first (tests
# want them early), the cut site after the default one (the same charts: the run's chart
# cache then holds them all), then the browser's walk of the default site.
BUILDS: dict[str, Callable[[Path], None]] = {
    "golden-site": _build_golden,
    "payload-site": _build_payloads,
    "default-site": _build_default,
    "cut-site": _build_cut,
    "site-tour": _walk_default,
}


def start_background(tmp_path_factory: pytest.TempPathFactory, names: set[str]) -> None:
    """Starts one process that makes the shared builds ``names`` (keys of :data:`BUILDS`)
    nobody has made or started yet, one after the other.

    This process takes each build's lock without waiting and hands it to the child, which
    lets go of it when that build is done (or failed): :func:`build_once` in any worker
    waits on the lock, as it would for another worker's build.
    """
    root = run_root(tmp_path_factory)
    held = []
    for name in (n for n in BUILDS if n in names):
        lock = open(root / f"{name}.lock", "a")  # noqa: SIM115 (closed below or by the child)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another worker is making it
            lock.close()
            continue
        if (root / f"{name}.built").exists():
            lock.close()
            continue
        held.append((name, lock))
    if not held:
        return
    with open(root / "background-builds.log", "ab") as log:
        _background.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tests.sitebuild",
                    str(root),
                    *(f"{name}={lock.fileno()}" for name, lock in held),
                ],
                cwd=REPO,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                pass_fds=[lock.fileno() for _, lock in held],
            )
        )
    for _, lock in held:
        lock.close()  # the child's copy keeps the lock


def stop_background() -> None:
    """Ends the background builder this process started, if it still runs (a session cut
    short: -x, Ctrl-C), with the build processes it started."""
    while _background:
        proc = _background.pop()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)


def _main(argv: list[str]) -> int:
    """The background builder: ``ROOT NAME=FD...``, each FD the held lock of build NAME."""
    root = Path(argv[0])
    failed = 0
    for spec in argv[1:]:
        name, fd = spec.split("=")
        try:
            _make(root, name, BUILDS[name])
        except BaseException:  # pytest.fail raises a BaseException; the next build still runs
            traceback.print_exc()
            failed += 1
        finally:
            os.close(int(fd))  # lets go of the lock: waiting tests go on (or rebuild)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
