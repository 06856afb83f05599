"""The command line ends its process without the interpreter's teardown (cli.exit_now), yet
as a normal exit would end it: the ``atexit`` functions run, stdout and stderr are flushed,
the status is the command's, a thread still running is waited for, and a stream that cannot
be flushed is reported as Python reports it. A real build through ``python -m jouleboard``
leaves no temporary folder and takes the short way out."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GOLDEN_DATA = REPO / "tests" / "golden" / "data"


def python(
    code: str, tmp_path: Path, env: dict[str, str] | None = None, **kwargs: object
) -> subprocess.CompletedProcess[str]:
    """``code`` in a new interpreter whose working folder is ``tmp_path``, its stdout
    buffered (whatever PYTHONUNBUFFERED says here) and captured unless ``kwargs`` say
    where it goes."""
    env = {k: v for k, v in (env or os.environ).items() if k != "PYTHONUNBUFFERED"}
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=tmp_path,
        text=True,
        timeout=120,
        env={**env, "PYTHONPATH": str(REPO)},
        **({"capture_output": True} | kwargs),
    )


def test_atexit_functions_run_and_the_streams_are_flushed(tmp_path: Path) -> None:
    done = python(
        """
        import atexit, sys
        from jouleboard.cli import exit_now
        atexit.register(lambda: open("atexit-ran", "w").close())
        sys.stdout.write("no newline, still in the buffer")
        sys.stderr.write("and on stderr")
        exit_now(3)
        """,
        tmp_path,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        3,
        "no newline, still in the buffer",
        "and on stderr",
    )
    assert (tmp_path / "atexit-ran").exists()


def test_the_teardown_is_skipped(tmp_path: Path) -> None:
    """What makes it faster: the objects a module holds are not freed one by one (a
    finalizer of one would run in a normal exit, which the second run shows)."""
    code = """
        import sys
        from jouleboard.cli import exit_now
        class Held:
            def __del__(self, open=open):  # (the builtins may be gone by then)
                open("freed", "w").close()
        held = Held()
        {end}(0)
        """
    assert python(code.format(end="exit_now"), tmp_path).returncode == 0
    assert not (tmp_path / "freed").exists()
    assert python(code.format(end="sys.exit"), tmp_path).returncode == 0
    assert (tmp_path / "freed").exists()


def test_the_command_collects_garbage_less_often_and_a_library_caller_keeps_its_own(
    tmp_path: Path,
) -> None:
    """The command's process raises the collector's first threshold (as mypy's does: a build
    frees nearly everything by reference counts); a program calling :func:`cli.main` keeps
    the thresholds it set."""
    done = python(
        f"""
        import atexit, gc
        from jouleboard import cli
        gc.set_threshold(1234, 5, 6)
        cli.main(["validate", "--data", {str(GOLDEN_DATA)!r}])
        print(gc.get_threshold())
        atexit.register(lambda: print(gc.get_threshold()))
        cli.run(["validate", "--data", {str(GOLDEN_DATA)!r}])
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    library, command = (ast.literal_eval(x) for x in done.stdout.splitlines() if x[:1] == "(")
    assert library == (1234, 5, 6)
    assert command[0] >= 100_000


def test_a_thread_still_running_is_waited_for(tmp_path: Path) -> None:
    done = python(
        """
        import threading, time
        from jouleboard.cli import exit_now
        def late():
            time.sleep(0.3)
            open("thread-finished", "w").close()
        threading.Thread(target=late).start()
        exit_now(4)
        """,
        tmp_path,
    )
    assert done.returncode == 4
    assert (tmp_path / "thread-finished").exists()


def test_a_stream_that_cannot_be_flushed_is_reported_as_python_reports_it(
    tmp_path: Path,
) -> None:
    """stdout a pipe its reader has closed, with a line still in the buffer: the status
    and message of a normal exit (Python's own: ``sys.exit`` in the same case)."""
    code = """
        import sys
        from jouleboard.cli import exit_now
        sys.stdout.write("x" * 100)
        {end}(0)
        """
    ends = {}
    for end in ("exit_now", "sys.exit"):
        read, write = os.pipe()
        os.close(read)
        try:
            done = python(
                code.format(end=end),
                tmp_path,
                stdout=write,
                stderr=subprocess.PIPE,
                capture_output=False,
            )
        finally:
            os.close(write)
        ends[end] = (done.returncode, done.stderr)
    assert ends["exit_now"] == ends["sys.exit"]
    assert ends["sys.exit"][0] == 120
    assert "BrokenPipeError" in ends["sys.exit"][1]


@pytest.mark.slow  # a build in a new process, as a reader runs it
def test_a_build_leaves_no_temporary_folder_and_no_thread(tmp_path: Path) -> None:
    """``python -m jouleboard build``: its summary on stdout, nothing left in $TMPDIR (its
    chart workers' font folder among what it made there), no warning; and a build run
    in-process leaves no thread of its own behind, so its exit is the short one."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = {**os.environ, "TMPDIR": str(temporary), "JOULEBOARD_CACHE": str(tmp_path / "cache")}
    out = tmp_path / "site"
    args = ["build", "--data", str(GOLDEN_DATA), "--out", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "jouleboard", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith("built "), done.stdout
    assert not any(word in done.stderr for word in ("Traceback", "Exception ignored", "leaked")), (
        done.stderr
    )
    assert list(temporary.iterdir()) == []
    assert (out / "index.html").is_file()

    threads = python(
        f"""
        import threading
        from jouleboard.cli import main
        assert main({[*args[:-1], str(tmp_path / "again")]!r}) == 0
        print(threading.active_count())
        """,
        tmp_path,
        env=env,
    )
    assert threads.returncode == 0, threads.stderr
    assert threads.stdout.splitlines()[-1] == "1"
