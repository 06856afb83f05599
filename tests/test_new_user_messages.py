"""The messages a new user met that did not help (issue 39, item 8), each as that user
produced it: in a folder made by ``jouleboard init``, through the command line in-process."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from jouleboard.cli import main

EXAMPLE = (
    "data/measurements/chat/example-org/example-llm-8b/H100-x1-bfloat16-tp1-ep1-dp1-seqs64.json"
)


@pytest.fixture
def site(new_site: Path) -> Path:  # a folder made by jouleboard init (tests/conftest.py)
    return new_site


def jouleboard(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def add_to_site_yaml(site: Path, line: str) -> None:
    with (site / "data" / "site.yaml").open("a", encoding="utf-8") as f:
        f.write(line + "\n")


def nesting(text: str) -> int:
    """How deep round brackets nest in ``text``."""
    depth = deepest = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        deepest = max(deepest, depth)
    return deepest


def test_a_logo_path_is_told_to_be_a_file_name_not_shown_a_regex(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add_to_site_yaml(site, "logo: /home/me/logo.svg")
    status, _, err = jouleboard(capsys, "validate")
    (line,) = [x for x in err.splitlines() if "/logo" in x]
    assert status == 1
    assert not re.search(r"\^|\[A-Za-z|\{1,80\}|pattern", line), line
    assert "'/home/me/logo.svg' is not a file name" in line
    assert "templates/assets/" in line and "logo: logo.svg" in line


def test_an_unquoted_accent_colour_is_told_to_be_quoted(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """YAML reads ``accent_color: #c2185b`` as a comment: the value is null."""
    add_to_site_yaml(site, "accent_color: #c2185b")
    status, _, err = jouleboard(capsys, "validate")
    (line,) = [x for x in err.splitlines() if "/accent_color" in x]
    assert status == 1
    assert "NoneType" not in line
    assert "accent_color: '#c2185b'" in line and "comment" in line
    assert nesting(line) == 1


def test_build_inside_the_data_folder_points_to_the_site_folder(
    site: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(site / "data")
    status, _, err = jouleboard(capsys, "build")
    assert status == 2
    assert "jouleboard init" not in err  # the folder exists: making another is no help
    assert "cd .." in err and "--data ../data" in err
    assert not (site / "data" / "site").exists() and not (site / "site").exists()


def test_diff_outside_a_git_repository_says_so(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    status, _, err = jouleboard(capsys, "diff", "--base", "HEAD")
    assert status == 2
    assert "neither a commit" not in err
    assert "data/ is in no git repository" in err and "a folder holding another copy" in err


def test_validate_of_three_files_counts_three(
    site: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A folder of 3 measurement files was reported as "4 configurations valid": the 3 and
    the data folder's example."""
    given = tmp_path / "new"
    given.mkdir()
    measurement = json.loads((site / EXAMPLE).read_text(encoding="utf-8"))
    for seqs in (96, 128, 256):
        measurement["serving"]["max_num_seqs"] = seqs
        (given / f"seqs{seqs}.json").write_text(json.dumps(measurement), encoding="utf-8")
    status, out, _ = jouleboard(capsys, "validate", str(given))
    assert status == 0
    assert out.startswith("ok: 3 measurements valid in the files and runs given"), out
    assert "4 " not in out and "(its other 1 measurement is valid too)" in out


def test_docs_offers_the_rule_a_typo_was_meant_to_be(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = jouleboard(capsys, "docs", "registry.unknown-gpuu")
    assert status == 2 and "did you mean 'registry.unknown-gpu'?" in err


def test_rank_offers_the_gpu_a_typo_was_meant_to_be(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = jouleboard(capsys, "rank", "--task", "chat", "--gpu", "MI325x")
    assert status == 2 and "did you mean 'MI300X'?" in err
    status, _, err = jouleboard(capsys, "rank", "--task", "chta")
    assert status == 2 and "did you mean 'chat'?" in err


def test_the_unknown_gpu_hint_nests_no_brackets(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = site / EXAMPLE
    path.write_text(path.read_text(encoding="utf-8").replace('"H100"', '"h100"'))
    status, _, err = jouleboard(capsys, "validate")
    (line,) = [x for x in err.splitlines() if "registry.unknown-gpu" in x]
    assert status == 1
    assert line.endswith("(did you mean 'H100'? Or add 'h100' to gpus.yaml)"), line
    assert nesting(line) == 1


def test_validate_of_a_registry_file_says_to_give_its_folder(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``validate data/gpus.yaml`` read it as a measurement file: "json.syntax: not valid
    JSON ... (check brackets, commas and quotes)", about a valid YAML file."""
    status, _, err = jouleboard(capsys, "validate", str(site / "data" / "gpus.yaml"))
    assert status == 2
    assert "json.syntax" not in err and "not valid JSON" not in err
    assert "is not a measurement file" in err and f"give it ({site / 'data'})" in err
