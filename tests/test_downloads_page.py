"""The downloads page states each file's real size: its labels are filled in from the
files the build made (jouleboard/plan/site.py ``sized``), so they are checked here against
the files themselves, opened from the built site. (A rebuild that takes most files from
the last build labels them as a clean build does: the rebuilt-equals-clean tests.)"""

from __future__ import annotations

import html
import re
from pathlib import Path

from tests.golden.tree import DATA

_LINK = re.compile(r'<a href="/([^"]+)" download>([^<]+)</a>')


def _as_people_read_it(size: int) -> str:
    """Decimal units, one decimal place: 812 B, 3.1 kB, 2.4 MB (written here from the
    page's own rule, not imported from the package)."""
    if size >= 1_000_000:
        return f"{size / 1_000_000:.1f} MB"
    if size >= 1000:
        return f"{size / 1000:.1f} kB"
    return f"{size} B"


def test_every_label_gives_its_files_size(golden_site: Path) -> None:
    page = (golden_site / "downloads" / "index.html").read_text(encoding="utf-8")
    links = _LINK.findall(page)
    sized = [(path, label) for path, label in links if "," in label]
    assert len(sized) >= 4  # the full data set and each task's rankings, CSV and JSON
    assert {label.split(",")[0] for _, label in sized} == {"CSV", "JSON"}
    for path, label in sized:
        size = (golden_site / html.unescape(path)).stat().st_size
        assert label.split(", ")[1] == _as_people_read_it(size), path
    # The one file that is not the build's data (the schema) is offered without a size.
    assert [label for _, label in links if "," not in label] == ["JSON"]


def test_the_working_release_and_the_full_data_set_share_their_rows() -> None:
    """The newest release's data is the working data: its permanent downloads and the full
    data set's are made from one set of rows (the largest value a plan holds), equal to
    rows made anew; another data set gets its own."""
    import dataclasses

    from jouleboard.loading.dataset import load_dataset
    from jouleboard.plan.downloads import (
        configuration_downloads,
        configuration_records,
        shared_records,
    )

    data = load_dataset(DATA)
    rows = shared_records()
    full = configuration_downloads(data, "full/{}.{}".format, "Full", "all", rows)
    release = configuration_downloads(data, "v1/{}.{}".format, "By release", "v1", rows)
    assert [d.records for d in full] == [d.records for d in release]
    assert all(a.records is b.records for a, b in zip(full, release, strict=True))
    assert [records for _, records in rows(data)] == [
        records for _, records in configuration_records(data)
    ]
    other = dataclasses.replace(data, configurations=data.configurations[:3])
    assert sum(len(records) for _, records in rows(other)) == 3


def test_only_a_release_from_git_is_called_permanent() -> None:
    """The newest release's files are the data folder's, rewritten by any edit made without
    a new release: the downloads page called them "permanent ... never rewritten"."""
    import dataclasses

    from jouleboard.config.schema import Release
    from jouleboard.core.urls import Urls
    from jouleboard.loading.dataset import load_dataset
    from jouleboard.plan.diff import Side
    from jouleboard.plan.releases import ReleaseData, release_downloads

    data = load_dataset(DATA)
    releases = [
        ReleaseData(Release(version="v2", date="2026-02-01"), Side(data)),
        ReleaseData(Release(version="v1", date="2026-01-01", ref="v1"), Side(data)),
    ]
    described = {d.path.split("/")[1]: d.description for d in release_downloads(releases, Urls())}
    assert "permanent" not in described["v2"] and "never rewritten" not in described["v2"]
    assert described["v1"].startswith("permanent: this release's data, never rewritten")
    # The kinds of task named are the data's own: a text-only data set is not "multimodal".
    text_only = dataclasses.replace(
        data,
        configurations=[c for c in data.configurations if c.task == "gpqa"],
    )
    (token, *_) = release_downloads([ReleaseData(releases[1].release, Side(text_only))], Urls())
    assert token.description.endswith("(text)"), token.description


def test_the_csv_files_are_as_the_page_says(golden_site: Path) -> None:
    """The page states the CSV files' encoding and line ends (it named only the JSON
    schema); every CSV the site publishes is checked against that statement."""
    page = (golden_site / "downloads" / "index.html").read_text(encoding="utf-8")
    assert "UTF-8 without a byte-order mark, comma-separated, one header row, LF" in page
    files = sorted(golden_site.rglob("*.csv"))
    assert len(files) >= 10
    for path in files:
        raw = path.read_bytes()
        raw.decode("utf-8")  # raises if it is not UTF-8
        assert not raw.startswith(b"\xef\xbb\xbf") and b"\r" not in raw, path
