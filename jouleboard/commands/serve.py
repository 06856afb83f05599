"""``jouleboard serve``: a preview on 127.0.0.1 that rebuilds on every change (the server and
the resident site: jouleboard/engine/serve.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from jouleboard.commands.common import VERBOSITY, kind_code_option

HELP = "preview on 127.0.0.1, rebuilding on every change"


def port_number(text: str) -> int:
    """A TCP port number for ``serve --port`` (0 lets the system pick a free one)."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 0 to 65535, got {text!r}")
    return port


def add_arguments(sv: argparse.ArgumentParser) -> None:
    sv.add_argument("--data", type=Path, default=Path("data"), help="data folder (default: data)")
    sv.add_argument(
        "--out",
        type=Path,
        default=Path(".jouleboard-preview"),
        help="preview build folder (default: .jouleboard-preview)",
    )
    sv.add_argument("--port", type=port_number, default=8000, help="0 picks a free port")
    sv.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default: 127.0.0.1, this machine only)",
    )
    sv.add_argument("--open", action="store_true", help="open the site in a web browser")
    kind_code_option(sv)


def run(args: argparse.Namespace) -> int:
    from jouleboard.core.console import Progress
    from jouleboard.engine.build import find_project, where_things_are
    from jouleboard.engine.serve import serve
    from jouleboard.render.chart_files import DEFAULT_CACHE, check_cache

    check_cache(DEFAULT_CACHE)  # before listening: a cache that is a file is one line
    progress = Progress(getattr(args, "verbosity", VERBOSITY))
    where_things_are(progress, args.data, find_project(args.data), DEFAULT_CACHE, args.out)
    serve(args.data, args.out, args.port, host=args.host, open_browser=args.open)
    return 0
