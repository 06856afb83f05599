"""Files in the wrong place are named, never dropped in silence (issue 39, item 2): a typo
in a folder's name or a measurement put directly in data/ was valid, built, and simply not
on the site. validate and build name every file and folder of the data folder they do not
read: a located warning, an error with --strict."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from jouleboard.cli import main
from jouleboard.core.problems import ValidationFailed
from jouleboard.loading.dataset import load_dataset

EXAMPLE = "measurements/chat/example-org/example-llm-8b/H100-x1-bfloat16-tp1-ep1-dp1-seqs64.json"


@pytest.fixture
def site(new_site: Path) -> Path:  # a folder made by jouleboard init (tests/conftest.py)
    return new_site


def misplace(data: Path) -> None:
    """What a new user did: a typo in measurements/, a file directly in data/, a registry
    with the wrong extension, a quality file that is not .yaml, and a note."""
    typo = data / "measurments" / "chat"
    typo.mkdir(parents=True)
    shutil.copy(data / EXAMPLE, typo / "x.json")
    shutil.copy(data / EXAMPLE, data / "mine.json")
    (data / "gpu.yml").write_text("{}\n")
    (data / "quality").mkdir()
    (data / "quality" / "chat.yml").write_text("{}\n")
    (data / "notes.txt").write_text("to do\n")
    (data / "README.md").write_text("# Our data\n")  # for people: not named
    (data / ".DS_Store").write_bytes(b"\0")  # hidden: not named


NAMED = {  # file -> words its line must hold (the rule, and the fix)
    "data/measurments": ("file.unread", "did you mean measurements/?"),
    "data/mine.json": ("file.unread", "measurements/<task>/<org>/<model>/"),
    "data/gpu.yml": ("file.unread", "did you mean gpus.yaml?"),
    "data/quality/chat.yml": ("file.unread", "name it chat.yaml"),
    "data/notes.txt": ("file.unread", "out of the data folder"),
}


def lines_naming(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        name = line.removeprefix("warning: ").split(": ", 1)[0]
        if name in NAMED or "README" in name or "DS_Store" in name:
            out[name] = line
    return out


def test_validate_names_every_file_it_does_not_read(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    misplace(site / "data")
    assert main(["validate"]) == 0
    out, err = capsys.readouterr()
    named = lines_naming(err)
    assert set(named) == set(NAMED), err
    for name, words in NAMED.items():
        assert named[name].startswith(f"warning: {name}: /: ")
        for word in words:
            assert word in named[name], named[name]
    assert out.startswith("ok: 1 configuration valid (5 files or folders not read: see")
    assert "dropped" not in out

    assert main(["validate", "--strict"]) == 1  # every one an error
    _, err = capsys.readouterr()
    assert set(lines_naming(err)) == set(NAMED) and "5 problem(s) in 5 file(s)" in err


@pytest.mark.slow  # builds a site
def test_build_warns_and_strict_build_fails_writing_nothing(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    misplace(site / "data")
    assert main(["build", "--strict"]) == 1
    _, err = capsys.readouterr()
    assert set(lines_naming(err)) == set(NAMED) and "nothing was written" in err
    assert not (site / "site").exists()
    assert main(["build"]) == 0
    _, err = capsys.readouterr()
    assert {f"warning: {name}" for name in NAMED} <= {
        line.split(": /", 1)[0] for line in err.splitlines()
    }
    assert (site / "site" / "index.html").is_file()


def test_a_failed_load_names_what_is_misplaced_too(site: Path) -> None:
    """tasks.yml instead of tasks.yaml: the missing registry and the file meant to be it."""
    data = site / "data"
    (data / "tasks.yaml").rename(data / "tasks.yml")
    with pytest.raises(ValidationFailed) as failed:
        load_dataset(data)
    lines = [str(p) for p in failed.value.problems]
    assert any("tasks.yaml" in line and "file.missing" in line for line in lines), lines
    assert any(
        line.startswith("data/tasks.yml: /: file.unread") and "did you mean tasks.yaml?" in line
        for line in lines
    ), lines


def test_kind_files_site_yaml_lists_are_read_and_others_named(site: Path) -> None:
    from jouleboard.loading.layout import unread_problems

    data = site / "data"
    (data / "kinds").mkdir()
    (data / "kinds" / "speech.py").write_text("X = 1\n")
    (data / "kinds" / "old.py").write_text("X = 1\n")
    (data / "kinds" / "__pycache__").mkdir()
    with (data / "site.yaml").open("a") as f:
        f.write("kinds: [kinds/speech.py]\n")
    assert [(p.file, p.rule) for p in unread_problems(data)] == [
        ("data/kinds/old.py", "file.unread")
    ]


def test_the_bundled_data_has_nothing_unread() -> None:
    from jouleboard.loading.layout import unread_problems

    repo = Path(__file__).resolve().parents[1]
    assert unread_problems(repo / "data") == []
