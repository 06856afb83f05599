"""Page speed of built sites in Chromium (Playwright) and Lighthouse.

    python benchmarks/pagespeed.py [SITE_DIR | LABEL=SITE_DIR ...] [--runs 3]
                                   [--model models/<slug>/] [--no-lighthouse]

Without a SITE_DIR (or with --build-default) it first builds the default site
(``python build.py --out TMP``) and measures it first. Each folder is served on 127.0.0.1
by http.server (threaded, no compression, as a plain static host), and three pages are
opened: the home page, a task
page (/tasks/gpqa/) and a model page (openai--gpt-oss-20b where a site has it, else the
first model page every site has, else the site's first; --model to choose).

Per page, the median of --runs loads, each in a new browser context (empty cache):
- first row: ms from navigation start until ``table tbody tr`` is in the DOM (a
  MutationObserver installed by an init script takes performance.now()), and until it is
  painted: the observer marks the row and its cells with ``elementtiming`` and an Element
  Timing PerformanceObserver reports their first renderTime (fallback when the browser
  reports none: two animation frames after the row appeared, ``firstRowFrame``);
- FCP and LCP (PerformanceObserver), DOMContentLoaded and load (navigation timing);
- requests and bytes: every response until the network is idle (the page's scripts may
  fetch more after load): body bytes as served, and what gzip -6 would make of them (what
  a compressing host such as GitHub Pages would send);
- JS heap: Performance.getMetrics over CDP (JSHeapUsedSize, after idle, and again after a
  forced garbage collection), DOM nodes.

Lighthouse 12.2.3 (npm, installed into ~/.cache/jouleboard-bench/lighthouse-12.2.3, never
into the repository) runs once per page with its mobile defaults (simulated throttling) for
performance, accessibility, best-practices and SEO, with CHROME_PATH=/usr/bin/chromium; the
scores, its metrics, and every audit scoring under 0.9 are reported. (Lighthouse's
text-compression audit reflects http.server, which does not compress.)

Prints a table per site and, with several sites, each one's change against the first.
JSON: benchmarks/results/pagespeed-<UTC time>.json.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import functools
import gzip
import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROME_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
LIGHTHOUSE_VERSION = "12.2.3"
LIGHTHOUSE_DIR = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "jouleboard-bench"
    / f"lighthouse-{LIGHTHOUSE_VERSION}"
)

INIT_SCRIPT = """
(() => {
  window.__jb = {};
  const found = () => {
    if (window.__jb.firstRow !== undefined) return;
    const row = document.querySelector('table tbody tr');
    if (row) {
      window.__jb.firstRow = performance.now();
      // Element Timing: the row's text reports when it is actually painted
      for (const el of [row, ...row.querySelectorAll('*')])
        el.setAttribute('elementtiming', 'first-row');
      requestAnimationFrame(() => requestAnimationFrame(() => {
        window.__jb.firstRowPainted = performance.now();
      }));
    }
  };
  new MutationObserver(found).observe(document, {childList: true, subtree: true});
  document.addEventListener('DOMContentLoaded', found);
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__jb.lcp = e.startTime;
    }).observe({type: 'largest-contentful-paint', buffered: true});
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        if (e.identifier !== 'first-row') continue;
        const t = e.renderTime || e.loadTime;
        if (window.__jb.firstRowElement === undefined || t < window.__jb.firstRowElement)
          window.__jb.firstRowElement = t;
      }
    }).observe({type: 'element', buffered: true});
  } catch (e) {}
})();
"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


class Server:
    """A static file server for one folder on 127.0.0.1 (a free port)."""

    def __init__(self, root: Path) -> None:
        handler = functools.partial(_Quiet, directory=str(root))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def measure_page(browser: Any, url: str) -> dict[str, Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.add_init_script(INIT_SCRIPT)
    responses: list[Any] = []
    page.on("response", lambda r: responses.append(r))
    failed: list[str] = []
    page.on("requestfailed", lambda r: failed.append(r.url))
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable")
    page.goto(url, wait_until="load")
    with contextlib.suppress(Exception):  # a page that keeps polling: measure what there is
        page.wait_for_load_state("networkidle", timeout=15_000)
    page.wait_for_timeout(300)
    timing = page.evaluate("""() => {
      const nav = performance.getEntriesByType('navigation')[0];
      const fcp = performance.getEntriesByName('first-contentful-paint')[0];
      return {firstRow: window.__jb.firstRow ?? null,
              firstRowPainted: window.__jb.firstRowElement ?? window.__jb.firstRowPainted ?? null,
              firstRowFrame: window.__jb.firstRowPainted ?? null,
              firstRowElementTiming: window.__jb.firstRowElement ?? null,
              fcp: fcp ? fcp.startTime : null, lcp: window.__jb.lcp ?? null,
              dcl: nav.domContentLoadedEventEnd, load: nav.loadEventEnd,
              rows: document.querySelectorAll('table tbody tr').length,
              heapApprox: performance.memory ? performance.memory.usedJSHeapSize : null};
    }""")
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    cdp.send("HeapProfiler.collectGarbage")
    after_gc = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    body_bytes = gzip_bytes = 0
    by_type: dict[str, int] = {}
    for r in responses:
        try:
            body = r.body()
        except Exception:  # redirects and aborted requests have no body
            continue
        body_bytes += len(body)
        gzip_bytes += len(gzip.compress(body, 6))
        kind = r.request.resource_type
        by_type[kind] = by_type.get(kind, 0) + len(body)
    context.close()
    return {
        **timing,
        "requests": len(responses),
        "failed_requests": failed,
        "bytes": body_bytes,
        "gzip_bytes": gzip_bytes,
        "bytes_by_type": by_type,
        "js_heap_used": metrics.get("JSHeapUsedSize"),
        "js_heap_used_after_gc": after_gc.get("JSHeapUsedSize"),
        "js_heap_total": metrics.get("JSHeapTotalSize"),
        "dom_nodes": metrics.get("Nodes"),
        "script_ms": 1000 * metrics.get("ScriptDuration", 0),
        "layout_ms": 1000 * metrics.get("LayoutDuration", 0),
        "task_ms": 1000 * metrics.get("TaskDuration", 0),
    }


def median_runs(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in runs[0].items():
        values = [r[key] for r in runs if isinstance(r.get(key), (int, float))]
        out[key] = (
            statistics.median(values) if values and isinstance(value, (int, float)) else value
        )
    out["runs"] = len(runs)
    return out


def ensure_lighthouse() -> Path:
    cli = LIGHTHOUSE_DIR / "node_modules" / "lighthouse" / "cli" / "index.js"
    if not cli.exists():
        LIGHTHOUSE_DIR.mkdir(parents=True, exist_ok=True)
        print(f"installing lighthouse@{LIGHTHOUSE_VERSION} into {LIGHTHOUSE_DIR}", file=sys.stderr)
        subprocess.run(
            [
                "npm",
                "install",
                "--prefix",
                str(LIGHTHOUSE_DIR),
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                f"lighthouse@{LIGHTHOUSE_VERSION}",
            ],
            check=True,
            capture_output=True,
        )
    return cli


def lighthouse(cli: Path, url: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        flags = " ".join(["--headless=new", *CHROME_ARGS])
        proc = subprocess.run(
            [
                "node",
                str(cli),
                url,
                "--output=json",
                f"--output-path={report}",
                "--only-categories=performance,accessibility,best-practices,seo",
                f"--chrome-flags={flags}",
                "--quiet",
            ],
            env=dict(os.environ, CHROME_PATH=CHROMIUM),
            capture_output=True,
            text=True,
            timeout=300,
        )
        if proc.returncode != 0 or not report.exists():
            return {"error": (proc.stderr or proc.stdout)[-1500:]}
        lhr = json.loads(report.read_text(encoding="utf-8"))
    audits = lhr["audits"]

    def num(audit: str) -> float | None:
        return audits.get(audit, {}).get("numericValue")

    weak = []
    for cat_id, cat in lhr["categories"].items():
        for ref in cat["auditRefs"]:
            a = audits[ref["id"]]
            if (
                a.get("score") is not None
                and a["score"] < 0.9
                and a.get("scoreDisplayMode") in ("binary", "numeric", "metricSavings")
            ):
                weak.append(
                    {
                        "category": cat_id,
                        "id": ref["id"],
                        "title": a["title"],
                        "score": a["score"],
                        "displayValue": a.get("displayValue", ""),
                    }
                )
    return {
        "scores": {
            k: round(100 * v["score"]) if v["score"] is not None else None
            for k, v in lhr["categories"].items()
        },
        "fcp_ms": num("first-contentful-paint"),
        "lcp_ms": num("largest-contentful-paint"),
        "tbt_ms": num("total-blocking-time"),
        "cls": num("cumulative-layout-shift"),
        "speed_index_ms": num("speed-index"),
        "total_byte_weight": num("total-byte-weight"),
        "dom_size": num("dom-size"),
        "weak_audits": weak,
        "lighthouse_version": lhr.get("lighthouseVersion"),
        "form_factor": lhr.get("configSettings", {}).get("formFactor"),
        "throttling": lhr.get("configSettings", {}).get("throttlingMethod"),
    }


def choose_pages(
    sites: list[tuple[str, Path]],
    model: str | None,
    given: list[tuple[str, str]] = (),  # type: ignore[assignment]
) -> dict[str, list[tuple[str, str]]]:
    """Per site: ``given`` (--page NAME=PATH) when there are any; else home, /tasks/gpqa/
    and a model page: --model, else openai--gpt-oss-20b, else the first model page all
    sites have, else each site's first model page."""
    if given:
        return {label: list(given) for label, _ in sites}
    common: set[str] | None = None
    for _, root in sites:
        names = {p.parent.name for p in (root / "models").glob("*/index.html")}
        common = names if common is None else common & names
    out = {}
    for label, root in sites:
        if model:
            model_path = "/" + model.strip("/") + "/"
        else:
            mine = sorted(p.parent.name for p in (root / "models").glob("*/index.html"))
            shared = sorted(common or [])
            pick = next((n for n in ("openai--gpt-oss-20b", *shared, *mine) if n in mine), "")
            model_path = f"/models/{pick}/"
        out[label] = [("home", "/"), ("task", "/tasks/gpqa/"), ("model", model_path)]
    return out


def lighthouse_median(cli: Path, url: str, runs: int) -> dict[str, Any]:
    """Lighthouse ``runs`` times: the run with the median performance score, with every
    run's score in ``performance_runs`` (scores move by a few points between runs)."""
    results = [lighthouse(cli, url) for _ in range(max(runs, 1))]
    ok = [r for r in results if "scores" in r]
    if not ok:
        return results[-1]
    ok.sort(key=lambda r: r["scores"].get("performance") or 0)
    return dict(
        ok[(len(ok) - 1) // 2], performance_runs=[r["scores"].get("performance") for r in ok]
    )


def build_default(out: Path) -> None:
    print(f"building the default site into {out}", file=sys.stderr)
    subprocess.run([sys.executable, "build.py", "--out", str(out)], cwd=REPO, check=True)


def fmt(v: Any, spec: str = ".0f", scale: float = 1.0) -> str:
    return "–" if not isinstance(v, (int, float)) else format(v * scale, spec)


def site_table(result: dict[str, Any]) -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from run import table

    rows = []
    for name, page in result["pages"].items():
        b = page["browser"]
        lh = page.get("lighthouse") or {}
        s = lh.get("scores", {})
        rows.append(
            [
                f"{name} {page['path']}",
                fmt(b["firstRow"]),
                fmt(b["firstRowPainted"]),
                fmt(b["fcp"]),
                fmt(b["lcp"]),
                fmt(b["dcl"]),
                fmt(b["load"]),
                fmt(b["requests"]),
                fmt(b["bytes"], ".0f", 1 / 1024),
                fmt(b["gzip_bytes"], ".0f", 1 / 1024),
                fmt(b["js_heap_used"], ".1f", 1 / 2**20),
                fmt(b["js_heap_used_after_gc"], ".1f", 1 / 2**20),
                fmt(b["dom_nodes"]),
                fmt(b["rows"]),
                "/".join(
                    fmt(s.get(k)) for k in ("performance", "accessibility", "best-practices", "seo")
                )
                if s
                else ("error" if "error" in lh else "–"),
                fmt(lh.get("fcp_ms")),
                fmt(lh.get("lcp_ms")),
                fmt(lh.get("tbt_ms")),
                fmt(lh.get("cls"), ".3f"),
                fmt(lh.get("total_byte_weight"), ".0f", 1 / 1024),
            ]
        )
    return table(
        rows,
        [
            "page",
            "1st row DOM ms",
            "1st row painted ms",
            "FCP ms",
            "LCP ms",
            "DCL ms",
            "load ms",
            "requests",
            "KiB",
            "KiB gzip",
            "heap MiB",
            "heap MiB after GC",
            "DOM nodes",
            "rows",
            "LH perf/a11y/bp/seo",
            "LH FCP ms",
            "LH LCP ms",
            "LH TBT ms",
            "LH CLS",
            "LH KiB",
        ],
    )


def compare_table(results: list[dict[str, Any]]) -> str:
    from run import table

    base = results[0]
    rows = []
    keys = [
        ("firstRowPainted", "1st row painted ms"),
        ("lcp", "LCP ms"),
        ("requests", "requests"),
        ("bytes", "KiB"),
        ("js_heap_used", "heap MiB"),
    ]
    for other in results[1:]:
        for name, page in other["pages"].items():
            b0 = base["pages"][name]["browser"]
            b1 = page["browser"]
            cells = []
            for key, _ in keys:
                v0, v1 = b0.get(key), b1.get(key)
                scale = 1 / 1024 if key == "bytes" else (1 / 2**20 if key == "js_heap_used" else 1)
                spec = ".1f" if key == "js_heap_used" else ".0f"
                cells.append(
                    f"{fmt(v0, spec, scale)} → {fmt(v1, spec, scale)}"
                    + (
                        f" ({100 * (v1 - v0) / v0:+.0f}%)"
                        if isinstance(v0, (int, float)) and isinstance(v1, (int, float)) and v0
                        else ""
                    )
                )
            s0 = (base["pages"][name].get("lighthouse") or {}).get("scores", {})
            s1 = (page.get("lighthouse") or {}).get("scores", {})
            cells.append(f"{s0.get('performance', '–')} → {s1.get('performance', '–')}")
            rows.append([f"{other['label']} vs {base['label']}", name, *cells])
    return table(rows, ["sites", "page", *(k[1] for k in keys), "LH perf"])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sites", nargs="*", help="built site folders (LABEL=DIR to name one)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--model", default=None, help="model page path, e.g. models/qwen--qwen3-8b/")
    p.add_argument("--no-lighthouse", action="store_true")
    p.add_argument(
        "--lighthouse-runs",
        type=int,
        default=1,
        help="Lighthouse runs per page; the median performance score counts",
    )
    p.add_argument(
        "--page",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="measure these pages (e.g. task=/tasks/gpqa/) instead of home, the "
        "gpqa task and a model page; repeatable",
    )
    p.add_argument("--json", type=Path, default=None, help="also write the results to this file")
    p.add_argument(
        "--build-default",
        action="store_true",
        help="also build data/ fresh and measure it first (the default without SITE_DIRs)",
    )
    args = p.parse_args(argv)
    tmp = None
    sites: list[tuple[str, Path]] = []
    for spec in args.sites:
        label, _, folder = spec.rpartition("=") if "=" in spec else ("", "", spec)
        path = Path(folder).resolve()
        if not (path / "index.html").exists():
            raise SystemExit(f"{path} is not a built site (no index.html)")
        sites.append((label or path.name, path))
    if not sites or args.build_default:
        tmp = tempfile.TemporaryDirectory(prefix="jouleboard-pagespeed-")
        build_default(Path(tmp.name) / "site")
        sites.insert(0, ("default", Path(tmp.name) / "site"))
    given = [tuple(spec.split("=", 1)) for spec in args.page if "=" in spec]
    pages = choose_pages(sites, args.model, given)  # type: ignore[arg-type]
    cli = None if args.no_lighthouse else ensure_lighthouse()
    from playwright.sync_api import sync_playwright

    results = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROME_ARGS)
        for label, root in sites:
            result: dict[str, Any] = {"label": label, "site": str(root), "pages": {}}
            with Server(root) as server:
                for name, path in pages[label]:
                    url = server.base + path
                    measure_page(browser, url)  # warm-up: server, disk cache, JIT
                    runs = [measure_page(browser, url) for _ in range(args.runs)]
                    page = {"path": path, "browser": median_runs(runs)}
                    if cli is not None:
                        page["lighthouse"] = lighthouse_median(cli, url, args.lighthouse_runs)
                    result["pages"][name] = page
                    print(
                        f"[{label}] {name} {path}: first row painted "
                        f"{fmt(page['browser']['firstRowPainted'])} ms, "
                        f"{page['browser']['requests']} requests, "
                        f"{page['browser']['bytes'] / 1024:.0f} KiB",
                        file=sys.stderr,
                    )
            results.append(result)
        browser.close()
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H%M%SZ")
    out = RESULTS / f"pagespeed-{stamp}.json"
    text = json.dumps(
        {
            "chromium": CHROMIUM,
            "runs": args.runs,
            "lighthouse": None if cli is None else LIGHTHOUSE_VERSION,
            "lighthouse_runs": args.lighthouse_runs,
            "sites": results,
        },
        indent=2,
    )
    out.write_text(text, encoding="utf-8")
    if args.json is not None:
        args.json.write_text(text, encoding="utf-8")
    for r in results:
        print(f"\n{r['label']} ({r['site']})")
        print(site_table(r))
        weak = {
            (a["category"], a["title"], a.get("displayValue", ""))
            for pg in r["pages"].values()
            for a in (pg.get("lighthouse") or {}).get("weak_audits", [])
        }
        if weak:
            print(
                "Lighthouse audits under 0.9 (any page): "
                + "; ".join(f"{c}: {t}" + (f" ({d})" if d else "") for c, t, d in sorted(weak))
            )
    if len(results) > 1:
        print("\nAgainst the first site")
        print(compare_table(results))
    print(f"\nsaved {out.relative_to(REPO)}")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
