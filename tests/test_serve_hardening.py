"""`jouleboard serve` answers this machine only, and only with the preview's own files
(issue 25 item 14): a request naming another host (DNS rebinding) is refused, no folder is
listed, no symbolic link in the preview folder is followed, slow clients hold a bounded
number of threads for a bounded time, and listening beyond loopback prints a warning.

The server runs in this process on a free port (listen() binds, as serve does before its
build) over a small preview folder, with no build; every client socket has a timeout, and
requests go to 127.0.0.1 only.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from jouleboard.engine import serve

SECRET = "secret outside the preview folder"


@pytest.fixture
def preview(tmp_path: Path) -> Path:
    out = tmp_path / "preview"
    (out / "models" / "a").mkdir(parents=True)
    (out / "index.html").write_text("<p>home</p>")
    (out / "models" / "a" / "index.html").write_text("<p>model a</p>")
    (out / "bare").mkdir()  # a folder without index.html
    (out / "bare" / "listed-name.txt").write_text("x")
    (tmp_path / "outside.txt").write_text(SECRET)
    return out


@contextmanager
def running(out: Path, host: str = "127.0.0.1", **options: Any) -> Iterator[int]:
    """The preview server on a free port of ``host``, stopped on leaving."""
    server = serve.listen(host, 0, out, serve._State(), **options)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def get(
    port: int, path: str = "/", host: str | None = None, timeout: float = 10
) -> tuple[int, str]:
    """Status and body of a GET to 127.0.0.1:``port`` with the Host header ``host``."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {} if host is None else {"Host": host}
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        connection.close()


def test_a_request_naming_another_host_is_refused(preview: Path) -> None:
    with running(preview) as port:
        for host in (
            "evil.example",
            f"evil.example:{port}",
            f"localhost.evil.example:{port}",
            "127.0.0.1.evil.example",
            f"user@localhost:{port}",
            "",
        ):
            status, body = get(port, "/", host)
            assert status == 421, host
            assert "home" not in body and "localhost, 127.0.0.1, [::1]" in body
        status, body = get(port, "/__jouleboard__/version", "evil.example")
        assert status == 421
        for host in (
            f"localhost:{port}",
            f"127.0.0.1:{port}",
            f"[::1]:{port}",
            "localhost",
            f"LOCALHOST:{port}",
        ):
            assert get(port, "/", host) == (200, "<p>home</p>"), host


def test_a_folder_without_index_html_is_not_listed(preview: Path) -> None:
    with running(preview) as port:
        for path in ("/bare/", "/bare"):
            status, body = get(port, path)
            assert status == 404, path
            assert "listed-name" not in body
        assert get(port, "/models/a/") == (200, "<p>model a</p>")
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", "/models/a")
        response = connection.getresponse()
        assert (response.status, response.getheader("Location")) == (301, "/models/a/")
        connection.close()


def test_no_symbolic_link_in_the_preview_folder_is_followed(preview: Path, tmp_path: Path) -> None:
    (preview / "root").symlink_to("/")
    (preview / "outside.txt").symlink_to(tmp_path / "outside.txt")
    (preview / "linked").mkdir()
    (preview / "linked" / "index.html").symlink_to(tmp_path / "outside.txt")
    (preview / "home.html").symlink_to(preview / "index.html")  # even one that stays inside
    with running(preview) as port:
        for path in (
            "/root/etc/passwd",
            "/root/etc/hostname",
            "/root/",
            "/root",
            "/outside.txt",
            "/linked/",
            "/linked/index.html",
            "/home.html",
        ):
            status, body = get(port, path)
            assert status == 404, path
            assert SECRET not in body and "root:" not in body
        assert get(port, "/") == (200, "<p>home</p>")


def test_a_fifo_in_the_preview_folder_is_not_waited_for(preview: Path) -> None:
    os.mkfifo(preview / "pipe.html")
    with running(preview) as port:
        assert get(port, "/pipe.html")[0] == 404  # get's 10 s timeout: no hang


def half_open(port: int, count: int) -> list[socket.socket]:
    """``count`` connections that each send half a request line and then nothing."""
    clients = []
    for _ in range(count):
        client = socket.create_connection(("127.0.0.1", port), timeout=10)
        client.sendall(b"GET / HTTP/1.1\r\n")
        clients.append(client)
    return clients


def test_200_half_open_connections_do_not_take_200_threads(preview: Path) -> None:
    before = threading.active_count()
    with running(preview) as port:
        clients = half_open(port, 200)
        try:
            time.sleep(1.0)  # the server has accepted them all by now
            started = threading.active_count() - before
        finally:
            for client in clients:
                client.close()
    # serve_forever's thread, and the handler threads of the pool, whatever the clients do
    assert started <= getattr(serve, "WORKERS", 32) + 1, started


def test_a_slow_client_is_dropped_after_the_timeout(preview: Path) -> None:
    with running(preview, timeout_s=0.5) as port:
        (client,) = half_open(port, 1)
        try:
            assert client.recv(1024) == b""  # closed by the server, well before 10 s
        finally:
            client.close()
        assert get(port, "/") == (200, "<p>home</p>")  # and the server serves on


def test_a_client_dripping_its_headers_is_dropped_at_the_deadline(preview: Path) -> None:
    """Each byte within the per-read timeout, the request never complete: the total deadline
    ends it (before: a byte every 14 s held a handler thread for as long as it went on)."""
    with running(preview, timeout_s=1.0, deadline_s=1.5) as port:
        client = socket.create_connection(("127.0.0.1", port), timeout=10)
        started = time.monotonic()
        closed_after = None
        try:
            client.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            for _ in range(20):  # 10 s of drip, far past the deadline
                time.sleep(0.5)
                try:
                    client.sendall(b"X-Drip: 1\r\n")
                except OSError:  # the server closed the connection
                    closed_after = time.monotonic() - started
                    break
            if closed_after is None:
                client.settimeout(0.5)
                with contextlib.suppress(OSError):
                    if client.recv(1024) == b"":
                        closed_after = time.monotonic() - started
        finally:
            client.close()
        assert closed_after is not None and closed_after < 5.0, closed_after
        assert get(port, "/") == (200, "<p>home</p>")  # and the server serves on


def test_a_public_bind_warns_and_still_checks_the_host(
    preview: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with running(preview, host="0.0.0.0") as port:
        err = capsys.readouterr().err
        assert err.startswith(
            "warning: listening on 0.0.0.0, so other machines can reach this preview"
        )
        assert get(port, "/", f"127.0.0.1:{port}") == (200, "<p>home</p>")
        assert get(port, "/", f"192.0.2.7:{port}") == (200, "<p>home</p>")  # an address
        assert get(port, "/", f"evil.example:{port}")[0] == 421
    with running(preview):
        assert "warning" not in capsys.readouterr().err


def _drip(clients: list[socket.socket], stop: threading.Event, every: float) -> None:
    """A header byte to each client every ``every`` seconds (within the per-read timeout),
    the request never complete, until ``stop`` or the server drops it."""
    while not stop.wait(every):
        for client in clients:
            with contextlib.suppress(OSError):
                client.sendall(b"X")


def _answer_time(port: int) -> float:
    """Seconds until the home page is answered (at most 30)."""
    started = time.monotonic()
    assert get(port, "/", timeout=30) == (200, "<p>home</p>")
    return time.monotonic() - started


def test_trickling_clients_hold_the_threads_no_longer_than_the_deadline(preview: Path) -> None:
    """Issue 41 item 9: every handler thread busy with a client that drips its headers, and
    ten times as many queued behind them. Before, each was dropped ``deadline_s`` after a
    thread took it, so the queue drained a thread-load at a time (here ~10 s; 288 clients
    held serve for minutes); now the deadline counts from the connection's accept, and a
    request sent after them is answered once the first deadline has passed."""
    workers, deadline = 4, 1.0
    with running(preview, workers=workers, timeout_s=0.8, deadline_s=deadline) as port:
        clients = half_open(port, workers * 10)
        stop = threading.Event()
        dripping = threading.Thread(target=_drip, args=(clients, stop, 0.3), daemon=True)
        dripping.start()
        try:
            answered = _answer_time(port)
        finally:
            stop.set()
            dripping.join(5)
            for client in clients:
                client.close()
    assert answered < deadline + 3.0, f"answered after {answered:.1f} s"


def test_a_client_reading_the_answer_slowly_is_dropped_at_the_total(preview: Path) -> None:
    """A client that asks for a large file and reads it slowly, but fast enough that each of
    the server's sends ends within the per-send timeout, held the one thread for as long
    as it went on (64 MiB at 256 KiB/s: four minutes); the whole exchange now has
    ``total_s``."""
    (preview / "large.bin").write_bytes(bytes(64 * 1024 * 1024))
    total = 2.0
    with running(preview, workers=1, timeout_s=1.0, total_s=total) as port:
        slow = socket.create_connection(("127.0.0.1", port), timeout=10)
        slow.sendall(b"GET /large.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        stop = threading.Event()

        def read_slowly() -> None:  # 64 KiB (a send of the server's) every quarter second
            while not stop.wait(0.25):
                try:
                    if not slow.recv(64 * 1024):
                        return
                except OSError:
                    return

        reader = threading.Thread(target=read_slowly, daemon=True)
        reader.start()
        try:
            time.sleep(0.3)  # the thread is sending by now
            answered = _answer_time(port)
        finally:
            stop.set()
            reader.join(5)
            slow.close()
    assert answered < total + 3.0, f"answered after {answered:.1f} s"


def head(port: int, path: str, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", path, headers=headers or {})
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def test_a_rebuilt_file_is_never_served_from_the_browsers_cache(preview: Path) -> None:
    """Files from the preview folder carried Last-Modified alone, so Chromium showed a
    chart and a visited page from its cache after a rebuild changed them (and a second's
    resolution cannot tell two rebuilds in one second apart). The browser must now ask
    each time, and its copy is current only while the tag (size, mtime in ns) holds."""
    chart = preview / "chart.svg"
    chart.write_text("<svg>21.42</svg>")
    with running(preview) as port:
        first = head(port, "/chart.svg")
        tag = first.getheader("ETag")
        assert first.status == 200 and first.getheader("Cache-Control") == "no-cache" and tag
        assert head(port, "/chart.svg", {"If-None-Match": tag}).status == 304
        before = chart.stat()
        chart.write_text("<svg>42.83</svg>")  # the same size, within the same second
        os.utime(chart, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000))
        again = head(port, "/chart.svg", {"If-None-Match": tag})
        assert again.status == 200 and again.getheader("ETag") != tag


def test_a_long_failure_report_says_how_much_the_page_leaves_out() -> None:
    """The open pages' banner cut a failed rebuild's report at 20,000 characters, mid-line
    and with no sign: 888 problems showed as about 101 lines and no total."""
    lines = [
        f"data/measurements/f{i}.json: /gpu_model: registry.unknown-gpu: x" for i in range(888)
    ]
    report = "\n".join([*lines, "888 problem(s) in 888 file(s)"])
    shown = serve.capped(report).splitlines()
    assert len("\n".join(shown)) <= serve.ERROR_CAP
    kept = shown[:-2]
    assert kept == lines[: len(kept)]  # whole lines, in order
    assert shown[-2] == f"… and {888 - len(kept):,} more lines in the terminal"
    assert shown[-1] == "888 problem(s) in 888 file(s)"
    assert serve.capped("short\n1 problem(s) in 1 file(s)") == "short\n1 problem(s) in 1 file(s)"


def test_each_rebuild_says_its_warnings(capsys: pytest.CaptureFixture[str]) -> None:
    """A measurement in a misspelt folder (data/measurment/) is never read: `build` and
    `validate` warn of it, while serve printed only "built ..." and the run just did not
    show."""
    from jouleboard.core.problems import Problem
    from jouleboard.engine.state import BuildSummary

    unread = Problem("data/measurment", "", "file.unread", "not read", "did you mean it?")

    class Live:
        def update(self, changes: object, waiting: object, publish: object) -> BuildSummary:
            return BuildSummary(Path("site"), pages=1, warnings=(unread,))

    assert serve._update(Live(), serve._State(), None)  # type: ignore[arg-type]
    out = capsys.readouterr()
    assert out.out.startswith("built 1 pages")
    assert out.err == f"warning: {unread}\n"


def test_a_rebuild_whose_charts_cannot_be_drawn_says_why_and_keeps_serving(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A chart worker killed during a rebuild (tests/test_render_failed.py): serve prints and
    shows the build's one line, as `jouleboard build` does, not an exception's class name
    before it, and goes on serving the previous site."""
    from jouleboard.core.problems import RenderFailed

    said = "a chart worker process ended abruptly (killed by SIGKILL); nothing was written"

    class Live:
        def update(self, changes: object, waiting: object, publish: object) -> None:
            raise RenderFailed(said)

    state = serve._State()
    assert not serve._update(Live(), state, None)  # type: ignore[arg-type]
    assert capsys.readouterr().out.splitlines() == [
        f"error: {said}",
        "rebuild failed; still serving the previous site (open pages show why)",
    ]
    assert state.error == f"error: {said}"


def test_a_data_folder_moved_away_is_missing_not_unreadable(tmp_path: Path) -> None:
    """`mv data ../elsewhere` while serving: the rebuild said "file.unreadable: cannot list
    this folder ... (check its permissions ...)"; a folder that is not there is missing."""
    from jouleboard.core.problems import ValidationFailed
    from jouleboard.loading.dataset import load_dataset

    with pytest.raises(ValidationFailed) as info:
        load_dataset(tmp_path / "data")
    assert [(p.rule, p.message) for p in info.value.problems] == [
        ("file.missing", "no such file or folder")
    ]


def test_a_missing_page_is_the_sites_404_page_which_reloads(preview: Path) -> None:
    """A page open at a path an edit removed got the standard library's error page, which
    has no reload script: restoring the page never brought the tab back. The site's own
    404 page (a preview build's carries the script) is served instead, still with 404."""
    page = '<p>not here</p><script src="/__jouleboard__/reload.js"></script>'
    (preview / "404.html").write_text(page)
    with running(preview) as port:
        assert get(port, "/models/gone/") == (404, page)
        (preview / "404.html").unlink()
        status, body = get(port, "/models/gone/")
        assert status == 404 and "reload.js" not in body  # none: the plain error page


def test_pages_published_ahead_of_a_failed_rebuild_are_withdrawn() -> None:
    """serve publishes the open page before the whole site builds. When the rest then
    failed, that page stayed on screen with the new content under a banner saying "this
    page is the previous site". The status now names the version whose pages were
    withdrawn, and reload.js reloads a page loaded at it into the previous site."""
    import json

    state = serve._State()
    state.publish({"about/index.html": b"<p>SAVE-ALL-MARKER-1</p>"})
    published = json.loads(state.status())
    assert published["error"] == "" and published["withdrawn"] == ""
    state.withdraw()
    state.fail("templates/model.html: template.undefined")
    failed = json.loads(state.status())
    assert failed["withdrawn"] == published["version"] != failed["version"]
    assert state.ahead_of("about/index.html") is None  # the folder's page, the previous one
    state.fail("again, with nothing published")  # a later failure withdraws nothing new
    assert json.loads(state.status())["withdrawn"] == published["version"]
    state.built()
    assert json.loads(state.status())["withdrawn"] == ""
