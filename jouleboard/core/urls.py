"""The only owner of slugs, output paths and URLs.

Every page and file of the site has a *path* relative to the output folder
(``tasks/gpqa/index.html``) and a *URL* under the site's base URL
(``/tasks/gpqa/``). Nothing else builds file names or links.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_UNSAFE = re.compile(r"[^a-z0-9._-]+")


def model_slug(model_id: str) -> str:
    """``Qwen/Qwen3-8B`` -> ``qwen--qwen3-8b`` (ids are validated ASCII, see records.py)."""
    org, _, name = model_id.partition("/")
    return f"{_UNSAFE.sub('-', org.lower())}--{_UNSAFE.sub('-', name.lower())}"


def gpu_slug(gpu: str) -> str:
    return _UNSAFE.sub("-", gpu.lower())


def task_slug(task: str) -> str:
    return task


def deadline_slug(ms: float, percentile: str) -> str:
    """``300 ms, p50`` -> ``p50-300ms``; whole seconds read as seconds: ``1,800,000 ms,
    batch`` -> ``batch-1800s`` (used in download file names)."""
    if ms >= 1000 and float(ms / 1000).is_integer():
        return f"{percentile}-{int(ms // 1000)}s"
    if float(ms).is_integer():
        return f"{percentile}-{int(ms)}ms"
    return f"{percentile}-{ms:g}ms".replace(".", "_")


@dataclass(frozen=True)
class Urls:
    """Paths and URLs of a site served under ``base`` (``/`` or ``/sub/path/``)."""

    base: str = "/"
    origin: str = ""  # https://host, when known: absolute() uses it

    def absolute(self, path: str) -> str:
        """Full URL when the site's origin is configured, else the root-relative URL."""
        return self.origin + self.url(path)

    def url(self, path: str) -> str:
        """URL of an output path; ``x/index.html`` is linked as ``x/``."""
        if path == "index.html":
            path = ""
        elif path.endswith("/index.html"):
            path = path[: -len("index.html")]
        return self.base + path

    # pages
    home = "index.html"
    about = "about/index.html"
    glossary = "glossary/index.html"
    downloads = "downloads/index.html"
    models_index = "models/index.html"
    gpus_index = "gpus/index.html"
    not_found = "404.html"
    compare = "compare/index.html"
    changelog = "changelog/index.html"
    atom_feed = "feed.xml"
    json_feed = "feed.json"
    sitemap = "sitemap.xml"

    @staticmethod
    def page(name: str) -> str:
        """A page of the site's own (content/<name>.md): ``<name>/index.html``."""
        return f"{name}/index.html"

    @staticmethod
    def task(task: str) -> str:
        return f"tasks/{task_slug(task)}/index.html"

    @staticmethod
    def model(model_id: str) -> str:
        return f"models/{model_slug(model_id)}/index.html"

    @staticmethod
    def gpu(gpu: str) -> str:
        return f"gpus/{gpu_slug(gpu)}/index.html"

    mlperf_index = "mlperf/index.html"

    @staticmethod
    def mlperf(benchmark: str) -> str:
        """An MLPerf benchmark's page (names are [a-z0-9.-]: kinds/mlperf.py)."""
        return f"mlperf/{benchmark}/index.html"

    # assets and data
    @staticmethod
    def asset(name: str) -> str:
        return f"assets/{name}"

    @staticmethod
    def chart(chart_id: str, ext: str) -> str:
        """A chart's export: ``ext`` is ``svg`` or ``vl.json``."""
        return f"charts/{chart_id}.{ext}"

    @staticmethod
    def ranking_download(task: str, deadline: str, ext: str, gpu: str | None = None) -> str:
        only = f"-{gpu_slug(gpu)}-only" if gpu else ""
        return f"downloads/rankings/{task_slug(task)}-{deadline}{only}.{ext}"

    @staticmethod
    def configurations_download(ext: str, name: str = "configurations") -> str:
        """Every configuration of one kind of task (``name`` is the kind's download name)."""
        return f"downloads/{name}.{ext}"

    schema_download = "downloads/measurement.schema.json"

    @staticmethod
    def release_download(version: str, ext: str, name: str = "configurations") -> str:
        """Permanent per-release data: never rewritten by later releases."""
        return f"data/{version}/{name}.{ext}"

    @staticmethod
    def embed(chart_id: str) -> str:
        return f"embed/{chart_id}/index.html"

    @staticmethod
    def oembed(chart_id: str) -> str:
        return f"embed/{chart_id}/oembed.json"

    @staticmethod
    def label(model_id: str, task: str) -> str:
        return f"labels/{model_slug(model_id)}--{task_slug(task)}.svg"

    @staticmethod
    def explore_data(task: str) -> str:
        """Compact per-task configurations that the browser re-ranks."""
        return f"explore/{task_slug(task)}.json"

    @staticmethod
    def chart_template(kind: str) -> str:
        """A chart kind's Vega-Lite spec with empty data, for pages that bind data in JS."""
        return f"charts/templates/{kind}.vl.json"


# Names a page of the site's own (content/<name>.md) may have, and the ones it may not: the
# site's own top-level folders and pages, and the navigation's built-in targets.
PAGE_NAME_PATTERN = r"^[a-z][a-z0-9-]{0,39}$"
RESERVED_PAGE_NAMES = frozenset(
    {
        "about",
        "assets",
        "changelog",
        "charts",
        "compare",
        "data",
        "downloads",
        "embed",
        "explore",
        "feed",
        "glossary",
        "gpus",
        "index",
        "labels",
        "leaderboard",
        "mlperf",
        "models",
        "robots",
        "sitemap",
        "static",
        "tasks",
    }
)


def chart_id(kind: str, *parts: str) -> str:
    """Stable chart id from what the chart shows (never from build order)."""
    return "--".join([kind, *(_UNSAFE.sub("-", p.lower()) for p in parts)])


def chart_kind(cid: str) -> str:
    """The kind a chart id starts with (see :func:`chart_id`): ``pareto--a--b`` -> ``pareto``."""
    return cid.split("--", 1)[0]
