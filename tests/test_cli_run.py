"""tests/cli_run.py, the in-process command line most CLI tests use, gives what a new
process gives: the same status, stdout and stderr as ``python -m jouleboard`` for ordinary
commands and mistakes, a traceback for an escaping exception, a deadline for a hang, and the
test's process as it was. Its Bounded process keeps a command within its memory and time."""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jouleboard.commands import validate
from jouleboard.core.consent import kind_code_allowed
from tests.cli_run import Bounded, jouleboard

REPO = Path(__file__).resolve().parents[1]
GOLDEN_DATA = REPO / "tests" / "golden" / "data"


@pytest.mark.slow  # one new process per command, as the oracle
@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["rank", "--data", str(GOLDEN_DATA), "--task", "gpqa", "--format", "csv"],
        ["rank", "--data", str(GOLDEN_DATA), "--task", "gpqa", "--columns", "watts"],
        ["validate", "--data", str(GOLDEN_DATA), "-v"],
        ["build", "--outt", "x"],  # argparse's error and the closest option
        ["validate"],  # no data folder here
    ],
    ids=["version", "rank-csv", "bad-column", "validate", "misspelt", "no-data"],
)
def test_the_same_as_a_new_process(args: list[str], tmp_path: Path) -> None:
    cwd = REPO if args[0] != "validate" or "--data" in args else tmp_path
    env = {"COLUMNS": "120"}
    new = subprocess.run(
        [sys.executable, "-m", "jouleboard", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )
    here = jouleboard(*args, cwd=cwd, env=env)

    def same(text: str) -> str:  # -v prints each stage's time
        return re.sub(r"\d+\.\d+ s|\d+ ms", "T", text)

    assert (here.returncode, here.stdout, same(here.stderr)) == (
        new.returncode,
        new.stdout,
        same(new.stderr),
    )


def test_an_escaping_exception_is_a_traceback_and_status_1(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def broken(args: argparse.Namespace) -> int:
        raise RuntimeError("a bug")

    monkeypatch.setattr(validate, "run", broken)
    (tmp_path / "data").mkdir()
    done = jouleboard("validate", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("Traceback (most recent call last):")
    assert done.stderr.rstrip().endswith("RuntimeError: a bug")


def test_the_process_is_left_as_it_was(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: dict[str, object] = {}

    def look(args: argparse.Namespace) -> int:
        seen.update(
            cwd=os.getcwd(),
            env=os.environ.get("JB_TEST_VARIABLE"),
            consent=kind_code_allowed(),
            stdin=sys.stdin.read(),
            tty=sys.stdout.isatty() or sys.stderr.isatty(),
        )
        print("out é")
        print("err ✓", file=sys.stderr)
        return 3

    monkeypatch.setattr(validate, "run", look)
    monkeypatch.delenv("JB_TEST_VARIABLE", raising=False)
    monkeypatch.delenv("JOULEBOARD_ALLOW_KIND_CODE", raising=False)
    (tmp_path / "data").mkdir()
    before = os.getcwd(), dict(os.environ), sys.stdout, sys.stderr, sys.stdin
    done = jouleboard(
        "validate", "--allow-kind-code", cwd=tmp_path, env={"JB_TEST_VARIABLE": "set"}
    )
    assert (done.returncode, done.stdout, done.stderr) == (3, "out é\n", "err ✓\n")
    assert seen == {"cwd": str(tmp_path), "env": "set", "consent": True, "stdin": "", "tty": False}
    assert (os.getcwd(), dict(os.environ), sys.stdout, sys.stderr, sys.stdin) == before
    assert not kind_code_allowed()


def test_a_hung_command_fails_at_its_deadline(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def hang(args: argparse.Namespace) -> int:
        time.sleep(30)
        return 0

    monkeypatch.setattr(validate, "run", hang)
    (tmp_path / "data").mkdir()
    started = time.monotonic()
    with pytest.raises(pytest.fail.Exception, match=r"did not end within 0\.3 s"):
        jouleboard("validate", cwd=tmp_path, timeout=0.3)
    assert time.monotonic() - started < 10
    assert os.getcwd() != str(tmp_path)


class _Misbehaving(Bounded):
    """A Bounded whose ``validate`` does what JB_TEST_BEHAVIOUR says (its environment)."""

    _CHILD = """
import os, signal, sys, time
from jouleboard.commands import validate
def run(args):
    what = os.environ.get("JB_TEST_BEHAVIOUR")
    if what == "eat":
        return len(bytearray(4 * 1024**3))
    if what == "hang":
        time.sleep(60)
    if what == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    print("pid", os.getpid())
    return 0
validate.run = run
from tests.cli_run import serve_commands
serve_commands(sys.stdin, sys.stdout)
"""


@pytest.mark.slow  # starts three processes
def test_bounded_commands_stay_in_their_memory_and_time(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    bounded = _Misbehaving(1536 * 1024**2)
    try:

        def run(behaviour: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
            return bounded(
                "validate", cwd=tmp_path, env={"JB_TEST_BEHAVIOUR": behaviour}, timeout=timeout
            )

        first = run("")
        assert first.returncode == 0 and first.stdout.startswith("pid ")
        eaten = run("eat")  # over the limit: MemoryError, as a new process would show it
        assert eaten.returncode == 1 and "MemoryError" in eaten.stderr
        assert run("").stdout == first.stdout  # the same process runs the next command
        started = time.monotonic()
        assert run("hang", timeout=1).returncode == 124
        assert time.monotonic() - started < 30
        after_hang = run("")
        assert after_hang.returncode == 0 and after_hang.stdout != first.stdout  # a new one
        assert run("die").returncode == -signal.SIGKILL
        assert run("").returncode == 0
    finally:
        bounded.close()
