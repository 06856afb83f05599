"""Suite-wide test selection: ``python -m pytest -m "not slow"`` runs the fast unit tests.

A test is ``slow`` when it builds a site, renders charts with vl-convert, drives a browser or
builds the wheel: the modules below do (each builds at least one site or calls vl-convert),
and so does everything marked ``browser`` or ``package``. The site builds that are the same
for several modules are shared through :func:`tests.sitebuild.built_site` (once per run).
"""

from __future__ import annotations

from pathlib import Path

import pytest

SLOW_MODULES = frozenset({
    "test_atomic_build", "test_cli_and_import", "test_concurrent_builds", "test_content_files",
    "test_diffusion",
    "test_embed", "test_export", "test_golden", "test_hostile_corpus", "test_html_valid",
    "test_incremental_and_serve", "test_links", "test_out_safety", "test_package",
    "test_quality", "test_releases", "test_serve_robust", "test_write_spool", "test_xss_static",
    "test_model_sources", "test_require_prometheus", "test_third_kind",
})
_ALWAYS_SLOW = ("browser", "package")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = Path(str(item.fspath)).stem
        if module in SLOW_MODULES or any(item.get_closest_marker(m) for m in _ALWAYS_SLOW):
            item.add_marker(pytest.mark.slow)
