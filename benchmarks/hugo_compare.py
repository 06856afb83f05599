"""HTML generation speed: jouleboard's render stage against Hugo on the same data.

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
3. Builds it with ``hugo`` --runs times and takes the fastest run (Hugo's own reported
   total and the process wall time, which includes start-up).
4. Builds the same data with jouleboard (a subprocess of benchmarks/run.py; --charts stub
   by default: chart rasterisation is not part of the HTML stage, see run.py) and prints
   pages/second of jouleboard's render stage (pages / timings['render']), of its
   render_page calls alone, and of its model + task pages alone (the page kinds the Hugo
   site has), next to Hugo's, and the ratios.

``compare(data, cold_result, workdir)`` is what budgets.py calls with the cold build it
already measured.
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


def hugo_build(hugo: str, site: Path, runs: int = 3) -> dict[str, Any]:
    best: dict[str, Any] = {}
    time_bin = shutil.which("time") or ("/usr/bin/time" if Path("/usr/bin/time").exists() else None)
    for _ in range(runs):
        public = site / "public"
        shutil.rmtree(public, ignore_errors=True)
        rss_file = site / ".rss"
        cmd = [hugo, "--source", str(site), "--destination", str(public)]
        if time_bin:
            cmd = [time_bin, "-f", "%M", "-o", str(rss_file), *cmd]
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t
        if proc.returncode != 0:
            raise RuntimeError(f"hugo failed: {proc.stderr[-2000:]}")
        out = proc.stdout + proc.stderr
        pages = re.search(r"Pages\s*\|\s*(\d+)", out)
        total = re.search(r"Total in (\d+) ms", out)
        html = sum(1 for _ in public.rglob("*.html"))
        run = {
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
        if not best or run["wall_seconds"] < best["wall_seconds"]:
            best = run
    version = subprocess.run([hugo, "version"], capture_output=True, text=True).stdout.strip()
    return dict(best, runs=runs, version=version)


def compare(
    data: Path,
    cold: dict[str, Any],
    workdir: Path,
    project: Path = REPO,
    env: dict[str, str] | None = None,
    runs: int = 3,
) -> dict[str, Any]:
    """Hugo vs jouleboard's measured build ``cold`` (a run.py _build result)."""
    hugo = ensure_hugo()
    workdir.mkdir(parents=True, exist_ok=True)
    site = workdir / "hugo-site"
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
    h = hugo_build(hugo, site, runs)
    shutil.rmtree(site / "public", ignore_errors=True)
    jb_pages, jb_render = cold["pages"], cold["timings"]["render"]
    rp = cold.get("render_page", {})
    rp_pages = sum(v["pages"] for v in rp.values())
    rp_secs = sum(v["seconds"] for v in rp.values())
    same = [rp[k] for k in ("model.html", "task.html") if k in rp]
    same_pages = sum(v["pages"] for v in same)
    same_secs = sum(v["seconds"] for v in same)
    hugo_secs = h["reported_seconds"] or h["wall_seconds"]
    hugo_rate = h["pages"] / hugo_secs
    hugo_content_rate = exported["content_pages"] / hugo_secs
    result = {
        "hugo": h,
        "export": exported,
        "hugo_pages_per_second": hugo_rate,
        "hugo_pages_per_second_wall": h["pages"] / h["wall_seconds"],
        "hugo_model_task_pages_per_second": hugo_content_rate,
        "jouleboard_pages": jb_pages,
        "jouleboard_render_seconds": jb_render,
        "jouleboard_render_stage_pages_per_second": jb_pages / jb_render,
        "jouleboard_render_page_pages_per_second": rp_pages / rp_secs if rp_secs else None,
        "jouleboard_model_task_pages": same_pages,
        "jouleboard_model_task_pages_per_second": (same_pages / same_secs if same_secs else None),
    }
    result["ratio_hugo_over_jouleboard_render_stage"] = (
        hugo_rate / result["jouleboard_render_stage_pages_per_second"]
    )
    if result["jouleboard_model_task_pages_per_second"]:
        result["ratio_hugo_over_jouleboard_model_task"] = (
            hugo_content_rate / result["jouleboard_model_task_pages_per_second"]
        )
    return result


def one_line(r: dict[str, Any]) -> str:
    h = r["hugo"]
    text = (
        f"{h['pages']} pages in {h['reported_seconds'] or h['wall_seconds']:.2f}s "
        f"({r['hugo_pages_per_second']:.0f} pages/s; wall {h['wall_seconds']:.2f}s) vs "
        f"jouleboard render stage {r['jouleboard_pages']} pages in "
        f"{r['jouleboard_render_seconds']:.2f}s "
        f"({r['jouleboard_render_stage_pages_per_second']:.0f} pages/s): hugo is "
        f"{r['ratio_hugo_over_jouleboard_render_stage']:.1f}x"
    )
    if r.get("ratio_hugo_over_jouleboard_model_task"):
        text += (
            f"; model+task pages only: hugo {r['hugo_model_task_pages_per_second']:.0f}"
            f"/s vs jouleboard {r['jouleboard_model_task_pages_per_second']:.0f}/s = "
            f"{r['ratio_hugo_over_jouleboard_model_task']:.1f}x"
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
    p.add_argument("--runs", type=int, default=3, help="hugo builds; the fastest counts")
    p.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "jouleboard-bench")
    args = p.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import run

    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.size:
        label = f"hugo-{args.size}"
        data, _ = run.prepare_data(label, args.size, args.seed, args.workdir, REPO)
    else:
        data = args.data or REPO / "data"
        label = "hugo-default" if args.data is None else f"hugo-{data.name}"
    runner = run.Runner(REPO, args.workdir, str(REPO))
    out = args.workdir / f"site-{label}"
    cache = args.workdir / "cache-hugo-compare"  # shared: warm after the first run
    cold = runner.child(
        "_build",
        ["--data", str(data), "--out", str(out), "--cache", str(cache)]
        + (["--stub-charts"] if args.charts == "stub" else []),
        3600,
        cache,
    )
    if cold.get("error") or "timings" not in cold:
        print(cold.get("error", "jouleboard build failed"), file=sys.stderr)
        return 1
    result = compare(Path(data), cold, args.workdir / label, runs=args.runs)
    shutil.rmtree(out, ignore_errors=True)
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
                    "jouleboard (render stage)",
                    str(result["jouleboard_pages"]),
                    f"{result['jouleboard_render_seconds']:.3f}",
                    f"{result['jouleboard_render_stage_pages_per_second']:.0f}",
                    f"{result['jouleboard_model_task_pages_per_second'] or 0:.0f}",
                    f"{cold['bytes'] / 1e6:.1f}",
                    f"{cold['maxrss_self_mb']:.0f}",
                ],
            ],
            [
                "generator",
                "pages",
                "seconds",
                "pages/s",
                "model+task pages/s",
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
