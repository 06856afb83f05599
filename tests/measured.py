"""Bounds for attack tests: a call under a time limit, and the command line in a child
process with the peak memory it took.

The child is started by a small wrapper that waits for it and reports the largest resident
set of the process tree it waited for (``RUSAGE_CHILDREN``: the child, and git or any
other process the child waited for), so a test can bound the memory an attack costs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

_MARK = "\npeak-rss-of-the-command: "
_WRAPPER = f"""
import resource, subprocess, sys
try:
    code = subprocess.run(sys.argv[2:], timeout=float(sys.argv[1])).returncode
except subprocess.TimeoutExpired:
    code = 124
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
sys.stderr.write({_MARK!r} + str(peak))
sys.exit(code)
"""
_RSS_UNIT = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, else KiB
REPO = Path(__file__).resolve().parents[1]


def run_measured(
    *args: str | Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120.0,
) -> tuple[subprocess.CompletedProcess[str], int]:
    """``python -m jouleboard ARGS``, killed after ``timeout`` seconds (status 124), and
    its peak resident memory in bytes. stderr is the command's own."""
    environment = {**(os.environ if env is None else env), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, str(timeout), sys.executable, "-m", "jouleboard"]
        + [str(a) for a in args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout + 30,
        check=False,
    )
    stderr, mark, peak = done.stderr.rpartition(_MARK)
    assert mark, f"the wrapper did not report: {done.stderr[-2000:]}"
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout, stderr), int(
        peak
    ) * _RSS_UNIT


def within(call: Callable[[], T], seconds: float) -> T:
    """``call()``, failing the test if it has not returned within ``seconds`` (it is left
    running in a daemon thread, which ends with the test process); what it raised is
    raised here."""
    results: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(call())
        except BaseException as e:  # handed to the test below
            errors.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"no result within {seconds} s (hung)"
    if errors:
        raise errors[0]
    return results[0]
