"""Records with equal provenances hold one object of it (loading/dataset.py
share_provenances: each file's parse made its own, and most files of a data set have the
same; at 100,000 configurations sharing them leaves 140 MB less in memory while planning),
and every record's provenance is still the one its own file states."""

from __future__ import annotations

import json
from dataclasses import dataclass

from jouleboard.config.schema import Provenance
from jouleboard.loading.dataset import load_dataset, share_provenances
from tests.golden.tree import DATA


def test_equal_provenances_are_one_object_and_each_is_its_files() -> None:
    records = load_dataset(DATA).configurations
    values = {c.provenance for c in records}
    assert len({id(c.provenance) for c in records}) == len(values) > 1
    assert len(records) > 3 * len(values)  # most records share theirs
    for c in records:
        runs: tuple[str, ...] = getattr(c, "run_sources", ())
        source = (runs or (c.source,))[0]  # a folded repeat's: its first run's
        stated = json.loads((DATA / source).read_text("utf-8"))["provenance"]
        assert c.provenance == Provenance.model_validate(stated), source


def test_a_record_whose_provenance_is_not_a_field_is_left_alone() -> None:
    """A kind's own record may compute its provenance (a property, no field to set)."""
    stated = Provenance(dataset="d", version="1", date="unknown", license="MIT", source="s")

    @dataclass(frozen=True)
    class Computed:
        name: str

        @property
        def provenance(self) -> Provenance:
            return Provenance(**stated.model_dump())

    @dataclass(frozen=True)
    class Fielded:
        provenance: Provenance

    computed, fielded = (
        [Computed("a"), Computed("b")],
        [Fielded(stated), Fielded(stated.model_copy())],
    )
    share_provenances([*computed, *fielded])  # type: ignore[list-item]  # no registered kind's
    assert fielded[0].provenance is fielded[1].provenance
    assert computed[0].provenance == computed[1].provenance == stated
