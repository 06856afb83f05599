"""Rules of site.yaml's simple fields that the command line checks too: the latency
percentiles, the ranking metrics, the URL patterns and the form of a kind entry. Apart from
the schema (pydantic, jouleboard/config/schema.py), so a command starts without importing
it."""

from __future__ import annotations

from typing import Literal

Percentile = Literal["p50", "p90", "p95", "p99"]
PERCENTILES: tuple[Percentile, ...] = ("p50", "p90", "p95", "p99")
# What a ranking can minimise (jouleboard/rank/ranking.py's objectives), per configuration.
RANK_BY = ("energy_per_token", "energy_per_response", "energy_per_correct_answer")
# site.yaml ``uncertainty.confidence`` at most: a confidence nearer 1 has a quantile (of
# (1 + confidence) / 2) that a float can no longer tell from 1, and no interval worth printing.
MAX_CONFIDENCE = 0.999999

BASE_URL_PATTERN = r"^/(\.*[A-Za-z0-9_~-][A-Za-z0-9._~-]*/)*$"
SITE_URL_PATTERN = r"^(https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?)?$"  # an origin, or empty
# site.yaml ``kinds`` entries: a .py file of the data folder (optionally ``:Name``), or
# ``package.module:Name`` (jouleboard/kinds/site_kinds.py loads them).
KIND_ENTRY_PATTERN = (
    r"^([A-Za-z0-9_][A-Za-z0-9_./-]{0,200}\.py(:[A-Za-z_][A-Za-z0-9_]{0,100})?"
    r"|[A-Za-z_][A-Za-z0-9_.]{0,200}:[A-Za-z_][A-Za-z0-9_]{0,100})$"
)
