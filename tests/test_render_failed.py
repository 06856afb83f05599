"""Charts that cannot be drawn, whatever the input: vl-convert does not load, or a chart
worker process is killed (the system's answer to memory running out). The build ends with
one line that says which and what to do, never a traceback (a worker's or the build's),
and leaves the previous site as it was (jouleboard/render/chart_files.py, RenderFailed)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jouleboard.core.problems import RenderFailed
from jouleboard.render import chart_files
from jouleboard.render.chart_files import Pool, render_charts
from tests.golden.tree import DATA, REPO, tree


def _edited_data(root: Path) -> Path:
    """The golden data with one measurement's power changed: a rebuild of the golden site
    from it draws charts again."""
    data = root / "data"
    shutil.copytree(DATA, data)
    path = sorted((data / "measurements/gpqa").rglob("*.json"))[0]
    doc = json.loads(path.read_text())
    doc["metrics"]["avg_power_watts"] *= 1.005  # (within the 1 % the metrics must agree to)
    path.write_text(json.dumps(doc))
    return data


def _build(data: Path, out: Path, cache: Path, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "jouleboard", "build", "--data", str(data), "--out", str(out)],
        cwd=REPO,
        env={**os.environ, "JOULEBOARD_CACHE": str(cache), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _ended_in_one_line(build: subprocess.Popen[str], what: str) -> str:
    """The build's error line, once it has failed with that line last and no traceback."""
    stdout, stderr = build.communicate(timeout=300)
    assert build.returncode == 1, stdout + stderr
    assert "Traceback" not in stdout + stderr, stderr
    last = stderr.splitlines()[-1]
    assert last.startswith(f"jouleboard build: error: {what}"), stderr
    assert "; nothing was written. " in last
    return last


def _previous_site(golden_site: Path, root: Path) -> tuple[Path, dict[str, str]]:
    out = root / "site"
    shutil.copytree(golden_site, out, symlinks=True)
    return out, tree(out)


def _untouched(out: Path, before: dict[str, str]) -> None:
    assert tree(out) == before, "the failed build changed the previous site"
    # (no staging folder, manifest or lock of the failed build left beside it)
    assert sorted(p.name for p in out.parent.iterdir() if p.name.startswith(".site")) in (
        [],
        [".site.lock"],
    )


def test_a_build_whose_vl_convert_does_not_load_says_so_in_one_line(
    tmp_path: Path, golden_site: Path
) -> None:
    """vl-convert's native library fails to load, in every process (a broken install). With
    a fresh chart cache the build spawns its workers as it starts, and none of them can start
    its renderer. Before, each worker printed its initializer's traceback and the build a
    BrokenProcessPool one. (A rebuild's forked worker starts through the same function.)"""
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "vl_convert.py").write_text(
        'raise ImportError("libvl_convert.so: cannot open shared object file")\n'
    )
    out, before = _previous_site(golden_site, tmp_path)
    build = _build(_edited_data(tmp_path), out, tmp_path / "cache", PYTHONPATH=str(shim))
    last = _ended_in_one_line(build, "vl-convert, which draws the charts, could not start")
    assert "(ImportError: libvl_convert.so: cannot open shared object file)" in last
    assert "python -c 'import vl_convert'" in last
    _untouched(out, before)


def _workers_of(pid: int) -> list[int]:
    """The spawned chart workers of process ``pid``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(") ", 1)[1].split()[1])
            cmdline = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):  # ended meanwhile
            continue
        if parent == pid and b"spawn_main" in cmdline:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_a_build_whose_chart_worker_is_killed_says_how_in_one_line(
    tmp_path: Path, golden_site: Path
) -> None:
    """A cold build (a fresh chart cache) spawns its workers before it loads the data; one
    of them is killed with SIGKILL, as the kernel's out-of-memory killer does. Before, the
    build ended with a BrokenProcessPool traceback."""
    out, before = _previous_site(golden_site, tmp_path)
    build = _build(_edited_data(tmp_path), out, tmp_path / "cache")
    deadline = time.monotonic() + 60
    while not (workers := _workers_of(build.pid)) and build.poll() is None:
        assert time.monotonic() < deadline, "the build started no chart worker"
        time.sleep(0.01)
    assert workers, "the build ended before a chart worker started"
    os.kill(workers[0], signal.SIGKILL)
    last = _ended_in_one_line(build, "a chart worker process ended abruptly (killed by SIGKILL")
    assert last.endswith("Build again (the charts drawn so far are kept in the chart cache)")
    _untouched(out, before)


@pytest.mark.parametrize(
    ("job", "told"),
    [
        ((os._exit, 3), " (exit status 3)"),
        ((signal.raise_signal, signal.SIGSEGV), " (killed by SIGSEGV)"),
        ((signal.raise_signal, signal.SIGKILL), " (killed by SIGKILL, as the system ends"),
        ((signal.raise_signal, signal.SIGTERM), ";"),  # as the pool ends the others: not told
    ],
)
def test_a_pool_whose_worker_ends_abruptly_says_how(job: tuple[object, int], told: str) -> None:
    """Whatever the job, a worker that dies in it breaks the pool: the build is told how the
    worker ended (its exit status or signal), not that the pool is broken."""
    work, code = job
    with pytest.raises(RenderFailed) as failed, Pool() as pool:
        pool.submit(work, code).result(timeout=120)  # type: ignore[arg-type]
    assert str(failed.value).startswith(f"a chart worker process ended abruptly{told}")


def test_charts_drawn_in_the_build_without_vl_convert_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A few charts are drawn in the build's own process (a worker costs ~0.5 s to start):
    there too, a vl-convert that does not load is one RenderFailed, not an ImportError."""
    monkeypatch.setattr(chart_files, "_renderer_here", False)
    monkeypatch.setitem(sys.modules, "vl_convert", None)  # import vl_convert: ImportError
    spec = {"data": {"values": [{"a": 1}]}, "mark": "point", "encoding": {}}
    with pytest.raises(RenderFailed, match=r"could not start \(ModuleNotFoundError: "):
        render_charts({"one": spec}, ("svg",), tmp_path)
