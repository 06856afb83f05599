"""CSV and JSON files from flat records (each kind defines its records: jouleboard/kinds/)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from jouleboard.escape import csv_text


def to_csv(columns: Sequence[str], records: Sequence[dict[str, Any]]) -> str:
    """CSV download: text cells a spreadsheet would run as formulas are neutralised."""
    return csv_text(columns, records)


def to_json(records: Sequence[dict[str, Any]]) -> str:
    """Records in column order (not sorted), strict JSON."""
    return json.dumps(list(records), indent=2, allow_nan=False, ensure_ascii=False) + "\n"
