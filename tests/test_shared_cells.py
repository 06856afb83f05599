"""Table cells are values, and the columns whose values repeat share one Cell per value
(rank/tables.py: at 100,000 configurations ~800,000 cells, ~100 MB while planning): equal
values give one object, while a value keeps its own type (1, 1.0 and True print and
export differently)."""

from __future__ import annotations

import pickle

import pytest

from jouleboard.core.urls import Urls
from jouleboard.loading.dataset import load_dataset
from jouleboard.plan.site import plan_site
from jouleboard.rank.tables import Cell, Column, Field, Table, field_cell
from tests.golden.tree import DATA

REPEATING = ("gpu", "weight_precision", "max_num_seqs", "parallel")


def tables(value: object) -> list[Table]:
    """Every table in a page body (dataclasses, tuples, lists and dicts walked)."""
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Table):
            found.append(item)
        elif isinstance(item, tuple | list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif hasattr(item, "__dataclass_fields__"):
            stack.extend(getattr(item, name) for name in item.__dataclass_fields__)
    return found


@pytest.mark.slow  # plans the golden site
def test_equal_cells_of_repeating_columns_are_one_object() -> None:
    """In the tables of configurations (every model page's, and the tasks' rankings)."""
    urls = Urls()
    plan = plan_site(load_dataset(DATA), urls)
    cells: dict[str, list[object]] = {key: [] for key in REPEATING}
    for page in plan.pages:
        if page.path == urls.models_index:  # the models, not their configurations
            continue
        for table in tables(page.body):
            for row in table.rows:
                for column, cell in zip(table.columns, row, strict=True):
                    if column.key in cells:
                        cells[column.key].append(cell)
    for key, found in cells.items():
        values = {(c.value, c.display, c.href, c.note) for c in found}  # type: ignore[attr-defined]
        assert len(found) > 2 * len(values) > 2, key  # the column repeats its values
        assert len({id(c) for c in found}) == len(values), key


def test_a_shared_cell_keeps_its_values_type() -> None:
    field = Field(Column("n", "N"), "int")
    made = [field_cell(field, None, {"n": value}, Urls()) for value in (1, True, 1, 1.0)]  # type: ignore[arg-type]
    assert [type(c.value) for c in made] == [int, bool, int, float]
    assert [c.display for c in made] == ["1", "True", "1", "1"]
    assert made[0] is made[2] and made[0] is not made[1]


@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_a_cell_pickles_to_an_equal_cell_of_the_same_types(protocol: int) -> None:
    """Cells are pickled for the pages' keys (engine/fresh.py) as a tuple of their fields:
    each field comes back to its own place, with its own type."""
    cells = [
        Cell(1, "1"),
        Cell(True, "True", "/models/a/", "note"),
        Cell(1.0, "1.0", None, "n"),
        Cell(None, "–"),
        Cell("b200", "B200", "/gpus/b200/"),
    ]
    back = pickle.loads(pickle.dumps(cells, protocol))
    assert back == cells
    for cell, copy in zip(cells, back, strict=True):
        assert [type(getattr(copy, f)) for f in ("value", "display", "href", "note")] == [
            type(getattr(cell, f)) for f in ("value", "display", "href", "note")
        ]
