"""Downloads in chunks (jouleboard/render/downloads.py): a build writes big CSV and JSON
files piece by piece; joined, the pieces are exactly the whole file a single dump makes,
wherever the chunk boundaries fall."""

from __future__ import annotations

import csv
import io
import json
import random

import pytest

from jouleboard.render.downloads import csv_chunks, json_chunks

COLUMNS = ("nickname", "gpu", "tokens_per_joule", "note")


def _records(n: int, seed: int) -> list[dict[str, object]]:
    rng = random.Random(seed)
    texts = ["Llama 3", "a,b", 'say "hi"', "=SUM(A1:A9)", "line\nbreak", "é 通", ""]
    return [
        {
            "nickname": rng.choice(texts),
            "gpu": rng.choice(["H100", "B200"]),
            "tokens_per_joule": rng.choice([None, 0, 1.5, 1e-9, 12345.678]),
            "note": rng.choice(texts),
        }
        for _ in range(n)
    ]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 6, 7])
@pytest.mark.parametrize("size", [1, 2, 3, 1000])
def test_json_chunks_join_to_an_indented_dump(n: int, size: int) -> None:
    records = _records(n, seed=n)
    chunks = list(json_chunks(records, size))
    assert "".join(chunks) == json.dumps(records, indent=2, ensure_ascii=False) + "\n"
    assert len(chunks) == (1 if n == 0 else -(-n // size) + 1)  # the last closes the list


@pytest.mark.parametrize("n", [0, 1, 2, 3, 6, 7])
@pytest.mark.parametrize("size", [1, 2, 3, 1000])
def test_csv_chunks_are_one_header_and_every_row_once(n: int, size: int) -> None:
    records = _records(n, seed=100 + n)
    chunks = list(csv_chunks(COLUMNS, records, size))
    assert len(chunks) == max(1, -(-n // size))
    rows = list(csv.reader(io.StringIO("".join(chunks))))
    assert rows[0] == list(COLUMNS)  # the header once, at the top
    assert len(rows) == n + 1
    for record, row in zip(records, rows[1:], strict=True):
        assert row[0].lstrip("'") == record["nickname"]  # formula cells get a leading '
        assert row[3].lstrip("'") == record["note"]
        value = record["tokens_per_joule"]
        assert row[2] == ("" if value is None else str(value))
