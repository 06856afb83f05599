"""Local preview: build, serve on 127.0.0.1, update when data, templates, content or static
files change, and reload open pages.

Pages built for preview carry one extra script, /__jouleboard__/reload.js (same origin, so
the Content-Security-Policy stays strict), which holds a request open until the site
changes, then reloads the page. The site stays in memory between edits
(:mod:`jouleboard.engine.live`): an edit renders the pages waiting for a reload first, serves them
(and the assets, charts and files they use) from memory and signals the reload, then
finishes and commits the whole site; until then a request for any other file waits for the
commit, so a page never mixes old and new files. A failed update prints its problems and
keeps the previous site. This module is the HTTP and watch layer.

The preview is for this machine, and a page on any site the browser opens can send it
requests: it answers only requests that name it (a Host of localhost, 127.0.0.1, [::1] or the
address it listens on; a DNS-rebinding page names its own domain), serves only regular files
inside the preview folder (no listing, no symbolic link followed), and gives each connection
one of a fixed number of handler threads for a bounded time.
"""

from __future__ import annotations

import datetime
import email.utils
import errno
import gc
import http.server
import io
import ipaddress
import json
import os
import posixpath
import queue
import re
import socket
import socketserver
import stat
import sys
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TypeAlias

from jouleboard.core.escape import text_line
from jouleboard.core.problems import RenderFailed, ValidationFailed
from jouleboard.engine.build import find_project
from jouleboard.engine.live import Changes, LiveSite, output_path
from jouleboard.engine.watch import snapshot, watch
from jouleboard.output.folder import OutputRefused
from jouleboard.render.chart_files import DEFAULT_CACHE

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer, WriteableBuffer

__all__ = ["serve", "snapshot"]

# A connection as socketserver hands it on (a TCP server's is its socket), and the client's
# address: (host, port), or (host, port, flow, scope) over IPv6.
Request: TypeAlias = "socket.socket | tuple[bytes, socket.socket]"
Address: TypeAlias = "tuple[str | int, ...]"

RELOAD_JS = """// jouleboard serve: reload once the site is rebuilt; show a rebuild that failed.
(() => {
  // The build version this page is of (the server's cookie on the page): a rebuild that
  // came in before this script asked is one too. Without it, the first answer's version.
  const stamp = document.cookie.match(/(?:^|; )jouleboard_version=([0-9]+)/);
  let seen = stamp ? stamp[1] : null;
  // This page's path goes with the request: serve renders the pages waiting first.
  const page = `&page=${encodeURIComponent(location.pathname)}`;
  // The last rebuild failed: its located problems over the page (text only), until the
  // next rebuild succeeds and the page reloads.
  function showError(text) {
    let box = document.getElementById("jouleboard-build-error");
    if (!box) {
      box = document.createElement("div");
      box.id = "jouleboard-build-error";
      box.setAttribute("role", "alert");
      Object.assign(box.style, { position: "fixed", inset: "auto 0 0 0", maxHeight: "50vh",
        overflow: "auto", zIndex: "2147483647", margin: "0", padding: "12px 16px",
        background: "#7a0916", color: "#fff", font: "14px/1.4 ui-monospace, monospace",
        whiteSpace: "pre-wrap", boxShadow: "0 -2px 8px rgba(0,0,0,.4)" });
      document.body.append(box);
    }
    box.textContent = `jouleboard serve: the last rebuild failed; this page is the previous ` +
      `site.\n\n${text}`;
  }
  async function wait() {
    try {
      // Held open by the server until the build version differs from `seen` (or ~25 s).
      const query = seen === null ? "" : `?since=${encodeURIComponent(seen)}${page}`;
      const response = await fetch(`/__jouleboard__/wait${query}`, { cache: "no-store" });
      const { version, error, withdrawn } = await response.json();
      // A rebuild that failed after this page was published ahead of it withdrew the page:
      // reload into the previous site, where the error shows (not over what never built).
      if (seen !== null && version !== seen && (!error || seen === withdrawn)) {
        location.reload();
        return;
      }
      if (error) showError(error);
      seen = version;
      wait();
    } catch (error) { setTimeout(wait, 1000); /* the server restarts: try again */ }
  }
  wait();
})();
"""
VERSION_COOKIE = "jouleboard_version"  # set on each page: the build version it is of
ERROR_CAP = 20_000  # characters of a failed rebuild's report shown over the page
ERROR_PAGE_CAP = 1024 * 1024  # bytes of the site's 404.html served for a missing path
WAIT_S = 25.0  # how long a reload request is held open without a rebuild
COMMIT_WAIT_S = 120.0  # the longest a request waits for an update's commit
WORKERS = 32  # handler threads: every connection is served by one of these
QUEUED = 256  # connections waiting for a handler thread; one more is closed at once
# A client silent this long while sending its request (or reading the answer) is dropped.
# It does not cut the reload request short: the server, not the socket, holds that open.
CONNECTION_TIMEOUT_S = 15.0
# The whole request line and headers must arrive within this of the connection's accept
# (time queued for a handler thread included), however steadily they drip: a browser on
# this machine sends them at once, and 288 clients sending a byte every few seconds held
# every thread for minutes, each dropped only 30 s after a thread took it.
REQUEST_DEADLINE_S = 10.0
# The whole exchange, request and answer, within this of the accept (a client reading the
# answer a byte at a time is dropped too), besides the time the server holds a request
# itself (a reload request, a request waiting for an update's commit).
CONNECTION_DEADLINE_S = 60.0
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_HOST = re.compile(r"(?:\[(?P<ip6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9.-]+))(?::[0-9]{1,5})?")


def capped(report: str) -> str:
    """A failed rebuild's report as the open pages show it: whole lines up to
    :data:`ERROR_CAP` characters, then how many more the terminal shows, then the report's
    last line (its count of problems). It was cut at the cap mid-line, with no sign."""
    if len(report) <= ERROR_CAP:
        return report
    *lines, last = report.splitlines()
    if len(last) > ERROR_CAP // 2:  # one line, or a last line too long to keep whole
        return report[: ERROR_CAP - 1] + "…"
    kept: list[str] = []
    size = len(last) + 100  # room for the last line and the note
    for line in lines:
        if size + len(line) + 1 > ERROR_CAP:
            break
        kept.append(line)
        size += len(line) + 1
    more = len(lines) - len(kept)
    return "\n".join([*kept, f"… and {more:,} more line{'s' * (more != 1)} in the terminal", last])


class _State:
    """The build version, and a condition that wakes every held reload request when it
    changes (a page reloads within milliseconds of its update, not at its next poll).

    While an update is between publishing its first pages and committing the site,
    ``ahead`` holds those files (served from memory) and any other request waits."""

    def __init__(self) -> None:
        self.version = 0
        self.changed = threading.Condition()
        self.waiting: Counter[str] = Counter()  # output paths of pages held in /wait
        self.last_page = ""  # the output path of the last page served
        self.ahead: dict[str, bytes] | None = None
        self.error = ""  # the last rebuild's report when it failed ("" when it built)
        # The version whose pages, published ahead, the update's failure withdrew: a page
        # loaded at it shows what the site never had, and reloads into the previous site.
        self.withdrawn = ""

    def wait_past(self, since: str, timeout: float, page: str = "") -> int:
        """The version once it is not ``since`` (at once if it already is), or after
        ``timeout`` seconds the current one; ``page`` is waiting meanwhile."""
        with self.changed:
            self.waiting[page] += 1
            try:
                self.changed.wait_for(lambda: str(self.version) != since, timeout=timeout)
            finally:
                self.waiting[page] -= 1
                self.waiting += Counter()  # drop zero counts
            return self.version

    def pages_waiting(self) -> list[str]:
        """The pages to render first: those held in /wait, else the last one served."""
        with self.changed:
            pages = sorted(p for p in self.waiting if p)
            return pages or ([self.last_page] if self.last_page else [])

    def publish(self, files: dict[str, bytes]) -> None:
        """Serve ``files`` from memory, hold every other request, and signal the reload
        (with no error: these pages were built)."""
        with self.changed:
            self.ahead = files
            self.error = ""
            self.withdrawn = ""
            self.version += 1
            self.changed.notify_all()

    def settle(self, bump: bool) -> None:
        """The update is over (committed or failed): serve the output folder again."""
        with self.changed:
            self.ahead = None
            self.version += bump
            self.changed.notify_all()

    def withdraw(self) -> None:
        """The update failed after publishing pages ahead: they go (the folder holds the
        previous site), and the pages loaded from them reload into it."""
        with self.changed:
            if self.ahead is not None:
                self.withdrawn = str(self.version)
        self.settle(bump=True)

    def fail(self, report: str) -> None:
        """An update failed: every open page shows ``report`` over the previous site."""
        with self.changed:
            self.error = capped(report)
            self.version += 1
            self.changed.notify_all()

    def built(self) -> None:
        """An update succeeded: no error to show any more."""
        with self.changed:
            self.error = ""
            self.withdrawn = ""

    def status(self) -> bytes:
        with self.changed:
            status = {"version": str(self.version), "error": self.error}
            return json.dumps({**status, "withdrawn": self.withdrawn}).encode()

    def ahead_of(self, path: str) -> bytes | None:
        """``path``'s bytes if published ahead; else None once no update is in flight."""
        with self.changed:
            if self.ahead is not None and path in self.ahead:
                return self.ahead[path]
            self.changed.wait_for(lambda: self.ahead is None, timeout=COMMIT_WAIT_S)
            return None


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def host_allowed(host: str, bound: str) -> bool:
    """Whether a request's Host header names this preview (any port): localhost, a loopback
    address or ``bound``, the address the server listens on; listening on every address
    (0.0.0.0), also any IP address and this machine's name. A DNS-rebinding page (a domain
    of its own pointed at 127.0.0.1) sends its own domain, which is none of these."""
    match = _HOST.fullmatch(host)
    if match is None:
        return False
    name = (match["ip6"] or match["name"]).lower()
    if name in LOOPBACK_NAMES or name == bound:
        return True
    if _is_ip(name):
        address = ipaddress.ip_address(name)
        if address.is_loopback or (_is_ip(bound) and address == ipaddress.ip_address(bound)):
            return True
    if _is_ip(bound) and ipaddress.ip_address(bound).is_unspecified:
        return _is_ip(name) or name in {socket.gethostname().lower(), socket.getfqdn().lower()}
    return False


def open_inside(root: str, parts: Sequence[str]) -> int:
    """A file descriptor for ``root``/``parts`` (a regular file or a folder), opened one
    component at a time without following a symbolic link anywhere below ``root``: a link
    placed in the preview folder (to / or to a file elsewhere) is never served. Raises
    OSError for a link, a missing name, or anything but a file or folder (a FIFO is opened
    without blocking, then refused)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            mode = os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise OSError(errno.ENOENT, "not a file or folder", part)
            child = os.open(
                part, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd
            )
            os.close(fd)
            fd = child
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise OSError(errno.ENOENT, "not a file or folder")
        return fd
    except BaseException:
        os.close(fd)
        raise


class _Limits:
    """A connection's time limits: ``timeout`` seconds for any one read or write, its
    request line and headers by ``head`` and all of it by ``total`` (monotonic times;
    ``head`` None once the headers are in)."""

    def __init__(self, timeout: float, head: float | None, total: float) -> None:
        self.timeout, self.head, self.total = timeout, head, total

    def wait(self) -> float:
        """How long the next read or write may wait: 0 once past a limit (what has arrived
        is still read, and a send the socket takes at once still goes: a request queued
        behind slow clients is answered; a slow client is dropped)."""
        until = self.total if self.head is None else min(self.head, self.total)
        return max(0.0, min(self.timeout, until - time.monotonic()))


class _DeadlineReader(io.RawIOBase):
    """A connection's incoming bytes, each read within its :class:`_Limits`."""

    def __init__(self, connection: socket.socket, limits: _Limits) -> None:
        self.connection = connection
        self.limits = limits

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        self.connection.settimeout(self.limits.wait())
        try:
            return self.connection.recv_into(buffer)
        except BlockingIOError:  # past a limit, and nothing has arrived
            raise TimeoutError("the request took too long to arrive") from None


class _DeadlineWriter(io.BufferedIOBase):
    """A connection's outgoing bytes, each send within its :class:`_Limits` (a client that
    reads the answer a byte at a time cannot hold a thread past the total)."""

    def __init__(self, connection: socket.socket, limits: _Limits) -> None:
        self.connection = connection
        self.limits = limits

    def writable(self) -> bool:
        return True

    def write(self, data: ReadableBuffer) -> int:
        with memoryview(data) as view, view.cast("B") as rest:
            sent = 0
            while sent < len(rest):
                self.connection.settimeout(self.limits.wait())
                try:
                    sent += self.connection.send(rest[sent:])
                except BlockingIOError:  # past the total, and the client reads nothing
                    raise TimeoutError("the answer took too long to be read") from None
            return sent


def _handler(
    out: Path,
    state: _State,
    timeout_s: float = CONNECTION_TIMEOUT_S,
    deadline_s: float = REQUEST_DEADLINE_S,
    total_s: float = CONNECTION_DEADLINE_S,
) -> type[http.server.SimpleHTTPRequestHandler]:
    class Handler(http.server.SimpleHTTPRequestHandler):
        timeout = timeout_s  # set on each connection's socket (StreamRequestHandler.setup)
        _page_version: str | None = None  # the build version of the page a request gets

        def __init__(
            self, request: Request, client_address: Address, server: socketserver.BaseServer
        ) -> None:
            super().__init__(request, client_address, server, directory=str(out))

        def setup(self) -> None:
            """The connection's streams, under its time limits, counted from its accept."""
            super().setup()
            accepted = getattr(self.server, "accepted", time.monotonic)()
            self._limits = _Limits(timeout_s, accepted + deadline_s, accepted + total_s)
            self.rfile = io.BufferedReader(_DeadlineReader(self.connection, self._limits))
            self.wfile = _DeadlineWriter(self.connection, self._limits)

        def _held(self, started: float) -> None:
            """The server held the request since ``started``: that time is not the
            client's."""
            self._limits.total += time.monotonic() - started

        def parse_request(self) -> bool:
            """Refuse (421) a request that does not name this preview in its one Host."""
            self._page_version = None  # (set for a page: end_headers)
            parsed = super().parse_request()
            self._limits.head = None  # the headers are in
            if not parsed:
                return False
            hosts = self.headers.get_all("Host") or []
            bound = self.server.server_address  # (host, port), or (host, port, flow, scope)
            assert isinstance(bound, tuple)
            if len(hosts) == 1 and host_allowed(hosts[0], str(bound[0])):
                return True
            self.close_connection = True
            self._send(
                b"jouleboard serve answers requests for localhost, 127.0.0.1, [::1] "
                b"and the address it listens on only\n",
                "text/plain",
                421,
            )
            return False

        def do_GET(self) -> None:
            path, _, query = self.path.partition("?")
            if path == "/__jouleboard__/version":
                self._send(str(state.version).encode(), "text/plain")
            elif path == "/__jouleboard__/wait":
                asked = urllib.parse.parse_qs(query)
                since = asked.get("since", [""])[0]
                page = output_path(asked.get("page", [""])[0]) if "page" in asked else ""
                started = time.monotonic()
                if since:
                    state.wait_past(since, WAIT_S, page)
                self._held(started)
                self._send(state.status(), "application/json")
            elif path == "/__jouleboard__/reload.js":
                self._send(RELOAD_JS.encode(), "text/javascript")
            else:
                self._file(urllib.parse.unquote(path))

        def _file(self, path: str) -> None:
            """From memory when an update published it ahead, else from the folder."""
            wanted = output_path(path)
            if wanted.endswith(".html"):
                state.last_page = wanted
                # Read before the page's bytes: an edit's rebuild between the two makes the
                # page reload once more, never miss one (its reload request came after it).
                self._page_version = str(state.version)
            started = time.monotonic()
            content = state.ahead_of(wanted)
            self._held(started)
            if content is None:
                super().do_GET()
            else:
                self._send(content, self.guess_type(wanted))

        def send_head(self) -> BinaryIO | None:
            """The file the path names in the preview folder, opened: a folder's
            index.html (no listing: a folder without one is 404), never through a link."""
            url_path = urllib.parse.urlsplit(self.path).path
            path = urllib.parse.unquote(url_path)
            if "\x00" in path:  # a path the file system cannot hold: a bad request
                self.send_error(400, "Bad request path")
                return None
            parts = [p for p in posixpath.normpath(path).split("/") if p not in ("", ".", "..")]
            try:
                fd = open_inside(str(out), parts)
                if stat.S_ISDIR(os.fstat(fd).st_mode):
                    os.close(fd)
                    fd = open_inside(str(out), [*parts, "index.html"])
                    parts.append("index.html")
                    if not stat.S_ISREG(os.fstat(fd).st_mode):
                        os.close(fd)
                        raise OSError(errno.ENOENT, "index.html is a folder")
                    if not url_path.endswith("/"):  # /models/a -> /models/a/, as a browser
                        os.close(fd)  # resolves the page's relative links
                        self._redirect(url_path + "/")
                        return None
            except (OSError, ValueError):
                self._not_found()
                return None
            file = os.fdopen(fd, "rb")
            try:
                return self._file_head(file, parts[-1] if parts else "index.html")
            except BaseException:
                file.close()
                raise

        def _file_head(self, file: BinaryIO, name: str) -> BinaryIO | None:
            """Headers for an open file (304 when the browser's copy is current), as the
            standard library's send_head sends them, and more: the browser must ask again
            each time (no-cache) and its copy is current only when its tag, the file's size
            and nanosecond mtime, still is. With Last-Modified alone Chromium reused a chart
            or a page from its cache after a rebuild changed it (and a second's resolution
            cannot tell two rebuilds apart)."""
            status = os.fstat(file.fileno())
            tag = f'"{status.st_size:x}-{status.st_mtime_ns:x}"'
            since = self.headers.get("If-Modified-Since")
            if self.headers.get("If-None-Match") == tag:
                self.send_response(304)
                self.send_header("ETag", tag)
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                file.close()
                return None
            if since and "If-None-Match" not in self.headers:
                try:
                    when = email.utils.parsedate_to_datetime(since)
                    if when.tzinfo is None:  # the obsolete form without a zone: UTC
                        when = when.replace(tzinfo=datetime.UTC)
                    current = when.timestamp() >= int(status.st_mtime)
                except (TypeError, IndexError, OverflowError, ValueError):
                    current = False
                if current:
                    self.send_response(304)
                    self.end_headers()
                    file.close()
                    return None
            self.send_response(200)
            self.send_header("Content-type", self.guess_type(name))
            self.send_header("Content-Length", str(status.st_size))
            self.send_header("Last-Modified", self.date_time_string(status.st_mtime))
            self.send_header("ETag", tag)
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            return file

        def _not_found(self) -> None:
            """404 with the site's own 404 page, which carries the reload script: a page
            open at a path an edit removed comes back by itself once an edit restores it
            (the standard library's error page has no script and stayed)."""
            try:
                fd = open_inside(str(out), ["404.html"])
                with os.fdopen(fd, "rb") as page:
                    body = page.read(ERROR_PAGE_CAP + 1)
            except (OSError, ValueError):
                body = b""
            if not body or len(body) > ERROR_PAGE_CAP:
                self.send_error(404, "File not found")
            else:
                self._send(body, "text/html; charset=utf-8", 404)

        def _redirect(self, location: str) -> None:
            self.send_response(301)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def end_headers(self) -> None:
            """A page's headers carry the build version it is of (its reload script's
            starting point); 304s too, since the browser's copy is then the current one."""
            if self._page_version is not None:
                self.send_header(
                    "Set-Cookie", f"{VERSION_COOKIE}={self._page_version}; Path=/; SameSite=Strict"
                )
            super().end_headers()

        def _send(self, body: bytes, kind: str, status: int = 200) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


def _update(live: LiveSite, state: _State, changes: Changes, first: bool = False) -> bool:
    """One update (``first``: the build before serving, which no page waits for); on any
    failure print why and keep the previous site (serve goes on)."""
    published = False

    def publish(files: dict[str, bytes]) -> None:
        nonlocal published
        state.publish(files)
        published = True

    report = ""
    try:
        summary = live.update(changes, state.pages_waiting, publish)
    except ValidationFailed as e:
        report = e.report()
    except RenderFailed as e:  # (vl-convert did not start, a chart worker was killed)
        report = f"error: {e}"
    except OutputRefused:  # --out itself is wrong: no edit will fix it, so stop (one line)
        raise
    except Exception as e:  # a template error, an unreadable file...: the site stays up
        report = f"error: {type(e).__name__}: {e}"
    else:
        state.built()
        state.settle(bump=not published and not first)
        print(summary, flush=True)
        for warning in summary.warnings:  # as `jouleboard build` says them: a file not read
            print(f"warning: {text_line(warning)}", file=sys.stderr, flush=True)
        return True
    finally:
        if state.ahead is not None:  # failed after publishing: back to the previous site
            state.withdraw()
    print(report, flush=True)
    print("rebuild failed; still serving the previous site (open pages show why)", flush=True)
    state.fail(report)
    return False


def _settle_memory() -> None:
    """After an update: collect its garbage now, then leave what the resident site keeps
    (~120k objects: data, plan, pages) out of later collections. A full collection of them
    took ~75 ms and came at random, often while the next edit was being loaded."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


class _Server(http.server.HTTPServer):
    """An HTTP server whose connections are handled by ``workers`` threads: at most
    ``queued`` more wait for one, and any further connection is closed at once (1,000
    half-open requests once held 1,001 threads)."""

    request_queue_size = 128  # the listen backlog (5 dropped connections of a busy page)

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[http.server.BaseHTTPRequestHandler],
        workers: int = WORKERS,
        queued: int = QUEUED,
    ) -> None:
        # Before binding: a failed bind calls server_close, which needs them.
        self.workers = workers
        self._slots = threading.Semaphore(workers + queued)
        self._connections: queue.SimpleQueue[tuple[Request, Address, float] | None] = (
            queue.SimpleQueue()
        )
        self._handling = threading.local()  # each handler thread's connection's accept time
        super().__init__(address, handler)
        for n in range(workers):
            threading.Thread(target=self._work, name=f"jouleboard-serve-{n}", daemon=True).start()

    def process_request(self, request: Request, client_address: Address) -> None:
        if self._slots.acquire(blocking=False):
            self._connections.put((request, client_address, time.monotonic()))
        else:
            self.shutdown_request(request)

    def accepted(self) -> float:
        """When the connection this thread handles was accepted (monotonic): its time
        limits count from then, the time it waited for a thread included."""
        return float(self._handling.accepted)

    def _work(self) -> None:
        while (connection := self._connections.get()) is not None:
            request, client_address, self._handling.accepted = connection
            try:
                self.finish_request(request, client_address)
            except Exception:
                self.handle_error(request, client_address)
            finally:
                self.shutdown_request(request)
                self._slots.release()

    def server_close(self) -> None:
        super().server_close()
        for _ in range(self.workers):  # each ends after the connections queued before
            self._connections.put(None)

    def handle_error(self, request: Request, client_address: Address) -> None:
        """A client that went away or stalled (or any request that failed): one line, no
        traceback."""
        error = sys.exc_info()[1]
        if not isinstance(error, (ConnectionError, TimeoutError)):
            print(
                f"request from {client_address[0]} failed: {type(error).__name__}: {error}",
                flush=True,
            )


def listen(
    host: str,
    port: int,
    out: Path,
    state: _State,
    workers: int = WORKERS,
    timeout_s: float = CONNECTION_TIMEOUT_S,
    deadline_s: float = REQUEST_DEADLINE_S,
    total_s: float = CONNECTION_DEADLINE_S,
) -> http.server.HTTPServer:
    """Bind first, so a port in use fails in a second instead of after a full build; warn
    when other machines can reach the preview."""
    try:
        handler = _handler(out, state, timeout_s, deadline_s, total_s)
        server = _Server((host, port), handler, workers)
    except OSError as e:
        hint = (
            "pass another --port (0 picks a free one)"
            if e.errno == errno.EADDRINUSE
            else "check --host (for example 127.0.0.1 or 0.0.0.0) and --port"
        )
        raise OSError(
            e.errno, f"cannot listen on {host}:{port}: {e.strerror or e}; {hint}"
        ) from None
    address = str(server.server_address[0])
    if not ipaddress.ip_address(address).is_loopback:
        print(
            f"warning: listening on {address}, so other machines can reach this preview; it "
            "is meant for this one (--host 127.0.0.1). Requests must name localhost, "
            "this machine or its address.",
            file=sys.stderr,
            flush=True,
        )
    return server


def serve(
    data_dir: Path,
    out: Path,
    port: int = 8000,
    interval_s: float = 0.1,
    max_seconds: float | None = None,
    host: str = "127.0.0.1",
    open_browser: bool = False,
) -> None:
    """Build, serve and watch until interrupted (or for ``max_seconds``, for tests);
    ``interval_s``: how often files are polled where inotify is missing."""
    project = find_project(data_dir)
    state = _State()
    server = listen(host, port, out, state)
    roots: Sequence[Path] = [
        data_dir,
        *(project / folder for folder in ("templates", "content", "static")),
    ]
    watcher = watch(roots, out, interval_s)  # before the first build: an edit during it counts
    try:
        live = LiveSite(data_dir, out, project, DEFAULT_CACHE)
        if not _update(live, state, Changes(), first=True) and not out.exists():
            raise SystemExit(1)
        live.warm_up()
        _settle_memory()
    except BaseException:
        watcher.close()
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
            left = 1.0 if max_seconds is None else max_seconds - (time.monotonic() - started)
            changed = watcher.changes(timeout=max(0.0, min(1.0, left)))
            if changed:
                _update(live, state, Changes.of(changed, data_dir, project))
                _settle_memory()
    except KeyboardInterrupt:
        pass
    finally:
        watcher.close()
        server.shutdown()
        server.server_close()
