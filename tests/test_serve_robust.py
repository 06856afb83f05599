"""No traceback from the CLI or serve (issue 14): Ctrl-C is one line and status 130 with the
previous site intact; --base-url is checked like site.yaml's; serve keeps serving the last
good site whatever a rebuild fails on, answers a request path holding a NUL with 400, and
never rebuilds because of its own output.

Serve runs in a subprocess on a free port of 127.0.0.1, for a bounded time, and is always
stopped in a finally block.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from jouleboard import cli
from jouleboard.engine.build import build_site
from jouleboard.engine.serve import snapshot
from tests.cli_run import jouleboard
from tests.golden.tree import DATA, REPO, tree


def site_folder(tmp_path: Path) -> Path:
    """A site folder: data, templates and content (serve watches all three)."""
    root = tmp_path / "project"
    shutil.copytree(REPO / "templates", root / "templates")
    shutil.copytree(REPO / "content", root / "content")
    shutil.copytree(DATA, root / "data")
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return site_folder(tmp_path)


# --- the CLI -----------------------------------------------------------------------------


def test_ctrl_c_is_one_line_and_status_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.COMMANDS["build"], "run", interrupted)
    try:
        status = cli.main(["build", "--data", str(DATA), "--out", str(tmp_path / "site")])
    except KeyboardInterrupt:  # caught here, or pytest would take it for the user's Ctrl-C
        pytest.fail("Ctrl-C escaped main() as a traceback")
    assert status == 130
    assert capsys.readouterr().err == "jouleboard build: interrupted\n"


def test_ctrl_c_during_a_build_leaves_the_previous_site(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build_site(project / "data", out, project=project)
    before = tree(out)
    # An empty chart cache makes the build render its charts in worker processes (cold);
    # --png makes it another build than the last (which would otherwise be up to date).
    # Ctrl-C comes once it says it renders: the build and its workers are interrupted then.
    env = {**os.environ, "JOULEBOARD_CACHE": str(tmp_path / "cold-cache")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jouleboard",
            "build",
            "--png",
            "--data",
            str(project / "data"),
            "--out",
            str(out),
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible,
    )
    try:
        assert proc.stderr is not None
        lines = []
        for line in proc.stderr:  # line-buffered: each progress line comes as it is printed
            lines.append(line)
            if line.startswith("rendering charts: "):
                break
        assert proc.poll() is None, "the build ended before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        _, rest = proc.communicate(timeout=120)
        err = "".join(lines) + rest
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == 130, err
    assert err.splitlines()[-1] == "jouleboard build: interrupted"
    assert "Traceback" not in err
    assert tree(out) == before


@pytest.mark.parametrize(
    "base_url",
    [
        "javascript:alert(1)//",
        "leaderboard/",
        "/no-slash",
        "//evil.example/",
        "/a b/",
        '/"onload="x/',
        "/../",
        "/a/./",
        "/a/../b/",
    ],
)
def test_base_url_on_the_command_line_is_checked_like_site_yaml(
    base_url: str, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    result = jouleboard("build", "--data", DATA, "--out", out, "--base-url", base_url, cwd=REPO)
    assert result.returncode == 2
    assert result.stderr.startswith("jouleboard build: error: --base-url must be a URL path")
    assert len(result.stderr.splitlines()) == 1
    assert not out.exists()


# --- serve -------------------------------------------------------------------------------


class Served:
    def __init__(self, proc: subprocess.Popen[str], url: str, lines: list[str]) -> None:
        self.proc, self.url, self.lines = proc, url, lines

    def get(self, path: str = "") -> str:
        with urllib.request.urlopen(self.url + path, timeout=10) as response:
            return str(response.read().decode())

    def version(self) -> str:
        return self.get("__jouleboard__/version")

    def output_until(self, needle: str, seconds: float) -> str:
        """Serve's output so far, read until ``needle`` appears (or the time is up)."""
        deadline = time.monotonic() + seconds
        while needle not in "".join(self.lines) and time.monotonic() < deadline:
            time.sleep(0.1)
        return "".join(self.lines)


def interruptible() -> None:
    """Ctrl-C back to its default in the child: a pytest-xdist worker ignores SIGINT, and an
    ignored signal stays ignored across exec (Python then installs no KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Lines(list[str]):
    """Serve's output, line by line, as a thread reads it."""

    reader: threading.Thread

    def complete(self) -> Lines:
        """All of it, once serve has ended (its last lines may still be on their way)."""
        self.reader.join(timeout=30)
        return self


def start_serve(data: Path, out: Path) -> tuple[subprocess.Popen[str], Lines]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-u",
            "-m",
            "jouleboard",
            "serve",
            "--data",
            str(data),
            "--out",
            str(out),
            "--port",
            "0",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=interruptible,
    )
    lines = Lines()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)

    lines.reader = threading.Thread(target=read, daemon=True)
    lines.reader.start()
    return proc, lines


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=30)


@pytest.fixture
def served(project: Path, tmp_path: Path) -> Iterator[Served]:
    proc, lines = start_serve(project / "data", tmp_path / "preview")
    try:
        deadline = time.monotonic() + 180
        while not any("serving on" in line for line in lines):
            assert proc.poll() is None, f"serve exited early: {''.join(lines)}"
            assert time.monotonic() < deadline, "serve did not start"
            time.sleep(0.1)
        line = next(line for line in lines if "serving on" in line)
        yield Served(proc, line.split("serving on ", 1)[1].split()[0], lines)
    finally:
        stop(proc)


def test_serve_answers_a_nul_in_the_path_with_400(served: Served) -> None:
    host, port = served.url.removeprefix("http://").rstrip("/").split(":")
    for path in ("/%00", "/index.html%00.png", "/%00/"):
        connection = http.client.HTTPConnection(host, int(port), timeout=10)
        connection.request("GET", path)
        assert connection.getresponse().status == 400
        connection.close()
    assert "jouleboard" in served.get()  # still serving
    time.sleep(0.5)
    assert "Traceback" not in "".join(served.lines)


def test_serve_keeps_the_last_good_site_when_a_rebuild_fails_on_a_template(
    served: Served, project: Path
) -> None:
    base = project / "templates" / "base.html"
    good = base.read_text(encoding="utf-8")
    home = served.get()
    base.write_text(good + "{% if %}", encoding="utf-8")  # a Jinja syntax error, not a data one
    output = served.output_until("still serving the previous site", 120)
    assert "templates/base.html: /: template.syntax: line " in output
    assert "still serving the previous site" in output
    assert served.proc.poll() is None, "serve exited on the failed rebuild"
    assert served.get() == home  # the previous site, byte for byte
    failed = served.version()  # moved on to wake the open pages, which show the error
    status = json.loads(served.get(f"__jouleboard__/wait?since={failed}x"))
    assert status["version"] == failed and "templates/base.html" in status["error"]
    base.write_text(good.replace("</body>", "<!-- fixed --></body>"), encoding="utf-8")
    deadline = time.monotonic() + 120
    while served.version() == failed:
        assert time.monotonic() < deadline, "no rebuild after the fix"
        time.sleep(0.2)
    assert "<!-- fixed -->" in served.get()
    assert "Traceback" not in "".join(served.lines)


def test_ctrl_c_stops_serve_quietly(served: Served) -> None:
    served.proc.send_signal(signal.SIGINT)
    served.proc.wait(timeout=30)
    time.sleep(0.3)
    assert served.proc.returncode in (0, 130)
    assert "Traceback" not in "".join(served.lines)


def test_serve_never_rebuilds_because_of_its_own_output(project: Path) -> None:
    data = project / "data"
    proc, lines = start_serve(data, data / "preview")  # --out inside a watched folder
    try:
        deadline = time.monotonic() + 180
        while not any("serving on" in line for line in lines) and proc.poll() is None:
            assert time.monotonic() < deadline, "serve neither started nor stopped"
            time.sleep(0.1)
        if proc.poll() is not None:  # refused: one line, nothing built into the data
            proc.wait(timeout=30)
            lines = lines.complete()  # the reader may not have taken its one line yet
            assert proc.returncode == 1 and "Traceback" not in "".join(lines)
            assert len(lines) == 1 and "preview" in lines[0]
            assert not (data / "preview").exists()
            return
        time.sleep(4)  # several watch intervals
        assert sum("built " in line for line in lines) == 1, "".join(lines)
    finally:
        stop(proc)


def test_the_watch_skips_the_preview_folder_and_hidden_files(tmp_path: Path) -> None:
    (tmp_path / "data" / "preview").mkdir(parents=True)
    (tmp_path / "data" / "site.yaml").write_text("x")
    (tmp_path / "data" / "preview" / "index.html").write_text("x")
    (tmp_path / "data" / ".preview.lock").write_text("x")
    seen = snapshot([tmp_path / "data"], skip=tmp_path / "data" / "preview")
    assert set(seen) == {str(tmp_path / "data" / "site.yaml")}
