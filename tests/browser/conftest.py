"""Fixtures for the browser tests: the built site on a local HTTP server and a real Chromium.

The plain sync Playwright API is used: no dependency on pytest-playwright, and the fixture names
stay clear of its (and pytest-base-url's) ``browser``, ``context``, ``page`` and ``base_url``.
Browser lookup: ``$JOULEBOARD_CHROMIUM``, then Debian's ``chromium-headless-shell``, then
``/usr/bin/chromium``, then Playwright's own bundled browser (see :func:`launch_chromium`).
When none can be launched the browser tests are skipped, except under CI (``CI`` set), where
they fail.

Nothing leaves the machine: Chromium sends every request for another host to a proxy on a
closed local port (see :data:`LAUNCH_ARGS`; loopback is never proxied), so such a request fails
at once, and :func:`watch` records it. No request is intercepted with Playwright routing:
routing turns off the browser's HTTP cache, and without it every page load fetched and
compiled the 0.9 MB Vega bundle again (the whole-site pass took twice as long).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import http.server
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

import pytest

from tests.missing_tool import missing_tool

LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    # Port 9 (discard) has no listener here: a request sent to this proxy is refused at once.
    # Chromium's own default never proxies loopback, so the test servers are reached directly
    # (Playwright's proxy= option would proxy loopback too).
    "--proxy-server=http://127.0.0.1:9",
]
LOCAL_HOST = "127.0.0.1"
# Debian's Chromium, in the order tried: its headless shell first (the package
# chromium-headless-shell, built from the same source and version as chromium), then the
# whole browser. The shell is Chromium's own headless build (Blink and V8 without the
# browser's windowing and UI), which Playwright itself launches for headless Chromium: it ran
# the browser tests in 157 s against 185 s, the browser process using half the CPU.
SYSTEM_CHROMIUM = (Path("/usr/bin/chromium-headless-shell"), Path("/usr/bin/chromium"))


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    # Keep-alive: a page's dozen requests share one connection instead of one each.
    protocol_version = "HTTP/1.1"
    # The handler writes a response's headers and its body apart. On a kept-alive connection
    # Nagle's algorithm held the body until the browser acknowledged the headers, which it
    # delays by up to 40 ms: the walk of the 230 pages (tour.py) took 38 s, 26 s without.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A navigation that cancels a pending download resets the connection: not an error.
        pass


@pytest.fixture(scope="session")
def site_dir(default_site: Path) -> Path:
    return default_site


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve ``directory`` over HTTP on 127.0.0.1 (any free port); yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = _QuietServer((LOCAL_HOST, 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="site-server", daemon=True)
    thread.start()
    try:
        yield f"http://{LOCAL_HOST}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def site_url(site_dir: Path) -> Iterator[str]:
    """The built site served over HTTP on 127.0.0.1 (any free port), without a trailing slash."""
    with serve(site_dir) as url:
        yield url


def _no_browser(message: str) -> NoReturn:
    missing_tool(f"no browser could be launched: {message}")


def launch_chromium(playwright: Any) -> tuple[Any, list[str]]:
    """(A headless Chromium, or None; why each executable tried failed). Tried in order:
    ``$JOULEBOARD_CHROMIUM``, else Debian's (:data:`SYSTEM_CHROMIUM`, each installed one),
    else Playwright's bundled browser."""
    env_path = os.environ.get("JOULEBOARD_CHROMIUM")
    installed = [str(path) for path in SYSTEM_CHROMIUM if path.exists()]
    candidates: list[str | None] = [env_path] if env_path else [*installed] or [None]
    errors = []
    # Chromium keeps files in TMPDIR while it runs, and a browser that goes down hard leaves
    # them: 32 empty .org.chromium.Chromium.* in this machine's /tmp after a day of runs.
    # Its own folder, removed when this process ends, takes them.
    temp = tempfile.mkdtemp(prefix="jouleboard-chromium-")
    atexit.register(shutil.rmtree, temp, ignore_errors=True)
    env = {**os.environ, "TMPDIR": temp}
    for executable in candidates:
        try:
            return playwright.chromium.launch(
                executable_path=executable, headless=True, args=LAUNCH_ARGS, env=env
            ), errors
        except Exception as exc:  # any launch failure: missing binary, crash, bad path
            errors.append(f"{executable or 'bundled chromium'}: {exc}".splitlines()[0])
    return None, errors


@pytest.fixture(scope="session")
def pw_browser() -> Iterator[Any]:
    """A headless Chromium, launched once per session."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        _no_browser(f"playwright is not installed ({exc})")
    try:
        playwright = sync_playwright().start()
    except Exception as exc:  # the Playwright driver itself cannot start
        _no_browser(f"playwright cannot start ({exc})".splitlines()[0])
    launched, errors = launch_chromium(playwright)
    if launched is None:
        playwright.stop()
        _no_browser("; ".join(errors))
    try:
        yield launched
    finally:
        launched.close()
        playwright.stop()


def is_local(url: str) -> bool:
    """Whether a request URL stays on this machine's test server (data:/blob: URLs are fine)."""
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about"):
        return True
    return parts.scheme in ("http", "https") and parts.hostname == LOCAL_HOST


@dataclass
class Recorder:
    """A page plus what it logged: console errors/warnings, page errors, and every request
    that reached the network stack (requests answered from the memory cache are not seen;
    a request for another host never is answered, so it is always seen)."""

    page: Any
    base_url: str
    console: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    listeners: list[tuple[Any, str, Callable[..., None]]] = field(default_factory=list)

    def goto(self, path: str, **kwargs: Any) -> Any:
        """Open a site path ('/x/'); asserts the HTTP status is 200 and returns the response."""
        response = self.page.goto(self.base_url + path, **kwargs)
        assert response is not None, f"no response for {path}"
        assert response.status == 200, f"{path}: HTTP {response.status}"
        return response

    def external_requests(self) -> list[str]:
        return sorted({url for url in self.requests if not is_local(url)})

    def errors(self) -> list[str]:
        """Console errors and uncaught page errors."""
        return [line for line in self.console if line.startswith("error:")] + self.page_errors

    def problems(self) -> list[str]:
        """Console errors and warnings, and uncaught page errors."""
        return self.console + self.page_errors

    def unwatch(self) -> None:
        """Stop recording (the page and its context may serve another test)."""
        for target, event, handler in self.listeners:
            target.remove_listener(event, handler)
        self.listeners.clear()


def watch(context: Any, page: Any, base_url: str) -> Recorder:
    """Record ``page``'s console messages and errors and its context's requests."""
    rec = Recorder(page=page, base_url=base_url)

    def on_console(message: Any) -> None:
        if message.type in ("error", "warning"):
            where = message.location.get("url", "") if message.location else ""
            rec.console.append(f"{message.type}: {message.text} ({where} on {page.url})")

    rec.listeners += [
        (page, "console", on_console),
        (page, "pageerror", lambda error: rec.page_errors.append(f"{error} (on {page.url})")),
        # Requests for other hosts go to the dead proxy (LAUNCH_ARGS) and fail: recorded here.
        (context, "request", lambda request: rec.requests.append(request.url)),
    ]
    for target, event, handler in rec.listeners:
        target.on(event, handler)
    return rec


@pytest.fixture
def pw_context(pw_browser: Any) -> Iterator[Any]:
    ctx = pw_browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.set_default_timeout(15_000)
    try:
        yield ctx
    finally:
        ctx.close()


# A phone's and a desktop's viewport: what the site must read well at.
SIZES = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 900}}
_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.when == "call":
        item.stash[_FAILED] = report.failed
    return report


class Tabs:
    """Pages kept per kind of browser context (its ``new_context`` options), which tests take
    in turn: a new context with its page costs about 0.2 s of CPU before it loads anything,
    and the browser tests opened 210 contexts and 266 pages when each test made its own.
    Each kind's page can have a blank probe page beside it (the same context and scheme)."""

    def __init__(self, browser: Any) -> None:
        self.browser = browser
        self._pages: dict[str, list[Any]] = {}  # kind -> [page, probe page once asked for]

    @staticmethod
    def _kind(options: dict[str, Any]) -> str:
        return repr(sorted(options.items()))

    def page(self, **options: Any) -> Any:
        kind = self._kind(options)
        if kind not in self._pages:
            self._pages[kind] = [self.browser.new_context(**options).new_page()]
        return self._pages[kind][0]

    def probe(self, **options: Any) -> Any:
        """A blank page beside :meth:`page`'s, in its context."""
        page = self.page(**options)
        pages = self._pages[self._kind(options)]
        if len(pages) == 1:
            pages.append(page.context.new_page())
        return pages[1]

    def discard(self, **options: Any) -> None:
        """Close this kind's context: its next test gets a new one."""
        pages = self._pages.pop(self._kind(options), None)
        if pages:
            pages[0].context.close()

    def close(self) -> None:
        for pages in self._pages.values():
            pages[0].context.close()
        self._pages.clear()


@pytest.fixture(scope="session")
def shared_tabs(pw_browser: Any) -> Iterator[Tabs]:
    """The session's :class:`Tabs` (one browser per pytest-xdist worker)."""
    tabs = Tabs(pw_browser)
    yield tabs
    tabs.close()


@contextlib.contextmanager
def taken_tab(
    request: pytest.FixtureRequest,
    tabs: Tabs,
    base_url: str,
    timeout: float = 20_000,
    **options: Any,
) -> Iterator[Recorder]:
    """The shared page for a context made with ``options`` (``viewport`` among them), as a
    fresh one would be: on about:blank (the last test's page and its script gone), at its
    viewport, on screen, in its colour scheme, recording for this test alone. After a
    failed test its context is closed, never handed on. (The site keeps nothing in storage
    or cookies; a test that changes its context, with routes or init scripts, takes
    pw_context instead.)"""
    page = tabs.page(**options)
    page.set_default_timeout(timeout)
    # Blank first: sized and coloured while blank, the last test's page is not laid out and
    # styled again on its way out (about 20 ms of CPU a test).
    page.goto("about:blank")
    page.set_viewport_size(options["viewport"])
    page.emulate_media(media="screen", color_scheme=options.get("color_scheme", "light"))
    rec = watch(page.context, page, base_url)
    try:
        yield rec
    finally:
        rec.unwatch()
        if request.node.stash.get(_FAILED, True):
            tabs.discard(**options)


@pytest.fixture
def site_page(
    request: pytest.FixtureRequest, shared_tabs: Tabs, site_url: str
) -> Iterator[Recorder]:
    """A page at 1280x900 that records console, page errors and requests (this test's only),
    as a new one would be (see :func:`taken_tab`)."""
    with taken_tab(request, shared_tabs, site_url, 15_000, viewport=SIZES["desktop"]) as rec:
        yield rec


@pytest.fixture(params=sorted(SIZES))
def sized_page(
    request: pytest.FixtureRequest, shared_tabs: Tabs, site_url: str
) -> Iterator[Recorder]:
    """:func:`site_page` at a phone's and at a desktop's width (the test runs at each)."""
    with taken_tab(request, shared_tabs, site_url, viewport=SIZES[request.param]) as rec:
        yield rec
