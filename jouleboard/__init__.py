"""jouleboard: GPU energy-efficiency leaderboards of AI models, as a static site.

``jouleboard.load("data").rank("gpqa", deadline_ms=300)`` ranks a task from a notebook (see
jouleboard.api); the API is imported on first use, so the command line starts fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"  # the one place the version is written (pyproject reads it)
__all__ = [
    "Configurations",
    "Leaderboard",
    "Problem",
    "Ranking",
    "ValidationFailed",
    "__version__",
    "load",
    "rank_task",
]

if TYPE_CHECKING:
    from jouleboard.api import Configurations, Leaderboard, Ranking, load, rank_task
    from jouleboard.core.problems import Problem, ValidationFailed


def __getattr__(name: str) -> object:
    """The API's names (typed by the import above for checkers), imported on first use:
    what it returns, and what it raises (ValidationFailed, whose ``.problems`` are
    Problems)."""
    if name in {"Configurations", "Leaderboard", "Ranking", "load", "rank_task"}:
        from jouleboard import api

        return getattr(api, name)
    if name in {"Problem", "ValidationFailed"}:
        from jouleboard.core import problems

        return getattr(problems, name)
    raise AttributeError(f"module 'jouleboard' has no attribute {name!r}")


def __dir__() -> list[str]:
    """What completion offers: the API, loaded on first use, as well as what is here."""
    return sorted({*globals(), *__all__})
