"""core/frozen.py: the classes a rebuild pickles in bulk pickle as their field values, in
field order, and come back equal; a state of another length is refused as a damaged pickle
is (the kept reads then read the file again)."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from jouleboard.core.frozen import quick_pickle
from jouleboard.kinds.diffusion import DiffusionConfiguration
from jouleboard.kinds.token_records import Configuration
from jouleboard.rank.tables import Cell, Column, RowGroup, Table

QUICK = (Configuration, DiffusionConfiguration, Cell, Column, RowGroup, Table)


@pytest.mark.parametrize("cls", QUICK, ids=lambda c: c.__name__)
def test_each_class_pickles_as_its_field_values_and_back(cls: type) -> None:
    names = [f.name for f in dataclasses.fields(cls)]
    # A distinct value per field (the classes hold any values: nothing checks them).
    obj = cls.__new__(cls)
    for i, name in enumerate(names):
        object.__setattr__(obj, name, (name, i))
    assert obj.__getstate__() == tuple((name, i) for i, name in enumerate(names))
    back = pickle.loads(pickle.dumps(obj, pickle.HIGHEST_PROTOCOL))
    assert type(back) is cls
    assert [getattr(back, n) for n in names] == [(n, i) for i, n in enumerate(names)]
    assert back == obj


def test_a_real_cell_and_row_group_come_back_equal() -> None:
    for obj in (Cell(66.0, "66", "/models/x/", "org"), Cell(None, "–"), RowGroup(3, "2× H100")):
        assert pickle.loads(pickle.dumps(obj)) == obj


@pytest.mark.parametrize("state", [(1, "x"), (1, "x", None, "", "one too many")])
def test_a_state_of_another_length_is_refused(state: tuple[object, ...]) -> None:
    cell = Cell.__new__(Cell)
    with pytest.raises(ValueError):
        cell.__setstate__(state)


def test_a_class_of_one_field_or_with_a_field_named_oddly_is_refused() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class One:
        x: int

    with pytest.raises(TypeError):
        quick_pickle(One)
