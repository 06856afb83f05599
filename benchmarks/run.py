"""Build benchmarks of jouleboard at scale: cold and incremental builds, memory, stages.

    python benchmarks/run.py [--quick] [--sizes 1000,10000,100000] [--budget 900]
                             [--charts auto|real|stub] [--ref REF] [--profile]
                             [--no-default] [--seed 0] [--workdir DIR]

For the default data (data/, copied: nothing in the repository is touched) and for each
synthetic size (benchmarks/synth.py), every build runs in its own subprocess
(``python benchmarks/run.py _build ...``, which calls jouleboard.engine.build.build_site):

- cold:      fresh output folder and an empty chart cache ($JOULEBOARD_CACHE = a new folder)
- noop:      the same build again (warm cache, nothing changed): the floor of a rebuild
- add-one:   after adding one measurement file (a new max_num_seqs point of a real series)
- edit-desc: after editing one model's description_md in models.yaml
- warm-clean: a fresh output folder with the warm chart cache (everything but renders)

For each: wall time of the process, the BuildSummary stage timings (load+validate, rank+plan,
charts, render, write), pages, files, bytes, files written vs hard-linked, chart renders
(new cache entries), peak RSS of the build process (its own getrusage(RUSAGE_SELF) at exit;
equal to the parent's RUSAGE_CHILDREN for that child alone), peak RSS of its chart workers
(RUSAGE_CHILDREN inside the build), and the peak summed RSS of the whole process tree
(sampled from /proc every 0.1 s). The HTML stage is reported as pages per second of
timings['render'] (which also serialises downloads and explore data) and of the
render_page calls alone (timed per template).

Every size shares a time budget (--budget seconds for all its builds). A build still running
when the budget runs out is killed; the stages it finished are reported. ``--charts auto``
(default) replaces the vl-convert chart rendering of a size by *stub* renders when the
estimated cold render time (charts x seconds per render measured on the smaller sizes)
would not fit in the budget: one real chart per chart kind is rendered and its bytes reused
for every chart of that kind, so output bytes, memory and the write stage stay realistic;
the stubbed cold build then reports an extrapolated chart time.

--profile adds a cProfile'd warm-cache build per size (last), within the budget. The
comparison with Hugo is hugo_compare.py's (budgets.py runs it beside these builds).

Results: a table on stdout and JSON in benchmarks/results/run-<UTC time>.json (and
latest.json). --quick: the default data and 1,000 configurations only.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
DEFAULT_WORKDIR = Path(tempfile.gettempdir()) / "jouleboard-bench"
STAGES = ("load+validate", "rank+plan", "charts", "render", "write")
DEFAULT_SECONDS_PER_RENDER = 0.1  # 2 cores, before any size has been measured


# --------------------------------------------------------------------------------------
# what an earlier measurement left: removed once nothing more is measured
# --------------------------------------------------------------------------------------

_trash: Path | None = None  # where remove() puts things while removals are deferred


@contextlib.contextmanager
def removals_deferred(workdir: Path) -> Iterator[None]:
    """While open, :func:`remove` moves folders and files into ``workdir/.trash`` instead
    of removing them; the trash (an interrupted run's too) is removed as it closes, once
    nothing more is measured.

    Removed at once, they slowed what was measured next. Where the budgets are measured, the
    disk's ext4 runs without a journal, and such a file system passes over every inode
    removed lately (the last minute; six while its block is not yet on disk) before it
    hands out a new one, reading each one's block (the kernel's ``recently_deleted``): a
    file made meanwhile took 0.2-0.8 ms of kernel time. Cold default builds, each right
    after the last one's site and cache were removed, wrote their files in 0.40-0.94 s and
    took 7.73-8.23 s (3 builds); with them moved aside, 0.11-0.13 s and 6.95-7.77 s (5)."""
    global _trash
    _trash, before = workdir / ".trash", _trash
    try:
        yield
    finally:
        _trash = before
        shutil.rmtree(workdir / ".trash", ignore_errors=True)


def remove(path: Path) -> None:
    """Remove the folder or file at ``path``, if any: at once, or into the trash while
    removals are deferred (:func:`removals_deferred`), unless it is on another file system."""
    if not os.path.lexists(path):
        return
    if _trash is not None:
        _trash.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(path, Path(tempfile.mkdtemp(dir=_trash)) / path.name)
            return
        except OSError:  # another file system: removed here
            pass
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


# --------------------------------------------------------------------------------------
# child: one build in a fresh process
# --------------------------------------------------------------------------------------


def _maxrss_mb(who: int) -> float:
    import resource

    return resource.getrusage(who).ru_maxrss / 1024.0  # Linux: KiB


def _rss_mb() -> float:
    """This process's resident set now (MB), from /proc (0 where there is none)."""
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii")
    except OSError:
        return 0.0
    return next(
        (
            int(line.split()[1]) / 1024.0
            for line in status.splitlines()
            if line.startswith("VmRSS:")
        ),
        0.0,
    )


def child_build(args: argparse.Namespace) -> int:
    """``run.py _build``: one build_site call, instrumented; result JSON to --result."""
    import resource

    t_start = time.perf_counter()
    import jouleboard.engine.build as B

    # Where the stages live: engine/assemble.py (renders pages), engine/outputs.py (charts);
    # a ref before #26's split (--ref) holds them in engine/build.py.
    def engine_module(name: str) -> ModuleType:
        try:
            return importlib.import_module(f"jouleboard.engine.{name}")
        except ImportError:
            return B

    stages, outputs = engine_module("assemble"), engine_module("outputs")

    progress: list[dict[str, Any]] = []
    timer = getattr(stages, "StageTimer", None) or stages._Timer  # _Timer: refs before the rename
    original_done = timer.done

    def done(self: Any, stage: str) -> None:
        original_done(self, stage)
        entry = {
            "stage": stage,
            "seconds": self.summary.timings[stage],
            "at": time.perf_counter() - t_start,
            "maxrss_mb": _maxrss_mb(resource.RUSAGE_SELF),
            "rss_mb": _rss_mb(),
        }
        progress.append(entry)
        print("STAGE " + json.dumps(entry), flush=True)

    timer.done = done

    per_template: dict[str, list[float]] = {}
    original_render_page = stages.render_page

    def render_page(env: Any, page: Any, *rest: Any, **kw: Any) -> str:
        t = time.perf_counter()
        html = original_render_page(env, page, *rest, **kw)
        stat = per_template.setdefault(page.template, [0, 0.0, 0])
        stat[0] += 1
        stat[1] += time.perf_counter() - t
        stat[2] += len(html.encode("utf-8"))
        return html

    stages.render_page = render_page

    stub_info: dict[str, Any] = {}
    if args.stub_charts:
        # engine/outputs.py starts each batch of renders with start_renders and reads what
        # it returns through arrivals() (as they come) or exports() (all at once).
        original_start = outputs.start_renders

        class Stubbed:
            def __init__(self, made: dict[tuple[str, str], bytes]) -> None:
                self.made = made

            def arrivals(self) -> Iterator[tuple[tuple[str, str], bytes]]:
                return iter(sorted(self.made.items()))

            def exports(self) -> dict[tuple[str, str], bytes]:
                return dict(sorted(self.made.items()))

        def start_renders(
            specs: dict[str, Any], formats: tuple[str, ...] = ("svg", "png"), *rest: Any
        ) -> Stubbed:
            def kind(cid: str) -> str:  # a phone render (id ending ~phone) is its own kind
                return cid.split("--")[0] + ("~phone" if cid.endswith("~phone") else "")

            first: dict[str, str] = {}
            for cid in sorted(specs):
                first.setdefault(kind(cid), cid)
            real = original_start(
                {cid: specs[cid] for cid in first.values()}, formats, *rest
            ).exports()
            stub = {
                (cid, fmt): bytes(bytearray(real[(first[kind(cid)], fmt)]))
                for cid in specs
                for fmt in formats
                if (first[kind(cid)], fmt) in real
            }
            stub_info["charts"] = stub_info.get("charts", 0) + len(specs)
            stub_info["kinds"] = sorted({*stub_info.get("kinds", []), *first})
            stub_info["real_renders"] = stub_info.get("real_renders", 0) + len(real)
            stub_info["stub_renders"] = stub_info.get("stub_renders", 0) + len(stub)
            return Stubbed(stub)  # a copy per chart, as real renders are: memory stays realistic

        outputs.start_renders = start_renders

    if not args.cache:  # Path("") would be the working directory: the repository
        raise SystemExit("run.py _build needs --cache DIR")
    cache = Path(args.cache)
    before = _count_cache(cache)
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    png = {"png": True} if args.png else {}  # older refs (--ref) have no png option
    summary = B.build_site(
        Path(args.data), Path(args.out), project=Path(args.project), cache=cache, **png
    )
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(args.profile)
    after = _count_cache(cache)
    import jouleboard

    result = {
        "pages": summary.pages,
        "files": summary.files,
        "bytes": summary.bytes,
        "written": summary.written,
        "linked": summary.linked,
        "timings": summary.timings,
        "progress": progress,
        "render_page": {
            k: {"pages": v[0], "seconds": v[1], "html_bytes": v[2]}
            for k, v in sorted(per_template.items())
        },
        "chart_renders": after - before,
        "stub_charts": stub_info or None,
        "cpu_seconds": sum(
            getattr(resource.getrusage(who), f)
            for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
            for f in ("ru_utime", "ru_stime")
        ),
        "maxrss_self_mb": _maxrss_mb(resource.RUSAGE_SELF),
        "maxrss_workers_mb": _maxrss_mb(resource.RUSAGE_CHILDREN),
        "in_process_seconds": time.perf_counter() - t_start,
        "jouleboard": jouleboard.__file__,
    }
    Path(args.result).write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


def _count_cache(cache: Path) -> int:
    """Rendered charts in the cache (any layout: entries moved into a checked subfolder)."""
    return sum(1 for p in cache.rglob("*") if p.suffix in (".svg", ".png") and p.is_file())


def child_charts(args: argparse.Namespace) -> int:
    """``run.py _charts``: vl-convert time and bytes per chart kind and format."""
    import vl_convert

    from jouleboard.core.jsonio import dumps_canonical
    from jouleboard.core.urls import Urls
    from jouleboard.loading.dataset import load_dataset
    from jouleboard.plan.site import plan_site

    data = load_dataset(Path(args.data))
    plan = plan_site(data, Urls(data.registry.site.base_url))
    by_kind: dict[str, list[str]] = {}
    for cid in sorted(plan.charts):
        by_kind.setdefault(cid.split("--")[0], []).append(cid)
    out: dict[str, Any] = {"charts": {k: len(v) for k, v in by_kind.items()}, "kinds": {}}
    vl_convert.vegalite_to_svg(
        dumps_canonical(plan.charts[by_kind[next(iter(by_kind))][0]].spec)
    )  # engine warm-up
    for kind, ids in sorted(by_kind.items()):
        spec = dumps_canonical(plan.charts[ids[len(ids) // 2]].spec)
        row: dict[str, Any] = {"spec_bytes": len(spec)}
        for fmt in ("svg", "png"):
            times, size = [], 0
            for _ in range(3):
                t = time.perf_counter()
                content = (
                    vl_convert.vegalite_to_svg(spec).encode()
                    if fmt == "svg"
                    else vl_convert.vegalite_to_png(spec, scale=2)
                )
                times.append(time.perf_counter() - t)
                size = len(content)
            row[f"{fmt}_seconds"] = sorted(times)[1]
            row[f"{fmt}_bytes"] = size
        out["kinds"][kind] = row
    Path(args.result).write_text(json.dumps(out, indent=2), encoding="utf-8")
    return 0


# --------------------------------------------------------------------------------------
# parent: run builds, sample memory, enforce the budget
# --------------------------------------------------------------------------------------


class TreeSampler(threading.Thread):
    """Peak summed RSS of a process and all its descendants, from /proc."""

    def __init__(self, pid: int, interval: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_kb = 0
        self.peak_procs = 0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            try:
                total, procs = self.sample()
            except Exception:  # a process vanished mid-read
                total, procs = 0, 0
            if total > self.peak_kb:
                self.peak_kb, self.peak_procs = total, procs
            self._halt.wait(self.interval)

    def sample(self) -> tuple[int, int]:
        parents: dict[int, int] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                    stat = f.read()
                parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
        tree, frontier = {self.pid}, [self.pid]
        while frontier:
            parent = frontier.pop()
            for pid, ppid in parents.items():
                if ppid == parent and pid not in tree:
                    tree.add(pid)
                    frontier.append(pid)
        total = 0
        for pid in tree:
            try:
                with open(f"/proc/{pid}/status", encoding="utf-8") as f:
                    for line in f:
                        if line.startswith("VmRSS:"):
                            total += int(line.split()[1])
                            break
            except OSError:
                continue
        return total, len(tree)

    def stop(self) -> None:
        self._halt.set()
        self.join()


class Runner:
    def __init__(self, project: Path, workdir: Path, pythonpath: str) -> None:
        self.project, self.workdir = project, workdir
        self.env = dict(os.environ, PYTHONPATH=pythonpath, PYTHONHASHSEED="0")

    def child(
        self, mode: str, extra: list[str], timeout: float, cache: Path | None = None
    ) -> dict[str, Any]:
        """Run ``run.py MODE`` in a new process (group); kill it at ``timeout``."""
        result_path = Path(tempfile.mkstemp(prefix="result-", suffix=".json", dir=self.workdir)[1])
        cmd = [
            sys.executable,
            str(Path(__file__).resolve()),
            mode,
            "--result",
            str(result_path),
            "--project",
            str(self.project),
            *extra,
        ]
        env = dict(self.env)
        if cache is not None:
            env["JOULEBOARD_CACHE"] = str(cache)
        progress: list[dict[str, Any]] = []

        def on_line(line: str) -> None:
            if line.startswith("STAGE "):
                progress.append(json.loads(line[6:]))

        run = spawn(cmd, env, self.project, timeout, on_line)
        out: dict[str, Any] = {}
        if not run["killed_at_budget"] and run["returncode"] == 0 and result_path.stat().st_size:
            out = json.loads(result_path.read_text(encoding="utf-8"))
        result_path.unlink(missing_ok=True)
        out.update({k: v for k, v in run.items() if k not in ("stdout", "stderr")})
        out.setdefault("progress", progress)
        if not run["killed_at_budget"] and run["returncode"] != 0:
            out["error"] = run["stderr"][-3000:]
        return out


def spawn(
    cmd: list[str], env: dict[str, str], cwd: Path, timeout: float, on_line: Any = None
) -> dict[str, Any]:
    """Run ``cmd`` in a new process group, killed (with its children) at ``timeout``
    seconds: wall seconds, return code, stdout and stderr text (``on_line`` also gets each
    stdout line as it comes), the load average (1 min) before and after, and the peak summed
    RSS of its process tree."""
    load_before = os.getloadavg()[0]  # other work on the machine skews timings
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    sampler = TreeSampler(proc.pid)
    sampler.start()
    stdout: list[str] = []
    stderr: list[str] = []

    def read_out() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            stdout.append(line)
            if on_line is not None:
                on_line(line)

    def read_err() -> None:
        assert proc.stderr is not None
        stderr.extend(proc.stderr)

    readers = [
        threading.Thread(target=read_out, daemon=True),
        threading.Thread(target=read_err, daemon=True),
    ]
    for r in readers:
        r.start()
    killed = False
    try:
        proc.wait(timeout=max(timeout, 1.0))
    except subprocess.TimeoutExpired:
        killed = True
        os.killpg(proc.pid, signal.SIGKILL)  # the process and its workers
        proc.wait()
    wall = time.perf_counter() - t0
    sampler.stop()
    for r in readers:
        r.join(timeout=5)
    return {
        "wall_seconds": wall,
        "returncode": proc.returncode,
        "killed_at_budget": killed,
        "loadavg_before": load_before,
        "loadavg_after": os.getloadavg()[0],
        "tree_peak_rss_mb": sampler.peak_kb / 1024.0,
        "tree_peak_processes": sampler.peak_procs,
        "stdout": "".join(stdout),
        "stderr": "".join(stderr),
    }


def _git(*args: str) -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def byte_compiled(project: Path) -> Path:
    """``project``, its package's byte code written now: with PYTHONDONTWRITEBYTECODE set
    (or a tree just exported), every build process would compile the modules whose byte
    code is missing or stale, ~0.3 s for all of them: a ref measured against the working
    tree, or a working tree just edited, would pay it in every run."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(project / "jouleboard")], check=True
    )
    return project


def project_at(ref: str, workdir: Path) -> Path:
    """The project to measure: the working tree, or ``ref`` exported; byte-compiled."""
    return byte_compiled(snapshot(ref, workdir) if ref else REPO)


def snapshot(ref: str, workdir: Path) -> Path:
    """The project at a git ref, exported into the work folder (stable while you edit)."""
    sha = _git("rev-parse", ref)
    if not sha:
        raise SystemExit(f"unknown git ref {ref!r}")
    folder = workdir / f"src-{sha[:12]}"
    if not (folder / "jouleboard").is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", sha], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def prepare_data(
    label: str, size: int | None, seed: int, workdir: Path, project: Path
) -> tuple[Path, dict[str, Any]]:
    """A private, writable data folder: a copy of data/ or a synthetic one (reused when
    the same size and seed were generated before)."""
    if size is None:
        folder = workdir / "data-default"
        remove(folder)
        shutil.copytree(project / "data", folder)
        pairs = set()
        n = 0
        for path in (folder / "measurements").rglob("*.json"):
            doc = json.loads(path.read_text(encoding="utf-8"))
            pairs.add((doc.get("model_id"), doc.get("task")))
            n += 1
        return folder, {
            "configurations": n,
            "models": len({m for m, _ in pairs}),
            "model_tasks": len(pairs),
            "source": "data/",
        }
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import synth

    pristine = workdir / f"synth-{size}-seed{seed}"
    stamp = pristine / ".synth.json"
    if not stamp.exists():
        t = time.perf_counter()
        stats = synth.generate(size, pristine, seed, project / "data")
        stats["generate_seconds"] = time.perf_counter() - t
        stamp.write_text(json.dumps(stats), encoding="utf-8")
    stats = json.loads(stamp.read_text(encoding="utf-8"))
    folder = workdir / f"data-{label}"
    remove(folder)
    shutil.copytree(pristine, folder, copy_function=os.link)  # edits replace files, below
    return folder, stats


def add_measurement(data: Path) -> str:
    """Add one configuration: a new max_num_seqs point in the middle file's series."""
    files = sorted((data / "measurements").rglob("*.json"))
    middle = len(files) // 2
    order = sorted(range(len(files)), key=lambda i: (abs(i - middle), i))
    for source in (files[i] for i in order):  # the middle file, else the nearest LLM one
        doc = json.loads(source.read_text(encoding="utf-8"))
        if "max_num_seqs" in doc.get("serving", {}):  # an LLM configuration
            break
    else:
        raise ValueError("no LLM measurement file to copy")
    taken = {
        json.loads(f.read_text(encoding="utf-8"))["serving"].get("max_num_seqs")
        for f in source.parent.glob("*.json")
    }
    seqs = next(
        s for s in (48, 80, 112, 160, 320, 640, 1280, 2560, 24, 12, 6, 5000) if s not in taken
    )
    old = doc["serving"]["max_num_seqs"]
    doc["serving"]["max_num_seqs"] = seqs
    doc["metrics"]["avg_batch_size"] = min(doc["metrics"]["avg_batch_size"], float(seqs))
    scale_throughput(doc, 0.97)
    target = source.with_name(source.name.replace(f"seqs{old}", f"seqs{seqs}"))
    if target == source:
        target = source.with_name(f"added-seqs{seqs}.json")
    target.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return str(target.relative_to(data))


def scale_throughput(doc: dict[str, Any], factor: float) -> None:
    """Multiply a measurement's output throughput by ``factor`` and keep it consistent:
    J/token = W / (tokens/s), J/response = J/token x mean output length."""
    m = doc["metrics"]
    m["output_throughput_tokens_per_sec"] *= factor
    m["energy_per_token_joules"] = m["avg_power_watts"] / m["output_throughput_tokens_per_sec"]
    m["energy_per_response_joules"] = m["energy_per_token_joules"] * m["avg_output_len_tokens"]


def edit_description(data: Path) -> str:
    """Edit the description_md of the first model (models.yaml is rewritten, not edited
    in place: the synthetic folder is hard-linked to its pristine copy)."""
    import yaml

    path = data / "models.yaml"
    models = yaml.safe_load(path.read_text(encoding="utf-8"))
    model_id = sorted(models)[0]
    models[model_id]["description_md"] = (
        models[model_id].get("description_md") or ""
    ) + "\n\nEdited by the benchmark: *one* model's description changed."
    path.unlink()
    path.write_text(
        yaml.safe_dump(models, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8"
    )
    return model_id


def site_breakdown(out: Path) -> dict[str, Any]:
    """Bytes and files of the built site by kind."""
    by: Counter[str] = Counter()
    n: Counter[str] = Counter()
    for folder, _, files in os.walk(out):
        for name in files:
            kind = name.rsplit(".", 1)[-1] if "." in name else "(none)"
            if name.endswith(".vl.json"):
                kind = "vl.json"
            elif name == "oembed.json":
                kind = "oembed.json"
            by[kind] += os.path.getsize(os.path.join(folder, name))
            n[kind] += 1
    return {k: {"bytes": by[k], "files": n[k]} for k, _ in by.most_common()}


def bench_dataset(
    runner: Runner,
    label: str,
    size: int | None,
    args: argparse.Namespace,
    seconds_per_render: float,
) -> dict[str, Any]:
    started = time.perf_counter()
    data, data_stats = prepare_data(label, size, args.seed, runner.workdir, runner.project)
    prepare_seconds = time.perf_counter() - started
    budget_end = time.perf_counter() + args.budget
    cache = Path(tempfile.mkdtemp(prefix=f"cache-{label}-", dir=runner.workdir))
    out = runner.workdir / f"site-{label}"
    for stale in (out, out.parent / f".{out.name}.manifest.json"):
        remove(stale)
    model_tasks = data_stats.get("model_tasks")
    est_charts = 2 * (model_tasks or 0) + 40
    est_render = est_charts * 2 * seconds_per_render
    stub = args.charts == "stub" or (
        args.charts == "auto" and size is not None and est_render > 0.6 * args.budget
    )
    extra = ["--data", str(data), "--out", str(out), "--cache", str(cache)]
    res: dict[str, Any] = {
        "label": label,
        "size": size,
        "data": data_stats,
        "prepare_seconds": prepare_seconds,
        "stub_charts": stub,
        "estimated_cold_render_seconds": est_render if size else None,
        "builds": {},
    }
    print(
        f"[{label}] {data_stats.get('configurations')} configurations, "
        f"{data_stats.get('models', '?')} models; charts "
        f"{'stubbed' if stub else 'real'}",
        flush=True,
    )

    def remaining() -> float:
        return budget_end - time.perf_counter()

    def build(
        name: str,
        more: list[str] = (),  # type: ignore
        before: Any = None,
    ) -> dict[str, Any] | None:
        """The build ``--repeat`` times (``before()`` first each time: a fresh cache, one
        more measurement); the run with the median wall time is reported, with every run's
        wall and CPU seconds and load average in ``runs``."""
        runs = []
        for _ in range(args.repeat):
            if remaining() <= 5:
                break
            if before is not None:
                before()
            r = runner.child(
                "_build",
                extra + (["--stub-charts"] if stub else []) + list(more),
                remaining(),
                cache,
            )
            print(f"[{label}] {name}: {_one_line(r)}", flush=True)
            runs.append(r)
            if r.get("killed_at_budget") or r.get("error"):
                break
        if not runs:
            res["builds"][name] = {"skipped": "time budget used up"}
            print(f"[{label}] {name}: skipped (budget)", flush=True)
            return None
        ok = [r for r in runs if not r.get("killed_at_budget") and not r.get("error")]
        if len(ok) < len(runs):
            res["builds"][name] = runs[-1]
            return None
        median = sorted(ok, key=lambda r: r["wall_seconds"])[(len(ok) - 1) // 2]
        median["runs"] = [
            {
                k: r.get(k)
                for k in (
                    "wall_seconds",
                    "cpu_seconds",
                    "loadavg_before",
                    "loadavg_after",
                    "chart_renders",
                    "maxrss_self_mb",
                    "tree_peak_rss_mb",
                )
            }
            for r in ok
        ]
        res["builds"][name] = median
        return median

    def fresh_cache() -> None:
        remove(cache)
        cache.mkdir()
        remove(out)
        remove(out.parent / f".{out.name}.manifest.json")

    added: list[str] = []
    wanted = set(args.builds.split(","))
    cold = build("cold", before=fresh_cache)
    if cold is not None:
        res["site"] = site_breakdown(out)
        if stub and cold.get("stub_charts"):
            res["extrapolated_cold_chart_seconds"] = (
                cold["stub_charts"]["stub_renders"] * seconds_per_render
            )
        elif cold["chart_renders"]:
            res["seconds_per_render"] = cold["timings"]["charts"] / cold["chart_renders"]
        noop = "noop" in wanted and build("noop")
        one = (
            noop
            and "add-one" in wanted
            and build("add-one", before=lambda: added.append(add_measurement(data)))
        )
        res["added"] = added
        if one and "edit-desc" in wanted:
            res["edited_model"] = edit_description(data)
            build("edit-desc")
        if "warm-clean" in wanted:
            out2 = runner.workdir / f"site-{label}-clean"
            remove(out2)
            build("warm-clean", ["--out", str(out2)])  # argparse: the last --out wins
            remove(out2)
    if args.profile and cold is not None and remaining() > 30:
        prof = RESULTS / f"profile-{label}.prof"
        out3 = runner.workdir / f"site-{label}-prof"
        r = runner.child(
            "_build",
            extra
            + ["--out", str(out3), "--profile", str(prof)]
            + (["--stub-charts"] if stub else []),
            remaining(),
            cache,
        )
        remove(out3)
        if prof.exists() and not r.get("killed_at_budget"):
            res["profile"] = {
                "file": str(prof.relative_to(REPO)),
                "wall_seconds": r["wall_seconds"],
                "timings": r.get("timings"),
                "top": profile_top(prof),
            }
            print(f"[{label}] profile (warm cache, cProfile): {prof.relative_to(REPO)}", flush=True)
    remove(cache)
    res["wall_seconds"] = time.perf_counter() - started
    return res


def profile_top(path: Path, n: int = 25) -> list[dict[str, Any]]:
    import pstats

    stats = pstats.Stats(str(path))
    rows = []
    for (file, line, func), (_cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore
        rows.append(
            {
                "function": f"{Path(file).name}:{line}({func})",
                "calls": nc,
                "tottime": tt,
                "cumtime": ct,
            }
        )
    by_cum = sorted(rows, key=lambda r: -r["cumtime"])[:n]
    by_tot = sorted(rows, key=lambda r: -r["tottime"])[:n]
    return [{"by": "cumtime", **r} for r in by_cum] + [{"by": "tottime", **r} for r in by_tot]


def _one_line(r: dict[str, Any]) -> str:
    if r.get("killed_at_budget"):
        done = ", ".join(f"{p['stage']} {p['seconds']:.1f}s" for p in r.get("progress", []))
        return (
            f"KILLED at budget after {r['wall_seconds']:.0f}s (finished: {done or 'none'}); "
            f"tree peak RSS {r['tree_peak_rss_mb']:.0f} MB"
        )
    if r.get("error"):
        return "FAILED: " + r["error"].strip().splitlines()[-1]
    stages = " ".join(f"{k} {v:.2f}" for k, v in r["timings"].items())
    # Where the memory goes: the build process's peak RSS as each stage ends.
    peaks = " ".join(f"{p['stage']} {p['maxrss_mb']:.0f}" for p in r.get("progress", []))
    return (
        f"{r['wall_seconds']:.1f}s wall, {r['pages']} pages, {r['files']} files, "
        f"{r['bytes'] / 1e6:.0f} MB, {r['written']} written/{r['linked']} linked, "
        f"{r['chart_renders']} renders, RSS {r['maxrss_self_mb']:.0f} MB "
        f"(workers {r.get('maxrss_workers_mb', 0):.0f}, tree "
        f"{r['tree_peak_rss_mb']:.0f}); {stages}; peak RSS MB by stage end: {peaks}"
    )


# --------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------


def _fmt(v: Any, spec: str = ".1f") -> str:
    return "–" if v is None else format(v, spec)


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)
    ]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = [
        "| "
        + " | ".join(
            c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        + " |"
        for r in rows
    ]
    return "\n".join([line, sep, *body])


# The performance budgets (README, Performance; 2 cores): (data set, build, what, limit, unit).
BUDGETS = [
    ("default", "cold", "wall_seconds", 8.0, "s"),
    ("default", "noop", "wall_seconds", 1.0, "s"),
    ("default", "add-one", "wall_seconds", 1.5, "s"),
    ("10k", "cold", "wall_seconds", 60.0, "s"),
    ("10k", "cold", "tree_peak_rss_mb", 1024.0, "MB"),
    ("100k", "cold", "tree_peak_rss_mb", 2048.0, "MB"),
]


def budget_table(results: dict[str, Any]) -> str:
    """Each budget against the median run: the figure, CPU seconds (user+sys of the build
    and its workers), the load average before each run, and whether it is met."""
    rows = []
    by_label = {d["label"]: d for d in results["datasets"]}
    for label, name, key, limit, unit in BUDGETS:
        r = by_label.get(label, {}).get("builds", {}).get(name)
        if not r or key not in r:
            continue
        runs = r.get("runs") or [r]
        value = r[key]
        stub = " (stub charts)" if by_label[label]["stub_charts"] else ""
        rows.append(
            [
                f"{label}{stub}",
                name,
                f"<= {limit:g} {unit}",
                f"{value:.2f}",
                " ".join(f"{x.get(key) or 0:.2f}" for x in runs),
                _fmt(r.get("cpu_seconds"), ".1f"),
                " ".join(f"{x.get('loadavg_before') or 0:.1f}" for x in runs),
                "met" if value <= limit else "MISSED",
            ]
        )
    return "Budgets (median of the runs)\n" + table(
        rows, ["data", "build", "budget", "median", "runs", "CPU s", "load before", ""]
    )


def report(results: dict[str, Any]) -> str:
    parts = [budget_table(results)]
    rows = []
    for d in results["datasets"]:
        c = d["builds"].get("cold", {})
        t = c.get("timings", {})
        pages = c.get("pages")
        rp = c.get("render_page", {})
        rp_pages = sum(v["pages"] for v in rp.values())
        rp_secs = sum(v["seconds"] for v in rp.values())
        rows.append(
            [
                d["label"] + (" (stub charts)" if d["stub_charts"] else ""),
                str(d["data"].get("configurations")),
                str(d["data"].get("models", "–")),
                str(pages or "–"),
                str(c.get("files", "–")),
                _fmt(c.get("bytes") and c["bytes"] / 1e6, ".0f"),
                _fmt(c.get("wall_seconds")) + ("*" if c.get("killed_at_budget") else ""),
                *(_fmt(t.get(s), ".2f") for s in STAGES),
                _fmt(pages / t["render"] if pages and t.get("render") else None, ".0f"),
                _fmt(rp_pages / rp_secs if rp_secs else None, ".0f"),
                _fmt(c.get("maxrss_self_mb"), ".0f"),
                _fmt(c.get("maxrss_workers_mb"), ".0f"),
                _fmt(c.get("tree_peak_rss_mb"), ".0f"),
            ]
        )
    parts.append(
        "Cold builds (fresh output folder, empty chart cache)\n"
        + table(
            rows,
            [
                "data",
                "configs",
                "models",
                "pages",
                "files",
                "MB",
                "wall s",
                *STAGES,
                "render pages/s",
                "render_page pages/s",
                "RSS MB",
                "workers RSS MB",
                "tree RSS MB",
            ],
        )
    )
    rows = []
    for d in results["datasets"]:
        for name in ("noop", "add-one", "edit-desc", "warm-clean"):
            r = d["builds"].get(name)
            if r is None:
                continue
            if "skipped" in r:
                rows.append([d["label"], name, "skipped"] + [""] * 9)
                continue
            t = r.get("timings", {})
            rows.append(
                [
                    d["label"],
                    name,
                    _fmt(r["wall_seconds"]) + ("*" if r.get("killed_at_budget") else ""),
                    *(_fmt(t.get(s), ".2f") for s in STAGES),
                    str(r.get("written", "–")),
                    str(r.get("linked", "–")),
                    str(r.get("chart_renders", "–")),
                    _fmt(r.get("maxrss_self_mb"), ".0f"),
                ]
            )
    parts.append(
        "Rebuilds (same output folder, warm chart cache; warm-clean: new folder)\n"
        + table(
            rows, ["data", "build", "wall s", *STAGES, "written", "linked", "renders", "RSS MB"]
        )
    )
    rows = []
    for d in results["datasets"]:
        c = d["builds"].get("cold", {})
        for tpl, v in c.get("render_page", {}).items():
            rows.append(
                [
                    d["label"],
                    tpl,
                    str(v["pages"]),
                    _fmt(v["seconds"], ".2f"),
                    _fmt(1000 * v["seconds"] / v["pages"], ".2f"),
                    _fmt(v["html_bytes"] / v["pages"] / 1024, ".1f"),
                ]
            )
    if rows:
        parts.append(
            "render_page by template (cold build)\n"
            + table(rows, ["data", "template", "pages", "seconds", "ms/page", "KiB/page"])
        )
    rows = []
    for d in results["datasets"]:
        site = d.get("site") or {}
        total = sum(v["bytes"] for v in site.values()) or 1
        top = ", ".join(
            f"{k} {v['bytes'] / 1e6:.1f} MB ({100 * v['bytes'] / total:.0f}%, {v['files']} files)"
            for k, v in list(site.items())[:6]
        )
        rows.append([d["label"], _fmt(total / 1e6, ".0f"), top])
    parts.append("Site size by file kind\n" + table(rows, ["data", "MB", "largest kinds"]))
    extra = []
    for d in results["datasets"]:
        if d.get("extrapolated_cold_chart_seconds"):
            extra.append(
                f"{d['label']}: charts stubbed; real cold chart rendering would take "
                f"~{d['extrapolated_cold_chart_seconds'] / 60:.0f} min at "
                f"{results.get('seconds_per_render', 0):.3f} s/render"
            )
        if d.get("seconds_per_render"):
            extra.append(
                f"{d['label']}: {d['seconds_per_render'] * 1000:.0f} ms per chart "
                "render (SVG or PNG, cold, all cores)"
            )
    cb = results.get("chart_microbench")
    if cb:
        rows = [
            [
                k,
                str(cb["charts"].get(k, 0)),
                str(v["spec_bytes"]),
                _fmt(v["svg_seconds"] * 1000, ".0f"),
                _fmt(v["svg_bytes"] / 1024, ".0f"),
                _fmt(v["png_seconds"] * 1000, ".0f"),
                _fmt(v["png_bytes"] / 1024, ".0f"),
            ]
            for k, v in cb["kinds"].items()
        ]
        parts.append(
            "vl-convert per chart kind (default data, one process, median of 3)\n"
            + table(rows, ["kind", "charts", "spec B", "SVG ms", "SVG KiB", "PNG ms", "PNG KiB"])
        )
    if extra:
        parts.append("\n".join(extra))
    sizes = [
        d
        for d in results["datasets"]
        if d["size"] and d["builds"].get("cold", {}).get("maxrss_self_mb")
    ]
    if len(sizes) > 1:
        rows = []
        base = sizes[0]
        for d in sizes:
            c = d["builds"]["cold"]
            b = base["builds"]["cold"]
            rows.append(
                [
                    d["label"],
                    str(d["size"]),
                    _fmt(c["maxrss_self_mb"], ".0f"),
                    _fmt(c["maxrss_self_mb"] / d["size"] * 1000, ".0f"),
                    _fmt(c["maxrss_self_mb"] / b["maxrss_self_mb"], ".2f"),
                    _fmt(d["size"] / base["size"], ".1f"),
                    _fmt(c["bytes"] / 1e6, ".0f"),
                ]
            )
        parts.append(
            "Memory growth (cold build process peak RSS)\n"
            + table(
                rows, ["data", "configs", "RSS MB", "KB/config", "RSS ×", "configs ×", "output MB"]
            )
        )
    return "\n\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("_build", "_charts"):
        p = argparse.ArgumentParser()
        p.add_argument("--data")
        p.add_argument("--out")
        p.add_argument("--cache", default="")
        p.add_argument("--project")
        p.add_argument("--result")
        p.add_argument("--profile", default="")
        p.add_argument("--stub-charts", action="store_true")
        p.add_argument("--png", action="store_true")
        a = p.parse_args(argv[1:])
        return child_build(a) if argv[0] == "_build" else child_charts(a)

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="default data + 1,000 only")
    p.add_argument(
        "--sizes",
        default="1000,10000",
        help="synthetic sizes, comma-separated (default 1000,10000; add 100000)",
    )
    p.add_argument(
        "--budget",
        type=float,
        default=900.0,
        help="seconds for all builds of one size (default 900)",
    )
    p.add_argument("--charts", choices=("auto", "real", "stub"), default="auto")
    p.add_argument("--no-default", action="store_true", help="skip the default data")
    p.add_argument(
        "--builds",
        default="cold,noop,add-one,edit-desc,warm-clean",
        help="which builds (cold always runs; add-one needs noop, edit-desc add-one)",
    )
    p.add_argument(
        "--profile",
        action="store_true",
        help="also a cProfile'd warm-cache build per size (results/profile-*.prof)",
    )
    p.add_argument(
        "--ref",
        default="",
        help="benchmark this git ref (exported to the work folder) instead of the working tree",
    )
    p.add_argument(
        "--seconds-per-render",
        type=float,
        default=DEFAULT_SECONDS_PER_RENDER,
        help="chart render cost for --charts auto and the stub extrapolation "
        "until a real cold build in this run measures it (default "
        f"{DEFAULT_SECONDS_PER_RENDER}; 0.053 measured on 10k, 2 cores, quiet)",
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run cold, noop, add-one, ... this many times each and report the "
        "median (3 for the budget figures)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--workdir",
        type=Path,
        default=DEFAULT_WORKDIR,
        help=f"synthetic data, sites, caches (default {DEFAULT_WORKDIR})",
    )
    args = p.parse_args(argv)
    sizes = [1000] if args.quick else [int(s) for s in args.sizes.split(",") if s]
    args.workdir.mkdir(parents=True, exist_ok=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    project = project_at(args.ref, args.workdir)
    runner = Runner(project, args.workdir, str(project))
    results: dict[str, Any] = {
        "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "git_head": _git("rev-parse", "HEAD"),
        "ref": args.ref or "(working tree)",
        "working_tree_dirty": bool(_git("status", "--porcelain", "--", "jouleboard", "templates")),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "args": {k: str(v) for k, v in vars(args).items()},
        "datasets": [],
    }
    with removals_deferred(args.workdir):
        results["seconds_per_render"] = measure(runner, args, sizes, results)
    path = _save(results)
    print()
    print(report(results))
    print(f"\nsaved {path.relative_to(REPO)}")
    return 0


def measure(
    runner: Runner, args: argparse.Namespace, sizes: list[int], results: dict[str, Any]
) -> float:
    """Every data set's builds into ``results`` (saved after each size); the seconds per
    render of the last one measured."""
    spr: float = args.seconds_per_render
    if not args.no_default:
        d = bench_dataset(runner, "default", None, args, spr)
        results["datasets"].append(d)
        spr = d.get("seconds_per_render", spr)
        r = runner.child("_charts", ["--data", str(runner.workdir / "data-default")], 300)
        if "kinds" in r:
            results["chart_microbench"] = {"charts": r["charts"], "kinds": r["kinds"]}
    for size in sizes:
        label = f"{size // 1000}k" if size % 1000 == 0 else str(size)
        d = bench_dataset(runner, label, size, args, spr)
        results["datasets"].append(d)
        spr = d.get("seconds_per_render", spr)
        results["seconds_per_render"] = spr
        _save(results)
    return spr


def _save(results: dict[str, Any]) -> Path:
    return _save_as(results, "run", "latest.json")


def _save_as(results: dict[str, Any], prefix: str, latest: str = "") -> Path:
    """results/<prefix>-<start time>.json, and a copy as ``latest`` (default
    <prefix>-latest.json)."""
    stamp = results["started"].replace(":", "").replace("+0000", "Z")
    path = RESULTS / f"{prefix}-{stamp}.json"
    text = json.dumps(results, indent=2)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    (RESULTS / (latest or f"{prefix}-latest.json")).write_text(text, encoding="utf-8")
    return path


if __name__ == "__main__":
    sys.exit(main())
