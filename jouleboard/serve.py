"""Local preview: build, serve on 127.0.0.1, rebuild when data, templates or content change,
and reload open pages.

Pages built for preview carry one extra script, /__jouleboard__/reload.js (same origin, so
the Content-Security-Policy stays strict), which polls a build counter and reloads the page
when it changes. A failed rebuild prints its problems and keeps the previous site.
"""

from __future__ import annotations

import errno
import http.server
import os
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from jouleboard.build import build_site, find_project
from jouleboard.outdir import OutputRefused
from jouleboard.problems import ValidationFailed

RELOAD_JS = """// jouleboard serve: reload as soon as the site is rebuilt.
(() => {
  let seen = null;
  async function wait() {
    try {
      // Held open by the server until the build version differs from `seen` (or ~25 s).
      const query = seen === null ? "" : `?since=${encodeURIComponent(seen)}`;
      const response = await fetch(`/__jouleboard__/wait${query}`, { cache: "no-store" });
      const version = await response.text();
      if (seen !== null && version !== seen) { location.reload(); return; }
      seen = version;
      wait();
    } catch (error) { setTimeout(wait, 1000); /* the server restarts: try again */ }
  }
  wait();
})();
"""
WAIT_S = 25.0  # how long a reload request is held open without a rebuild


def snapshot(roots: Iterable[Path], skip: Path | None = None) -> dict[str, int]:
    """Modification times of every file below ``roots`` (what a rebuild depends on),
    without hidden files and folders (locks, staging) or the folder ``skip`` (the preview
    itself: were it watched, each build would trigger the next)."""
    skipped = os.path.realpath(skip) if skip is not None else None
    seen = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".")
                       and os.path.realpath(os.path.join(folder, d)) != skipped]
            for name in files:
                if name.startswith("."):
                    continue
                path = os.path.join(folder, name)
                try:
                    seen[path] = os.stat(path).st_mtime_ns
                except OSError:
                    continue
    return seen


class _State:
    """The build version, and a condition that wakes every held reload request when it
    changes (a page reloads within milliseconds of a finished rebuild, not at its next poll)."""

    def __init__(self) -> None:
        self.version = 0
        self.changed = threading.Condition()

    def bump(self) -> None:
        with self.changed:
            self.version += 1
            self.changed.notify_all()

    def wait_past(self, since: str, timeout: float) -> int:
        """The version once it is not ``since`` (at once if it already is), or after
        ``timeout`` seconds the current one."""
        with self.changed:
            self.changed.wait_for(lambda: str(self.version) != since, timeout=timeout)
            return self.version


def _handler(out: Path, state: _State) -> type[http.server.SimpleHTTPRequestHandler]:
    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(out), **kwargs)

        def do_GET(self) -> None:
            path, _, query = self.path.partition("?")
            if path == "/__jouleboard__/version":
                self._send(str(state.version).encode(), "text/plain")
            elif path == "/__jouleboard__/wait":
                since = urllib.parse.parse_qs(query).get("since", [""])[0]
                version = state.wait_past(since, WAIT_S) if since else state.version
                self._send(str(version).encode(), "text/plain")
            elif path == "/__jouleboard__/reload.js":
                self._send(RELOAD_JS.encode(), "text/javascript")
            else:
                super().do_GET()

        def send_head(self) -> Any:
            # A path the file system cannot hold (a NUL byte, a lone surrogate) is a bad
            # request, not a traceback.
            path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
            if "\x00" in path:
                self.send_error(400, "Bad request path")
                return None
            try:
                return super().send_head()
            except (ValueError, UnicodeError):
                self.send_error(400, "Bad request path")
                return None

        def _send(self, body: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def _rebuild(data_dir: Path, out: Path, project: Path) -> bool:
    """Build once; on any failure print why and keep the previous site (serve goes on)."""
    try:
        summary = build_site(data_dir, out, project=project, preview=True)
    except ValidationFailed as e:
        print(e.report(), flush=True)
    except OutputRefused:  # --out itself is wrong: no edit will fix it, so stop (one line)
        raise
    except Exception as e:  # a template error, an unreadable file...: the site stays up
        print(f"error: {type(e).__name__}: {e}", flush=True)
    else:
        print(summary, flush=True)
        return True
    print("rebuild failed; still serving the previous site", flush=True)
    return False


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (or any request that failed): one line, no traceback."""
        error = sys.exc_info()[1]
        if not isinstance(error, ConnectionError):
            print(f"request from {client_address[0]} failed: {type(error).__name__}: {error}",
                  flush=True)


def listen(host: str, port: int, out: Path, state: _State) -> http.server.ThreadingHTTPServer:
    """Bind first, so a port in use fails in a second instead of after a full build."""
    try:
        server = _Server((host, port), _handler(out, state))
    except OSError as e:
        hint = ("pass another --port (0 picks a free one)" if e.errno == errno.EADDRINUSE
                else "check --host (for example 127.0.0.1 or 0.0.0.0) and --port")
        raise OSError(e.errno, f"cannot listen on {host}:{port}: {e.strerror or e}; "
                      f"{hint}") from None
    return server


def serve(data_dir: Path, out: Path, port: int = 8000, interval_s: float = 0.5,
          max_seconds: float | None = None, host: str = "127.0.0.1",
          open_browser: bool = False) -> None:
    """Build, serve and watch until interrupted (or for ``max_seconds``, for tests)."""
    project = find_project(data_dir)
    state = _State()
    server = listen(host, port, out, state)
    roots = [data_dir, project / "templates", project / "content"]
    before = snapshot(roots, skip=out)  # before the first build: an edit during it counts
    try:
        if not _rebuild(data_dir, out, project) and not out.exists():
            raise SystemExit(1)
    except BaseException:
        server.server_close()
        raise
    threading.Thread(target=server.serve_forever, daemon=True).start()
    shown_host = f"[{host}]" if ":" in host else host
    url = f"http://{shown_host}:{server.server_address[1]}/"
    print(f"serving on {url} (Ctrl-C to stop)", flush=True)
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    started = time.monotonic()
    try:
        while max_seconds is None or time.monotonic() - started < max_seconds:
            time.sleep(interval_s)
            now = snapshot(roots, skip=out)
            if now != before:
                before = now
                if _rebuild(data_dir, out, project):
                    state.bump()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()

