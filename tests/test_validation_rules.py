"""One focused test per validation rule: a valid near-miss that passes, and the invalid case.

Every test builds a tiny data folder by hand (one model, one GPU, one task) and a measurement
whose numbers are consistent by construction: 500 W at 5000 tokens/s is 0.1 J/token,
1000 tokens per response make 100 J per response, and an average batch of 60 sequences
emitting a token every 12 ms (median ITL) make 5000 tokens/s. Invalid cases assert the rule
id, the file named in the problem, the exact JSON pointer and that the message or hint says
what to do.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from jouleboard.config.registry import load_registry
from jouleboard.core.problems import Problem, ValidationFailed
from jouleboard.kinds import check_measurement
from jouleboard.loading.dataset import Dataset, load_dataset
from tests.cli_run import jouleboard as jouleboard_here

REPO = Path(__file__).resolve().parents[1]
MIB = 1024 * 1024

SITE_YAML = """\
title: test board
default_gpus: [H100]
data_version: v1
data_date: '2025-01-01'
"""
MODELS_YAML = """\
acme/tiny-1b:
  nickname: Tiny 1B
  builder: Acme
  total_params_billions: 1.0
  active_params_billions: 1.0
  weight_precision: bfloat16
"""
GPUS_YAML = """\
H100:
  name: NVIDIA H100 SXM
  vendor: NVIDIA
  generation: Hopper
  memory_gb: 80.0
  board_power_watts: 700.0
"""
TASKS_YAML = """\
chat:
  name: Chat
  benchmark: Chat bench
  kind: llm
  default_deadline:
    ms: 100.0
"""
REGISTRIES = {
    "site.yaml": SITE_YAML,
    "models.yaml": MODELS_YAML,
    "gpus.yaml": GPUS_YAML,
    "tasks.yaml": TASKS_YAML,
}
MEASUREMENT_DIR = Path("measurements/chat/acme/tiny-1b")
DEFAULT_NAME = "H100-x1-bfloat16-seqs64.json"

# 500 W / 5000 tokens/s = 0.1 J/token; 0.1 J/token x 1000 tokens = 100 J/response;
# 60 sequences / 12 ms = 5000 tokens/s.
VALID: dict[str, Any] = {
    "schema_version": 1,
    "kind": "llm",
    "task": "chat",
    "model_id": "acme/tiny-1b",
    "gpu_model": "H100",
    "num_gpus": 1,
    "weight_precision": "bfloat16",
    "serving": {
        "max_num_seqs": 64,
        "tensor_parallel": 1,
        "expert_parallel": 1,
        "data_parallel": 1,
        "notes": "",
    },
    "metrics": {
        "avg_power_watts": 500.0,
        "output_throughput_tokens_per_sec": 5000.0,
        "energy_per_token_joules": 0.1,
        "avg_output_len_tokens": 1000.0,
        "energy_per_response_joules": 100.0,
        "avg_batch_size": 60.0,
        "median_itl_ms": 12.0,
        "p90_itl_ms": 25.0,
        "p95_itl_ms": 30.0,
        "p99_itl_ms": 40.0,
    },
    "output_length_distribution": {
        "bin_edges_tokens": [0.0, 500.0, 1000.0, 2000.0],
        "counts": [10, 60, 30],
    },
    "provenance": {
        "dataset": "Hand-made",
        "version": "1",
        "date": "2025-01-01",
        "license": "CC0-1.0",
        "source": "tests/test_validation_rules.py",
    },
}

DELETE = object()


# --- helpers ------------------------------------------------------------------------------


def make_data_dir(root: Path, **overrides: str) -> Path:
    """A minimal valid data folder (registries only); ``overrides`` replace registry texts,
    e.g. ``models_yaml="..."``."""
    data = root / "data"
    (data / "measurements").mkdir(parents=True, exist_ok=True)
    for name, text in REGISTRIES.items():
        text = overrides.get(name.replace(".", "_"), text)
        (data / name).write_text(text, encoding="utf-8")
    return data


def valid_measurement() -> dict[str, Any]:
    return copy.deepcopy(VALID)


def changed(doc: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``doc`` with dotted paths set (or removed with DELETE)."""
    out = copy.deepcopy(doc)
    for dotted, value in changes.items():
        *parents, last = dotted.split(".")
        node = out
        for part in parents:
            node = node[part]
        if value is DELETE:
            del node[last]
        else:
            node[last] = value
    return out


def with_power(watts: float, doc: dict[str, Any] | None = None) -> dict[str, Any]:
    """``doc`` (default VALID) with ``watts`` and energies recomputed so all stay consistent."""
    doc = copy.deepcopy(doc or VALID)
    m = doc["metrics"]
    m["avg_power_watts"] = watts
    m["energy_per_token_joules"] = watts / m["output_throughput_tokens_per_sec"]
    m["energy_per_response_joules"] = m["energy_per_token_joules"] * m["avg_output_len_tokens"]
    return doc


def raw_json(doc: dict[str, Any], dotted: str, token: str) -> str:
    """JSON text of ``doc`` with the value at ``dotted`` replaced by the raw ``token``."""
    marker = "@@RAW@@"
    text = json.dumps(changed(doc, {dotted: marker}), indent=2)
    assert text.count(f'"{marker}"') == 1
    return text.replace(f'"{marker}"', token)


def write_measurement(
    data: Path,
    doc: dict[str, Any] | str | bytes,
    name: str = DEFAULT_NAME,
    folder: Path = MEASUREMENT_DIR,
) -> Path:
    """Write a measurement (dict as JSON, or raw text/bytes) below data/measurements."""
    path = data / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(doc, dict):
        doc = json.dumps(doc, indent=2)
    path.write_bytes(doc.encode("utf-8") if isinstance(doc, str) else doc)
    return path


def accepts(data: Path) -> Dataset:
    try:
        return load_dataset(data)
    except ValidationFailed as e:
        pytest.fail(f"expected the data to be valid, got:\n{e.report()}")


def problems(data: Path) -> list[Problem]:
    with pytest.raises(ValidationFailed) as info:
        load_dataset(data)
    assert info.value.problems, "ValidationFailed without problems"
    return info.value.problems


def same_file(shown: str, path: Path) -> bool:
    """Problems name files relative to the working folder when inside it, else as given."""
    return Path(shown).resolve() == path.resolve()


def rejects(
    data: Path, path: Path, rule: str, pointer: str, *says: str, alone: bool = True
) -> Problem:
    """Assert ``rule`` is reported once for ``path`` at ``pointer`` and return the problem.

    ``says``: words that must appear (case-insensitively) in the message or the hint.
    ``alone``: no other problem may be reported (the invalid case isolates its rule).
    """
    found = problems(data)
    report = "\n".join(map(str, found))
    hits = [p for p in found if p.rule == rule]
    assert len(hits) == 1, f"expected one {rule} problem, got:\n{report}"
    p = hits[0]
    assert same_file(p.file, path), f"{rule} names {p.file}, expected {path}"
    assert p.pointer == pointer, f"{rule} at {p.pointer!r}, expected {pointer!r}"
    text = f"{p.message} ({p.hint})".lower()
    for word in says:
        assert word.lower() in text, f"{word!r} not in {text!r}"
    assert p.message and p.hint, f"{rule} should explain itself and hint at a fix: {p}"
    if alone:
        assert len(found) == 1, f"expected only {rule}, got:\n{report}"
    return p


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return make_data_dir(tmp_path)


def test_the_hand_made_measurement_is_valid(data: Path) -> None:
    write_measurement(data, valid_measurement())
    dataset = accepts(data)
    (config,) = dataset.configurations
    assert config.energy_per_token_joules == pytest.approx(0.1)
    assert config.source == (MEASUREMENT_DIR / DEFAULT_NAME).as_posix()


# --- JSON layer -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"schema_version": 1, "kind": "llm"',  # truncated
        '{"schema_version": 1,}',  # trailing comma
        "{'schema_version': 1}",  # single quotes
        "",  # empty file
    ],
)
def test_json_syntax(data: Path, text: str) -> None:
    path = write_measurement(data, json.dumps(VALID, indent=2))
    accepts(data)
    path.write_text(text, encoding="utf-8")
    p = rejects(data, path, "json.syntax", "", "line 1", "column")
    assert "not valid json" in p.message.lower()


def test_json_bom(data: Path) -> None:
    text = json.dumps(VALID, indent=2)
    path = write_measurement(data, text.encode("utf-8"))
    accepts(data)
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    rejects(data, path, "json.bom", "", "byte-order mark", "without BOM")


def test_json_duplicate_key(data: Path) -> None:
    text = raw_json(VALID, "metrics.avg_power_watts", "500.0")
    path = write_measurement(data, text)
    accepts(data)
    # The same key twice, even with the same value, is refused: readers disagree on which wins.
    path.write_text(raw_json(VALID, "metrics.avg_power_watts", '500.0, "avg_power_watts": 500.0'))
    rejects(
        data, path, "json.duplicate-key", "/metrics/avg_power_watts", "avg_power_watts", "keep one"
    )


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e400", "-1e400"])
def test_json_non_finite(data: Path, token: str) -> None:
    path = write_measurement(data, raw_json(VALID, "metrics.avg_power_watts", "5e2"))
    accepts(data)
    path.write_text(raw_json(VALID, "metrics.avg_power_watts", token))
    rejects(data, path, "json.non-finite", "/metrics/avg_power_watts", token, "finite")


def test_json_number_too_long(data: Path) -> None:
    forty = "500." + "0" * 36
    assert len(forty) == 40
    path = write_measurement(data, raw_json(VALID, "metrics.avg_power_watts", forty))
    accepts(data)
    path.write_text(raw_json(VALID, "metrics.avg_power_watts", forty + "0"))
    rejects(
        data,
        path,
        "json.number-too-long",
        "/metrics/avg_power_watts",
        "40 characters",
        "ordinary precision",
    )
    path.write_text(raw_json(VALID, "num_gpus", "1" * 5000))
    rejects(data, path, "json.number-too-long", "/num_gpus")


def test_json_too_deep(data: Path) -> None:
    # notes is at depth 2; 31 nested lists keep the innermost at depth 32: the JSON layer
    # passes and the schema layer complains that notes is not a string.
    path = write_measurement(data, raw_json(VALID, "serving.notes", "[" * 31 + "]" * 31))
    rejects(data, path, "schema.wrong-type", "/serving/notes")
    path.write_text(raw_json(VALID, "serving.notes", "[" * 32 + "]" * 32))
    rejects(data, path, "json.too-deep", "/serving/notes" + "/0" * 31, "32")
    # Far beyond Python's recursion limit: reported, not a RecursionError.
    path.write_text("[" * 100_000 + "]" * 100_000)
    rejects(data, path, "json.too-deep", "", "too deep")


# --- file layer -----------------------------------------------------------------------------


def test_file_too_large(data: Path) -> None:
    text = json.dumps(VALID, indent=2)
    padded = text + " " * (MIB - len(text))  # trailing whitespace is valid JSON
    assert len(padded) == MIB
    path = write_measurement(data, padded)
    accepts(data)  # exactly at the cap
    path.write_text(padded + " ")
    rejects(data, path, "file.too-large", "", str(MIB + 1), "one configuration per file")


def test_file_not_utf8(data: Path) -> None:
    doc = changed(VALID, {"serving.notes": "café"})
    path = write_measurement(data, json.dumps(doc, ensure_ascii=False).encode("utf-8"))
    accepts(data)
    path.write_bytes(json.dumps(doc, ensure_ascii=False).encode("latin-1"))
    rejects(data, path, "file.not-utf8", "", "UTF-8", "byte")
    path.write_bytes(json.dumps(doc).encode("utf-16"))
    rejects(data, path, "file.not-utf8", "", "save the file as UTF-8")


def test_file_unexpected(data: Path) -> None:
    write_measurement(data, valid_measurement())
    write_measurement(data, "ignored", name="README.md")
    write_measurement(data, "ignored", name=".DS_Store")
    accepts(data)
    stray = write_measurement(data, json.dumps(VALID), name="H100-x1.json.bak")
    rejects(data, stray, "file.unexpected", "", ".json")


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        (b"H100\nsecond: line.json", "H100\\nsecond: line.json"),  # forges a report line
        (b"caf\xe9.json", "caf\\xe9.json"),  # Latin-1, not UTF-8
        ("H100-\u202enosj.json".encode(), "H100-\\u202enosj.json"),  # shows as H100-json.son
    ],
)
def test_file_bad_name(data: Path, name: bytes, shown: str) -> None:
    write_measurement(data, valid_measurement(), name="caf\u00e9-H100.json")
    accepts(data)  # UTF-8 names are fine
    folder = data / MEASUREMENT_DIR
    (folder / os.fsdecode(name)).write_text(json.dumps(changed(VALID, {"repeat": 2})))
    p = only_problem(data)
    assert (p.rule, p.pointer) == ("file.bad-name", "")
    assert p.file.endswith(f"{MEASUREMENT_DIR.as_posix()}/{shown}"), p.file
    assert "\n" not in str(p) and "rename" in p.hint
    result = run_cli("validate", str(data))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 3, result.stderr  # problem, count, verdict


def test_file_symlinked_folder(tmp_path: Path) -> None:
    data = make_data_dir(tmp_path)
    write_measurement(data, valid_measurement())
    (tmp_path / "link-to-data").symlink_to(data, target_is_directory=True)
    assert len(accepts(tmp_path / "link-to-data").configurations) == 1  # the folder given
    other = write_measurement(tmp_path / "other", changed(VALID, {"repeat": 2}), folder=Path())
    link = data / "measurements" / "more"
    link.symlink_to(other.parent, target_is_directory=True)
    p = rejects(data, link, "file.symlinked-folder", "", "would not be read", "not a link")
    assert p.file.endswith("measurements/more")  # the link, not its target


def test_file_symlink_loop(data: Path) -> None:
    write_measurement(data, valid_measurement())
    loop = data / "measurements" / "loop.json"
    loop.symlink_to("loop.json")
    p = only_problem(data)  # (same_file cannot resolve a loop)
    assert (p.rule, p.pointer) == ("file.not-regular", "") and "link" in p.message
    assert p.file.endswith("measurements/loop.json")
    loop.unlink()
    loop.parent.joinpath("up").symlink_to("..", target_is_directory=True)
    rejects(data, loop.parent / "up", "file.symlinked-folder", "")
    result = run_cli("validate", str(data))
    assert result.returncode == 1 and "Traceback" not in result.stderr


def test_file_unreadable_folder(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Run as root a chmod 000 folder stays readable, so the refusal is simulated where
    # os.walk lists folders; a path over 4,096 bytes is the real case (tests/hostile).
    write_measurement(data, valid_measurement())
    hidden = write_measurement(data, changed(VALID, {"repeat": 2}), folder=Path("measurements/x"))
    assert [c.runs for c in accepts(data).configurations] == [2]  # both files read
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        if Path(os.fsdecode(path)) == hidden.parent:
            raise PermissionError(13, "Permission denied", os.fsdecode(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    rejects(data, hidden.parent, "file.unreadable", "", "permission denied", "permissions")


def test_registry_file_not_regular(tmp_path: Path) -> None:
    data = make_data_dir(tmp_path)
    (data / "tasks.yaml").unlink()
    (data / "tasks.yaml").mkdir()
    p = only_problem(data)
    assert (p.rule, p.pointer) == ("file.not-regular", "")
    assert same_file(p.file, data / "tasks.yaml") and "folder" in p.message


@pytest.mark.parametrize("base_url", ["/../", "/a/./", "/leaderboard"])
def test_registry_site_base_url_says_what_a_path_must_be(tmp_path: Path, base_url: str) -> None:
    """site.yaml's base_url is a path, not an address: the message and hint say so (they
    asked for an https:// URL), and a dot segment is refused like on the command line."""
    data = make_data_dir(tmp_path, site_yaml=SITE_YAML + f"base_url: '{base_url}'\n")
    p = only_problem(data)
    assert (p.rule, p.pointer) == ("value.bad-url", "/base_url")
    assert "URL path" in p.message and "https" not in p.message + p.hint


def test_registry_markdown_limit_hint_is_given_once(tmp_path: Path) -> None:
    data = make_data_dir(tmp_path, site_yaml=SITE_YAML + "attribution_md: '" + "[" * 40 + "'\n")
    p = only_problem(data)
    assert p.rule == "markdown.too-deep" and p.hint
    assert p.hint not in p.message


def test_registry_quality_folder_symlink_is_refused(tmp_path: Path) -> None:
    """quality/ as a link to a folder of valid quality files: refused, not followed."""
    data = make_data_dir(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (data / "quality").symlink_to(elsewhere, target_is_directory=True)
    p = only_problem(data)
    assert (p.rule, p.pointer) == ("file.symlinked-folder", "")
    assert same_file(p.file, data / "quality") and "link" in p.message


def test_registry_symlink_is_refused_not_followed(tmp_path: Path) -> None:
    """A registry that is a link is refused (issue 14: a link, like about.md's, could publish
    a file from outside the data folder); the linked file itself is valid YAML of the right
    shape, so only the link can be the problem."""
    data = make_data_dir(tmp_path)
    outside = tmp_path / "outside-tasks.yaml"
    (data / "tasks.yaml").rename(outside)
    (data / "tasks.yaml").symlink_to(outside)
    p = only_problem(data)
    assert (p.rule, p.pointer) == ("file.not-regular", "")
    assert same_file(p.file, data / "tasks.yaml") and "link" in p.message


# --- schema layer ---------------------------------------------------------------------------


def test_schema_missing_field(data: Path) -> None:
    optional = changed(
        VALID,
        {
            "output_length_distribution": DELETE,
            "serving.tensor_parallel": DELETE,
            "serving.notes": DELETE,
        },
    )
    path = write_measurement(data, optional)
    accepts(data)  # optional fields (repeat, citation, ...) may be left out
    path.write_text(json.dumps(changed(VALID, {"metrics.avg_power_watts": DELETE})))
    rejects(
        data, path, "schema.missing-field", "/metrics/avg_power_watts", "avg_power_watts", "missing"
    )


def test_schema_unknown_field_suggests_the_close_name(data: Path) -> None:
    path = write_measurement(data, valid_measurement())
    accepts(data)
    doc = changed(VALID, {"metrics.avg_power_watts": DELETE})
    doc["metrics"]["avg_power_wats"] = 500.0
    path.write_text(json.dumps(doc))
    found = problems(data)
    unknown = [p for p in found if p.rule == "schema.unknown-field"]
    assert len(unknown) == 1, found
    assert same_file(unknown[0].file, path)
    assert unknown[0].pointer == "/metrics/avg_power_wats"
    assert "'avg_power_watts'" in unknown[0].hint and "did you mean" in unknown[0].hint
    # The real field is then missing, reported at its own pointer.
    assert [p.pointer for p in found if p.rule == "schema.missing-field"] == [
        "/metrics/avg_power_watts"
    ]


def test_schema_unknown_field_with_nothing_close_lists_the_allowed_fields(data: Path) -> None:
    path = write_measurement(data, {**VALID, "colour/~": "blue"})
    p = rejects(data, path, "schema.unknown-field", "/colour~1~0", "allowed here")
    assert "model_id" in p.hint


def test_schema_wrong_type_string_for_number(data: Path) -> None:
    path = write_measurement(data, changed(VALID, {"metrics.avg_power_watts": 500}))
    accepts(data)  # a JSON integer is a fine number
    path.write_text(json.dumps(changed(VALID, {"metrics.avg_power_watts": "500"})))
    rejects(data, path, "schema.wrong-type", "/metrics/avg_power_watts", "got str", "not strings")


def test_schema_wrong_type_bool_for_int(data: Path) -> None:
    path = write_measurement(data, valid_measurement())
    accepts(data)
    path.write_text(json.dumps(changed(VALID, {"num_gpus": True})))
    rejects(data, path, "schema.wrong-type", "/num_gpus", "integer", "got bool")


def test_schema_wrong_type_top_level_not_an_object(data: Path) -> None:
    path = write_measurement(data, json.dumps([VALID]))
    rejects(data, path, "schema.wrong-type", "", "one JSON object")


# --- value rules ----------------------------------------------------------------------------


@pytest.mark.parametrize("token", ["0", "0.0", "-0.1", "-0.0", "-500", "1e-400"])
def test_value_not_positive(data: Path, token: str) -> None:
    path = write_measurement(data, valid_measurement())
    accepts(data)
    path.write_text(raw_json(VALID, "metrics.energy_per_token_joules", token))  # 1e-400 is 0.0
    rejects(data, path, "value.not-positive", "/metrics/energy_per_token_joules", "greater than 0")


@pytest.mark.parametrize(
    ("field", "good", "bad"),
    [
        ("weight_precision", "fp8", "bf16"),
        ("weight_precision", "int4", "BFLOAT16"),
        ("kind", "llm", "LLM"),
        ("kind", "llm", "vlm"),
        ("schema_version", 1, 2),
    ],
)
def test_value_not_allowed(data: Path, field: str, good: object, bad: object) -> None:
    path = write_measurement(data, changed(VALID, {field: good}))
    accepts(data)
    path.write_text(json.dumps(changed(VALID, {field: bad})))
    rejects(data, path, "value.not-allowed", f"/{field}", "should be")


@pytest.mark.parametrize(
    ("field", "bad"),
    [
        ("model_id", "../../etc/passwd"),
        ("model_id", "acme/../tiny-1b"),
        ("model_id", "tiny-1b"),  # no org/
        ("model_id", "acme/tiny/1b"),
        ("model_id", "acme/tiny\u00001b"),
        ("model_id", "acme/tiny-1b\n"),
        ("model_id", "\u0430cme/tiny-1b"),  # Cyrillic a
        ("gpu_model", "../H100"),
        ("gpu_model", "H100/x"),
        ("task", "Chat"),
        ("task", "chat/../x"),
    ],
)
def test_value_bad_identifier(data: Path, field: str, bad: str) -> None:
    path = write_measurement(data, valid_measurement())
    accepts(data)
    path.write_text(json.dumps(changed(VALID, {field: bad})))
    rejects(data, path, "value.bad-identifier", f"/{field}", "pattern")


def test_value_histogram_shape(data: Path) -> None:
    path = write_measurement(
        data,
        changed(VALID, {"output_length_distribution": {"bin_edges_tokens": [0, 1], "counts": [0]}}),
    )
    accepts(data)
    for edges, counts in [
        ([0.0, 500.0, 400.0, 2000.0], [1, 2, 3]),  # not increasing
        ([0.0, 500.0, 500.0, 2000.0], [1, 2, 3]),  # not strictly
        ([0.0, 500.0, 1000.0], [1, 2, 3]),
    ]:  # one edge short
        path.write_text(
            json.dumps(
                changed(
                    VALID,
                    {"output_length_distribution": {"bin_edges_tokens": edges, "counts": counts}},
                )
            )
        )
        rejects(
            data, path, "value.histogram-shape", "/output_length_distribution", "increasing", "n+1"
        )


# --- registry references --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "typo", "rule", "suggestion", "registry"),
    [
        ("task", "chta", "registry.unknown-task", "chat", "tasks.yaml"),
        ("model_id", "acme/tiny-1", "registry.unknown-model", "acme/tiny-1b", "models.yaml"),
        ("gpu_model", "H10", "registry.unknown-gpu", "H100", "gpus.yaml"),
        ("gpu_model", "h100", "registry.unknown-gpu", "H100", "gpus.yaml"),
    ],
)
def test_registry_unknown_reference_with_did_you_mean(
    data: Path, field: str, typo: str, rule: str, suggestion: str, registry: str
) -> None:
    path = write_measurement(data, valid_measurement())
    accepts(data)
    path.write_text(json.dumps(changed(VALID, {field: typo})))
    p = rejects(data, path, rule, f"/{field}", typo)
    assert f"did you mean {suggestion!r}" in p.hint
    assert registry in p.hint


def test_registry_unknown_reference_without_close_match_lists_known(data: Path) -> None:
    path = write_measurement(data, changed(VALID, {"gpu_model": "MI300X"}))
    p = rejects(data, path, "registry.unknown-gpu", "/gpu_model", "MI300X")
    assert "H100" in p.hint


def test_registry_kind_mismatch(tmp_path: Path) -> None:
    tasks = TASKS_YAML + (
        "image-chat:\n  name: Image chat\n  benchmark: Images\n  kind: mllm\n"
        "  default_deadline:\n    ms: 100.0\n"
    )
    data = make_data_dir(tmp_path, tasks_yaml=tasks)
    path = write_measurement(data, changed(VALID, {"task": "image-chat", "kind": "mllm"}))
    accepts(data)
    path.write_text(json.dumps(changed(VALID, {"task": "image-chat"})))
    rejects(data, path, "registry.kind-mismatch", "/kind", "'mllm'", "set kind to 'mllm'")


# --- physical bounds ------------------------------------------------------------------------


def test_bounds_power_above_limit_with_5_percent_margin(data: Path) -> None:
    path = write_measurement(data, with_power(734.0))  # 700 W x 1.05 = 735 W
    accepts(data)
    path.write_text(json.dumps(with_power(735.0)))
    accepts(data)
    path.write_text(json.dumps(with_power(736.0)))
    rejects(
        data,
        path,
        "bounds.power-above-limit",
        "/metrics/avg_power_watts",
        "736 W",
        "700 W",
        "num_gpus",
    )


def test_bounds_power_above_limit_scales_with_gpu_count(data: Path) -> None:
    two = changed(with_power(1400.0), {"num_gpus": 2, "serving.tensor_parallel": 2})
    path = write_measurement(data, two)
    accepts(data)
    path.write_text(json.dumps(changed(two, {"num_gpus": 1, "serving.tensor_parallel": 1})))
    rejects(data, path, "bounds.power-above-limit", "/metrics/avg_power_watts", "1 x 700 W")


def test_bounds_power_implausibly_low(data: Path) -> None:
    path = write_measurement(data, with_power(30.0))  # 30 W per GPU is the floor
    accepts(data)
    path.write_text(json.dumps(with_power(0.5)))  # 500 W written as 0.5 "kW"
    # 10,000 tokens/J is also above the H100's efficiency ceiling: both rules see the mistake.
    rejects(
        data,
        path,
        "bounds.power-implausibly-low",
        "/metrics/avg_power_watts",
        "0.5 W",
        "kilowatts",
        alone=False,
    )


def test_bounds_percentile_order(data: Path) -> None:
    equal = {
        f"metrics.{k}": 20.0 for k in ("median_itl_ms", "p90_itl_ms", "p95_itl_ms", "p99_itl_ms")
    }
    path = write_measurement(data, changed(VALID, equal))
    accepts(data)  # equal percentiles are in order
    path.write_text(json.dumps(changed(VALID, {"metrics.p95_itl_ms": 24.0})))  # p90 is 25
    rejects(
        data,
        path,
        "bounds.percentile-order",
        "/metrics/p95_itl_ms",
        "p95_itl_ms",
        "p90_itl_ms",
        "median <= p90 <= p95 <= p99",
    )


def test_bounds_itl_implausible_seconds_given_as_ms(data: Path) -> None:
    ms = {
        "metrics.median_itl_ms": 0.5,
        "metrics.p90_itl_ms": 0.6,
        "metrics.p95_itl_ms": 0.7,
        "metrics.p99_itl_ms": 0.8,
    }
    path = write_measurement(data, changed(VALID, ms))
    accepts(data)  # 0.5 ms is the floor
    seconds = {
        "metrics.median_itl_ms": 0.03,
        "metrics.p90_itl_ms": 0.04,
        "metrics.p95_itl_ms": 0.05,
        "metrics.p99_itl_ms": 0.06,
    }
    path.write_text(json.dumps(changed(VALID, seconds)))
    # 60 sequences at 0.03 ms would make 2 million tokens/s: the throughput rule sees it too.
    rejects(
        data,
        path,
        "bounds.itl-implausible",
        "/metrics/median_itl_ms",
        "0.03 ms",
        "milliseconds",
        "seconds",
        alone=False,
    )


def test_bounds_itl_implausible_microseconds_given_as_ms(data: Path) -> None:
    path = write_measurement(data, changed(VALID, {"metrics.p99_itl_ms": 120_000.0}))
    accepts(data)
    path.write_text(json.dumps(changed(VALID, {"metrics.p99_itl_ms": 150_000.0})))
    rejects(data, path, "bounds.itl-implausible", "/metrics/p99_itl_ms", "microseconds")


def test_bounds_energy_inconsistent(data: Path) -> None:
    # 0.5% off is within the 1% tolerance.
    path = write_measurement(
        data,
        changed(
            VALID,
            {
                "metrics.energy_per_token_joules": 0.1005,
                "metrics.energy_per_response_joules": 100.5,
            },
        ),
    )
    accepts(data)
    # 0.2 J/token but 500 W / 5000 tokens/s = 0.1; the response energy agrees with 0.2.
    path.write_text(
        json.dumps(
            changed(
                VALID,
                {
                    "metrics.energy_per_token_joules": 0.2,
                    "metrics.energy_per_response_joules": 200.0,
                },
            )
        )
    )
    rejects(
        data,
        path,
        "bounds.energy-inconsistent",
        "/metrics/energy_per_token_joules",
        "0.2 J/token",
        "= 0.1",
        "1%",
        "units",
    )


def test_bounds_response_energy_inconsistent(data: Path) -> None:
    path = write_measurement(data, changed(VALID, {"metrics.energy_per_response_joules": 100.9}))
    accepts(data)
    path.write_text(json.dumps(changed(VALID, {"metrics.energy_per_response_joules": 150.0})))
    rejects(
        data,
        path,
        "bounds.response-energy-inconsistent",
        "/metrics/energy_per_response_joules",
        "150 J",
        "= 100",
        "1%",
    )


def test_bounds_batch_above_cap(data: Path) -> None:
    path = write_measurement(data, changed(VALID, {"metrics.avg_batch_size": 64.5}))  # < 1%
    accepts(data)
    path.write_text(json.dumps(changed(VALID, {"metrics.avg_batch_size": 65.0})))
    rejects(data, path, "bounds.batch-above-cap", "/metrics/avg_batch_size", "max_num_seqs 64")


@pytest.mark.parametrize(
    "serving",
    [
        {"serving.tensor_parallel": 2},
        {"serving.data_parallel": 2},
        {"serving.expert_parallel": 2},
    ],
)
def test_bounds_parallelism_exceeds_gpus(data: Path, serving: dict[str, int]) -> None:
    fits = changed(with_power(1000.0), {"num_gpus": 2, **serving})
    path = write_measurement(data, fits)
    accepts(data)
    path.write_text(json.dumps(changed(with_power(500.0), serving)))
    rejects(data, path, "bounds.parallelism-exceeds-gpus", "/serving", "num_gpus (1)")


def test_bounds_parallelism_tp_times_dp(data: Path) -> None:
    doc = changed(
        with_power(1000.0),
        {"num_gpus": 2, "serving.tensor_parallel": 2, "serving.data_parallel": 2},
    )
    path = write_measurement(data, doc)
    rejects(data, path, "bounds.parallelism-exceeds-gpus", "/serving", "2 x 2")


def test_bounds_real_data_passes_and_every_throughput_x1000_copy_fails() -> None:
    """The tolerance is honest: every token configuration of data/ (ML.ENERGY v3) passes,
    and each one with throughput x1000 (J/token kept consistent) is refused."""
    registry, errors = load_registry(REPO / "data")
    assert registry is not None, errors
    ratios, refused = [], 0
    for path in sorted((REPO / "data/measurements").rglob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc["kind"] == "diffusion":
            continue
        m = doc["metrics"]
        ratios.append(
            m["output_throughput_tokens_per_sec"] * m["median_itl_ms"] / 1000 / m["avg_batch_size"]
        )
        assert check_measurement(doc, path.name, path.name, registry)[1] == [], path
        for key, factor in [
            ("output_throughput_tokens_per_sec", 1000),
            ("energy_per_token_joules", 1e-3),
            ("energy_per_response_joules", 1e-3),
        ]:
            m[key] *= factor
        rules = {p.rule for p in check_measurement(doc, path.name, path.name, registry)[1]}
        refused += rules == {"bounds.throughput-inconsistent"} or rules == {
            "bounds.throughput-inconsistent",
            "bounds.efficiency-above-ceiling",
        }
    assert len(ratios) == refused >= 838
    assert 0.02 < min(ratios) < 0.1 and 1.0 < max(ratios) < 2.0  # as docs/ says: 0.062, 1.391


def with_throughput(tokens_per_sec: float, itl_ms: float) -> dict[str, Any]:
    """VALID at 500 W and 64 sequences with ``tokens_per_sec``, energies kept consistent."""
    ept = 500.0 / tokens_per_sec
    return changed(
        VALID,
        {
            "metrics.output_throughput_tokens_per_sec": tokens_per_sec,
            "metrics.energy_per_token_joules": ept,
            "metrics.energy_per_response_joules": ept * 1000,
            "metrics.avg_batch_size": 64.0,
            "metrics.median_itl_ms": itl_ms,
        },
    )


def test_bounds_throughput_inconsistent(data: Path) -> None:
    # 60 sequences / 12 ms = 5000 tokens/s; the rule allows 0.02 to 2 x that (100 to 10000).
    path = write_measurement(data, changed(VALID, {"metrics.avg_batch_size": 30.0}))
    accepts(data)  # 5000 tokens/s is 2 x 30 / 12 ms: the upper edge
    path.write_text(json.dumps(changed(VALID, {"metrics.avg_batch_size": 29.0})))
    rejects(
        data,
        path,
        "bounds.throughput-inconsistent",
        "/metrics/output_throughput_tokens_per_sec",
        "5000 tokens/s",
        "2.07 x",
        "29 / 12 ms = 2416.67 tokens/s",
        "between 0.02 and 2",
    )
    # Lower edge: 64 / 12 ms = 5333 tokens/s, 0.02 x that is 106.7; 100 is 0.01875 x.
    path.write_text(json.dumps(with_throughput(110.0, 12.0)))
    accepts(data)
    path.write_text(json.dumps(with_throughput(100.0, 12.0)))
    rejects(
        data,
        path,
        "bounds.throughput-inconsistent",
        "/metrics/output_throughput_tokens_per_sec",
        "0.0188 x",
        "= 5333.33 tokens/s",
    )


def the_reported_case(scale: float) -> dict[str, Any]:
    """Qwen3-8B on one H100 at max_num_seqs 96 (ML.ENERGY v3, gpqa), throughput x ``scale``
    with J/token and J/response kept consistent: x1000 is the issue's 4,524 tokens/J."""
    doc = changed(
        VALID,
        {
            "serving.max_num_seqs": 96,
            "metrics": {
                "avg_power_watts": 689.1496984712461,
                "output_throughput_tokens_per_sec": 3117.4206689898256 * scale,
                "energy_per_token_joules": 0.22106406919235558 / scale,
                "avg_output_len_tokens": 8052.388888888889,
                "energy_per_response_joules": 1780.0938544970886 / scale,
                "avg_batch_size": 81.98511904761905,
                "median_itl_ms": 27.875522151589394,
                "p90_itl_ms": 29.844370484352112,
                "p95_itl_ms": 30.95055818557739,
                "p99_itl_ms": 36.87678739428518,
            },
        },
    )
    return doc


def test_bounds_the_reported_throughput_x1000_is_refused_twice(data: Path) -> None:
    path = write_measurement(data, the_reported_case(1.0))
    accepts(data)  # the real measurement: 3117 tokens/s against 82 / 27.9 ms = 2941
    path.write_text(json.dumps(the_reported_case(1000.0)))
    found = problems(data)
    assert {(p.rule, p.pointer) for p in found} == {
        ("bounds.throughput-inconsistent", "/metrics/output_throughput_tokens_per_sec"),
        ("bounds.efficiency-above-ceiling", "/metrics/energy_per_token_joules"),
    }, found
    assert any("4524 tokens/J" in p.message for p in found), found


def test_bounds_efficiency_above_ceiling_tokens(data: Path) -> None:
    # Ceiling on an H100: 0.35 tokens/J per W x 700 W = 245 tokens/J, i.e. 122,500 tokens/s
    # at 500 W. 64 sequences every 0.53 ms make 120,755 tokens/s, so throughput agrees.
    path = write_measurement(data, with_throughput(120_000.0, 0.53))
    accepts(data)  # 240 tokens/J
    path.write_text(json.dumps(with_throughput(125_000.0, 0.53)))  # 250 tokens/J
    rejects(
        data,
        path,
        "bounds.efficiency-above-ceiling",
        "/metrics/energy_per_token_joules",
        "250 tokens/J",
        "ceiling of 245 tokens/J",
        "700 W board power",
        "units",
    )


DIFFUSION_TASK_YAML = """text-to-image:
  name: Text to image
  benchmark: Images
  kind: diffusion
  output_unit: image
  efficiency_scale_joules: 1000
  default_deadline:
    ms: 30000.0
"""


def diffusion_doc(joules_per_image: float) -> dict[str, Any]:
    """A 1024x1024, 20-step image on one H100 at 400 W, batch 1, metrics consistent."""
    throughput = 400.0 / joules_per_image
    return {
        "schema_version": 1,
        "kind": "diffusion",
        "task": "text-to-image",
        "model_id": "acme/tiny-1b",
        "gpu_model": "H100",
        "num_gpus": 1,
        "weight_precision": "bfloat16",
        "serving": {"batch_size": 1},
        "output": {"width_px": 1024, "height_px": 1024, "inference_steps": 20},
        "metrics": {
            "energy_per_output_joules": joules_per_image,
            "avg_power_watts": 400.0,
            "throughput_outputs_per_sec": throughput,
            "batch_latency_s": 1.0 / throughput,
        },
        "provenance": VALID["provenance"],
    }


def test_bounds_efficiency_above_ceiling_diffusion(tmp_path: Path) -> None:
    # 1024 x 1024 px x 20 steps = 20.97 megapixel-steps; the H100 ceiling is 7.5e-4 x 700 W =
    # 0.525 megapixel-steps per J, so 0.02503 images/J: 25.03 images/kJ, 39.95 J per image.
    data = make_data_dir(tmp_path, tasks_yaml=TASKS_YAML + DIFFUSION_TASK_YAML)
    path = write_measurement(data, diffusion_doc(40.0))
    accepts(data)  # 25 images/kJ
    path.write_text(json.dumps(diffusion_doc(39.0)))  # 25.64 images/kJ
    rejects(
        data,
        path,
        "bounds.efficiency-above-ceiling",
        "/metrics/energy_per_output_joules",
        "25.64 images/kJ",
        "ceiling of 25.03 images/kJ",
        "1024x1024 px x 20 steps",
    )


# --- dataset-wide ---------------------------------------------------------------------------


def test_dataset_duplicate_configuration(data: Path) -> None:
    first = write_measurement(data, valid_measurement(), name="a.json")
    second = write_measurement(data, changed(VALID, {"repeat": 2}), name="b.json")
    # A repeat run is a second run of the configuration, folded into one row with runs = 2.
    (one,) = accepts(data).configurations
    assert one.runs == 2 and len(set(one.run_sources)) == 2
    # Same settings with different metrics (and the default repeat spelled out) is a duplicate.
    dup = changed(with_power(600.0), {"repeat": 1})
    second.write_text(json.dumps(dup))
    p = rejects(
        data, second, "dataset.duplicate-configuration", "", "same configuration as", "one file per"
    )
    assert first.name in p.message


def test_dataset_duplicate_configuration_across_folders(data: Path) -> None:
    write_measurement(data, valid_measurement(), folder=Path("measurements/a"))
    later = write_measurement(data, valid_measurement(), folder=Path("measurements/b"))
    rejects(data, later, "dataset.duplicate-configuration", "", "measurements/a/")


# --- registry files -------------------------------------------------------------------------


def test_registries_alone_are_valid(data: Path) -> None:
    assert accepts(data).configurations == ()


@pytest.mark.parametrize(
    ("model_id", "pointer"),
    [
        ("CON/x", "/CON~1x"),
        ("acme/nul", "/acme~1nul"),
        ("acme/com1.tar", "/acme~1com1.tar"),
        ("a/b/c", "/a~1b~1c"),
        ("acme/tiny.", "/acme~1tiny."),
        ("noslash", "/noslash"),
    ],
)
def test_registry_model_id_bad_identifier(tmp_path: Path, model_id: str, pointer: str) -> None:
    models = MODELS_YAML + MODELS_YAML.replace("acme/tiny-1b", model_id)
    data = make_data_dir(tmp_path, models_yaml=models)
    found = problems(data)
    assert [(p.rule, p.pointer) for p in found] == [("value.bad-identifier", pointer)], found
    assert same_file(found[0].file, data / "models.yaml")
    assert model_id in found[0].message
    assert found[0].hint == "rename the entry"


def test_registry_gpu_id_reserved_on_windows(tmp_path: Path) -> None:
    data = make_data_dir(tmp_path, gpus_yaml=GPUS_YAML + GPUS_YAML.replace("H100", "COM1"))
    found = problems(data)
    assert [(p.rule, p.pointer) for p in found] == [("value.bad-identifier", "/COM1")]
    assert "reserved on Windows" in found[0].message
    assert same_file(found[0].file, data / "gpus.yaml")


def test_registry_yaml_duplicate_key(tmp_path: Path) -> None:
    data = make_data_dir(tmp_path, models_yaml=MODELS_YAML + MODELS_YAML)
    found = problems(data)
    assert [(p.rule, p.pointer) for p in found] == [("yaml.duplicate-key", "")], found
    assert same_file(found[0].file, data / "models.yaml")
    assert "'acme/tiny-1b'" in found[0].message and "line 7" in found[0].message


def test_registry_yaml_unhashable_key(tmp_path: Path) -> None:
    data = make_data_dir(tmp_path, models_yaml=MODELS_YAML + "? [a, b]\n: 1\n")
    p = only_problem(data)
    assert (p.rule, p.pointer) == ("yaml.unhashable-key", "")
    assert "list or mapping at line 7" in p.message and same_file(p.file, data / "models.yaml")


def test_registry_yaml_merge_key(tmp_path: Path) -> None:
    anchored = GPUS_YAML.replace("H100:", "H100: &h100")
    accepts(make_data_dir(tmp_path / "near", gpus_yaml=anchored + "H200: *h100\n"))  # alias
    data = make_data_dir(tmp_path, gpus_yaml=anchored + "H200:\n  <<: *h100\n  name: H200\n")
    p = only_problem(data)
    assert (p.rule, p.pointer) == ("yaml.merge-key", "")
    assert "not supported at line 8" in p.message and "not valid YAML" not in p.message
    assert "write each entry's keys out" in p.message


def test_registry_site_default_gpus_unknown(tmp_path: Path) -> None:
    data = make_data_dir(tmp_path, site_yaml=SITE_YAML.replace("[H100]", "[H100, A100]"))
    found = problems(data)
    assert [(p.rule, p.pointer) for p in found] == [("registry.unknown-gpu", "/default_gpus/1")]
    assert same_file(found[0].file, data / "site.yaml")
    assert "'A100'" in found[0].message and "H100" in found[0].hint


def model_entry(model_id: str, nickname: str) -> str:
    return MODELS_YAML.replace("acme/tiny-1b", model_id).replace("Tiny 1B", nickname)


LONG_MODEL = "o" * 96 + "/" + "n" * 96  # the longest id: its slug has 194 characters


@pytest.mark.parametrize(("task", "ok"), [("chat-x", True), ("chat-xy", False)])
def test_value_name_too_long(tmp_path: Path, task: str, ok: bool) -> None:
    # lengths--<194>--<7>.vl.json would be 7 + 2 + 194 + 2 + 7 + 8 = 220 bytes: under 255,
    # but past the 200 characters the rule keeps for model slug + task id.
    data = make_data_dir(
        tmp_path,
        models_yaml=MODELS_YAML + model_entry(LONG_MODEL, "Long"),
        tasks_yaml=TASKS_YAML.replace("chat:", f"{task}:"),
    )
    path = write_measurement(data, changed(VALID, {"model_id": LONG_MODEL, "task": task}))
    if ok:
        accepts(data)
    else:
        rejects(data, path, "value.name-too-long", "/model_id", "201 characters", "shorter")


def only_problem(data: Path) -> Problem:
    found = problems(data)
    assert len(found) == 1, "\n".join(map(str, found))
    return found[0]


@pytest.mark.parametrize(
    ("first", "second", "slug"),
    [
        ("acme/tiny-1b", "Acme/Tiny-1B", "acme--tiny-1b"),  # case
        ("acme--tiny/x", "acme/tiny--x", "acme--tiny--x"),  # where org/name splits
    ],
)
def test_registry_identity_clash_models(tmp_path: Path, first: str, second: str, slug: str) -> None:
    near = make_data_dir(
        tmp_path / "near",
        models_yaml=model_entry(first, "One") + model_entry(first.replace("tiny", "tinier"), "Two"),
    )
    accepts(near)
    data = make_data_dir(
        tmp_path, models_yaml=model_entry(first, "One") + model_entry(second, "Two")
    )
    p = only_problem(data)
    esc = second.replace("/", "~1")
    assert (p.rule, p.pointer) == ("registry.identity-clash", f"/{esc}")
    assert same_file(p.file, data / "models.yaml")
    assert f"{second!r}" in p.message and f"{first!r}" in p.message and slug in p.message
    assert f"models.yaml /{first.replace('/', '~1')})" in p.message  # the other place
    assert "rename or merge" in p.hint


def test_registry_identity_clash_gpus(tmp_path: Path) -> None:
    accepts(
        make_data_dir(tmp_path / "near", gpus_yaml=GPUS_YAML + GPUS_YAML.replace("H100:", "H200:"))
    )
    data = make_data_dir(tmp_path, gpus_yaml=GPUS_YAML + GPUS_YAML.replace("H100:", "h100:"))
    p = only_problem(data)
    assert (p.rule, p.pointer) == ("registry.identity-clash", "/h100")
    assert "'H100' (" in p.message and "gpus.yaml /H100" in p.message


def test_registry_task_id_with_the_slug_separator(tmp_path: Path) -> None:
    # A label is model--task: acme/tiny + task x--y would be named like acme/tiny--x + y.
    accepts(
        make_data_dir(
            tmp_path / "near", tasks_yaml=TASKS_YAML.replace("chat:", "chat-x:") + TASKS_YAML
        )
    )
    data = make_data_dir(tmp_path, tasks_yaml=TASKS_YAML.replace("chat:", "chat--x:") + TASKS_YAML)
    p = only_problem(data)
    assert (p.rule, p.pointer) == ("value.bad-identifier", "/chat--x")
    assert "'--'" in p.message


@pytest.mark.parametrize(
    ("registry", "good", "bad", "found"),
    [
        ("tasks_yaml", "chat-p50-x", "chat-p50-300ms", "p50-300ms"),
        ("tasks_yaml", "batch-300", "x-batch-30000ms-y", "batch-30000ms"),
        ("gpus_yaml", "H100-p99", "H100-P99-1e-05ms", "P99-1e-05ms"),
    ],
)
def test_registry_id_that_looks_like_a_deadline(
    tmp_path: Path, registry: str, good: str, bad: str, found: str
) -> None:
    # Task a, deadline p50-300ms, GPU x-p50-300ms-y and task a-p50-300ms-x, GPU y both named
    # downloads/rankings/a-p50-300ms-x-p50-300ms-y-only.csv: build crashed on the clash.
    text, old = (TASKS_YAML, "chat:") if registry == "tasks_yaml" else (GPUS_YAML, "H100:")
    accepts(make_data_dir(tmp_path / "near", **{registry: text + text.replace(old, f"{good}:")}))
    data = make_data_dir(tmp_path, **{registry: text + text.replace(old, f"{bad}:")})
    p = only_problem(data)
    assert (p.rule, p.pointer) == ("value.bad-identifier", f"/{bad}")
    assert f"contains {found!r}" in p.message and "deadline" in p.message


@pytest.mark.parametrize(
    ("presets", "index", "like"),
    [
        ("[50.0, 50.0]", 1, "like preset 50.0 ms"),
        ("[50.0, 50.0000001]", 1, "like preset 50.0 ms"),  # both print as 50ms
        ("[100.0000001]", 0, "like the default deadline"),  # the default is 100 ms
    ],
)
def test_registry_deadline_clash(tmp_path: Path, presets: str, index: int, like: str) -> None:
    # Downloads are named <task>-p50-<ms:g>ms: two deadlines printed alike claimed one file
    # and build crashed (DuplicatePath). A preset equal to the default is skipped, so allowed.
    def tasks(values: str) -> str:
        return TASKS_YAML + f"  preset_deadlines_ms: {values}\n"

    accepts(make_data_dir(tmp_path / "near", tasks_yaml=tasks("[100.0, 50.0, 50.5]")))
    data = make_data_dir(tmp_path, tasks_yaml=tasks(presets))
    p = only_problem(data)
    assert (p.rule, p.pointer) == ("registry.deadline-clash", f"/chat/preset_deadlines_ms/{index}")
    assert like in p.message and same_file(p.file, data / "tasks.yaml")


@pytest.mark.parametrize(
    "nickname",
    ["tiny 1b", " Tiny   1B ", "TINY\u00a01B", "Ｔｉｎｙ 1B", "T\u0456ny 1B", "Tin\u0443 1\u0412"],
)
def test_registry_duplicate_nickname(tmp_path: Path, nickname: str) -> None:
    # Case, runs of spaces, a no-break space, full-width letters and Cyrillic look-alikes
    # (і for i, у for y, В for B) do not make a new name.
    accepts(
        make_data_dir(
            tmp_path / "near", models_yaml=MODELS_YAML + model_entry("evil/tiny-1b", "Tiny 1B v2")
        )
    )
    second = model_entry("evil/tiny-1b", "X").replace("nickname: X", f"nickname: '{nickname}'")
    data = make_data_dir(tmp_path, models_yaml=MODELS_YAML + second)
    p = only_problem(data)
    assert (p.rule, p.pointer) == ("registry.duplicate-nickname", "/evil~1tiny-1b/nickname")
    assert "'acme/tiny-1b' (" in p.message and "/acme~1tiny-1b/nickname)" in p.message


def test_a_name_that_really_uses_greek_is_its_own_name(tmp_path: Path) -> None:
    # Only look-alikes are read as Latin: "Tiny 1B Σ" (as in PixArt-Σ) is not "Tiny 1B E".
    accepts(
        make_data_dir(
            tmp_path,
            models_yaml=MODELS_YAML
            + model_entry("evil/tiny-1b", "Tiny 1B Σ")
            + model_entry("evil/tiny-2b", "Tiny 1B E"),
        )
    )


@pytest.mark.parametrize(
    "char",
    [
        "\u200b",
        "\u200d",
        "\u200f",
        "\u202a",
        "\u202e",
        "\u2066",
        "\u2069",
        "\ufeff",
        "\u00ad",
        "\u2028",
        "\n",
        "\x00",
    ],
)
@pytest.mark.parametrize(
    ("registry", "old", "pointer"),
    [
        ("models_yaml", "nickname: Tiny 1B", "/acme~1tiny-1b/nickname"),
        ("gpus_yaml", "name: NVIDIA H100 SXM", "/H100/name"),
        ("tasks_yaml", "name: Chat", "/chat/name"),
        (
            "models_yaml",
            "weight_precision: bfloat16",  # a link's host
            "/acme~1tiny-1b/links/0/url",
        ),
    ],
)
def test_value_hidden_character(
    tmp_path: Path, char: str, registry: str, old: str, pointer: str
) -> None:
    texts = {"models_yaml": MODELS_YAML, "gpus_yaml": GPUS_YAML, "tasks_yaml": TASKS_YAML}

    def edited(inner: str) -> dict[str, str]:
        key, value = old.split(": ")
        if pointer.endswith("/url"):
            new = (
                f"{old}\n  links:\n  - label: Card\n"
                f"    url: {json.dumps('https://hugging' + inner + 'face.co/acme')}"
            )
        else:
            new = f"{key}: {json.dumps(value + inner)}"
        return {registry: texts[registry].replace(old, new)}

    accepts(make_data_dir(tmp_path / "near", **edited("-Café-ü-ﬁ")))  # visible non-ASCII
    data = make_data_dir(tmp_path, **edited(char))
    p = only_problem(data)
    if pointer.endswith("/url") and char.isspace():  # the URL pattern refuses it first
        assert (p.rule, p.pointer) == ("value.bad-url", pointer), p
        return
    assert (p.rule, p.pointer) == ("value.hidden-character", pointer), p
    assert f"U+{ord(char):04X}" in p.message and "invisible" in p.hint


def test_registry_problems_are_all_reported_together(tmp_path: Path) -> None:
    data = make_data_dir(
        tmp_path,
        models_yaml=MODELS_YAML + MODELS_YAML.replace("acme/tiny-1b", "CON/x"),
        gpus_yaml=GPUS_YAML + GPUS_YAML,
        site_yaml=SITE_YAML.replace("[H100]", "[A100]"),
        tasks_yaml=TASKS_YAML.replace("kind: llm", "kind: vlm"),
    )
    found = problems(data)
    assert {(Path(p.file).name, p.rule, p.pointer) for p in found} == {
        ("models.yaml", "value.bad-identifier", "/CON~1x"),
        ("gpus.yaml", "yaml.duplicate-key", ""),
        # default_gpus is not checked against a gpus.yaml that failed to load.
        ("tasks.yaml", "value.not-allowed", "/chat/kind"),
    }


def test_registry_rejects_infinite_board_power(tmp_path: Path) -> None:
    data = make_data_dir(tmp_path, gpus_yaml=GPUS_YAML.replace("700.0", ".inf"))
    write_measurement(data, with_power(50_000.0))  # 71 x the real H100 limit
    found = problems(data)
    assert any(
        same_file(p.file, data / "gpus.yaml") and p.pointer == "/H100/board_power_watts"
        for p in found
    ), found


# --- all problems at once, and the command line ---------------------------------------------


def broken_folder(tmp_path: Path) -> tuple[Path, dict[Path, tuple[str, str]]]:
    """A data folder with one valid file and five broken ones; returns path -> (rule, ptr)."""
    data = make_data_dir(tmp_path)
    write_measurement(data, valid_measurement(), name="good.json")
    broken = {
        write_measurement(data, '{"schema_version": 1,', name="syntax.json"): ("json.syntax", ""),
        write_measurement(data, changed(VALID, {"num_gpus": "1"}), name="type.json"): (
            "schema.wrong-type",
            "/num_gpus",
        ),
        write_measurement(data, with_power(900.0), name="power.json"): (
            "bounds.power-above-limit",
            "/metrics/avg_power_watts",
        ),
        write_measurement(data, changed(VALID, {"gpu_model": "A100"}), name="gpu.json"): (
            "registry.unknown-gpu",
            "/gpu_model",
        ),
        write_measurement(data, valid_measurement(), name="zdup.json"): (
            "dataset.duplicate-configuration",
            "",
        ),
        write_measurement(data, "x", name="notes.txt"): ("file.unexpected", ""),
    }
    return data, broken


def test_every_broken_file_is_reported_in_one_run(tmp_path: Path) -> None:
    data, broken = broken_folder(tmp_path)
    found = problems(data)
    got = {(Path(p.file).resolve(), p.rule, p.pointer) for p in found}
    assert got == {(path.resolve(), rule, ptr) for path, (rule, ptr) in broken.items()}


LINE = re.compile(r"^(?P<file>[^:]+): (?P<pointer>/[^:]*): (?P<rule>[a-z]+\.[a-z0-9-]+): .+$")


def run_cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return jouleboard_here(*args, cwd=cwd, timeout=60)


def test_cli_validate_reports_every_problem_without_traceback(tmp_path: Path) -> None:
    data, broken = broken_folder(tmp_path)
    result = run_cli("validate", str(data))
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr + result.stdout
    lines = [m for line in result.stderr.splitlines() if (m := LINE.match(line))]
    reported = {(Path(m["file"]).resolve(), m["rule"], m["pointer"]) for m in lines}
    expected = {(path.resolve(), rule, ptr or "/") for path, (rule, ptr) in broken.items()}
    assert reported == expected, result.stderr
    assert "6 problem(s) in 6 file(s)" in result.stderr
    assert "validation failed" in result.stderr


def test_cli_validate_names_files_relative_to_the_working_folder(tmp_path: Path) -> None:
    data = make_data_dir(tmp_path)
    write_measurement(data, with_power(0.5))
    result = run_cli("validate", "data", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith(
        f"data/{MEASUREMENT_DIR.as_posix()}/{DEFAULT_NAME}: /metrics/avg_power_watts: "
        "bounds.power-implausibly-low: 0.5 W"
    ), result.stderr


def test_cli_validate_ok(tmp_path: Path) -> None:
    data = make_data_dir(tmp_path)
    write_measurement(data, valid_measurement())
    result = run_cli("validate", str(data))
    assert (result.returncode, result.stdout.strip()) == (0, "ok: 1 configuration valid")
