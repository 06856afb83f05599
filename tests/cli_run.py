"""``jouleboard ARGS`` run in the test's own process, seen as a test sees a new process:
its exit status, its stdout and its stderr (a :class:`subprocess.CompletedProcess`).

A new interpreter costs about a second of imports (pydantic, jinja2) per command, which
test after test was minutes of every run. Here the command line's own ``main`` runs with
the working folder, environment, standard streams and process-wide settings of a fresh
process, and everything is put back afterwards:

- what it writes to ``sys.stdout`` and ``sys.stderr`` is captured as UTF-8 text, the
  streams are no terminal (as pipes are) and stdin is empty;
- ``SystemExit`` (argparse's errors, ``--version``) gives its status; an exception that
  escapes ``main`` is printed as the interpreter prints it, a ``Traceback`` on stderr with
  status 1, so a test's "no traceback" check still sees it (Ctrl-C and a failing test's
  own exceptions, which are no ``Exception``, still stop the test);
- the consent to run kind code (``--allow-kind-code``) is withdrawn after each command;
- a command still running after ``timeout`` seconds is stopped and fails the test.

Hostile inputs that need a memory limit run in :class:`Bounded`: one process of its own
under the limit, running their commands one after another, each with its own timeout.
Tests that depend on a fresh interpreter start a real process instead: which modules are
imported, signals and kills, ``serve``, code a site declares (its kinds), and the
Python-level trust a process gives chart templates.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import resource
import signal
import subprocess
import sys
import threading
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import FrameType
from typing import TextIO

import pytest

_REPO = Path(__file__).resolve().parents[1]


class _Overran(BaseException):
    """Raised in the command by the timer: not an Exception, so no handler of its swallows it."""


def jouleboard(
    *args: str | Path,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 300.0,
) -> subprocess.CompletedProcess[str]:
    """``jouleboard ARGS`` in this process, in the folder ``cwd`` (else this one), with
    the variables of ``env`` set in the environment."""
    from jouleboard.cli import main
    from jouleboard.core.consent import allow_kind_code

    argv = [str(a) for a in args]
    out, err = _stream(), _stream()
    code: int
    with _fresh_process(cwd, env or {}, out, err), _deadline(timeout, argv):
        try:
            code = main(argv)
        except SystemExit as e:
            code = _exit_status(e, err)
        except Exception:  # what the interpreter prints for an uncaught exception
            traceback.print_exc(file=err)
            code = 1
        finally:
            allow_kind_code(False)
    return subprocess.CompletedProcess(["jouleboard", *argv], code, _text(out), _text(err))


def _stream() -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    raw = stream.buffer
    assert isinstance(raw, io.BytesIO)
    return raw.getvalue().decode("utf-8")


def _exit_status(exit: SystemExit, err: io.TextIOWrapper) -> int:
    """The status ``sys.exit(code)`` gives a process: a message is printed, status 1."""
    if exit.code is None:
        return 0
    if isinstance(exit.code, int):
        return exit.code
    print(exit.code, file=err)
    return 1


@contextlib.contextmanager
def _fresh_process(
    cwd: Path | str | None,
    env: Mapping[str, str],
    out: io.TextIOWrapper,
    err: io.TextIOWrapper,
) -> Iterator[None]:
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved = sys.stdin, sys.stdout, sys.stderr
    try:
        os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin, sys.stdout, sys.stderr = io.StringIO(""), out, err
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


@contextlib.contextmanager
def _deadline(seconds: float, argv: list[str]) -> Iterator[None]:
    """Stops the command after ``seconds`` (a timer signal; in the main thread only, where
    pytest runs tests) and fails the test."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def overran(signum: int, frame: FrameType | None) -> None:
        raise _Overran

    before = signal.signal(signal.SIGALRM, overran)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except _Overran:
        pytest.fail(f"jouleboard {' '.join(argv)} did not end within {seconds} s", pytrace=False)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)


class Bounded:
    """Commands run one after another in one process of their own under an address-space
    limit, each with its own timeout: for hostile inputs, where a regression could eat the
    machine's memory, without a new interpreter (and its second of imports) per command.

    A command that outlives its timeout, or a process that dies, is reported as a new
    process would be (status 124 after the timeout, else the signal's negative status), and
    the next command starts a new process.
    """

    _CHILD = (
        "import sys\n"
        "from tests.cli_run import serve_commands\n"
        "serve_commands(sys.stdin, sys.stdout)\n"
    )

    def __init__(self, memory_bytes: int) -> None:
        self.memory_bytes = memory_bytes
        self._process: subprocess.Popen[str] | None = None
        self._answers: queue.Queue[str | None] = queue.Queue()

    def __call__(
        self,
        *args: str | Path,
        cwd: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 60.0,
    ) -> subprocess.CompletedProcess[str]:
        argv = [str(a) for a in args]
        process = self._started()
        assert process.stdin is not None
        job = {"args": argv, "cwd": str(cwd or os.getcwd()), "env": dict(env or {})}
        process.stdin.write(json.dumps(job) + "\n")
        process.stdin.flush()
        try:
            answer = self._answers.get(timeout=timeout)
        except queue.Empty:
            self.close()
            return subprocess.CompletedProcess(["jouleboard", *argv], 124, "", "")
        if answer is None:  # the process died: its status, as a new process's would be
            process.wait()
            self._process = None
            return subprocess.CompletedProcess(["jouleboard", *argv], process.returncode, "", "")
        done = json.loads(answer)
        return subprocess.CompletedProcess(
            ["jouleboard", *argv], done["status"], done["stdout"], done["stderr"]
        )

    def _started(self) -> subprocess.Popen[str]:
        if self._process is not None:
            return self._process
        limit = self.memory_bytes

        def bounded() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        self._answers = queue.Queue()
        self._process = subprocess.Popen(
            [sys.executable, "-c", self._CHILD],
            cwd=_REPO,
            env={**os.environ, "PYTHONPATH": str(_REPO)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            preexec_fn=bounded,
        )
        answers, out = self._answers, self._process.stdout
        assert out is not None

        def read() -> None:
            for line in out:
                answers.put(line)
            answers.put(None)

        threading.Thread(target=read, daemon=True).start()
        return self._process

    def close(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None


def serve_commands(jobs: TextIO, answers: TextIO) -> None:
    """The process of :class:`Bounded`: a JSON job per line in, a JSON answer per line out."""
    for line in jobs:
        job = json.loads(line)
        done = jouleboard(*job["args"], cwd=job["cwd"], env=job["env"], timeout=1e6)
        answers.write(
            json.dumps({"status": done.returncode, "stdout": done.stdout, "stderr": done.stderr})
            + "\n"
        )
        answers.flush()
