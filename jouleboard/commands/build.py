"""``jouleboard build``: validate the data and build the static site."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jouleboard.commands.common import (
    VERBOSITY,
    UsageError,
    kind_code_option,
    require_prometheus_option,
    warn,
)

HELP = "validate the data and build the static site"


def add_arguments(b: argparse.ArgumentParser) -> None:
    b.add_argument("--data", type=Path, default=Path("data"), help="data folder (default: data)")
    b.add_argument("--out", type=Path, default=Path("site"), help="output folder (default: site)")
    b.add_argument("--base-url", help="URL path the site is served under, e.g. /leaderboard/")
    b.add_argument(
        "--site-url",
        default=None,
        help="origin the site is published at, e.g. https://example.org "
        "(default: site.yaml's site_url)",
    )
    b.add_argument(
        "--project",
        type=Path,
        default=None,
        help="folder with templates/ and content/ (default: beside --data)",
    )
    b.add_argument(
        "--runs",
        type=Path,
        action="append",
        default=[],
        metavar="RUN_DIR",
        help="raw ML.ENERGY benchmark runs to publish with the measurement files "
        "(run/ or any folder below it; repeatable)",
    )
    b.add_argument(
        "--strict", action="store_true", help="fail on warnings (dropped runs, files not read)"
    )
    b.add_argument(
        "--png",
        action="store_true",
        help="also render every chart as a 2x PNG (link previews, oEmbed "
        "thumbnails, 'PNG (2×)' links); the deploy workflow passes it",
    )
    require_prometheus_option(b)
    kind_code_option(b)


def run(args: argparse.Namespace) -> int:
    import re

    from jouleboard.config.fields import BASE_URL_PATTERN, SITE_URL_PATTERN
    from jouleboard.core.console import Progress
    from jouleboard.engine.build import build_site

    if args.base_url is not None and not re.fullmatch(BASE_URL_PATTERN, args.base_url):
        raise UsageError(
            f"--base-url must be a URL path such as / or /leaderboard/ (letters, "
            f"digits, '.', '_', '~', '-'; ending in '/'), got {args.base_url!r}"
        )
    if args.site_url is not None and not re.fullmatch(SITE_URL_PATTERN, args.site_url):
        raise UsageError(
            f"--site-url must be an origin such as https://example.org (no "
            f"path), got {args.site_url!r}"
        )
    progress = Progress(getattr(args, "verbosity", VERBOSITY))
    summary = build_site(
        args.data,
        args.out,
        base_url=args.base_url,
        project=args.project,
        runs=args.runs,
        strict=args.strict,
        site_url=args.site_url,
        progress=progress,
        require_prometheus=args.require_prometheus,
        png=args.png,
        one_shot=True,
    )
    warn(summary.warnings, strict=False)
    if not summary.site_url and not summary.unchanged:  # said when the site was built
        print(
            "warning: site_url is empty, so embed codes, citations, feeds, og:image links "
            "and sitemap.xml are relative to this site (and robots.txt names no sitemap); "
            "set site_url in site.yaml or pass --site-url",
            file=sys.stderr,
        )
    print(summary)
    return 0
