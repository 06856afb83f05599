"""The importer contract's fifth rule (importers/contract.py): a re-import never replaces a
file with less than it holds, and says what it changes, field by field. Hand-made cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jouleboard.core.problems import ValidationFailed
from jouleboard.importers.contract import ImportPlan, field_changes, write_plan


def test_field_changes_by_hand() -> None:
    old = {"a": 1, "b": {"c": "x", "d": [1, 2, 3]}, "date": "2026-01-02", "e": None, "f": ""}
    new = {"a": 2, "b": {"d": [1, 2]}, "date": "unknown", "e": None, "g": "new"}
    lost, changed = field_changes(old, new)
    # c gone, the list shortened, a date made unknown; e and f held nothing.
    assert lost == ["/b/c", "/b/d (3 items, then 2)", "/date"]
    assert changed == ["/a: 1 -> 2", '/g: added "new"']
    assert field_changes({"x/y": {"~": 1}}, {"x/y": {"~": 2}})[1] == ["/x~1y/~0: 1 -> 2"]
    assert field_changes(old, old) == ([], [])


def test_a_plan_that_loses_a_field_writes_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    first = ImportPlan("import-x", files={"m/a.json": json.dumps({"id": 1, "note": "kept"})})
    assert write_plan(first, data).written == ("m/a.json",)
    poorer = ImportPlan("import-x", files={"m/a.json": json.dumps({"id": 1})})
    with pytest.raises(ValidationFailed) as refused:
        write_plan(poorer, data)
    (problem,) = refused.value.problems
    assert (problem.rule, problem.pointer) == ("import.would-lose", "/note")
    assert json.loads((data / "m/a.json").read_text())["note"] == "kept"
    richer = ImportPlan("import-x", files={"m/a.json": json.dumps({"id": 2, "note": "kept"})})
    assert write_plan(richer, data).changes == ("m/a.json /id: 1 -> 2",)
