"""Every performance budget (README, Performance) in one run: ``python benchmarks/budgets.py``.

    python benchmarks/budgets.py [--quick] [--repeat 3] [--with-100k] [--with-tests]
                                 [--only 1,2,3,4,5,6,7] [--sizes default,10k]
                                       [--budget 1800]
                                       [--no-lighthouse] [--workdir DIR]

Each measurement runs in its own process; the median of ``--repeat`` runs is reported
(3 by default; ``--quick``: 1 run, the default data only, for development), except the
two that take minutes each, run once: the 100,000 build and the whole test command. So one
run gives the README's whole table:

    python benchmarks/budgets.py --only 1,2,3,4,6,7 --with-100k --with-tests --no-lighthouse

1. cold default build: data/ copied, new output folder, empty chart cache, default options
   (``run.py _build``: build_site with its BuildSummary stage timings). Also reported, not a
   budget: the same with ``png=True`` (``jouleboard build --png``).
2. rebuilds in a new process (``python -m jouleboard build``, wall time of the process;
   stages from its summary line): nothing changed, one new measurement, one edited
   measurement; then the output tree is compared by sha256 with a clean build of the same
   inputs (new folder, empty chart cache).
3. serve: seconds from an edit's write to the reload signal (serve_latency.py).
4. scale: 10,000 synthetic configurations cold with real charts (wall, peak RSS of the
   process tree); 100,000 with ``--with-100k``, one build (killed at ``--budget`` seconds;
   what finished is reported).
5. page size: first-view bytes and Lighthouse mobile performance (median of --repeat
   Lighthouse runs) of the largest task page and the largest GPU page, per size
   (pagespeed.py; the default data's are reported too, not a budget).
6. tests: ``python -m pytest -m "not slow"``, and with ``--with-tests`` the README's
   ``python -m pytest``, once (both with ``--durations=5`` for the profile).
7. Hugo on the same kinds of page (hugo_compare.py), one core each: the ratio of
   jouleboard's model and task pages per second (in builds that find every chart in the
   cold builds' cache) to Hugo's, at the default size and at 10k.

Every time figure is also given at the reference speed: divided by the slowdown of the hour
it was measured in. calibration.py's workload runs (CALIBRATION_RUNS times) before the first
measurement and again after each one, so two calibrations bracket every measurement; its
slowdown is the median of those runs over the workload's time on the machine the budgets
were set on. A host whose speed drifts during the run (as a shared one does) is followed
measurement by measurement. The budgets are judged on those figures.

Writes benchmarks/results/budgets-<UTC time>.json and .md (and budgets-latest.*).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import importlib.metadata
import json
import os
import platform
import re
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

import budgets_report
import calibration
import run
import serve_latency

CALIBRATION_RUNS = 7  # runs of calibration.py's workload at each calibration (~7 s)
SIZES = {"10k": 10_000, "100k": 100_000}


def machine() -> dict[str, Any]:
    """Cores, RAM, CPU model, Python and vl-convert versions of this machine."""
    info: dict[str, Any] = {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            info["ram_gib"] = round(int(line.split()[1]) / 2**20, 1)
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            info["cpu"] = line.split(":", 1)[1].strip()
            break
    try:
        info["vl_convert"] = importlib.metadata.version("vl-convert-python")
    except importlib.metadata.PackageNotFoundError:
        info["vl_convert"] = None
    return info


def median_run(runs: list[dict[str, Any]], key: str = "wall_seconds") -> dict[str, Any]:
    """The run with the median ``key`` (the lower middle of an even count), with every
    run's figure, CPU seconds and load average in ``runs``."""
    ok = [
        r
        for r in runs
        if r.get(key) is not None and not r.get("error") and not r.get("killed_at_budget")
    ]
    if not ok:
        return dict(runs[-1]) if runs else {}
    out = dict(sorted(ok, key=lambda r: r[key])[(len(ok) - 1) // 2])
    out["runs"] = [
        {
            k: r.get(k)
            for k in (key, "cpu_seconds", "loadavg_before", "loadavg_after", "tree_peak_rss_mb")
        }
        for r in ok
    ]
    return out


def tree_digest(root: Path) -> dict[str, str]:
    """sha256 of every file below ``root``, by path relative to it."""
    digests = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            digests[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


def compare_trees(a: Path, b: Path) -> dict[str, Any]:
    da, db = tree_digest(a), tree_digest(b)
    differ = sorted(k for k in da.keys() & db.keys() if da[k] != db[k])
    only_a, only_b = sorted(da.keys() - db.keys()), sorted(db.keys() - da.keys())
    return {
        "identical": not (differ or only_a or only_b),
        "files": len(da),
        "differ": differ[:10],
        "differ_count": len(differ),
        "only_incremental": only_a[:10],
        "only_clean": only_b[:10],
    }


class Bench:
    def __init__(self, args: argparse.Namespace, project: Path) -> None:
        self.args, self.project = args, project
        self.workdir: Path = args.workdir
        self.runner = run.Runner(project, self.workdir, str(project))
        self.results: dict[str, Any] = {}
        self.calibrations: list[dict[str, Any]] = []  # every calibration run so far, in order

    def calibrate(self, after: str) -> list[float]:
        """Time calibration.py's workload now (``after``: what was just measured)."""
        times = calibration.seconds(CALIBRATION_RUNS)
        self.calibrations.append({"after": after, "seconds": times})
        print(f"[calibration] after {after}: {statistics.median(times):.3f} s", flush=True)
        return times

    def bracket(self, measured: str) -> dict[str, Any]:
        """The calibration of what was just measured: the last calibration's runs and
        runs made now, and the slowdown from both (the median over the reference time)."""
        before = self.calibrations[-1]["seconds"]
        after = self.calibrate(measured)
        return {
            "before": statistics.median(before),
            "after": statistics.median(after),
            "slowdown": statistics.median(before + after) / calibration.REFERENCE_SECONDS,
        }

    def cache(self, name: str) -> Path:
        """A new, empty chart cache."""
        path = self.workdir / f"i19-cache-{name}"
        run.remove(path)
        path.mkdir(parents=True)
        return path

    def fresh_out(self, name: str) -> Path:
        out = self.workdir / f"i19-site-{name}"
        run.remove(out)
        run.remove(out.parent / f".{out.name}.manifest.json")
        return out

    def cold(
        self,
        name: str,
        data: Path,
        png: bool = False,
        timeout: float = 1800,
        repeat: int | None = None,
    ) -> tuple[dict[str, Any], Path, Path]:
        """``repeat`` (default ``--repeat``) cold builds (run.py _build, each with a new cache
        and folder); the median, its output folder and its (now warm) cache."""
        runs = []
        for i in range(repeat or self.args.repeat):
            out, cache = self.fresh_out(name), self.cache(name)
            r = self.runner.child(
                "_build",
                [
                    "--data",
                    str(data),
                    "--out",
                    str(out),
                    "--cache",
                    str(cache),
                    "--project",
                    str(data.parent),
                ]
                + (["--png"] if png else []),
                timeout,
                cache,
            )
            print(f"[{name}] cold {i + 1}: {run._one_line(r)}", flush=True)
            runs.append(r)
            if r.get("killed_at_budget") or r.get("error"):
                break
        return median_run(runs), out, cache

    def cli_build(self, data: Path, out: Path, cache: Path) -> dict[str, Any]:
        """``python -m jouleboard build`` in a new process: wall time, stages."""
        cmd = [sys.executable, "-m", "jouleboard", "build", "--data", str(data), "--out", str(out)]
        env = dict(self.runner.env, JOULEBOARD_CACHE=str(cache))
        before = run._count_cache(cache)
        r = run.spawn(cmd, env, self.project, 600)
        lines = [line for line in r["stdout"].splitlines() if line.strip()]
        # "built ... (stage 0.12s, ...)", or a one-line "up to date ... (check 0.20s)"
        summary = next(
            (line for line in lines if line.startswith("built ")), lines[-1] if lines else ""
        )
        r["timings"] = serve_latency.stages_of(summary)
        r["summary"] = summary
        r["chart_renders"] = run._count_cache(cache) - before
        if r["returncode"] != 0:
            r["error"] = r["stderr"][-2000:]
        return {k: v for k, v in r.items() if k not in ("stdout", "stderr")}

    def rebuilds(self, data: Path, out: Path, cache: Path) -> dict[str, Any]:
        """Budget 2: nothing changed, one new measurement, one edited measurement."""
        _, edited = serve_latency.pick_measurement(data)
        steps = {
            "noop": lambda n: None,
            "add-one": lambda n: run.add_measurement(data),
            "edit-one": lambda n: edit_measurement(edited, n),
        }
        res: dict[str, Any] = {"edited_file": str(edited.relative_to(data))}
        for name, before in steps.items():
            runs = []
            for n in range(1, self.args.repeat + 1):
                before(n)
                r = self.cli_build(data, out, cache)
                print(
                    f"[default] {name} {n}: {r['wall_seconds']:.2f}s {r.get('summary')}"
                    f"{' ERROR ' + r['error'] if r.get('error') else ''}",
                    flush=True,
                )
                runs.append(r)
            res[name] = median_run(runs)
        clean = self.fresh_out("default-clean")
        r = self.cli_build(data, clean, self.cache("default-clean"))
        res["clean"] = r
        res["same_as_clean"] = compare_trees(out, clean) if not r.get("error") else None
        print(f"[default] incremental output == clean build: {res['same_as_clean']}", flush=True)
        return res

    def pagespeed(self, name: str, site: Path) -> dict[str, Any]:
        """Budget 5: the largest task page and the largest GPU page of ``site``."""
        pages = {kind: largest(site, kind) for kind in ("tasks", "gpus")}
        result_file = self.workdir / f"i19-pagespeed-{name}.json"
        cmd = [
            sys.executable,
            str(Path(__file__).with_name("pagespeed.py")),
            str(site),
            "--runs",
            str(self.args.repeat),
            "--lighthouse-runs",
            str(self.args.repeat),
            "--json",
            str(result_file),
        ]
        cmd += [f"--page={kind}={path}" for kind, path in pages.items() if path]
        if self.args.no_lighthouse:
            cmd.append("--no-lighthouse")
        r = run.spawn(cmd, dict(os.environ), self.project, 3600)
        if r["returncode"] != 0 or not result_file.exists():
            return {"error": r["stderr"][-2000:], "pages": pages}
        site_result = json.loads(result_file.read_text(encoding="utf-8"))["sites"][0]
        print(
            f"[{name}] pagespeed: "
            + ", ".join(
                f"{k} {p['path']} {p['browser']['bytes'] / 1000:.0f} kB, LH "
                f"{(p.get('lighthouse') or {}).get('scores', {}).get('performance', '–')}"
                for k, p in site_result["pages"].items()
            ),
            flush=True,
        )
        return site_result

    def hugo(self, name: str, data: Path, cache: Path) -> dict[str, Any]:
        """Budget 7: Hugo on the same kinds of page, against jouleboard's pages timed in
        builds that find every chart in ``cache`` (the cold builds') and so draw none."""
        import hugo_compare

        try:
            workdir = self.workdir / f"i19-hugo-{name}"
            built = hugo_compare.pages_build(
                self.runner, data, workdir, cache, runs=max(self.args.repeat, 1)
            )
            r = hugo_compare.compare(
                data, built, workdir, project=self.project, env=self.runner.env
            )
        except Exception as e:  # hugo missing and not installable: report, go on
            return {"error": repr(e)}
        print(f"[{name}] hugo: {hugo_compare.one_line(r)}", flush=True)
        return r

    def tests(self, marker: str | None) -> dict[str, Any]:
        """Budget 6: the test command's wall time (median; the whole command's, one run), its
        slowest tests."""
        cmd = [sys.executable, "-m", "pytest", "--durations=5", "-p", "no:cacheprovider"]
        if marker:
            cmd += ["-m", marker]
        runs = []
        for n in range(self.args.repeat if marker else 1):
            r = run.spawn(cmd, dict(os.environ), self.project, 3600)
            tail = r["stdout"].strip().splitlines()
            r["summary"] = tail[-1].strip("= ") if tail else r["stderr"][-300:]
            r["slowest"] = slowest(r["stdout"])
            print(
                f"[tests] {' '.join(cmd[1:])} ({n + 1}): {r['wall_seconds']:.1f}s {r['summary']}",
                flush=True,
            )
            runs.append({k: v for k, v in r.items() if k not in ("stdout", "stderr")})
        out = median_run(runs)
        out["command"] = "python " + " ".join(cmd[1:])
        return out

    def scale(self, label: str) -> dict[str, Any]:
        """Budget 4 (and 5, 7) at a synthetic size, real charts."""
        size = SIZES[label]
        data, stats = run.prepare_data(f"i19-{label}", size, 0, self.workdir, self.project)
        res: dict[str, Any] = {"data": stats}
        once = 1 if size >= 100_000 else None  # minutes a build
        cold, out, cache = self.cold(label, data, timeout=self.args.budget, repeat=once)
        cold["calibration"] = self.bracket(f"{label} cold")
        res["cold"] = cold
        if cold.get("timings") and not cold.get("killed_at_budget"):
            if 5 in self.args.only:
                res["pagespeed"] = self.pagespeed(label, out)
            if 7 in self.args.only and label == "10k":
                res["hugo"] = self.hugo(label, data, cache)
            if "pagespeed" in res or "hugo" in res:
                self.bracket(f"{label} pagespeed and Hugo")  # (the next one's before them)
        run.remove(cache)
        return res


def edit_measurement(path: Path, n: int) -> None:
    """Change a number in one measurement file, within bounds (throughput +-3 %)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    run.scale_throughput(doc, 0.97 if n % 2 else 1.03)
    serve_latency.write_atomically(path, json.dumps(doc, indent=2, sort_keys=True) + "\n")


def largest(site: Path, kind: str) -> str | None:
    """URL path of the largest <kind>/<name>/index.html of a built site."""
    pages = sorted(site.glob(f"{kind}/*/index.html"), key=lambda p: -p.stat().st_size)
    return f"/{kind}/{pages[0].parent.name}/" if pages else None


def slowest(stdout: str) -> list[str]:
    """The lines of pytest's --durations section."""
    lines = stdout.splitlines()
    start = next(
        (i for i, line in enumerate(lines) if "slowest" in line and "durations" in line), None
    )
    if start is None:
        return []
    return [
        line.strip() for line in lines[start + 1 : start + 6] if re.match(r"\s*\d+\.\d+s ", line)
    ]


def measure(bench: Bench) -> None:
    args, res = bench.args, bench.results
    only = args.only
    if "default" in args.sizes and only & {1, 2, 3, 5, 7}:
        data, stats = run.prepare_data("default", None, 0, bench.workdir, bench.project)
        serve_source = bench.workdir / "i19-data-pristine"  # serve edits its own copy
        run.remove(serve_source)
        shutil.copytree(data, serve_source)
        default: dict[str, Any] = {"data": stats}
        res["default"] = default
        cold, out, cache = bench.cold("default", data)
        cold["calibration"] = bench.bracket("default cold")
        default["cold"] = cold
        if 1 in only:
            default["cold_png"] = bench.cold("default-png", data, png=True)[0]
            default["cold_png"]["calibration"] = bench.bracket("default cold --png")
        if 5 in only:
            default["pagespeed"] = bench.pagespeed("default", out)
        if 7 in only and cold.get("timings"):
            default["hugo"] = bench.hugo("default", data, cache)
        if only & {5, 7}:
            bench.bracket("pagespeed and Hugo")  # (the rebuilds' calibration before them)
        if 2 in only:
            default["rebuilds"] = bench.rebuilds(data, out, cache)
            default["rebuilds"]["calibration"] = bench.bracket("rebuilds")
        if 3 in only:
            env = dict(bench.runner.env, JOULEBOARD_CACHE=str(cache))  # a warm cache
            default["serve"] = serve_latency.measure_serve(
                bench.project, serve_source, bench.workdir, env, args.repeat
            )
            default["serve"]["calibration"] = bench.bracket("serve")
            print(f"[serve] {budgets_report.serve_line(default['serve'])}", flush=True)
        run._save_as(res, "budgets")
    if 6 in only:
        res["tests"] = {"not_slow": bench.tests("not slow")}
        res["tests"]["not_slow"]["calibration"] = bench.bracket("the unit subset")
        if args.with_tests:
            res["tests"]["all"] = bench.tests(None)
            res["tests"]["all"]["calibration"] = bench.bracket("the whole test command")
        run._save_as(res, "budgets")
    if only & {4, 5, 7}:
        for label in (s for s in SIZES if s in args.sizes):
            res[label] = bench.scale(label)
            run._save_as(res, "budgets")


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="budgets.py", description=__doc__.split("\n")[0])
    p.add_argument(
        "--quick",
        action="store_true",
        help="default data only, 1 run each (a few minutes; development)",
    )
    p.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    p.add_argument(
        "--only", default="1,2,3,4,5,6,7", help="budgets to measure, e.g. 1,2,3 (default all)"
    )
    p.add_argument(
        "--sizes",
        default="default,10k",
        help="data sets, of default,10k,100k (default: default,10k; --quick: default)",
    )
    p.add_argument(
        "--with-100k",
        action="store_true",
        help="also 100,000 configurations with real charts, one build (minutes on 2 cores)",
    )
    p.add_argument(
        "--with-tests",
        action="store_true",
        help="also the whole test suite (python -m pytest), once",
    )
    p.add_argument(
        "--budget",
        type=float,
        default=1800.0,
        help="seconds a scale build may take before it is killed (default 1800)",
    )
    p.add_argument("--no-lighthouse", action="store_true")
    p.add_argument("--ref", default="", help="benchmark this git ref, not the working tree")
    p.add_argument("--workdir", type=Path, default=run.DEFAULT_WORKDIR)
    args = p.parse_args(argv)
    args.only = {int(x) for x in args.only.split(",") if x}
    args.sizes = set(args.sizes.split(","))
    if args.quick:
        args.repeat = 1
        args.sizes = {"default"}
    if args.with_100k:
        args.sizes.add("100k")
    args.workdir.mkdir(parents=True, exist_ok=True)
    project = run.project_at(args.ref, args.workdir)
    bench = Bench(args, project)
    bench.results.update(
        {
            "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "git_head": run._git("rev-parse", "HEAD"),
            "ref": args.ref or "(working tree)",
            "working_tree_dirty": bool(
                run._git("status", "--porcelain", "--", "jouleboard", "templates")
            ),
            "machine": machine(),
            "loadavg_before": os.getloadavg(),
            "args": {k: sorted(v) if isinstance(v, set) else str(v) for k, v in vars(args).items()},
        }
    )
    bench.calibrate("nothing (the start)")
    with run.removals_deferred(args.workdir):
        measure(bench)
    bench.results["loadavg_after"] = os.getloadavg()
    every = [t for c in bench.calibrations for t in c["seconds"]]
    bench.results["calibration"] = {
        "reference_seconds": calibration.REFERENCE_SECONDS,
        "runs_each": CALIBRATION_RUNS,
        "points": bench.calibrations,
        "slowdown": statistics.median(every) / calibration.REFERENCE_SECONDS,
    }
    path = run._save_as(bench.results, "budgets")
    markdown = budgets_report.markdown(bench.results)
    md_path = path.with_suffix(".md")
    md_path.write_text(markdown, encoding="utf-8")
    shutil.copyfile(md_path, run.RESULTS / "budgets-latest.md")
    print()
    print(markdown)
    print(f"saved {path.relative_to(run.REPO)} and {md_path.relative_to(run.REPO)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main(sys.argv[1:]))
