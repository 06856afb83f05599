"""The budget table (markdown) from the results of budgets.py.

One row per budget: budget | limit | measured (median of the runs) | at reference speed
(a time divided by the slowdown of the calibrations just before and after its measurement,
see calibration.py and budgets.py) | met? (judged at reference speed) | the stage profile
behind it. A budget not measured in the run says so. kB are 1000 bytes.
"""

from __future__ import annotations

import statistics
from typing import Any

Row = list[str]


def table(rows: list[Row], header: Row) -> str:
    """A markdown table, cells as they are (the text columns read best left-aligned)."""
    lines = [header, ["---"] * len(header), *rows]
    return "\n".join("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in lines)


def _s(v: float | None, unit: str = " s", spec: str = ".2f") -> str:
    return "not measured" if v is None else f"{format(v, spec)}{unit}"


def _met(value: float | None, limit: float, at_most: bool = True) -> str:
    if value is None:
        return "–"
    return "met" if (value <= limit if at_most else value >= limit) else "MISSED"


def _stages(timings: dict[str, float] | None) -> str:
    return ", ".join(f"{k} {v:.2f}" for k, v in (timings or {}).items()) or "–"


def _runs(r: dict[str, Any], key: str = "wall_seconds") -> str:
    runs = r.get("runs") or []
    if len(runs) < 2:
        return ""
    return " (runs " + " / ".join(f"{x.get(key) or 0:.2f}" for x in runs) + ")"


def _load(r: dict[str, Any]) -> str:
    runs = r.get("runs") or [r]
    return "load " + "/".join(f"{x.get('loadavg_before') or 0:.1f}" for x in runs)


def build_row(
    name: str,
    r: dict[str, Any] | None,
    limit: float | None,
    key: str = "wall_seconds",
    unit: str = " s",
    slowdown: float = 1.0,
) -> Row:
    """A build figure against its limit; the profile: stages, CPU, renders, load."""
    if not r:
        return [name, _limit(limit, unit), "not measured", "–", "–", ""]
    if r.get("killed_at_budget") or r.get("error"):
        done = ", ".join(f"{p['stage']} {p['seconds']:.1f}" for p in r.get("progress", []))
        what = "killed at the time budget" if r.get("killed_at_budget") else "FAILED"
        return [
            name,
            _limit(limit, unit),
            f"{what} after {r['wall_seconds']:.0f} s",
            "–",
            "MISSED" if limit is not None else "–",
            f"finished stages: {done or 'none'}; tree peak RSS "
            f"{r.get('tree_peak_rss_mb', 0):.0f} MB" + _first_problem(r.get("error")),
        ]
    value = r.get(key)
    profile = _stages(r.get("timings"))
    extra = [
        f"CPU {r['cpu_seconds']:.1f} s" if r.get("cpu_seconds") else "",
        f"{r['chart_renders']} renders" if r.get("chart_renders") is not None else "",
        f"{r['written']} written/{r['linked']} linked" if r.get("linked") else "",
        f"tree RSS {r['tree_peak_rss_mb']:.0f} MB"
        if key != "tree_peak_rss_mb" and r.get("tree_peak_rss_mb")
        else "",
        _load(r),
    ]
    profile += "; " + ", ".join(x for x in extra if x)
    spec = ".0f" if unit == " MB" else ".2f"
    judged, cell = _at_reference(value, unit, slowdown)
    return [
        name,
        _limit(limit, unit),
        _s(value, unit, spec) + _runs(r, key),
        cell,
        _met(judged, limit) if limit is not None else "(info)",
        profile,
    ]


def _first_problem(error: str | None) -> str:
    """The first line of a failed build's report that names a file (else its last line)."""
    lines = [line for line in (error or "").strip().splitlines() if line.strip()]
    named = [line for line in lines if ": " in line and "/" in line.split(": ")[0]]
    return f"; {(named or lines)[0][:300]}" if lines else ""


def _at_reference(value: float | None, unit: str, slowdown: float) -> tuple[float | None, str]:
    """A time at the reference speed (memory and sizes are not scaled), and its cell."""
    if value is None or unit not in (" s", ""):
        return value, "–"
    return value / slowdown, f"{value / slowdown:.2f}{unit or ' s'}"


def _limit(limit: float | None, unit: str) -> str:
    return "–" if limit is None else f"<= {limit:g}{unit}"


def serve_line(s: dict[str, Any]) -> str:
    if s.get("error"):
        return str(s["error"])
    return f"{s.get('signal')}; startup {s.get('startup_seconds', 0):.1f} s; " + ", ".join(
        f"{k} {_s(s.get(f'{k}_median_seconds'))}" for k in s.get("edits", {})
    )


SERVE_LIMIT_S = 0.3  # an edit saved -> the browser told to reload


def serve_rows(s: dict[str, Any] | None, slowdown: float = 1.0) -> list[Row]:
    rows = []
    for kind in ("template", "description", "measurement"):
        name = f"3. serve: {kind} edit -> reload signal"
        runs = (s or {}).get("edits", {}).get(kind) or []
        value = (s or {}).get(f"{kind}_median_seconds")
        if not runs:
            rows.append(
                [
                    name,
                    f"<= {SERVE_LIMIT_S} s",
                    (s or {}).get("error", "not measured"),
                    "–",
                    "–",
                    "",
                ]
            )
            continue
        ok = [r for r in runs if r["reload_seconds"] is not None]
        mid = sorted(ok, key=lambda r: r["reload_seconds"])[(len(ok) - 1) // 2] if ok else {}
        checks = (
            f"page has the edit at reload {sum(r['page_has_edit_at_reload'] for r in runs)}"
            f"/{len(runs)}, after the rebuild "
            f"{sum(r['page_has_edit_after_rebuild'] for r in runs)}/{len(runs)}"
        )
        runs_text = " / ".join(_s(r["reload_seconds"], "", ".2f") for r in runs)
        judged, cell = _at_reference(value, " s", slowdown)
        rows.append(
            [
                name,
                f"<= {SERVE_LIMIT_S} s",
                _s(value) + (f" (runs {runs_text})" if len(runs) > 1 else ""),
                cell,
                _met(judged, SERVE_LIMIT_S),
                f"{_stages(mid.get('stages'))}; rebuild ended "
                f"{_s(mid.get('rebuild_end_seconds'))} after the write; {checks}; "
                f"{(s or {}).get('signal')}",
            ]
        )
    return rows


def page_rows(label: str, ps: dict[str, Any] | None, budget: bool) -> list[Row]:
    rows = []
    for kind, name in (("tasks", "largest task page"), ("gpus", "largest GPU page")):
        page = ((ps or {}).get("pages") or {}).get(kind)
        title = f"5. {label}: {name}"
        if not page:
            err = (ps or {}).get("error")
            rows.append(
                [
                    title + " first view",
                    "<= 200 kB" if budget else "–",
                    "not measured" + (f" ({err.strip().splitlines()[-1]})" if err else ""),
                    "–",
                    "–",
                    "",
                ]
            )
            continue
        b, lh = page["browser"], page.get("lighthouse") or {}
        kb = b["bytes"] / 1000
        by_type = ", ".join(
            f"{k} {v / 1000:.0f}"
            for k, v in sorted((b.get("bytes_by_type") or {}).items(), key=lambda kv: -kv[1])
        )
        rows.append(
            [
                f"{title} {page['path']} first view",
                "<= 200 kB" if budget else "–",
                f"{kb:.0f} kB ({b['gzip_bytes'] / 1000:.0f} kB gzipped)",
                "–",
                _met(kb, 200) if budget else "(info)",
                f"{b['requests']} requests; kB by type: {by_type}; {b['rows']} table "
                f"rows, {b['dom_nodes']:.0f} DOM nodes",
            ]
        )
        perf = (lh.get("scores") or {}).get("performance")
        runs = lh.get("performance_runs") or []
        rows.append(
            [
                f"{title} Lighthouse mobile performance",
                ">= 95" if budget else "–",
                ("not measured" if perf is None else str(perf))
                + (f" (runs {' / '.join(map(str, runs))})" if len(runs) > 1 else ""),
                "–",
                _met(perf, 95, at_most=False) if budget else "(info)",
                f"LH FCP {lh.get('fcp_ms') or 0:.0f} ms, LCP {lh.get('lcp_ms') or 0:.0f} "
                f"ms, TBT {lh.get('tbt_ms') or 0:.0f} ms, CLS {lh.get('cls') or 0:.3f}"
                if lh.get("scores")
                else lh.get("error", "–")[-200:],
            ]
        )
    return rows


def test_rows(t: dict[str, Any] | None, slowdown: float = 1.0) -> list[Row]:
    rows = []
    for key, name, limit in (
        ("all", "6. test suite: python -m pytest", 240.0),
        ("not_slow", '6. python -m pytest -m "not slow"', 20.0),
    ):
        r = (t or {}).get(key)
        if not r:
            rows.append(
                [
                    name,
                    _limit(limit, " s"),
                    "not measured" + (" (--with-tests)" if key == "all" else ""),
                    "–",
                    "–",
                    "",
                ]
            )
            continue
        judged, cell = _at_reference(r["wall_seconds"], " s", _slowdown(r, slowdown))
        rows.append(
            [
                name,
                _limit(limit, " s"),
                _s(r["wall_seconds"], " s", ".1f") + _runs(r),
                cell,
                _met(judged, limit),
                f"{r.get('summary')}; slowest: " + "; ".join(r.get("slowest", [])[:3]),
            ]
        )
    return rows


def hugo_row(label: str, h: dict[str, Any] | None) -> Row:
    name = f"7. {label}: jouleboard's pages against Hugo's"
    if not h:
        return [name, "–", "not measured", "–", "–", ""]
    if h.get("error"):
        return [name, "–", "not measured", "–", "–", h["error"][-200:]]
    if "ratio_jouleboard_over_hugo_model_task" not in h:  # a results file of before 2026-12-06
        jb = h["jouleboard_render_stage_pages_per_second"]
        return [
            name,
            "side by side",
            f"Hugo {h['hugo_pages_per_second']:.0f} / jouleboard {jb:.0f} pages/s (render stage)",
            "–",
            "(info)",
            "",
        ]
    one = h["hugo_one_core"]
    return [
        name,
        "–",
        f"model and task pages on one core: jouleboard "
        f"{h['jouleboard_model_task_pages_per_second']:.0f}/s, Hugo "
        f"{h['hugo_model_task_pages_per_second']:.0f}/s",
        f"ratio {h['ratio_jouleboard_over_hugo_model_task']:.2f}",
        "(info)",
        f"jouleboard: {h['jouleboard_model_task_pages']} model and task pages in "
        f"{h['jouleboard_model_task_seconds']:.3f} s, all {h['jouleboard_pages']} pages in "
        f"{h['jouleboard_page_seconds']:.3f} s (fastest of its builds with every chart "
        f"cached); Hugo: {h['hugo_model_task_pages']} pages in "
        f"{h['hugo_model_task_seconds_one_core']:.3f} s (its site less the site without "
        f"them, fastest of {one['runs']}; its runs of the whole site "
        f"{min(one['each_seconds']):.3f}-{max(one['each_seconds']):.3f} s); on 2 cores "
        f"Hugo's whole build {h['hugo']['pages']} pages in "
        f"{h['hugo']['reported_seconds'] or h['hugo']['wall_seconds']:.3f} s "
        f"({' '.join(h['hugo'].get('version', '').split()[:2])})",
    ]


def slowdown_of(res: dict[str, Any]) -> float:
    """This run's slowdown against the reference machine, over all its calibrations (1.0
    when not calibrated)."""
    return float((res.get("calibration") or {}).get("slowdown") or 1.0)


def _slowdown(measured: dict[str, Any] | None, run: float) -> float:
    """The slowdown of the calibrations that bracket ``measured`` (a run's results of old
    had one for the whole run: ``run``)."""
    return float(((measured or {}).get("calibration") or {}).get("slowdown") or run)


def budget_rows(res: dict[str, Any]) -> list[Row]:
    d = res.get("default") or {}
    rb = d.get("rebuilds") or {}
    k = slowdown_of(res)
    png, rebuilt = _slowdown(d.get("cold_png"), k), _slowdown(rb, k)
    rows = [
        # The limits of issue #42 [speed3], at the calibration's reference speed.
        build_row(
            "1. cold default build", d.get("cold"), 8.0, slowdown=_slowdown(d.get("cold"), k)
        ),
        build_row(
            "1. cold default build with --png (not a budget)", d.get("cold_png"), None, slowdown=png
        ),
        build_row("2. rebuild, nothing changed", rb.get("noop"), 0.5, slowdown=rebuilt),
        build_row("2. rebuild, one new measurement", rb.get("add-one"), 1.0, slowdown=rebuilt),
        build_row("2. rebuild, one edited measurement", rb.get("edit-one"), 1.0, slowdown=rebuilt),
    ]
    same = rb.get("same_as_clean")
    rows.append(
        [
            "2. rebuilt output == clean build (sha256 of every file)",
            "identical",
            "not measured"
            if same is None
            else (
                "identical"
                if same["identical"]
                else f"{same['differ_count']} differ, {len(same['only_incremental'])}+ only "
                f"rebuilt, {len(same['only_clean'])}+ only clean"
            ),
            "–",
            "–" if same is None else ("met" if same["identical"] else "MISSED"),
            ""
            if same is None
            else f"{same['files']} files; differ: {', '.join(same['differ'][:3])}",
        ]
    )
    rows += serve_rows(d.get("serve"), _slowdown(d.get("serve"), k))
    for label, rss_only in (("10k", False), ("100k", True)):
        cold = (res.get(label) or {}).get("cold")
        if not rss_only:
            rows.append(
                build_row(
                    f"4. {label} configurations cold (real charts)",
                    cold,
                    60.0,
                    slowdown=_slowdown(cold, k),
                )
            )
        rows.append(
            build_row(
                f"4. {label} cold, peak RSS of the process tree",
                cold,
                1024.0 if label == "10k" else 2048.0,
                key="tree_peak_rss_mb",
                unit=" MB",
            )
        )
    rows += page_rows("default data", d.get("pagespeed"), budget=False)
    for label in ("10k", "100k"):
        rows += page_rows(label, (res.get(label) or {}).get("pagespeed"), budget=True)
    rows += test_rows(res.get("tests"), k)
    rows.append(hugo_row("default data", d.get("hugo")))
    rows.append(hugo_row("10k", (res.get("10k") or {}).get("hugo")))
    return rows


def calibration_text(cal: dict[str, Any] | None) -> str:
    """How the run was calibrated: every calibration's median in order, and what a time is
    divided by (a run of old: one calibration before the measurements, one after)."""
    if not cal:
        return ""
    reference = f"against {cal['reference_seconds']:.3f} s on the reference machine"
    if "points" not in cal:
        return (
            f"\nCalibration (benchmarks/calibration.py): its workload took "
            f"{statistics.median(cal['before']):.3f} s before the measurements and "
            f"{statistics.median(cal['after']):.3f} s after (median of {len(cal['before'])} "
            f"each) {reference}: a slowdown of {cal['slowdown']:.2f}, by which every time "
            f"figure is divided to give it at reference speed.\n"
        )
    points = "; ".join(
        f"after {p['after']} {statistics.median(p['seconds']):.3f} s" for p in cal["points"]
    )
    return (
        f"\nCalibration (benchmarks/calibration.py), the median of {cal['runs_each']} runs "
        f"of its workload each time, {reference}: {points}. Each time figure is divided by "
        f"the slowdown of the two calibrations around its measurement (the median of their "
        f"runs over the reference time); over the whole run the slowdown was "
        f"{cal['slowdown']:.2f}.\n"
    )


def markdown(res: dict[str, Any]) -> str:
    m = res.get("machine", {})
    before, after = res.get("loadavg_before") or (), res.get("loadavg_after") or ()
    repeat = res.get("args", {}).get("repeat", "?")
    head = (
        f"Performance budgets, {res.get('started')} (git {res.get('git_head', '')[:10]}"
        f"{', working tree with uncommitted changes' if res.get('working_tree_dirty') else ''}"
        f"); median of {repeat} run(s), each in its own process (the 100,000 build and the "
        f"whole test command: one).\n\n"
        f"Machine: {m.get('cores')} cores, {m.get('ram_gib')} GiB RAM, {m.get('cpu')}; "
        f"Python {m.get('python')}, vl-convert {m.get('vl_convert')}; load average "
        f"(1/5/15 min) before {'/'.join(f'{x:.2f}' for x in before)}, after "
        f"{'/'.join(f'{x:.2f}' for x in after)}.\n"
    )
    head += calibration_text(res.get("calibration"))
    body = table(
        budget_rows(res),
        ["budget", "limit", "measured", "at reference speed", "met?", "stage profile behind it"],
    )
    notes = []
    s = (res.get("default") or {}).get("serve")
    if s:
        notes.append(f"serve: {serve_line(s)}")
    d = (res.get("default") or {}).get("data") or {}
    if d:
        notes.append(
            f"default data: {d.get('configurations')} configurations, {d.get('models')} models"
        )
    return head + "\n" + body + "\n\n" + "\n".join(f"- {n}" for n in notes) + "\n"
