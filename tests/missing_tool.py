"""What a test does when a tool outside Python is missing (Node.js, an npm package of
tools/htmlvalidate, a browser): skip on a developer's machine, fail under CI (``CI`` set),
where every tool the README's test command installs must be there."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def missing_tool(message: str) -> NoReturn:
    """Skip the test with ``message`` (what is missing and how to install it), or fail it
    under CI."""
    if os.environ.get("CI"):
        pytest.fail(f"CI is set but {message}", pytrace=False)
    pytest.skip(message)
