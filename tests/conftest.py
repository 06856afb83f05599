"""Suite-wide setup: test selection, the run's chart cache and the shared site builds.

Selection: ``python -m pytest -m "not slow"`` runs the fast unit tests. A test is ``slow``
when it builds a site, renders charts with vl-convert, drives a browser or builds the
wheel, or runs jouleboard end to end in new processes (its exit status, output and no
traceback, for hostile inputs), reads an input of millions of parts, or measures how time
grows: the modules below do (each builds at least one site, calls vl-convert or starts
jouleboard processes), and so does everything marked ``browser`` or ``package`` or reading
a shared site (below); a module or a test may also say so itself with ``pytest.mark.slow``.
A test outside them that leaves a built site in its ``tmp_path`` fails, naming the list to
add its module to.

Chart cache: every build of the run, in-process or a ``jouleboard build`` subprocess,
renders into one fresh folder (``$JOULEBOARD_CACHE``, set here before any test module
imports jouleboard and inherited by pytest-xdist workers and subprocesses), so a chart is
rendered once per run and no result depends on what ``~/.cache/jouleboard`` holds. A test
about the cache itself passes its own ``cache=`` folder or environment.

Temporary files: where the caller's ``TMPDIR`` says, else in ``/dev/shm`` when that is a
RAM file system with room for a run (Linux), else the system's temporary folder. The unit
tests make and delete about 6,000 files and the whole suite many more, and on the 2-core
machines the suite's budget is measured on, the disk's ext4 (kept without a journal) passes
over every inode deleted lately (the last minute; six while its block is not yet on disk)
before it hands out a new one (the kernel's ``recently_deleted``): a file made there took
0.2-0.8 ms of kernel time. ``-m "not slow"`` took 17.5-19.3 s on the disk against 14.4-15.6
s in ``/dev/shm`` (3 alternated pairs); the whole command 368 s against 348 s, its files
peaking at 520 MB.

Shared sites (fixtures below, session-scoped; built at most once per run, whatever the
number of xdist workers, see :mod:`tests.sitebuild`). They are read-only: a test that
changes a site or its inputs builds its own, from the smallest data that shows it. The
sites the selected tests use (through these fixtures) are built in the background from
the end of collection on, and the modules using them run after the other modules.

- ``default_site``: committed data/ built with ``python build.py --png`` (every output).
- ``golden_site``: tests/golden/data built with ``build_site`` (no PNGs).
- ``payload_site``: the hostile contributor strings of tests/payloads.py.
- ``cut_site``: data/ with ``table_rows: 5`` (tests/cut_site.py), as (data, site).
"""

from __future__ import annotations

import gc
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests import sitebuild

if TYPE_CHECKING:  # jouleboard is imported once the run's chart cache is set (below)
    from jouleboard.loading.dataset import Dataset
    from jouleboard.plan.views import SiteView

# pytest keeps a test module's assertion-rewritten code in __pycache__ only where bytecode may
# be written. A machine with PYTHONDONTWRITEBYTECODE set (the development machine has it)
# would rewrite every test module anew in the controller and in each xdist worker, about 3 s
# of every run. The flag is this process's own: jouleboard processes the tests start still
# inherit the environment.
sys.dont_write_bytecode = False

SLOW_MODULES = frozenset(
    {
        "test_atomic_build",
        "test_cli_and_import",
        "test_concurrent_builds",
        "test_content_files",
        "test_own_pages",
        "test_diffusion",
        "test_embed",
        "test_export",
        "test_golden",
        "test_hostile_corpus",
        "test_html_valid",
        "test_html_validate",
        "test_incremental_and_serve",
        "test_one_engine",
        "test_links",
        "test_out_safety",
        "test_package",
        "test_quality",
        "test_releases",
        "test_serve_robust",
        "test_write_spool",
        "test_spare",
        "test_xss_static",
        "test_model_sources",
        "test_require_prometheus",
        "test_third_kind",
        "test_cli_conventions",
        "test_unchanged_rebuild",
        "test_kept_reads",
        "test_chart_fonts",
        "test_page_reuse",
        "test_live_serve",
        "test_override_safety",
        "test_style",
        "test_mlperf_site",
        "test_model_groups",
        "test_fixed_views_labelled",
        # jouleboard's command line test after test, with builds or new processes (serve, limits):
        "test_raw_hostile",
        "test_kind_consent",
        "test_folder_safety",
        "test_serve_hardening",
        "test_mlperf_import",
        "test_live_watch",
        "test_render_failed",
    }
)
_ALWAYS_SLOW = ("browser", "package")
# Each shared-site fixture and the build it hands out (tests.sitebuild.BUILDS).
SITE_FIXTURES = {
    "golden_site": "golden-site",
    "payload_site": "payload-site",
    "default_site": "default-site",
    "cut_site": "cut-site",
    "tour": "site-tour",
}  # tests/browser/test_site_browser.py: walks default_site
_OWN_CACHE = "_JOULEBOARD_TEST_CACHE"  # the folder this run made (the controller removes it)
RAM_TEMP = "/dev/shm"  # a RAM file system on Linux (POSIX shared memory)
RAM_TEMP_ROOM = 2 * 1024**3  # bytes it must have free: a whole run's files peaked at 520 MB


def ram_temp() -> str | None:
    """:data:`RAM_TEMP` if the caller set no ``TMPDIR`` and it is a folder this process may
    write with :data:`RAM_TEMP_ROOM` free, else None (see the module's notes)."""
    if "TMPDIR" in os.environ:
        return None
    try:
        room = os.statvfs(RAM_TEMP)
    except OSError:  # none here (macOS, Windows)
        return None
    if room.f_bavail * room.f_frsize < RAM_TEMP_ROOM or not os.access(RAM_TEMP, os.W_OK):
        return None
    return RAM_TEMP


def pytest_configure(config: pytest.Config) -> None:
    # xdist workers inherit the controller's environment: its temporary and cache folders.
    if not (os.environ.get(_OWN_CACHE) or os.environ.get("PYTEST_XDIST_WORKER")):
        _own_temp_and_cache()
    # The collector's thresholds of the command's own process, so that the builds the tests
    # run in theirs collect as a command-line build does. With Python's defaults the two
    # workers of a whole run spent 15.9 and 9.4 s collecting, 13.5 and 7.8 s of it in 56 and
    # 18 full collections, made during in-process builds; with these, 3.2 s each.
    from jouleboard.cli import _collect_less_often

    _collect_less_often()


def _own_temp_and_cache() -> None:
    temp = ram_temp()
    if temp is not None:  # for pytest's tmp_path folders, this run's and its subprocesses'
        os.environ["TMPDIR"] = temp
        tempfile.tempdir = None  # gettempdir() looks again
    folder = tempfile.mkdtemp(prefix="jouleboard-test-cache-")
    os.environ["JOULEBOARD_CACHE"] = os.environ[_OWN_CACHE] = folder


def pytest_unconfigure(config: pytest.Config) -> None:
    # pytest's cleanup after this hook collects garbage five times (to report what finalizers
    # raise), and the interpreter once more at exit: in a worker each pass walked every object
    # the tests left alive, 0.9 s between its last test and its end. One pass here finds the
    # same garbage (finalizers run, and report, as before); freezing the survivors keeps the
    # later passes to what is made after it.
    gc.collect()
    gc.freeze()
    sitebuild.stop_background()
    if os.environ.get("PYTEST_XDIST_WORKER") or not os.environ.get(_OWN_CACHE):
        return
    shutil.rmtree(os.environ.pop(_OWN_CACHE), ignore_errors=True)
    os.environ.pop("JOULEBOARD_CACHE", None)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = Path(str(item.fspath)).stem
        shared_site = bool(_sites_used(item))  # built for the run: a build like any other
        if (
            module in SLOW_MODULES
            or shared_site
            or any(item.get_closest_marker(m) for m in _ALWAYS_SLOW)
        ):
            item.add_marker(pytest.mark.slow)
    # Modules that use a shared site go last (a stable sort keeps every module together):
    # by the time a worker reaches them, the background build has made the sites. The one
    # reading the walk of every page (``tour``, the background builder's last and longest
    # job) comes after all of them.
    late = {item.fspath for item in items if _sites_used(item)}
    walk = {item.fspath for item in items if "tour" in getattr(item, "fixturenames", ())}
    items.sort(key=lambda item: (item.fspath in late, item.fspath in walk))


def _sites_used(item: pytest.Item) -> set[str]:
    """The shared builds (tests.sitebuild.BUILDS) a test uses through its fixtures."""
    return {
        build
        for fixture, build in SITE_FIXTURES.items()
        if fixture in getattr(item, "fixturenames", ())
    }


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return
    wanted = set().union(*(_sites_used(item) for item in session.items))
    if wanted:
        # The session's TempPathFactory (the tmp_path_factory fixture hands out the same one).
        sitebuild.start_background(
            session.config._tmp_path_factory,  # type: ignore[attr-defined]
            wanted,
        )


@pytest.fixture(autouse=True)
def _fast_tests_build_no_site(request: pytest.FixtureRequest) -> Iterator[None]:
    """Keeps ``-m "not slow"`` honest: a test not marked slow must not build a site."""
    if request.node.get_closest_marker("slow") or "tmp_path" not in request.fixturenames:
        yield
        return
    tmp = request.getfixturevalue("tmp_path")  # torn down after this fixture's check
    yield
    from jouleboard.output.folder import MARKER

    for folder, _, files in os.walk(tmp):
        if MARKER in files:
            pytest.fail(
                f"{request.node.nodeid} built a site ({folder}) but is not marked "
                "slow: add its module to SLOW_MODULES in tests/conftest.py",
                pytrace=False,
            )


@pytest.fixture
def new_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder made by ``jouleboard init`` (its example measurement; requirements.txt pins
    this version), the test's working folder: where a new user starts."""
    import jouleboard
    from jouleboard.commands.init import init_site

    folder = tmp_path / "mysite"
    init_site(folder, requirement_line=f"jouleboard=={jouleboard.__version__}")
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every measurement file parsed from its bytes during the test, in order."""
    from jouleboard.loading import dataset

    seen: list[Path] = []
    real = dataset.read_measurement

    def counting(path: Path, *args: object, **kwargs: object) -> dataset.MeasurementFile:
        seen.append(path)
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(dataset, "read_measurement", counting)
    return seen


@pytest.fixture
def another_version(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """``another_version(name)``: from then on importlib.metadata reports version 0.0.0 of
    the distribution ``name`` (as after an upgrade), and the real version of every other."""
    import importlib.metadata

    real = importlib.metadata.version

    def report(library: str) -> None:
        monkeypatch.setattr(
            importlib.metadata, "version", lambda name: "0.0.0" if name == library else real(name)
        )

    return report


@pytest.fixture(scope="session")
def default_dataset() -> Dataset:
    """The committed data/, loaded once per test process. Read-only: a test that changes data
    loads its own."""
    from jouleboard.loading.dataset import load_dataset

    return load_dataset(sitebuild.REPO / "data")


@pytest.fixture(scope="session")
def default_view(default_dataset: Dataset) -> SiteView:
    """The site view (task views, rankings, findings) of :func:`default_dataset` at the
    default URLs; read-only too."""
    from jouleboard.core.urls import Urls
    from jouleboard.plan.site import site_view

    return site_view(default_dataset, Urls())


@pytest.fixture(scope="session")
def default_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site of the committed data/, built with --png as the deploy workflow does."""
    return sitebuild.built_site(tmp_path_factory)


@pytest.fixture(scope="session")
def golden_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site of tests/golden/data (36 measurements) built without --png."""
    return sitebuild.golden_site(tmp_path_factory)


@pytest.fixture(scope="session")
def payload_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built from tests/payloads.py's script-laden contributor strings."""
    return sitebuild.payload_site(tmp_path_factory)


@pytest.fixture(scope="session")
def cut_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(data folder, site) of data/ with ``table_rows: 5`` (tests/cut_site.py)."""
    from tests.cut_site import cut_site as build_cut_site

    return build_cut_site(tmp_path_factory)


class ScipyQuantiles:
    """Student's t and chi-square quantiles from SciPy, the reference implementation, an
    oracle for jouleboard/rank/quantiles.py: the special functions that ``scipy.stats``'
    ``t.ppf`` and ``chi2.ppf`` evaluate (SciPy 1.17: ``stdtrit(nu, p)`` and
    ``2 * gammaincinv(nu / 2, p)``), without importing ``scipy.stats`` (0.59 s, against
    0.18 s for ``scipy.special``, in each pytest-xdist worker that asks)."""

    def __init__(self) -> None:
        from scipy import special

        self._special = special

    def t(self, p: float, nu: float) -> float:
        return float(self._special.stdtrit(nu, p))

    def chi2(self, p: float, nu: float) -> float:
        return float(2 * self._special.gammaincinv(nu / 2, p))


@pytest.fixture(scope="session")
def scipy_quantiles() -> ScipyQuantiles:
    """:class:`ScipyQuantiles`, made when a test asks (SciPy is a test dependency only)."""
    return ScipyQuantiles()


@pytest.fixture()
def rendered(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each Markdown text rendered (not taken from the renderer's memo), from an empty memo:
    what a new process renders."""
    from jouleboard.render import markdown

    texts: list[str] = []
    real = markdown._render

    def counting(text: str) -> str:
        texts.append(text)
        return real(text)

    monkeypatch.setattr(markdown, "_render", counting)
    monkeypatch.setattr(markdown, "_rendered", {})
    return texts
