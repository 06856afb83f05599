"""Budget 3: how soon ``jouleboard serve`` reloads the browser after an edit.

``measure_serve`` copies a data folder and the packaged templates and content into a new site
folder (serve watches <site>/templates, <site>/content and the data folder), starts
``python -m jouleboard serve --data D --out O --port 0`` and, per edit kind (a template, a
model's description_md, a number in one measurement file, content/about.md seen on /about/),
``repeat`` times:

1. reads the build version (``GET /__jouleboard__/version``) and the page the browser shows;
2. writes the edit (a new file moved over the old one, as editors save);
3. waits for the reload signal: ``GET /__jouleboard__/wait?since=<version>&page=<path>``
   (the long-poll serve answers as soon as the version differs), or, on a serve without
   that endpoint, ``/__jouleboard__/version`` polled every 10 ms (reported as such);
   the latency is from the end of the write to that answer;
4. waits until serve has printed the end of the rebuild (its ``built ...`` summary line,
   with the stage timings) and checks that the served page has the edit.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from run import TreeSampler, removals_deferred, remove, scale_throughput

WAIT = "/__jouleboard__/wait"
VERSION = "/__jouleboard__/version"
POLL_SECONDS = 0.01
END_OF_REBUILD = re.compile(r"^(built |rebuilt |rebuild failed|error)")
STAGE = re.compile(r"([A-Za-z][\w+\-]*) (\d+(?:\.\d+)?)s\b")


def stages_of(line: str) -> dict[str, float]:
    """Stage timings from a build summary line: '... (load+validate 0.53s, charts 0.2s)'."""
    inside = line[line.rfind("(") + 1 :] if "(" in line else ""
    return {k: float(v) for k, v in STAGE.findall(inside)}


def write_atomically(path: Path, text: str) -> None:
    """Save as editors do: a hidden temporary file (serve ignores hidden files) moved over
    the old one, so serve never reads half a file."""
    tmp = path.with_name(f".{path.name}.bench-tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def get(url: str, timeout: float = 30.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        return e.code, b""


class Serve:
    """A running ``jouleboard serve`` whose stdout lines are kept (with arrival times)."""

    def __init__(self, cmd: list[str], env: dict[str, str], cwd: Path) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            cmd,
            env=env,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.sampler = TreeSampler(self.proc.pid)
        self.sampler.start()
        self.lines: list[tuple[float, str]] = []
        self.changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self.changed:
                self.lines.append((time.perf_counter(), line.rstrip("\n")))
                self.changed.notify_all()

    def wait_line(
        self, pattern: re.Pattern[str], after: int, timeout: float
    ) -> tuple[float, str] | None:
        """The first line from index ``after`` on that matches, or None at ``timeout``."""
        end = time.perf_counter() + timeout
        with self.changed:
            while True:
                for at, line in self.lines[after:]:
                    if pattern.search(line):
                        return at, line
                left = end - time.perf_counter()
                if left <= 0 or self.proc.poll() is not None:
                    return None
                self.changed.wait(left)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)  # serve stops on Ctrl-C
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.sampler.stop()


def reload_signal(
    base: str, since: str, page: str, long_poll: bool, timeout: float = 120.0
) -> str | None:
    """Block until the served build version differs from ``since``; the new version."""
    end = time.perf_counter() + timeout
    while time.perf_counter() < end:
        if long_poll:
            query = urllib.parse.urlencode({"since": since, "page": page})
            status, body = get(f"{base}{WAIT}?{query}", timeout=60)
        else:
            status, body = get(base + VERSION, timeout=10)
        version = body.decode().strip()
        if status == 200 and version != since:
            return version
        if not long_poll:
            time.sleep(POLL_SECONDS)
    return None


class Edits:
    """The three edit kinds on a private site folder, each leaving a mark to look for."""

    def __init__(self, site: Path, model_id: str, measurement: Path) -> None:
        self.site, self.model_id, self.measurement = site, model_id, measurement
        self.base_html = (site / "templates" / "base.html").read_text(encoding="utf-8")
        self.about_md = (site / "content" / "about.md").read_text(encoding="utf-8")

    def template(self, n: int) -> str:
        mark = f'<meta name="jouleboard-bench" content="template-edit-{n}">'
        write_atomically(
            self.site / "templates" / "base.html",
            self.base_html.replace("</head>", mark + "</head>", 1),
        )
        return mark

    def description(self, n: int) -> str:
        import yaml

        path = self.site / "data" / "models.yaml"
        models = yaml.safe_load(path.read_text(encoding="utf-8"))
        mark = f"Benchmark description edit {n}."
        models[self.model_id]["description_md"] = mark
        write_atomically(
            path, yaml.safe_dump(models, sort_keys=False, allow_unicode=True, width=100)
        )
        return mark

    def about(self, n: int) -> str:
        path = self.site / "content" / "about.md"
        mark = f"Benchmark about edit {n}."
        write_atomically(path, self.about_md + f"\n{mark}\n")
        return mark

    def measurement_number(self, n: int) -> str:
        doc = json.loads(self.measurement.read_text(encoding="utf-8"))
        scale_throughput(doc, 0.95 if n % 2 else 1.04)  # within bounds, alternating
        write_atomically(self.measurement, json.dumps(doc, indent=2, sort_keys=True) + "\n")
        return ""  # no mark: the page must differ from before the edit


def pick_measurement(data: Path) -> tuple[str, Path]:
    """An LLM measurement file in the middle of the sorted list, and its model id."""
    files = sorted((data / "measurements").rglob("*.json"))
    for path in files[len(files) // 2 :] + files[: len(files) // 2]:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if "max_num_seqs" in doc.get("serving", {}):
            return doc["model_id"], path
    raise ValueError(f"no LLM measurement in {data}")


def prepare_site(project: Path, data: Path, workdir: Path) -> Path:
    site = workdir / "i19-serve-site"
    remove(site)
    site.mkdir(parents=True)
    shutil.copytree(data, site / "data")
    shutil.copytree(project / "templates", site / "templates")  # the packaged templates
    shutil.copytree(project / "content", site / "content")  # and content
    return site


def measure_serve(
    project: Path, data: Path, workdir: Path, env: dict[str, str], repeat: int
) -> dict[str, Any]:
    """Start serve on a copy of ``data`` and time ``repeat`` edits of each kind."""
    site = prepare_site(project, data, workdir)
    out = workdir / "i19-serve-out"
    remove(out)
    sys.path.insert(0, str(project))
    from jouleboard.core.urls import model_slug

    model_id, measurement = pick_measurement(site / "data")
    edits = Edits(site, model_id, measurement)
    model_page = f"/models/{model_slug(model_id)}/"
    cmd = [
        sys.executable,
        "-m",
        "jouleboard",
        "serve",
        "--data",
        str(site / "data"),
        "--out",
        str(out),
        "--port",
        "0",
    ]
    load_before = os.getloadavg()[0]
    serve = Serve(cmd, env, project)
    result: dict[str, Any] = {
        "command": " ".join(cmd[1:]),
        "model": model_id,
        "measurement": str(measurement.relative_to(site / "data")),
        "loadavg_before": load_before,
        "edits": {},
    }
    try:
        up = serve.wait_line(re.compile(r"serving on (http://\S+)"), 0, 600)
        if up is None:
            result["error"] = "serve did not start: " + " | ".join(
                line for _, line in serve.lines[-5:]
            )
            return result
        base = re.search(r"(http://[^/\s]+)", up[1]).group(1)  # type: ignore[union-attr]
        result["startup_seconds"] = up[0] - serve.started
        # serve takes its first snapshot of the watched files just after printing the
        # address: an edit in that instant is never seen (compared against itself)
        time.sleep(1.0)
        status, _ = get(f"{base}{WAIT}?since=-probe-&page=/", timeout=10)
        long_poll = status == 200
        result["signal"] = (
            "long-poll " + WAIT
            if long_poll
            else f"FALLBACK: {VERSION} polled every {POLL_SECONDS * 1000:.0f} ms "
            f"({WAIT} answered {status})"
        )
        kinds = [
            ("template", "/", edits.template),
            ("description", model_page, edits.description),
            ("measurement", model_page, edits.measurement_number),
            ("content", "/about/", edits.about),
        ]
        for kind, page, edit in kinds:
            result["edits"][kind] = [
                one_edit(serve, base, page, edit, n, long_poll) for n in range(1, repeat + 1)
            ]
    finally:
        serve.stop()
        result["loadavg_after"] = os.getloadavg()[0]
        result["tree_peak_rss_mb"] = serve.sampler.peak_kb / 1024.0
        result["output_tail"] = [line for _, line in serve.lines[-3:]]
    for kind, runs in result["edits"].items():
        ok = [r["reload_seconds"] for r in runs if r.get("reload_seconds") is not None]
        result[f"{kind}_median_seconds"] = statistics.median(ok) if ok else None
    return result


def one_edit(
    serve: Serve, base: str, page: str, edit: Any, n: int, long_poll: bool
) -> dict[str, Any]:
    """One edit: seconds from the end of the write to the reload signal, and checks."""
    since = get(base + VERSION)[1].decode().strip()
    before = get(base + page)[1]
    seen = len(serve.lines)
    mark = edit(n)
    written = time.perf_counter()
    version = reload_signal(base, since, page, long_poll)
    signalled = time.perf_counter()
    at_reload = get(base + page)[1]
    done = serve.wait_line(END_OF_REBUILD, seen, 300)
    after = get(base + page)[1]

    def has_edit(body: bytes) -> bool:
        return mark.encode() in body if mark else body != before

    return {
        "reload_seconds": signalled - written if version is not None else None,
        "version": version,
        "rebuild_end_seconds": done[0] - written if done else None,
        "summary": done[1] if done else "(no end-of-rebuild line within 300 s)",
        "stages": stages_of(done[1]) if done else {},
        "page_has_edit_at_reload": has_edit(at_reload),
        "page_has_edit_after_rebuild": has_edit(after),
    }


def main(argv: list[str] | None = None) -> int:
    """Measure serve on the repository's data (or ``--data``) with a warm chart cache."""
    import argparse

    project = Path(__file__).resolve().parent.parent
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument(
        "--data",
        type=Path,
        default=project / "data",
        help="data folder to copy and edit (default: the repository's data/)",
    )
    p.add_argument(
        "--workdir",
        type=Path,
        default=Path("/tmp/serve-latency"),
        help="where the site copy and serve's output go",
    )
    p.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="chart cache (default $JOULEBOARD_CACHE or the user's cache); "
        "warm it with one build first, or the first edit renders every chart",
    )
    p.add_argument("--repeat", type=int, default=5, help="edits of each kind")
    p.add_argument("--json", type=Path, help="also write the full result here")
    args = p.parse_args(argv)
    env = dict(os.environ)
    if args.cache is not None:
        env["JOULEBOARD_CACHE"] = str(args.cache)
    args.workdir.mkdir(parents=True, exist_ok=True)
    with removals_deferred(args.workdir.resolve()):
        result = measure_serve(
            project, args.data.resolve(), args.workdir.resolve(), env, args.repeat
        )
    for kind, runs in result.get("edits", {}).items():
        times = " ".join(
            f"{r['reload_seconds']:.3f}" if r["reload_seconds"] is not None else "-" for r in runs
        )
        ok = sum(r["page_has_edit_at_reload"] for r in runs)
        median = result.get(f"{kind}_median_seconds")
        shown = f"{median:.3f} s" if median is not None else "n/a"
        print(
            f"{kind:12} median {shown} (runs {times}); page has the edit at reload {ok}/{len(runs)}"
        )
    print(
        f"signal: {result.get('signal')}; startup {result.get('startup_seconds', 0):.1f} s;"
        f" peak RSS {result.get('tree_peak_rss_mb', 0):.0f} MB",
        flush=True,
    )
    if result.get("error"):
        print(f"error: {result['error']}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 1 if result.get("error") else 0


if __name__ == "__main__":
    raise SystemExit(main())
