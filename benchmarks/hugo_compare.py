"""HTML generation speed: jouleboard's pages against Hugo's on the same data.

    python benchmarks/hugo_compare.py [--data DIR | --size N] [--charts stub|real]
                                      [--runs 3] [--workdir DIR]

1. Installs Debian's ``hugo`` when it is missing (``apt-get install -y hugo``).
2. Exports the data set as a Hugo site in a temporary folder (never in the repository):
   one content page per model with its configuration table per task (every configuration:
   GPUs, precision, batch cap, tokens/J, J/token, J/response, median ITL, power), one per
   task with its full ranking at the task's default deadline (computed by jouleboard's own
   planner, so it is the same ranking), the description markdown as page content, plus
   minimal layouts (baseof, model, task, list, home) that format every number in the
   template as jouleboard's templates do. Taxonomies, RSS, sitemap, robots and 404 are off.
   Only LLM and multimodal-LLM tasks are exported (diffusion tasks have other columns).
3. Builds it with ``hugo`` :data:`HUGO_RUNS` times and takes the fastest run (Hugo's own
   reported total; the process's wall time, which includes its start, is kept too); the
   same on one core, and on one core without the content pages.
4. Builds the same data with jouleboard (a subprocess of benchmarks/run.py; --charts stub
   by default: one real render per chart kind, see run.py) to fill a chart cache, then
   --runs more times into new folders with that cache (:func:`pages_build`): no chart is
   drawn, so nothing competes with the pages for the cores, as it does in a cold build.
   Of the fastest run, it prints the pages per second of jouleboard's page
   rendering (its render_page calls, template by template) over every page, and over its
   model and task pages (the kinds of page the Hugo site has), next to Hugo's.

The figure meant to take out the machine's speed is the ratio of the two rates on model and
task pages, jouleboard's over Hugo's, both measured in the same minute (budgets.py reports
it; HUGO_RUNS says why the fastest run counts). ``compare(data, built, workdir)`` is what budgets.py calls, with the timed
builds it makes after its cold builds (:func:`pages_build` with their warm cache).
"""

# ruff: noqa: E501  (the Hugo layouts below are HTML, one table row per line)
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import run

REPO = Path(__file__).resolve().parents[1]

CONFIG = """\
baseURL = "/"
title = "jouleboard on hugo"
disableKinds = ["taxonomy", "term", "RSS", "sitemap", "robotsTXT", "404"]
[markup.goldmark.renderer]
unsafe = false
"""

BASEOF = """\
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ .Title }} · {{ site.Title }}</title>
<meta name="description" content="{{ .Params.description }}">
</head>
<body>
<header><a href="/">{{ site.Title }}</a>
<nav><ul>{{ range site.Data.tasks.list }}<li><a href="/tasks/{{ .id }}/">{{ .name }}</a></li>{{ end }}</ul></nav>
</header>
<main>{{ block "main" . }}{{ end }}</main>
<footer><p>Data version {{ site.Data.tasks.version }}.</p></footer>
</body>
</html>
"""

MODEL = """\
{{ define "main" }}
<h1>{{ .Title }}</h1>
<dl><dt>Builder</dt><dd>{{ .Params.builder }}</dd><dt>Model id</dt><dd>{{ .Params.model_id }}</dd>
<dt>Parameters</dt><dd>{{ printf "%.3g" .Params.total_params }} B total, {{ printf "%.3g" .Params.active_params }} B active</dd></dl>
{{ .Content }}
{{ range .Params.sections }}
<section id="task-{{ .task }}">
<h2><a href="/tasks/{{ .task }}/">{{ .task_name }}</a></h2>
<table>
<caption>Every configuration of {{ $.Title }} on {{ .task_name }}</caption>
<thead><tr><th>GPUs</th><th>Precision</th><th>Batch cap</th><th>Tokens/J</th><th>J/token</th><th>J/response</th><th>Median ITL (ms)</th><th>Power (W)</th></tr></thead>
<tbody>
{{ range .rows }}<tr><td>{{ .num_gpus }}× {{ .gpu }}</td><td>{{ .precision }}</td><td>{{ .seqs }}</td><td>{{ printf "%.2f" .tpj }}</td><td>{{ printf "%.4f" .ept }}</td><td>{{ printf "%.0f" .epr }}</td><td>{{ printf "%.1f" .itl }}</td><td>{{ printf "%.0f" .power }}</td></tr>
{{ end }}
</tbody>
</table>
</section>
{{ end }}
{{ end }}
"""

TASK = """\
{{ define "main" }}
<h1>{{ .Title }}</h1>
{{ .Content }}
<table>
<caption>{{ .Title }}: every model at {{ .Params.deadline }}</caption>
<thead><tr><th>#</th><th>Model</th><th>GPUs</th><th>Precision</th><th>Tokens/J</th><th>J/token</th><th>J/response</th><th>Median ITL (ms)</th></tr></thead>
<tbody>
{{ range .Params.rows }}<tr><td>{{ .rank }}</td><td><a href="{{ .url }}">{{ .model }}</a></td><td>{{ .num_gpus }}× {{ .gpu }}</td><td>{{ .precision }}</td><td>{{ printf "%.2f" .tpj }}</td><td>{{ printf "%.4f" .ept }}</td><td>{{ printf "%.0f" .epr }}</td><td>{{ printf "%.1f" .itl }}</td></tr>
{{ end }}
</tbody>
</table>
{{ end }}
"""

LIST = """\
{{ define "main" }}
<h1>{{ .Title }}</h1>
<ul>{{ range .Pages }}<li><a href="{{ .RelPermalink }}">{{ .Title }}</a></li>{{ end }}</ul>
{{ end }}
"""

HOME = """\
{{ define "main" }}
<h1>{{ site.Title }}</h1>
<ul>{{ range site.Data.tasks.list }}<li><a href="/tasks/{{ .id }}/">{{ .name }}</a></li>{{ end }}</ul>
{{ end }}
"""


def ensure_hugo() -> str:
    """Path of the hugo binary, installing Debian's package when it is missing."""
    found = shutil.which("hugo")
    if found:
        return found
    print("hugo: not found, installing Debian's package (apt-get install -y hugo)", file=sys.stderr)
    cmd = ["apt-get", "install", "-y", "-q", "hugo"]
    if subprocess.run(cmd, capture_output=True).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], capture_output=True, check=True)
        subprocess.run(cmd, capture_output=True, check=True)
    found = shutil.which("hugo")
    if not found:
        raise RuntimeError("hugo is not installable here")
    return found


def export(data_dir: Path, site: Path) -> dict[str, Any]:
    """Write the Hugo site for ``data_dir`` (runs in a subprocess: imports jouleboard)."""
    from jouleboard.core.urls import Urls, model_slug
    from jouleboard.loading.dataset import load_dataset
    from jouleboard.plan.site import site_view

    t0 = time.perf_counter()
    data = load_dataset(data_dir)
    reg = data.registry
    view = site_view(data, Urls("/"))
    rankings = {t: list(v.ranking) for t, v in view.tasks.items()}
    if site.exists():
        shutil.rmtree(site)
    for folder in (
        "content/models",
        "content/tasks",
        "layouts/_default",
        "layouts/models",
        "layouts/tasks",
        "data",
    ):
        (site / folder).mkdir(parents=True)
    (site / "config.toml").write_text(CONFIG, encoding="utf-8")
    layouts = {
        "_default/baseof.html": BASEOF,
        "models/single.html": MODEL,
        "tasks/single.html": TASK,
        "_default/list.html": LIST,
        "index.html": HOME,
    }
    for name, text in layouts.items():
        (site / "layouts" / name).write_text(text, encoding="utf-8")
    tasks = [{"id": t, "name": info.name} for t, info in reg.tasks.items()]
    (site / "data" / "tasks.json").write_text(
        json.dumps({"list": tasks, "version": reg.site.data_version}), encoding="utf-8"
    )
    for name in ("models", "tasks"):
        (site / "content" / name / "_index.md").write_text(
            json.dumps({"title": name.capitalize()}) + "\n", encoding="utf-8"
        )

    def row(c: Any) -> dict[str, Any]:
        return {
            "gpu": c.gpu_model,
            "num_gpus": c.num_gpus,
            "precision": c.weight_precision,
            "seqs": c.max_num_seqs,
            "tpj": c.tokens_per_joule,
            "ept": c.energy_per_token_joules,
            "epr": c.energy_per_response_joules,
            "itl": c.median_itl_ms,
            "power": c.avg_power_watts,
        }

    def llm(c: Any) -> bool:  # LLM and multimodal-LLM configurations (not diffusion)
        return hasattr(c, "max_num_seqs") and hasattr(c, "median_itl_ms")

    pages = 0
    for model_id, all_tasks in sorted(view.by_model.items()):
        by_task = {t: cs for t, cs in all_tasks.items() if all(map(llm, cs))}
        if not by_task:
            continue
        info = reg.models[model_id]
        sections = [
            {
                "task": t,
                "task_name": reg.tasks[t].name,
                "rows": [
                    row(c)
                    for c in sorted(
                        by_task[t],
                        key=lambda c: (
                            c.gpu_model,
                            c.num_gpus,
                            c.weight_precision,
                            c.max_num_seqs,
                            c.repeat,
                        ),
                    )
                ],
            }
            for t in reg.tasks
            if t in by_task
        ]
        front = {
            "title": info.nickname,
            "model_id": model_id,
            "builder": info.builder,
            "total_params": info.total_params_billions,
            "active_params": info.active_params_billions,
            "description": f"Energy per token of {info.nickname}",
            "sections": sections,
        }
        (site / "content" / "models" / f"{model_slug(model_id)}.md").write_text(
            json.dumps(front) + "\n\n" + info.description_md + "\n", encoding="utf-8"
        )
        pages += 1
    for task, info in reg.tasks.items():
        if getattr(info, "kind", "llm") not in ("llm", "mllm") or not all(
            llm(r.config) for r in rankings.get(task, [])
        ):
            continue
        rows = [
            dict(
                row(r.config),
                rank=r.rank,
                model=reg.models[r.config.model_id].nickname,
                url=f"/models/{model_slug(r.config.model_id)}/",
            )
            for r in rankings[task]
        ]
        front = {
            "title": f"{info.name} energy leaderboard",
            "deadline": view.tasks[task].deadline_text(),
            "description": f"Models ranked by tokens per joule on {info.name}",
            "rows": rows,
        }
        (site / "content" / "tasks" / f"{task}.md").write_text(
            json.dumps(front) + "\n\n" + info.description_md + "\n", encoding="utf-8"
        )
        pages += 1
    return {"content_pages": pages, "export_seconds": time.perf_counter() - t0}


# Hugo builds the default data's 42 pages in 30-150 ms here: a Go process allocating fresh
# memory, its time moves twice as much as the calibration's from one minute to the next on
# this shared host, and only ever upwards. The fastest of this many runs (each about 0.1 s)
# is taken, as the fastest of jouleboard's timed builds is.
HUGO_RUNS = 15


def hugo_build(
    hugo: str, site: Path, runs: int = HUGO_RUNS, cores: int | None = None
) -> dict[str, Any]:
    """``runs`` Hugo builds of ``site``: the fastest (by Hugo's own reported total, else the
    process's wall time), with every run's time in ``each_seconds``.
    ``cores``: the most it uses at once (GOMAXPROCS; default: every one)."""
    env = dict(os.environ, **({"GOMAXPROCS": str(cores)} if cores else {}))
    done: list[dict[str, Any]] = []
    time_bin = shutil.which("time") or ("/usr/bin/time" if Path("/usr/bin/time").exists() else None)
    for _ in range(runs):
        public = site / "public"
        run.remove(public)
        rss_file = site / ".rss"
        cmd = [hugo, "--source", str(site), "--destination", str(public)]
        if time_bin:
            cmd = [time_bin, "-f", "%M", "-o", str(rss_file), *cmd]
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - t
        if proc.returncode != 0:
            raise RuntimeError(f"hugo failed: {proc.stderr[-2000:]}")
        out = proc.stdout + proc.stderr
        pages = re.search(r"Pages\s*\|\s*(\d+)", out)
        total = re.search(r"Total in (\d+) ms", out)
        html = sum(1 for _ in public.rglob("*.html"))
        done.append(
            {
                "wall_seconds": wall,
                "reported_seconds": int(total.group(1)) / 1000 if total else None,
                "pages": int(pages.group(1)) if pages else html,
                "html_files": html,
                "bytes": sum(p.stat().st_size for p in public.rglob("*") if p.is_file()),
                "maxrss_mb": (
                    int(rss_file.read_text().split()[-1]) / 1024
                    if time_bin and rss_file.exists()
                    else None
                ),
            }
        )

    def seconds(run: dict[str, Any]) -> float:
        return float(run["reported_seconds"] or run["wall_seconds"])

    done.sort(key=seconds)
    version = subprocess.run([hugo, "version"], capture_output=True, text=True).stdout.strip()
    return dict(
        done[0], runs=runs, cores=cores, each_seconds=[seconds(r) for r in done], version=version
    )


def pages_build(
    runner: Any, data: Path, workdir: Path, cache: Path, runs: int = 3, stub: bool = False
) -> dict[str, Any]:
    """jouleboard's pages timed with nothing else running: ``runs`` builds of ``data`` into a
    new folder each, with a copy of ``cache`` that already holds every chart (an earlier
    build's), so no chart worker competes with the pages for the cores (a cold build makes
    most pages while its workers draw), and ``cache`` itself is left as it was. A run.py
    ``_build`` result: the run whose model and task pages took the least time. ``stub``:
    the earlier build had stub charts (run.py)."""
    copy = workdir / "cache-pages"
    run.remove(copy)
    shutil.copytree(cache, copy)
    done = [one_build(runner, data, workdir / f"site-pages-{n}", copy, stub) for n in range(runs)]
    run.remove(copy)
    ok = [r for r in done if r.get("render_page") and not r.get("error")]
    if not ok:
        raise RuntimeError((done[-1].get("error") or "jouleboard build failed")[-2000:])
    ok.sort(key=lambda r: _seconds(r["render_page"], SAME_PAGES))
    fastest = dict(ok[0])
    fastest["model_task_seconds_each_run"] = [_seconds(r["render_page"], SAME_PAGES) for r in ok]
    return fastest


def one_build(runner: Any, data: Path, out: Path, cache: Path, stub: bool) -> dict[str, Any]:
    """One run.py ``_build`` of ``data`` into ``out`` (removed afterwards) with ``cache``."""
    built: dict[str, Any] = runner.child(
        "_build",
        ["--data", str(data), "--out", str(out), "--cache", str(cache)]
        + (["--stub-charts"] if stub else []),
        3600,
        cache,
    )
    run.remove(out)
    return built


# jouleboard's templates of the pages the Hugo site has (one per model, one per task).
SAME_PAGES = ("model.html", "task.html")


def _seconds(per_template: dict[str, Any], names: tuple[str, ...] | None = None) -> float:
    return float(sum(v["seconds"] for k, v in per_template.items() if names is None or k in names))


def _pages(per_template: dict[str, Any], names: tuple[str, ...] | None = None) -> int:
    return sum(int(v["pages"]) for k, v in per_template.items() if names is None or k in names)


def compare(
    data: Path,
    built: dict[str, Any],
    workdir: Path,
    project: Path = REPO,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Hugo vs jouleboard's pages as timed in ``built`` (a run.py _build result, best from
    :func:`pages_build`: its render_page calls, template by template). The figure meant to
    take out the machine's speed is the ratio of the two rates on the same kinds of page,
    both on one core: jouleboard's model and task pages per second over Hugo's (its time
    for the site less its time without the content pages, per page that differs)."""
    hugo = ensure_hugo()
    workdir.mkdir(parents=True, exist_ok=True)
    site = workdir / "hugo-site"
    run.remove(site)  # the export writes it anew
    env = dict(env or os.environ, PYTHONPATH=str(project))
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "_export", str(data), str(site)],
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"export failed: {proc.stderr[-2000:]}")
    exported = json.loads(proc.stdout.strip().splitlines()[-1])
    h = hugo_build(hugo, site)
    # Per page, on one core as jouleboard makes its pages: Hugo's builds of the site and of
    # the same site without its content pages (its start, configuration and templates),
    # the difference over the pages that differ.
    empty = workdir / "hugo-site-empty"
    run.remove(empty)
    shutil.copytree(
        site, empty, ignore=lambda d, names: ["public", "content"] if d == str(site) else []
    )
    (empty / "content").mkdir()
    one, one_empty = hugo_build(hugo, site, cores=1), hugo_build(hugo, empty, cores=1)
    for folder in (site / "public", empty):
        run.remove(folder)
    hugo_secs = h["reported_seconds"] or h["wall_seconds"]
    marginal = (one["reported_seconds"] or one["wall_seconds"]) - (
        one_empty["reported_seconds"] or one_empty["wall_seconds"]
    )
    marginal_pages = one["pages"] - one_empty["pages"]
    timed = built.get("render_page", {})
    result = {
        "hugo": h,
        "hugo_one_core": one,
        "hugo_one_core_no_content": one_empty,
        "export": exported,
        "hugo_pages_per_second": h["pages"] / hugo_secs,
        "hugo_pages_per_second_wall": h["pages"] / h["wall_seconds"],
        "hugo_model_task_pages": marginal_pages,
        "hugo_model_task_seconds_one_core": marginal,
        "hugo_model_task_pages_per_second": marginal_pages / marginal if marginal > 0 else None,
        "jouleboard_pages": _pages(timed),
        "jouleboard_page_seconds": _seconds(timed),
        "jouleboard_model_task_pages": _pages(timed, SAME_PAGES),
        "jouleboard_model_task_seconds": _seconds(timed, SAME_PAGES),
        "jouleboard_build": {
            "charts_rendered": built.get("chart_renders"),
            "timings": built.get("timings"),
            "model_task_seconds_each_run": built.get("model_task_seconds_each_run"),
        },
    }
    for key, pages, secs in (
        ("jouleboard_pages_per_second", "jouleboard_pages", "jouleboard_page_seconds"),
        (
            "jouleboard_model_task_pages_per_second",
            "jouleboard_model_task_pages",
            "jouleboard_model_task_seconds",
        ),
    ):
        result[key] = result[pages] / result[secs] if result[secs] else None
    if (
        result["jouleboard_model_task_pages_per_second"]
        and result["hugo_model_task_pages_per_second"]
    ):
        result["ratio_jouleboard_over_hugo_model_task"] = (
            result["jouleboard_model_task_pages_per_second"]
            / result["hugo_model_task_pages_per_second"]
        )
    return result


def one_line(r: dict[str, Any]) -> str:
    h = r["hugo"]
    text = (
        f"Hugo {h['pages']} pages in {h['reported_seconds'] or h['wall_seconds']:.3f} s "
        f"(wall {h['wall_seconds']:.2f} s); jouleboard {r['jouleboard_pages']} pages in "
        f"{r['jouleboard_page_seconds']:.3f} s of its page rendering"
    )
    if r.get("ratio_jouleboard_over_hugo_model_task"):
        text += (
            f"; model and task pages on one core: jouleboard "
            f"{r['jouleboard_model_task_pages_per_second']:.0f}/s, Hugo "
            f"{r['hugo_model_task_pages_per_second']:.0f}/s, a ratio of "
            f"{r['ratio_jouleboard_over_hugo_model_task']:.2f}"
        )
    return text


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_export":
        print(json.dumps(export(Path(argv[1]), Path(argv[2]))))
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=None, help="data folder (default: data/)")
    p.add_argument(
        "--size",
        type=int,
        default=None,
        help="use synthetic data of this many configurations instead",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--charts",
        choices=("stub", "real"),
        default="stub",
        help="jouleboard's chart stage: stub (fast; see run.py) or real",
    )
    p.add_argument(
        "--runs", type=int, default=3, help="jouleboard's timed builds; the fastest counts"
    )
    p.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "jouleboard-bench")
    args = p.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    with run.removals_deferred(args.workdir):
        return measure(args)


def measure(args: argparse.Namespace) -> int:
    """Hugo and jouleboard as ``args`` say; prints the table and saves the result."""
    if args.size:
        label = f"hugo-{args.size}"
        data, _ = run.prepare_data(label, args.size, args.seed, args.workdir, REPO)
    else:
        data = args.data or REPO / "data"
        label = "hugo-default" if args.data is None else f"hugo-{data.name}"
    runner = run.Runner(REPO, args.workdir, str(REPO))
    out = args.workdir / f"site-{label}"
    cache = args.workdir / "cache-hugo-compare"  # shared: warm after the first run
    stub = args.charts == "stub"
    first = one_build(runner, Path(data), out, cache, stub)  # fills the cache the timed ones use
    if first.get("error") or "timings" not in first:
        print(first.get("error", "jouleboard build failed"), file=sys.stderr)
        return 1
    built = pages_build(runner, Path(data), args.workdir, cache, args.runs, stub)
    result = compare(Path(data), built, args.workdir / label)
    (REPO / "benchmarks" / "results").mkdir(parents=True, exist_ok=True)
    path = REPO / "benchmarks" / "results" / f"hugo-{label.removeprefix('hugo-')}.json"
    path.write_text(json.dumps(result, indent=2), encoding="utf-8")
    h = result["hugo"]
    print(f"{h['version']}")
    print(
        run.table(
            [
                [
                    "hugo",
                    str(h["pages"]),
                    f"{h['reported_seconds'] or h['wall_seconds']:.3f}",
                    f"{result['hugo_pages_per_second']:.0f}",
                    f"{result['hugo_model_task_pages_per_second']:.0f}",
                    f"{h['bytes'] / 1e6:.1f}",
                    f"{h['maxrss_mb'] or 0:.0f}",
                ],
                [
                    "jouleboard (its pages, charts cached)",
                    str(result["jouleboard_pages"]),
                    f"{result['jouleboard_page_seconds']:.3f}",
                    f"{result['jouleboard_pages_per_second']:.0f}",
                    f"{result['jouleboard_model_task_pages_per_second'] or 0:.0f}",
                    f"{built['bytes'] / 1e6:.1f}",
                    f"{built['maxrss_self_mb']:.0f}",
                ],
            ],
            [
                "generator",
                "pages",
                "seconds",
                "pages/s",
                "model+task pages/s, one core",
                "output MB",
                "peak RSS MB",
            ],
        )
    )
    print(one_line(result))
    print(f"saved {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
