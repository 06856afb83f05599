"""The engine's values: what a build reads (:class:`Inputs`), what it reports
(:class:`BuildSummary`) and what it leaves for the next (:class:`State`), which
:func:`jouleboard.engine.build.build` takes and returns.

A state is a value the caller holds: ``jouleboard serve`` keeps one in memory from edit to
edit (the measurements read and checked, the plan, the products made), the command line
starts each process with a new one, whose products are then those the output folder's
manifest records (see :mod:`jouleboard.engine.fresh`). Every memo here is keyed by what its
result is computed from (a file's status, the registries), never by time, so a memoised
result is the one a clean build computes.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from jouleboard.engine import kept
from jouleboard.engine.fresh import Products
from jouleboard.render.chart_files import DEFAULT_CACHE

# Only the annotations name these: a build that has nothing to do (the inputs digest is
# that of the output's last build) never imports the pipeline behind them.
if TYPE_CHECKING:
    import jinja2

    from jouleboard.config.registry import Registry
    from jouleboard.core.problems import Problem
    from jouleboard.engine.fingerprint import Seen
    from jouleboard.engine.kept_parts import KeptParts
    from jouleboard.engine.sources import Sources
    from jouleboard.kinds import Kinds
    from jouleboard.kinds.base import Record
    from jouleboard.kinds.mlperf import SystemResult
    from jouleboard.loading.dataset import MeasurementFile
    from jouleboard.plan.views import Plan
    from jouleboard.render.embeds import ChartInfo

RECENT_NS = 2_000_000_000
# Given what a browser waits for, before the whole site is committed (serve).
Publish = Callable[[dict[str, bytes]], None]


@dataclass(frozen=True)
class Inputs:
    """Everything a build reads, and the options that shape its output."""

    data: Path
    project: Path  # the site folder: its templates/ and content/ override the packaged ones
    runs: tuple[Path, ...] = ()  # raw ML.ENERGY run trees published with the data
    cache: Path = DEFAULT_CACHE  # the chart cache
    base_url: str | None = None  # over site.yaml's
    site_url: str | None = None  # over site.yaml's
    preview: bool = False  # serve's live-reload script on every page
    strict: bool = False  # any warning fails the build
    require_prometheus: bool = False  # raw runs without prometheus.json are dropped
    png: bool = False  # also a 2x PNG of every chart

    def options(self) -> dict[str, object]:
        """The options, as the inputs digest records them."""
        return {
            "base_url": self.base_url,
            "site_url": self.site_url,
            "preview": self.preview,
            "strict": self.strict,
            "require_prometheus": self.require_prometheus,
            "png": self.png,
        }


@dataclass
class BuildSummary:
    out: Path
    pages: int = 0
    files: int = 0
    bytes: int = 0
    written: int = 0
    linked: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    warnings: tuple[Problem, ...] = ()  # raw runs dropped as unstable
    site_url: str = ""  # the origin links were made absolute with ("" = root-relative)
    unchanged: bool = False  # the inputs are those of the last build, whose output is intact
    rendered: int = 0  # pages rendered (the others were the last build's, unchanged)

    def __str__(self) -> str:
        stages = ", ".join(f"{k} {v:.2f}s" for k, v in self.timings.items())
        if self.unchanged:
            return (
                f"{self.out} is up to date: nothing changed since its last build "
                f"({self.pages} pages, {self.files} files, {self.bytes / 1e6:.1f} MB; "
                f"{stages})"
            )
        return (
            f"built {self.pages} pages, {self.files} files, {self.bytes / 1e6:.1f} MB "
            f"into {self.out}; {self.written} written, {self.linked} unchanged ({stages})"
        )


@dataclass(frozen=True)
class Changes:
    """Which inputs an edit touched."""

    data: bool = True
    content: bool = True
    templates: bool = True

    def __or__(self, other: Changes) -> Changes:
        return Changes(
            self.data or other.data,
            self.content or other.content,
            self.templates or other.templates,
        )

    @classmethod
    def of(cls, paths: Iterable[str], data_dir: Path, project: Path) -> Changes:
        """Sorted by the folder each path is in (a path outside all three: everything)."""
        found = {"data": False, "content": False, "templates": False}
        roots = {
            "data": data_dir,
            "content": project / "content",
            "templates": project / "templates",
        }
        for path in paths:
            where = [k for k, root in roots.items() if _inside(path, root)]
            for key in where or found:
                found[key] = True
        return cls(**found)


def _inside(path: str, root: Path) -> bool:
    top = os.path.abspath(root)
    return path == top or path.startswith(top + os.sep)


class MeasurementMemo:
    """Each measurement file read and parsed, by its status (an edited file is read again,
    alone), and checked against the registries while they stay the same. Pass
    :meth:`read` and :meth:`check` to :func:`~jouleboard.loading.dataset.load_dataset`."""

    def __init__(self) -> None:
        self._read: dict[tuple[str, str], tuple[tuple[object, ...], MeasurementFile]] = {}
        self._checked: dict[int, tuple[MeasurementFile, Record | None, list[Problem]]] = {}
        self._registry: Registry | None = None
        self._seen: set[tuple[str, str]] = set()
        self._kept: KeptReads | None = None

    def recall(
        self,
        path: Path,
        seen: Seen,
        changed: Callable[[], object] | None = None,
        measurements: Path | None = None,
    ) -> KeptReads:
        """Take the reads an earlier process kept at ``path`` (jouleboard/engine/kept.py),
        for the data files whose bytes ``seen`` (this build's inputs digest) hashed; and
        keep this build's reads there (:meth:`keep`). ``changed`` is called once, as soon as
        a measurement file the earlier process read is found edited or gone, or a new one
        in ``measurements`` (the data folder's) is found (at once, by the bytes ``seen``
        hashed; not when every one is gone: another data folder), or parsed."""
        self._kept = KeptReads(path, seen, changed, measurements)
        return self._kept

    def keep(self) -> None:
        """Write this build's reads for the next process, if anything was read anew."""
        if self._kept is not None:
            self._kept.keep()
            self._kept = None

    def clear(self) -> None:
        """Hold nothing: a command-line build writes what it read for the next process
        (:meth:`keep`) and needs none of it once its data is loaded."""
        self.keep()
        self._read, self._checked, self._registry, self._seen = {}, {}, None, set()

    def read(self, path: Path, data_root: Path, known: Kinds) -> MeasurementFile:
        from jouleboard.loading.dataset import read_measurement

        if self._kept is not None:
            return self._kept.read(path, data_root, known)
        try:
            st = os.lstat(path)
        except OSError:  # gone or unreadable: read_measurement says so
            return read_measurement(path, data_root, known)
        key = (str(path), str(data_root))
        # What the result depends on: the file's bytes (status as a proxy: an editor's save
        # changes its inode or times), the working folder (names in messages) and the kinds.
        status = (
            st.st_mtime_ns,
            st.st_ctime_ns,
            st.st_size,
            st.st_ino,
            st.st_mode,
            os.getcwd(),
            tuple(known.all()),
        )
        self._seen.add(key)
        last = self._read.get(key)
        # A file written in the last seconds is read again: two saves within one tick of
        # the file system's clock (a few ms) can leave the same status.
        settled = time.time_ns() - st.st_mtime_ns > RECENT_NS
        if last is not None and last[0] == status and settled:
            return last[1]
        file = read_measurement(path, data_root, known)
        self._read[key] = (status, file)
        return file

    def registries(self, data_dir: Path, known: Kinds) -> tuple[Registry | None, list[Problem]]:
        from jouleboard.loading.dataset import registries_of

        if self._kept is not None:  # a command-line build: an earlier process's, if the same
            return self._kept.registries(data_dir, known)
        return registries_of(data_dir, known)

    def mlperf(
        self, data_dir: Path, registry: Registry, data_root: Path
    ) -> tuple[tuple[SystemResult, ...], list[Problem]]:
        from jouleboard.loading.dataset import load_mlperf

        if self._kept is not None:  # a command-line build: an earlier process's, if the same
            return self._kept.mlperf(data_dir, registry, data_root)
        return load_mlperf(data_dir, registry, data_root)

    def check(
        self, file: MeasurementFile, registry: Registry
    ) -> tuple[Record | None, list[Problem]]:
        from jouleboard.loading.dataset import check_file

        if self._kept is not None:  # a command-line build: one load, nothing to remember
            return self._kept.check(file, registry)
        if registry is not self._registry:  # compared once per load, not once per file
            if registry != self._registry:
                self._checked.clear()
            self._registry = registry
        known = self._checked.get(id(file))
        if known is not None and known[0] is file:
            return known[1], list(known[2])
        record, problems = check_file(file, registry)
        self._checked[id(file)] = (file, record, problems)
        return record, list(problems)

    def forget_unseen(self) -> None:
        """Drop files not read since the last call (deleted or renamed)."""
        self._read = {k: v for k, v in self._read.items() if k in self._seen}
        live = {id(v[1]) for v in self._read.values()}
        self._checked = {k: v for k, v in self._checked.items() if k in live}
        self._seen = set()


# What a build keeps beside its reads for the next process, each in a file of its own: the
# registries it loaded, and its MLPerf results as checked against them. By name: the file's
# first line.
_VALUES = {
    "registries": b"jouleboard-kept-registries-1\n",
    "mlperf": b"jouleboard-kept-mlperf-1\n",
}
# A record checked by an earlier process: the registries' key, name, source and record.
Done = tuple[str, str, str, "Record"] | None


def _added(seen: Seen, earlier: kept.Reads, measurements: Path | None) -> bool:
    """Whether ``seen`` holds a measurement file (a .json file below ``measurements``) that
    no earlier read took."""
    if measurements is None:
        return False
    top = os.path.join(os.path.abspath(measurements), "")
    return any(
        where.startswith(top) and where.endswith(".json") and where not in earlier
        for where in seen.files
    )


class KeptReads:
    """One build's reads through the kept state at ``path``: a file whose bytes (as the
    inputs digest hashed them) are those a kept read parsed is taken from it; any other is
    read, hashed and parsed from the same bytes. A taken file whose record was kept from a
    check against the same registries (by their :func:`kept.data_key`) is not checked
    again: its record is taken too."""

    def __init__(
        self,
        path: Path,
        seen: Seen,
        changed: Callable[[], object] | None = None,
        measurements: Path | None = None,
    ) -> None:
        self.path = path
        self.seen = seen
        self.changed = changed  # None once called
        self.basis: str | None = None  # this build's, once the kinds are known
        self.earlier_basis, self.earlier = kept.recall(path)  # the earlier process's
        self.writer: kept.Writer | None = None  # this build's reads, for the next process
        self.parsed = 0  # files parsed anew
        self.checked = 0  # files checked anew (parsed, or their registries changed)
        # Each file read and not yet checked: its path (as given, and absolute), its fields
        # for the kept file (sha256, pickle, checked record) and the checked record kept for
        # it, unpickled.
        self._reading: dict[int, tuple[MeasurementFile, Path, str, tuple[bytes, ...], Done]] = {}
        self._known: tuple[Path, Kinds] | None = None  # the data folder and kinds read with
        self._registry: tuple[Registry, str] | None = None  # and its data_key
        # The digest of the data folder's files but the measurements, and the kinds: what
        # the registries and the MLPerf results are read and checked from.
        self._folder_key: bytes | None = None
        # A file read last time is edited or gone, or a new one is there: its charts change
        # (a new file may fail to parse: the failed build then stops the worker this
        # starts). Not when every one is gone: another data folder built into this output
        # (another branch's, or a switch between data sets), which finds its charts cached
        # as a rule, as a first build does.
        if any(where in seen.files for where in self.earlier) and (
            any(seen.files.get(where) != last[0] for where, last in self.earlier.items())
            or _added(seen, self.earlier, measurements)
        ):
            self._changed()

    def registries(self, data_dir: Path, known: Kinds) -> tuple[Registry | None, list[Problem]]:
        """The registries of ``data_dir``: those an earlier process loaded and kept (beside
        its reads, in a file of their own), when every file of the data folder but the
        measurements is as it read them, for the same kinds; else loaded, and kept."""
        from jouleboard.core.problems import resolved
        from jouleboard.loading import MEASUREMENTS_DIR
        from jouleboard.loading.dataset import registries_of

        self._start(resolved(data_dir), known)
        top = os.path.abspath(data_dir) + os.sep
        skip = os.path.join(top, MEASUREMENTS_DIR) + os.sep
        read = sorted(
            (where[len(top) :], sha)
            for where, sha in self.seen.files.items()
            if where.startswith(top) and not where.startswith(skip)
        )
        key = self._folder_key = hashlib.sha256(repr((known.order(), read)).encode()).digest()
        taken = self._taken("registries", key)
        registry = kept.unpickled_registry(taken) if taken is not None else None
        if registry is not None:
            return registry, []
        registry, problems = registries_of(data_dir, known)
        if registry is not None:
            self._keep_value("registries", key, registry)
        return registry, problems

    def mlperf(
        self, data_dir: Path, registry: Registry, data_root: Path
    ) -> tuple[tuple[SystemResult, ...], list[Problem]]:
        """The MLPerf results of ``data_dir`` checked against ``registry``: those an earlier
        process kept, when the files they and the registries are read from (every file of
        the data folder but the measurements, mlperf/ among them) and the kinds are as it
        read them; else loaded and checked, and kept if they pass."""
        from jouleboard.kinds.mlperf import MLPERF_DIR
        from jouleboard.loading.dataset import load_mlperf

        key = self._folder_key  # set by registries, which a load calls first
        if key is None or not (data_dir / MLPERF_DIR).exists():
            return load_mlperf(data_dir, registry, data_root)  # (none: nothing to keep)
        taken = self._taken("mlperf", key)
        results = kept.unpickled_results(taken) if taken is not None else None
        if results is not None:
            return results, []
        results, problems = load_mlperf(data_dir, registry, data_root)
        if not problems:
            self._keep_value("mlperf", key, results)
        return results, problems

    def _taken(self, what: str, key: bytes) -> bytes | None:
        """The pickle of ``what`` (registries, mlperf) an earlier process kept beside its
        reads, if it kept it under this build's basis and ``key``; else None."""
        if not self.basis:
            return None
        earlier_basis, earlier = kept.recall(self.path.with_suffix(f".{what}"), _VALUES[what])
        last = earlier.get(what) if earlier_basis == self.basis else None
        return last[1] if last and last[0] == key else None

    def _keep_value(self, what: str, key: bytes, value: object) -> None:
        """Keep ``value`` as ``what`` under ``key`` for the next process (see _taken)."""
        if self.basis:
            writer = kept.Writer(self.path.with_suffix(f".{what}"), self.basis, _VALUES[what])
            writer.add(what, key, pickle.dumps(value, pickle.HIGHEST_PROTOCOL))
            writer.commit()

    def read(self, path: Path, data_root: Path, known: Kinds) -> MeasurementFile:
        from jouleboard.loading.dataset import MeasurementFile

        self._start(data_root, known)
        where = os.path.abspath(path)
        last = self.earlier.get(where) if self._rebuild() else None
        if last is not None and len(last) == 3 and last[0] == self.seen.files.get(where):
            done = kept.unchecked(last[2])
            # Its record, if the registries are the same (see check); else the file.
            file = MeasurementFile(done[1], done[2], None, ()) if done else None
            file = file or kept.unpickled(last[1])
            if file is not None:
                self._reading[id(file)] = (file, path, where, last, done)
                return file
        return self._parse(path, data_root, known, where)

    def _parse(
        self, path: Path, data_root: Path, known: Kinds, where: str | None = None
    ) -> MeasurementFile:
        """Read and parse the file at ``path`` (absolute: ``where``) from its bytes."""
        from jouleboard.core.safe_read import FileRefused, read_capped
        from jouleboard.loading.dataset import read_measurement
        from jouleboard.measure.checks import MAX_FILE_BYTES

        self.parsed += 1
        try:
            raw = read_capped(path, MAX_FILE_BYTES)
        except FileRefused:  # read_measurement says why
            return read_measurement(path, data_root, known)
        file = read_measurement(path, data_root, known, raw)
        if self.writer is not None:  # not pickled when nothing is kept (a site's kinds)
            fields = (hashlib.sha256(raw).digest(), kept.pickled(file), b"")
            self._reading[id(file)] = (file, path, where or os.path.abspath(path), fields, None)
        if self._rebuild() and not file.problems:
            self._changed()  # a new file (an edited one has called it)
        return file

    def check(
        self, file: MeasurementFile, registry: Registry
    ) -> tuple[Record | None, list[Problem]]:
        """``file`` checked against ``registry``: its kept record when they are the ones it
        was checked against, else checked now."""
        from jouleboard.loading.dataset import check_file

        reading = self._reading.pop(id(file), None)
        if reading is None or reading[0] is not file:  # not kept (a site's kinds, a refusal)
            return check_file(file, registry)
        _, path, where, (sha, pickled, done), kept_check = reading
        key = self._registry_key(registry)
        if kept_check is not None:  # a record was kept: see read
            if kept_check[0] == key:
                self._add(where, sha, pickled, done)
                return kept_check[3], []
            unpickled = kept.unpickled(pickled)  # the registries changed: the file again
            if unpickled is None:  # a damaged pickle: parse the file
                assert self._known is not None  # (set by the first read)
                return self.check(self._parse(path, *self._known, where), registry)
            file = unpickled
        self.checked += 1
        record, problems = check_file(file, registry)
        done = kept.checked(key, file, record) if record is not None and not problems else b""
        self._add(where, sha, pickled, done)
        return record, problems

    def keep(self) -> None:
        """Put this build's reads in place for the next process if it parsed or checked a
        file anew (else the kept ones are still the same)."""
        if self.writer is None:
            return
        if self.parsed or self.checked:
            self.writer.commit()
        else:
            self.writer.discard()
        self.writer = None

    def _start(self, data_root: Path, known: Kinds) -> None:
        """This build's basis, and its writer, once the kinds are known."""
        if self.basis is None:
            self.basis = kept.basis(self.seen.code, data_root, known)
            self._known = (data_root, known)
            if self.basis:
                self.writer = kept.Writer(self.path, self.basis)

    def _registry_key(self, registry: Registry) -> str:
        if self._registry is None or self._registry[0] is not registry:
            self._registry = (registry, kept.data_key(registry))
        return self._registry[1]

    def _add(self, where: str, *fields: bytes) -> None:
        if self.writer is not None:
            self.writer.add(where, *fields)

    def _rebuild(self) -> bool:
        """The earlier reads are this build's to take: the same code, versions and kinds."""
        return bool(self.basis) and self.earlier_basis == self.basis

    def _changed(self) -> None:
        if self.changed is not None:
            call, self.changed = self.changed, None
            call()


EVERYTHING = Changes()
NOTHING = Changes(False, False, False)


@dataclass(frozen=True)
class Built:
    """What the last successful build read and planned, as the next one starts from it."""

    inputs: object  # the build's Inputs (compared, never looked into here)
    sources: Sources
    plan: Plan
    infos: dict[str, ChartInfo]
    env: jinja2.Environment


@dataclass
class State:
    """What a build leaves for the next; ``resident``: kept in memory (serve), so the next
    build takes its products from memory, not from the output folder."""

    resident: bool = False
    measurements: MeasurementMemo = field(default_factory=MeasurementMemo)
    products: Products = field(default_factory=Products)
    built: Built | None = None
    pending: Changes = NOTHING  # what builds that failed since the last success touched
    bundle: str = ""  # the Vega bundle, once read
    parts: KeptParts | None = None  # a new process's: the route parts an earlier one made

    def __post_init__(self) -> None:
        self.products.resident = self.resident
