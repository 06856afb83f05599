"""Whether this process may run the kinds a site declares (Python code): the command
line's ``--allow-kind-code`` or ``JOULEBOARD_ALLOW_KIND_CODE=1``. Apart from
kinds/site_kinds.py, which loads them, so the command line sets it without importing the
schema and the kinds."""

from __future__ import annotations

import os

ALLOW_ENVIRONMENT = "JOULEBOARD_ALLOW_KIND_CODE"

_consent = {"given": False}  # by the command line's --allow-kind-code (allow_kind_code)


def allow_kind_code(allowed: bool = True) -> None:
    """The person running this process consents to running the kinds sites declare (the
    command line's ``--allow-kind-code``), for every data folder it loads."""
    _consent["given"] = allowed


def kind_code_allowed() -> bool:
    """Whether this process may run a site's kind code without being asked per call."""
    return _consent["given"] or os.environ.get(ALLOW_ENVIRONMENT) == "1"
