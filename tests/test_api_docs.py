"""The Python API's documentation runs: every example of docs/api.md, and of the API's own
docstrings (what ``help(board.rank)`` shows), is run with doctest against the bundled data,
its printed output compared with what the code prints now."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

import jouleboard
import jouleboard.api

REPO = Path(__file__).resolve().parents[1]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _run(test: doctest.DocTest) -> None:
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    lines: list[str] = []
    runner.run(test, out=lines.append)
    failed, tried = runner.summarize(verbose=False)
    assert tried > 0, f"no example in {test.name}"
    assert failed == 0, "".join(lines)


@pytest.fixture
def in_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """The examples name data/ relatively and print tables as wide as COLUMNS."""
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("COLUMNS", "100")


def test_every_example_of_the_api_page_runs(in_checkout: None) -> None:
    text = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 6
    # One session, as a notebook runs the page top to bottom; a blank line ends each block.
    session = "\n".join(block.rstrip("\n") + "\n" for block in blocks)
    _run(doctest.DocTestParser().get_doctest(session, {}, "docs/api.md", "docs/api.md", 0))


def test_every_public_function_and_method_is_documented_with_an_example(
    in_checkout: None,
) -> None:
    """help() shows each one's parameters and an example that runs."""
    board = jouleboard.load("data")
    public = [
        jouleboard.load,
        jouleboard.api.Leaderboard.rank,
        jouleboard.api.Leaderboard.configurations,
        jouleboard.api.Leaderboard.mlperf,
        jouleboard.api.Leaderboard.tasks,
    ]
    finder = doctest.DocTestFinder(recurse=False)
    for thing in public:
        target = thing.fget if isinstance(thing, property) else thing
        assert target.__doc__ and ">>>" in target.__doc__, target
        (test,) = finder.find(
            target, target.__qualname__, globs={"board": board, "jouleboard": jouleboard}
        )
        _run(test)
    for method in ("rank", "configurations", "mlperf"):  # each parameter is explained
        doc = getattr(jouleboard.api.Leaderboard, method).__doc__ or ""
        code = getattr(jouleboard.api.Leaderboard, method).__code__
        for name in code.co_varnames[1 : code.co_argcount]:
            assert re.search(rf"^\s*{name}: ", doc, flags=re.M), (method, name)
