"""The seam: a kind of task defined only under tests/ (speech recognition, tests/speech_kind.py)
builds a whole site from its own data (tests/fixtures/speech) with no change to the package."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from jouleboard import kinds
from jouleboard.api import rank_task
from jouleboard.core.urls import model_slug
from jouleboard.engine.build import build_site
from jouleboard.loading.dataset import load_dataset
from tests.speech_kind import SpeechKind

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "fixtures" / "speech"
PARAKEET, WHISPER = "nvidia/parakeet-tdt-0.6b", "openai/whisper-large-v3"


@pytest.fixture(scope="module")
def speech() -> Iterator[SpeechKind]:
    kind = SpeechKind()
    kinds.register(kind)
    yield kind
    kinds.unregister(kind)


@pytest.fixture(scope="module")
def site(speech: SpeechKind, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("speech") / "site"
    build_site(DATA, out, project=REPO)
    return out


def test_the_package_knows_nothing_of_the_kind() -> None:
    for path in (REPO / "jouleboard").rglob("*.py"):
        text = path.read_text(encoding="utf-8").lower()
        assert "speech" not in text and '"asr"' not in text, path


def test_unregistered_the_kind_is_a_located_problem(tmp_path: Path) -> None:
    from jouleboard.core.problems import ValidationFailed

    with pytest.raises(ValidationFailed) as e:
        load_dataset(DATA)
    assert [(Path(p.file).name, p.pointer, p.rule) for p in e.value.problems] == [
        ("tasks.yaml", "/asr/kind", "value.not-allowed")
    ]


def test_ranking_by_hand(speech: SpeechKind) -> None:
    """100 ms/s: Whisper only at batch 1 (400 W / 50 s/s = 8 J per audio second); Parakeet's
    best is H100 batch 32 (500 / 1000 = 0.5 J). 200 ms/s admits Whisper batch 16 (800 / 400
    = 2 J) and Parakeet B200 batch 32 (700 / 2000 = 0.35 J)."""
    data = load_dataset(DATA)
    at_100 = rank_task(data, "asr").records
    assert [(r["model_id"], r["gpu_model"], r["batch_size"]) for r in at_100] == [
        (PARAKEET, "H100", 32),
        (WHISPER, "B200", 1),
    ]
    assert [r["energy_per_audio_second_joules"] for r in at_100] == [0.5, 8.0]
    at_200 = rank_task(data, "asr", deadline_ms=200).records
    assert [(r["model_id"], r["energy_per_audio_second_joules"]) for r in at_200] == [
        (PARAKEET, 0.35),
        (WHISPER, 2.0),
    ]


def test_every_page_and_file_is_built(site: Path) -> None:
    for path in (
        "index.html",
        "tasks/asr/index.html",
        f"models/{model_slug(PARAKEET)}/index.html",
        f"models/{model_slug(WHISPER)}/index.html",
        "gpus/b200/index.html",
        "gpus/h100/index.html",
        "compare/index.html",
        "downloads/index.html",
        "explore/asr.json",
        "embed/top--asr/index.html",
        "embed/configurations--asr/index.html",
        "charts/top--asr.svg",
        f"labels/{model_slug(PARAKEET)}--asr.svg",
        "sitemap.xml",
        "downloads/measurement.schema.json",
    ):
        assert (site / path).is_file(), path


def test_task_page_speaks_the_kind(site: Path) -> None:
    html = (site / "tasks/asr/index.html").read_text()
    assert "processing time per audio second ≤ 100 ms/s" in html
    assert "Audio seconds/J" in html and "per 1,000 hours of audio" in html
    assert 'data-percentiles="p50"' in html  # one latency: no percentile choice
    body = html.split('id="ranking-asr"')[1].split("</table>")[0]
    assert body.index("Parakeet TDT 0.6B") < body.index("Whisper Large v3")
    assert ">2.00<" in body and ">0.125<" in body  # audio seconds per joule, 3 digits


def test_downloads_and_schema_cover_the_kind(site: Path) -> None:
    rows = list(
        csv.DictReader(io.StringIO((site / "downloads/configurations-speech.csv").read_text()))
    )
    assert len(rows) == len(list((DATA / "measurements").rglob("*.json"))) == 6
    preset = list(
        csv.DictReader(io.StringIO((site / "downloads/rankings/asr-p50-200ms.csv").read_text()))
    )
    assert [(r["model_id"], float(r["energy_per_audio_second_joules"])) for r in preset] == [
        (PARAKEET, 0.35),
        (WHISPER, 2.0),
    ]
    assert "configurations-speech.csv" in (site / "downloads/index.html").read_text()
    schema = json.loads((site / "downloads/measurement.schema.json").read_text())
    assert "SpeechMeasurement" in json.dumps(schema)


def test_browser_data_carries_the_kinds_descriptors(site: Path) -> None:
    data = json.loads((site / "explore/asr.json").read_text())
    assert data["kind"] == "speech"
    assert data["order"]["latency"]["p50"] == ["real_time_factor", 1000.0]
    assert [c["key"] for c in data["table"]] == [
        "gpu",
        "weight_precision",
        "efficiency",
        "energy_per_audio_second_joules",
        "real_time_factor",
        "batch_size",
    ]
    assert data["latency"]["unit"] == "ms/s"


# --- the same site from the command line: site.yaml declares the kind --------------------


def site_with_kinds(root: Path, entries: list[str], module: str | None = None) -> Path:
    """A copy of the speech fixture whose site.yaml lists ``entries`` under ``kinds``, with
    ``module`` (a text) at kinds/speech.py of the data folder."""
    data = root / "speech"
    shutil.copytree(DATA, data)
    if module is not None:
        (data / "kinds").mkdir()
        (data / "kinds" / "speech.py").write_text(module, encoding="utf-8")
    site_yaml = data / "site.yaml"
    site_yaml.write_text(
        site_yaml.read_text(encoding="utf-8")
        + "kinds:\n"
        + "".join(f"  - {json.dumps(e)}\n" for e in entries),
        encoding="utf-8",
    )
    return data


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m jouleboard``, in a fresh interpreter, from this checkout (the kinds are
    code: the tests pass --allow-kind-code, as a site owner does after review)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "jouleboard", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_cli_builds_a_site_whose_site_yaml_declares_the_kind(tmp_path: Path) -> None:
    module = (REPO / "tests" / "speech_kind.py").read_text(encoding="utf-8")
    data = site_with_kinds(tmp_path, ["kinds/speech.py"], module)
    done = cli(
        "build",
        "--allow-kind-code",
        "--data",
        str(data),
        "--out",
        str(tmp_path / "out"),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    html = (out / "tasks/asr/index.html").read_text(encoding="utf-8")
    assert "processing time per audio second ≤ 100 ms/s" in html
    body = html.split('id="ranking-asr"')[1].split("</table>")[0]
    assert body.index("Parakeet TDT 0.6B") < body.index("Whisper Large v3")
    rows = list(
        csv.DictReader(
            io.StringIO((out / "downloads/configurations-speech.csv").read_text(encoding="utf-8"))
        )
    )
    assert len(rows) == 6
    done = cli("validate", "--allow-kind-code", "--data", str(data), cwd=tmp_path)
    assert (done.returncode, done.stdout.strip()) == (0, "ok: 6 configurations valid")


def test_an_import_path_names_the_kind_too(tmp_path: Path) -> None:
    data = site_with_kinds(tmp_path, ["tests.speech_kind:SpeechKind"])
    # tests is importable through PYTHONPATH (cli), not from the working folder: a module of
    # the working folder is refused (tests/test_kind_consent.py)
    done = cli("validate", "--allow-kind-code", "--data", str(data), cwd=tmp_path)
    assert (done.returncode, done.stdout.strip()) == (0, "ok: 6 configurations valid")


@pytest.mark.parametrize(
    ("entry", "module", "rule"),
    [
        ("kinds/absent.py", None, "kinds.missing"),
        ("no_such_package.kinds:Kind", None, "kinds.missing"),
        ("kinds/speech.py", "X = 1\n", "kinds.not-a-kind"),
        ("kinds/speech.py:Nothing", "from tests.speech_kind import *\n", "kinds.not-a-kind"),
        ("kinds/speech.py", "raise RuntimeError('boom')\n", "kinds.load-failed"),
        ("kinds/../../outside.py", None, "kinds.outside-data"),
    ],
)
def test_a_bad_kind_entry_is_one_located_problem(
    tmp_path: Path, entry: str, module: str | None, rule: str
) -> None:
    data = site_with_kinds(tmp_path, [entry], module)
    (tmp_path / "outside.py").write_text("X = 1\n", encoding="utf-8")
    done = cli(
        "build", "--allow-kind-code", "--data", str(data), "--out", str(tmp_path / "out"), cwd=REPO
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    first = next(
        line for line in done.stderr.splitlines() if not line.startswith("running kind code: ")
    )
    assert first.startswith(f"{data / 'site.yaml'}: /kinds/0: {rule}: "), first
    assert not (tmp_path / "out").exists()
