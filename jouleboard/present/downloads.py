"""CSV and JSON files from flat records (each kind defines its records: jouleboard/kinds/)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any


def to_csv(columns: Sequence[str], records: Sequence[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue()


def to_json(records: Sequence[dict[str, Any]]) -> str:
    """Records in column order (not sorted), strict JSON."""
    return json.dumps(list(records), indent=2, allow_nan=False, ensure_ascii=False) + "\n"
