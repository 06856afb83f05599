"""Where the test suite's time goes: ``python benchmarks/suite_cpu.py [pytest arguments]``.

Runs the README's test command (``python -m pytest``, with any arguments given after it)
with this file as a pytest plugin, which records each test's wall time and the CPU time it
cost: its worker's own, its worker's children's (counted once they are reaped: a build in
a subprocess, mypy, a venv), and the growth of the worker's live descendants (a browser, a
``serve``). Then it prints:

- the run's wall time, the machine's busy CPU time meanwhile (from /proc/stat: run it on
  an otherwise idle machine) and its share of what the cores could give: near 100 % the
  suite is CPU-bound, and more pytest-xdist workers cannot make it faster, only less work
  can; and the CPU of the processes the run waited for, which misses those nobody waits
  for (a browser's renderers, a chart worker left to end on its own);
- the test files and the tests that cost the most CPU;
- the tests that waited most (wall time well over CPU time: sleeps, timeouts, polling).

A descendant that outlives its test (the session's browser, a chart-worker pool) is
counted as its CPU grows; when it ends, the test running then is charged with all of it
(reaped by the worker) or loses it (reaped by another process): such a test shows far
more CPU than wall time, or less than none, and is listed apart, not ranked.
The one descendant that is no test's is tests/sitebuild.py's background builder: one worker
starts it, and it makes the shared sites while that worker runs other tests. Its CPU is
counted apart (one line of the report), not charged to those tests.

Writes benchmarks/results/suite-cpu-<UTC time>/ (one JSON line per test, per worker).
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
OUT_ENV = "JOULEBOARD_SUITE_CPU_OUT"
_TICK = os.sysconf("SC_CLK_TCK")


# --- the plugin (loaded in each pytest process with -p suite_cpu) ---------------------------


BACKGROUND = "(shared sites, built in the background)"  # tests/sitebuild.py's builder
_BUILDER = b"tests.sitebuild"  # in its command line
_background_seen = 0.0  # the most CPU its process tree was seen to have used
_builders: set[int] = set()  # its pid, once seen (an ended process has no command line)


def _descendants_cpu(root: int) -> tuple[float, float]:
    """CPU seconds of the live descendants of process ``root`` (their own and their reaped
    children's), from /proc: ``(the tests', the background builder's)``. The builder
    (:func:`tests.sitebuild.start_background`) is one worker's child that makes the shared
    sites while that worker runs other tests; its CPU is none of theirs."""
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as f:
                stat = f.read()
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        parent[int(name)] = int(fields[1])
        cpu[int(name)] = sum(int(x) for x in fields[11:15]) / _TICK  # utime stime cutime cstime
    tests = background = 0.0
    for pid, seconds in cpu.items():
        chain, up = [pid], parent.get(pid)
        while up and up != root and len(chain) < 64:
            chain.append(up)
            up = parent.get(up)
        if up != root:
            continue
        if any(_is_builder(p) for p in chain):
            background += seconds
        else:
            tests += seconds
    return tests, background


def _is_builder(pid: int) -> bool:
    if pid in _builders:
        return True
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if _BUILDER in f.read().split(b"\0"):
                _builders.add(pid)
                return True
    except OSError:
        pass
    return False


def _cpu_now() -> tuple[float, float, float]:
    global _background_seen
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    live, background = _descendants_cpu(os.getpid())
    _background_seen = max(_background_seen, background)
    return own.ru_utime + own.ru_stime, reaped.ru_utime + reaped.ru_stime, live


def _record(nodeid: str, wall: float, before: tuple[float, ...], after: tuple[float, ...]) -> None:
    folder = os.environ.get(OUT_ENV)
    if not folder:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    own, reaped, live = (b - a for a, b in zip(before, after, strict=True))
    line = {"test": nodeid, "wall": wall, "own": own, "reaped": reaped, "live": live}
    with open(Path(folder) / f"{worker}.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    before, started = _cpu_now(), time.perf_counter()
    try:
        return (yield)
    finally:
        _record(item.nodeid, time.perf_counter() - started, before, _cpu_now())


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The background builder's CPU, once: it has ended (every test that waited for a shared
    site is done) but is not reaped yet, so /proc still counts it."""
    _cpu_now()
    if _background_seen:
        _record(BACKGROUND, 0.0, (0.0, 0.0, 0.0), (0.0, 0.0, _background_seen))


# --- the command --------------------------------------------------------------------------


def _load(folder: Path) -> list[dict[str, Any]]:
    rows = []
    for path in sorted(folder.glob("*.jsonl")):
        rows += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row["cpu"] = row["own"] + row["reaped"] + row["live"]
    return rows


def busy_seconds() -> float:
    """The machine's busy CPU time since boot, all cores (/proc/stat: all but idle and
    I/O wait)."""
    with open("/proc/stat", encoding="ascii") as f:
        ticks = [int(x) for x in f.readline().split()[1:]]
    return (sum(ticks[:8]) - ticks[3] - ticks[4]) / _TICK


def report(
    rows: list[dict[str, Any]], wall: float, busy: float, waited: float, cores: int, top: int
) -> str:
    background = sum(r["cpu"] for r in rows if r["test"] == BACKGROUND)
    rows = [r for r in rows if r["test"] != BACKGROUND]
    lines = [
        f"run: {wall:.1f} s wall, {len(rows)} tests; the machine was busy {busy:.1f} s of "
        f"{wall * cores:.1f} CPU-seconds ({cores} cores: {100 * busy / (wall * cores):.0f} %); "
        f"the processes the run waited for used {waited:.1f} s",
        f"the shared sites, built in the background meanwhile, used {background:.1f} s",
    ]

    # A test charged with a long-lived descendant's CPU, or losing it, is not ranked.
    def charged(r: dict[str, Any]) -> bool:
        return bool(r["cpu"] > 3 * r["wall"] + 1 or r["live"] < -1)

    odd = [r for r in rows if charged(r)]
    ranked = [r for r in rows if not charged(r)]
    by_file: collections.Counter[str] = collections.Counter()
    for r in ranked:
        by_file[r["test"].split("::")[0]] += r["cpu"]
    lines += ["", f"CPU by test file (top {top}):"]
    lines += [f"  {seconds:7.1f} s  {name}" for name, seconds in by_file.most_common(top)]
    lines += ["", f"CPU by test (top {top}): CPU s / wall s"]
    for r in sorted(ranked, key=lambda r: -r["cpu"])[:top]:
        lines.append(f"  {r['cpu']:6.1f} / {r['wall']:6.1f}  {r['test']}")
    lines += ["", f"waiting (wall - CPU, top {top}):"]
    for r in sorted(ranked, key=lambda r: r["cpu"] - r["wall"])[:top]:
        if r["wall"] > r["cpu"]:
            lines.append(f"  {r['wall'] - r['cpu']:6.1f} s  {r['test']}")
    if odd:
        lines += ["", "charged with, or losing, a longer-lived process's CPU (not ranked):"]
        lines += [f"  {r['cpu']:6.1f} / {r['wall']:6.1f}  {r['test']}" for r in odd]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=20, help="rows per list (20)")
    args, pytest_args = parser.parse_known_args(argv)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    folder = HERE / "results" / f"suite-cpu-{stamp}"
    folder.mkdir(parents=True)
    env = dict(os.environ, **{OUT_ENV: str(folder)})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "pytest", "-p", "suite_cpu", "-p", "no:cacheprovider"]
    before, busy = resource.getrusage(resource.RUSAGE_CHILDREN), busy_seconds()
    started = time.perf_counter()
    status = subprocess.call(command + pytest_args, cwd=HERE.parent, env=env)
    wall = time.perf_counter() - started
    busy = busy_seconds() - busy
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    waited = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    cores = os.cpu_count() or 1  # /proc/stat counts every core of the machine
    text = report(_load(folder), wall, busy, waited, cores, args.top)
    (folder / "report.txt").write_text(text + "\n", encoding="utf-8")
    print(f"\n{text}\n\n(pytest exit status {status}; records in {folder})")
    return status


if __name__ == "__main__":
    sys.exit(main())
