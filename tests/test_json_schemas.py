"""The published JSON Schemas (schema/: a measurement file, site.yaml, every registry, an
MLPerf result) hold the bundled data and name the right field of a mistake when a standard
validator, check-jsonschema, runs them (issue 39, item 7: the measurement schema's oneOf made
it report "'output' is a required property", a diffusion field, for a typo in a
language-model file). The validator's own output is what is checked."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"
LLM = DATA / "measurements/gpqa/openai/gpt-oss-20b"
IMAGE = DATA / "measurements/text-to-image/stabilityai/stable-diffusion-3.5-large"
MLPERF = DATA / "mlperf/v5.1/Lenovo/SR680a_V3_B200SXMx8_TRT/llama2-70b-99/Offline.json"


def check_jsonschema(schema: str, files: list[Path]) -> tuple[int, list[dict[str, Any]]]:
    """check-jsonschema's verdict and errors (path, message) on ``files``: its command line,
    run in this process by Click's own test runner (a new interpreter took about a second)."""
    from check_jsonschema import main
    from click.testing import CliRunner

    done = CliRunner().invoke(
        main,
        ["--output-format", "json", "--schemafile", str(REPO / "schema" / schema)]
        + [str(f) for f in files],
        catch_exceptions=False,
    )
    report = json.loads(done.stdout)
    assert not report.get("parse_errors"), report["parse_errors"]
    return done.exit_code, report["errors"]


def test_the_committed_schemas_are_the_models_own() -> None:
    from jouleboard.commands.schema import NAMES
    from jouleboard.plan.schemas import SCHEMAS, schema_text

    assert set(NAMES) == set(SCHEMAS)
    for name, (file, _, _) in SCHEMAS.items():
        committed = (REPO / "schema" / file).read_text(encoding="utf-8")
        assert committed == schema_text(name), (
            f"schema/{file} is out of date: jouleboard schema all --out schema"
        )


@pytest.mark.slow  # runs the validator over every bundled file (about 2,000)
def test_the_bundled_data_holds_to_every_schema() -> None:
    measurements = sorted((DATA / "measurements").rglob("*.json"))
    assert len(measurements) > 1800
    cases = [
        ("measurement.schema.json", measurements),
        ("mlperf-result.schema.json", sorted((DATA / "mlperf").rglob("*.json"))),
        ("quality.schema.json", sorted((DATA / "quality").glob("*.yaml"))),
        *((f"{n}.schema.json", [DATA / f"{n}.yaml"]) for n in ("site", "models", "gpus", "tasks")),
        ("releases.schema.json", [DATA / "releases.yaml"]),
    ]
    for schema, files in cases:
        assert check_jsonschema(schema, files) == (0, []), schema


def first(folder: Path) -> Any:
    return json.loads(sorted(folder.glob("*.json"))[0].read_text(encoding="utf-8"))


def registry(name: str) -> Any:
    return yaml.safe_load((DATA / name).read_text(encoding="utf-8"))


def rename(doc: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    doc[new] = doc.pop(old)
    return doc


def metrics_typo(doc: dict[str, Any]) -> dict[str, Any]:
    rename(doc["metrics"], "energy_per_token_joules", "energy_per_tokn_joules")
    return doc


def first_entry(doc: dict[str, Any], change: Callable[[dict[str, Any]], object]) -> Any:
    change(next(iter(doc.values())))
    return doc


# (what, schema, the file it starts from, the mistake, where the error must point, words it
# must say; no error may name any of `not_said`)
MISTAKES: list[
    tuple[str, str, Callable[[], Any], Callable[[Any], Any], str, str, tuple[str, ...]]
] = [
    (
        "a typo in a language-model file's metrics",
        "measurement",
        lambda: first(LLM),
        metrics_typo,
        "$.metrics",
        "'energy_per_tokn_joules' was unexpected",
        ("output", "diffusion"),
    ),
    (
        "a typo in a top-level field",
        "measurement",
        lambda: first(LLM),
        lambda d: rename(d, "serving", "servng"),
        "$",
        "'servng' was unexpected",
        ("output", "diffusion"),
    ),
    (
        "an unknown kind",
        "measurement",
        lambda: first(LLM),
        lambda d: {**d, "kind": "lm"},
        "$.kind",
        "'lm' is not one of ['llm', 'mllm', 'diffusion']",
        (),
    ),
    (
        "a number written as a string",
        "measurement",
        lambda: first(LLM),
        lambda d: {**d, "num_gpus": "1"},
        "$.num_gpus",
        "'1' is not of type 'integer'",
        ("output",),
    ),
    (
        "an image file without its output",
        "measurement",
        lambda: first(IMAGE),
        lambda d: {k: v for k, v in d.items() if k != "output"},
        "$",
        "'output' is a required property",
        ("itl",),
    ),
    (
        "a path as the logo",
        "site",
        lambda: registry("site.yaml"),
        lambda d: {**d, "logo": "/home/me/logo.svg"},
        "$.logo",
        "'/home/me/logo.svg' does not match",
        (),
    ),
    (
        "an unquoted accent colour (YAML reads it as null)",
        "site",
        lambda: registry("site.yaml"),
        lambda d: {**d, "accent_color": None},
        "$.accent_color",
        "None is not of type 'string'",
        (),
    ),
    (
        "a misspelt site.yaml key",
        "site",
        lambda: registry("site.yaml"),
        lambda d: rename(d, "title", "titel"),
        "$",
        "'titel' was unexpected",
        (),
    ),
    (
        "a model id without its organisation",
        "models",
        lambda: registry("models.yaml"),
        lambda d: rename(d, next(iter(d)), "gpt-oss-20b"),
        "$",
        "'gpt-oss-20b' does not match",
        (),
    ),
    (
        "a model's parameters as a string",
        "models",
        lambda: registry("models.yaml"),
        lambda d: first_entry(d, lambda m: m.update(total_params_billions="8")),
        "total_params_billions",
        "'8' is not of type 'number'",
        (),
    ),
    (
        "a negative board power",
        "gpus",
        lambda: registry("gpus.yaml"),
        lambda d: first_entry(d, lambda g: g.update(board_power_watts=-700)),
        "board_power_watts",
        "-700 is less than or equal to the minimum of 0",
        (),
    ),
    (
        "an unknown deadline percentile",
        "tasks",
        lambda: registry("tasks.yaml"),
        lambda d: first_entry(d, lambda t: t["default_deadline"].update(percentile="p42")),
        "default_deadline.percentile",
        "'p42' is not one of ['p50', 'p90', 'p95', 'p99']",
        (),
    ),
    (
        "an accuracy over 100%",
        "quality",
        lambda: yaml.safe_load((DATA / "quality/gpqa.yaml").read_text(encoding="utf-8")),
        lambda d: d["scores"][0].update(accuracy_percent=120) or d,
        "$.scores[0].accuracy_percent",
        "120 is greater than the maximum of 100",
        (),
    ),
    (
        "a release without its date",
        "releases",
        lambda: registry("releases.yaml"),
        lambda d: d["releases"][0].pop("date") and d,
        "$.releases[0]",
        "'date' is a required property",
        (),
    ),
    (
        "a misspelt MLPerf scenario",
        "mlperf-result",
        lambda: json.loads(MLPERF.read_text(encoding="utf-8")),
        lambda d: {**d, "scenario": "Offlne"},
        "$.scenario",
        "'Offlne' is not one of ['Offline', 'Server']",
        (),
    ),
]


@pytest.mark.slow  # one validator process per mistake
@pytest.mark.parametrize(
    ("what", "schema", "start", "mistake", "where", "says", "not_said"),
    MISTAKES,
    ids=[m[0] for m in MISTAKES],
)
def test_a_standard_validator_names_the_field_of_each_mistake(
    tmp_path: Path,
    what: str,
    schema: str,
    start: Callable[[], Any],
    mistake: Callable[[Any], Any],
    where: str,
    says: str,
    not_said: tuple[str, ...],
) -> None:
    suffix = ".json" if schema in ("measurement", "mlperf-result") else ".yaml"
    path = tmp_path / f"mistake{suffix}"
    doc = mistake(start())
    path.write_text(json.dumps(doc) if suffix == ".json" else yaml.safe_dump(doc), encoding="utf-8")
    status, errors = check_jsonschema(f"{schema}.schema.json", [path])
    assert status == 1 and errors, what
    assert any(e["path"].endswith(where) and says in e["message"] for e in errors), errors
    for e in errors:
        for word in not_said:
            assert word not in e["message"], (what, e)


def test_validate_cites_the_schema_of_the_file(tmp_path: Path) -> None:
    """A schema problem's hint names the published schema that states the rule."""
    from jouleboard.commands.init import init_site
    from jouleboard.core.problems import ValidationFailed
    from jouleboard.loading.dataset import load_dataset

    init_site(tmp_path / "s", requirement_line="jouleboard==0.1.0")
    data = tmp_path / "s" / "data"
    with (data / "site.yaml").open("a") as f:
        f.write("table_rows: 0\n")
    gpus = registry("gpus.yaml")
    first_entry(gpus, lambda g: g.update(memory_gb="80"))
    (data / "gpus.yaml").write_text(yaml.safe_dump(gpus))
    with pytest.raises(ValidationFailed) as failed:
        load_dataset(data)
    hints = {p.file.rsplit("/", 1)[-1]: p.hint for p in failed.value.problems}
    assert hints["site.yaml"].endswith("its JSON Schema: `jouleboard schema site`")
    assert "numbers are JSON numbers" in hints["gpus.yaml"]  # a better hint stays
