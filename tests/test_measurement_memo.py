"""The memo of parsed measurement files that serve reads through (jouleboard/engine/state.py
``MeasurementMemo``): a file whose status is unchanged is not parsed again, unless it was
written in the last two seconds. Two saves within one tick of the file system's clock can
leave the same status (size, times, inode) on different bytes, so only a file that has
settled is taken on its status alone."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from jouleboard.engine import state
from jouleboard.engine.state import MeasurementMemo
from jouleboard.kinds import registered
from jouleboard.loading import dataset
from tests.golden.tree import DATA

SOURCE = "measurements/gpqa/Qwen/Qwen3-8B/B200-x1-bfloat16-tp1-ep1-dp1-seqs128.json"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A data folder holding one measurement file, :data:`SOURCE`."""
    data = (tmp_path / "data").resolve()
    (data / SOURCE).parent.mkdir(parents=True)
    shutil.copyfile(DATA / SOURCE, data / SOURCE)
    return data


@pytest.fixture
def measurement(root: Path) -> Path:
    return root / SOURCE


def _resave(path: Path) -> None:
    """Save the file again in place (the same inode) with other bytes of the same length:
    its median inter-token latency one millisecond longer (47.6 ms in the golden file)."""
    text = path.read_text(encoding="utf-8")
    [number] = re.findall(r'"median_itl_ms": (\d\d)\.', text)
    edited = text.replace(f'"median_itl_ms": {number}.', f'"median_itl_ms": {int(number) + 1}.')
    assert len(edited) == len(text)
    with path.open("r+", encoding="utf-8") as f:
        f.write(edited)


def _clock_stands_still(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """From now on the file's status reads as it is now, whatever is written to it: the
    file system's clock did not tick between two saves."""
    status = os.lstat(path)
    real = os.lstat

    def lstat(target: object, *args: object, **kwargs: object) -> os.stat_result:
        if os.fspath(target) == os.fspath(path):  # type: ignore[call-overload]
            return status
        return real(target, *args, **kwargs)  # type: ignore[call-overload,no-any-return]

    monkeypatch.setattr(state.os, "lstat", lstat)


def test_a_settled_file_with_its_status_unchanged_is_not_parsed_again(
    root: Path, measurement: Path, parsed: list[Path]
) -> None:
    long_ago = os.lstat(measurement).st_mtime_ns - 60 * 10**9
    os.utime(measurement, ns=(long_ago, long_ago))
    memo, known = MeasurementMemo(), registered()
    first = memo.read(measurement, root, known)
    assert memo.read(measurement, root, known) is first
    assert parsed == [measurement]
    os.utime(measurement, ns=(long_ago + 10**9, long_ago + 10**9))  # touched: read again
    assert memo.read(measurement, root, known) == first
    assert parsed == [measurement, measurement]


def test_a_file_saved_twice_within_one_tick_is_read_again(
    root: Path, measurement: Path, parsed: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    memo, known = MeasurementMemo(), registered()
    first = memo.read(measurement, root, known)
    _clock_stands_still(monkeypatch, measurement)
    _resave(measurement)
    again = memo.read(measurement, root, known)
    assert parsed == [measurement, measurement]
    assert again != first
    assert again == dataset.read_measurement(measurement, root, known)
    # What the two seconds guard against: a memo that trusted the status at once would
    # have kept the first bytes' parse.
    monkeypatch.setattr(state, "RECENT_NS", -1)
    _resave(measurement)
    assert memo.read(measurement, root, known) is again
