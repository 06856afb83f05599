"""`validate --format github`: each problem an ``::error`` workflow command that GitHub's
runner reads back whole (its file name, line and column, rule and message), at the place in
the file the problem is about. The lines expected are counted in the texts written here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from jouleboard.commands.common import github_annotations
from jouleboard.core.escape import text_line
from jouleboard.core.problems import Problem
from tests.cli_run import jouleboard
from tests.golden.tree import DATA

MEASUREMENT = Path("measurements/gpqa/Qwen/Qwen3-8B/B200-x1-bfloat16-tp1-ep1-dp1-seqs128.json")


def unescape(text: str) -> str:
    for code, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(code, char)
    return text


def parsed(command: str) -> tuple[dict[str, str], str]:
    """A workflow command as the runner reads it: the properties end at the first ``::``,
    split at commas, each at its first ``=``; the message is the rest."""
    assert command.startswith("::error ")
    properties, _, message = command[len("::error ") :].partition("::")
    pairs = (p.split("=", 1) for p in properties.split(","))
    return {key: unescape(value) for key, value in pairs}, unescape(message)


def annotation(problem: Problem) -> dict[str, str]:
    (command,) = github_annotations([problem])
    properties, message = parsed(command)
    assert message == text_line(str(problem))  # one line, its controls shown escaped
    return properties


def test_a_file_name_with_colons_commas_and_percents_reads_back_whole(tmp_path: Path) -> None:
    """``a::b`` ended the properties early (only ``,`` and ``%`` were escaped), so the
    annotation named a file ``a`` and the rest spilled into the message."""
    name = str(tmp_path / "a::b,c%d.json")
    got = annotation(Problem(name, "", "file.x", "line\none: 100%", "fix, it"))
    assert got == {"file": name, "title": "file.x"}


def test_each_key_is_found_under_its_own_parent(tmp_path: Path) -> None:
    """The line was the first anywhere in the file with the pointer's last key: a problem
    with the second model's nickname was put on the first model's."""
    registry = tmp_path / "models.yaml"
    registry.write_text("a:\n  nickname: One\nb:\n  builder: B\n  nickname: Two\n")
    got = annotation(Problem(str(registry), "/b/nickname", "value.too-long", "too long"))
    assert (got.get("line"), got.get("col")) == ("5", "3")  # "  nickname: Two": its key


def test_a_key_written_twice_is_the_second(tmp_path: Path) -> None:
    """A duplicate key is the later one, the one a reader keeps (it was put on the first);
    a member is put on its key."""
    doc = tmp_path / "m.json"
    doc.write_text('{\n  "schema_version": 1,\n  "x": [1, {"y": 2}],\n  "schema_version": 1\n}\n')
    got = annotation(Problem(str(doc), "/schema_version", "json.duplicate-key", "twice"))
    assert (got.get("line"), got.get("col")) == ("4", "3")
    got = annotation(Problem(str(doc), "/x/1/y", "value.x", "deep"))
    assert (got.get("line"), got.get("col")) == ("3", "13")  # '  "x": [1, {"y"': column 13


def test_a_missing_field_is_put_on_its_object(tmp_path: Path) -> None:
    doc = tmp_path / "m.json"
    doc.write_text('{\n  "metrics":\n    {"power": 1}\n}\n')
    got = annotation(Problem(str(doc), "/metrics/throughput", "field.missing", "missing"))
    assert (got.get("line"), got.get("col")) == ("2", "3")  # the key of its object


def test_a_number_too_long_to_convert_does_not_stop_the_walk(tmp_path: Path) -> None:
    """The walk converted numbers, and Python refuses a 5,000-digit one: every problem of
    the file lost its line. Numbers are now only skipped."""
    doc = tmp_path / "m.json"
    doc.write_text('{\n  "num_gpus": ' + "9" * 5000 + ',\n  "repeat": NaN\n}\n')
    got = annotation(Problem(str(doc), "/repeat", "json.non-finite", "NaN"))
    assert (got.get("line"), got.get("col")) == ("3", "3")


def test_a_syntax_error_is_put_where_the_reader_says_not_where_a_key_does(
    tmp_path: Path,
) -> None:
    """A duplicate YAML key named " at line 1 column 1" moved its own annotation to line 1:
    the readers state the real place last ("… at line 19"), or first for a markdown line
    ("line 149: …")."""
    name = str(tmp_path / "gpus.yaml")
    message = "duplicate key ' at line 1 column 1' at line 19"
    got = annotation(Problem(name, "", "yaml.duplicate-key", message))
    assert (got.get("line"), got.get("col")) == ("19", "1")
    got = annotation(Problem(name, "", "markdown.too-deep", "line 149: nested too deep"))
    assert (got.get("line"), got.get("col")) == ("149", "1")


def test_a_key_read_as_null_is_named_and_found_as_written(tmp_path: Path) -> None:
    """YAML reads the keys `null:` and `true:` as None and True: the pointer said /None,
    which the file does not hold, and the annotation fell back to the file's first line."""
    from jouleboard.core.problems import pointer

    registry = tmp_path / "models.yaml"
    registry.write_text("a/b:\n  nickname: A\nnull: {}\ntrue: {}\n")
    assert (pointer(None), pointer(True)) == ("/null", "/true")
    got = annotation(Problem(str(registry), pointer(None), "value.bad-identifier", "bad"))
    assert (got.get("line"), got.get("col")) == ("3", "1")


def test_a_file_is_read_once_however_many_problems_it_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each problem read its file again and walked it from the start: a models.yaml of
    10 KB with 400 problems took two minutes to annotate."""
    from jouleboard.core import locate

    registry = tmp_path / "models.yaml"
    registry.write_text("".join(f"m{i}:\n  nickname: {i}\n" for i in range(400)))
    reads: list[Path] = []
    read = locate.read_capped
    monkeypatch.setattr(locate, "read_capped", lambda p, cap: reads.append(p) or read(p, cap))
    problems = [Problem(str(registry), f"/m{i}/nickname", "x", "y") for i in range(400)]
    lines = github_annotations(problems)
    assert reads == [registry]
    assert all(f",line={2 * i + 2},col=3," in line for i, line in enumerate(lines))


def test_a_message_shows_its_controls_escaped(tmp_path: Path) -> None:
    """The text report escapes a bidi override; the annotation carried it raw, where it
    reorders what GitHub shows of the message."""
    (command,) = github_annotations([Problem("m.json", "/a\u202eb", "field.unknown", "x")])
    assert "\u202e" not in command and "\\u202e" in command


def test_the_validate_command_puts_syntax_errors_on_their_line(tmp_path: Path) -> None:
    """A syntax error's line and column were only in the message, so GitHub showed it on
    no line. Real problems from the real readers: a JSON comma twice, a YAML list left
    open. The broken registry once hid the measurement's problem, and made up one for each
    model the quality file names ("unknown model"): models.yaml had given none."""
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    text = json.dumps(json.loads((data / MEASUREMENT).read_text()), indent=2)
    lines = text.splitlines()
    lines[3] += ","  # the reader stops at this second comma, the line's last character
    (data / MEASUREMENT).write_text("\n".join(lines) + "\n")
    models = (data / "models.yaml").read_text().splitlines()
    models[4] = "  key: [unclosed"
    (data / "models.yaml").write_text("\n".join(models) + "\n")
    out = jouleboard("validate", str(data), "--format", "github", timeout=120)
    assert out.returncode == 1, out.stderr
    found = {
        Path(props["file"]).name: (props.get("line"), props.get("col"), props["title"])
        for props, _ in map(parsed, out.stdout.splitlines())
    }
    assert found.pop(MEASUREMENT.name) == ("4", str(len(lines[3])), "json.syntax")
    ((line, _, rule),) = found.values()  # models.yaml, and no quality file
    assert int(line) in {5, 6} and rule == "yaml.syntax", found


def test_a_file_not_read_is_a_warning_on_the_pull_request(tmp_path: Path) -> None:
    """A measurement in a misspelt folder is never read: `validate --format github` said so
    only in the job's log (stderr), and passed, so the pull request showed nothing."""
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    misplaced = data / "measurement" / MEASUREMENT.relative_to("measurements")
    misplaced.parent.mkdir(parents=True)
    shutil.copy(data / MEASUREMENT, misplaced.with_name("B200-x1-bfloat16-seqs256.json"))
    out = jouleboard("validate", str(data), "--format", "github", timeout=120)
    assert out.returncode == 0, out.stderr
    (command,) = [line for line in out.stdout.splitlines() if line.startswith("::")]
    properties, message = parsed(command.replace("::warning ", "::error ", 1))
    assert command.startswith("::warning ") and properties["title"] == "file.unread"
    assert Path(properties["file"]).is_relative_to(data / "measurement"), properties
    assert message.startswith(properties["file"]) and "file.unread" in message
