"""import-mlperf against the real MLPerf Inference power results in tests/fixtures/mlperf
(22 results verbatim from MLCommons' repositories, and the official v5.1 summary).

The oracle is MLCommons' own table: summary_results-v5.1-power.json gives throughput and
average power for every v5.1 result; the logs must give the same numbers."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from jouleboard.config.registry import load_registry
from jouleboard.core.problems import ValidationFailed
from jouleboard.importers.mlperf import (
    Location,
    average_power,
    import_mlperf,
    locate,
    raw_result,
    result_folders,
)
from jouleboard.kinds import task_kind_order
from tests.cli_run import jouleboard as jouleboard_here

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "mlperf"
SUMMARY = FIXTURES / "summary_results-v5.1-power.json"
GPUS = ("B200", "H100", "H200")


def unpacked(root: Path) -> Path:
    """``root`` holding the official layout: inference_results_v4.1/ and _v5.1/."""
    with tarfile.open(FIXTURES / "results.tar.xz") as tar:
        tar.extractall(root, filter="data")
    return root


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The unpacked official layout: inference_results_v4.1/ and inference_results_v5.1/."""
    return unpacked(tmp_path_factory.mktemp("mlperf"))


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A data folder whose gpus.yaml knows B200, H100 and H200."""
    folder = tmp_path / "data"
    shutil.copytree(REPO / "jouleboard" / "skeleton" / "data", folder)
    return folder


def tree_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        h.update(p.relative_to(folder).as_posix().encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def official_rows() -> list[dict[str, object]]:
    rows = json.loads(SUMMARY.read_text(encoding="utf-8"))
    assert isinstance(rows, list)
    return rows


def test_the_logs_give_mlcommons_official_figures(results: Path) -> None:
    """Every v5.1 row of the official summary that jouleboard covers: throughput and power
    from the raw logs equal the official figures (10,400.9988793425 W over 2,677 samples for
    llama2-70b-99 Offline, as the fixture's README says)."""
    checked = 0
    for row in official_rows():
        if row["Model"] in ("whisper", "rgat"):
            continue
        folder = results / "inference_results_v5.1" / str(row["Location"])
        loc = locate(folder)
        assert isinstance(loc, Location), loc
        doc = raw_result(loc, GPUS)
        assert isinstance(doc, dict), doc
        assert doc["throughput_per_sec"] == pytest.approx(row["Performance_Result"], rel=1e-12)
        assert doc["avg_power_watts"] == pytest.approx(row["Power_Result"], rel=1e-12)
        checked += 1
    assert checked == 10
    offline = results / "inference_results_v5.1/closed/Lenovo/results"
    loc = locate(offline / "SR680a_V3_B200SXMx8_TRT/llama2-70b-99/Offline")
    assert isinstance(loc, Location)
    doc = raw_result(loc, GPUS)
    assert isinstance(doc, dict)
    assert doc["power_samples"] == 2677
    assert doc["avg_power_watts"] == pytest.approx(10400.9988793425, rel=1e-14)


def test_average_power_is_the_mean_over_the_window_ends_included() -> None:
    import datetime

    lines = [
        "Time,01-01-2025 00:00:00.000,Watts,9999.0,Volts,230",  # before the window
        "Time,01-01-2025 00:00:01.000,Watts,100.0,Volts,230",  # at power_begin: counts
        "Time,01-01-2025 00:00:02.000,Watts,200.0,Volts,230",
        "Time,01-01-2025 00:00:03.000,Watts,600.0,Volts,230",  # at power_end: counts
        "Time,01-01-2025 00:00:04.000,Watts,1.0,Volts,230",  # after
    ]
    begin = datetime.datetime(2025, 1, 1, 0, 0, 1)
    end = datetime.datetime(2025, 1, 1, 0, 0, 3)
    assert average_power("\n".join(lines), begin, end, "spl.txt") == (300.0, 3)


def test_import_writes_every_valid_power_result_and_says_what_it_skipped(
    results: Path, data: Path
) -> None:
    registry, _ = load_registry(data, task_kind_order())
    assert registry is not None
    done = import_mlperf(
        [results / "inference_results_v4.1", results / "inference_results_v5.1", SUMMARY],
        data,
        registry,
    )
    assert len(done.written) == 22
    assert sorted(s.why for s in done.skipped) == [
        "workload rgat is not one jouleboard ranks",
        "workload whisper is not one jouleboard ranks",
    ]
    docs = [json.loads((data / rel).read_text()) for rel in done.written]
    assert all(d["provenance"]["boundary"] == "system-ac" for d in docs)
    # v5.1 rows got their result ID from the summary; v4.1 has no summary here.
    ids = {(d["round"], d.get("result_id", "")) for d in docs}
    assert ids == {("v4.1", ""), ("v5.1", "5.1-0061"), ("v5.1", "5.1-0062")}
    server = next(
        d for d in docs if d["benchmark"] == "llama2-70b-99" and d["round"] == "v4.1"
        and d["scenario"] == "Server"
    )  # fmt: skip
    # The constraint and the run's p99s as mlperf_log_summary.txt prints them, in ms.
    assert server["latency"] == {
        "ttft_limit_ms": 2000.0,
        "tpot_limit_ms": 200.0,
        "ttft_p99_ms": pytest.approx(519.270971),
        "tpot_p99_ms": pytest.approx(158.802079),
    }
    assert "latency" not in next(d for d in docs if d["scenario"] == "Offline")
    # Again: nothing changes.
    again = import_mlperf(
        [results / "inference_results_v4.1", results / "inference_results_v5.1", SUMMARY],
        data,
        registry,
    )
    assert again.written == () and again.unchanged == 22


def test_the_summary_alone_gives_the_same_numbers_as_the_logs(
    results: Path, data: Path, tmp_path: Path
) -> None:
    registry, _ = load_registry(data, task_kind_order())
    assert registry is not None
    other = tmp_path / "other"
    shutil.copytree(data, other)
    from_logs = import_mlperf([results / "inference_results_v5.1"], data, registry)
    from_summary = import_mlperf([SUMMARY], other, registry)
    assert sorted(from_logs.written) == sorted(from_summary.written)
    for rel in from_logs.written:
        a, b = json.loads((data / rel).read_text()), json.loads((other / rel).read_text())
        assert a["throughput_per_sec"] == pytest.approx(b["throughput_per_sec"], rel=1e-12)
        assert a["avg_power_watts"] == pytest.approx(b["avg_power_watts"], rel=1e-12)


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return jouleboard_here("import-mlperf", *args)


def one_result(results: Path, tmp_path: Path) -> Path:
    """A copy of the v5.1 Lenovo submission with one result (llama2-70b-99 Server) to break."""
    copy = tmp_path / "inference_results_v5.1"
    shutil.copytree(results / "inference_results_v5.1", copy)
    return copy / "closed/Lenovo/results/SR680a_V3_B200SXMx8_TRT/llama2-70b-99/Server"


@pytest.mark.parametrize(
    ("breakage", "rule"),
    [
        ("window-elsewhere", "mlperf.empty-power-window"),
        ("bad-line", "mlperf.bad-power-line"),
        ("no-throughput", "mlperf.missing-log-key"),
        ("no-window", "mlperf.missing-log-key"),
    ],
)
def test_a_malformed_result_fails_the_import_located_and_writes_nothing(
    results: Path, data: Path, tmp_path: Path, breakage: str, rule: str
) -> None:
    folder = one_result(results, tmp_path)
    run = folder / "performance" / "run_1"
    spl, detail = run / "spl.txt", run / "mlperf_log_detail.txt"
    lines = spl.read_text().splitlines()
    if breakage == "window-elsewhere":  # the analyzer's file of another day
        spl.write_text("\n".join(x.replace("07-28-2025", "07-29-2025") for x in lines) + "\n")
    elif breakage == "bad-line":
        lines[len(lines) // 2] = "Time,garbled"
        spl.write_text("\n".join(lines) + "\n")
    else:
        key = "result_completed_tokens_per_second" if breakage == "no-throughput" else "power_end"
        kept = [x for x in detail.read_text().splitlines() if f'"key": "{key}"' not in x]
        detail.write_text("\n".join(kept) + "\n")
    before = tree_digest(data)
    done = run_cli(folder.parents[4], "--out", data)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    assert f": {rule}: " in done.stderr, done.stderr
    where = "spl.txt" if breakage in ("window-elsewhere", "bad-line") else "mlperf_log_detail.txt"
    assert f"llama2-70b-99/Server/performance/run_1/{where}" in done.stderr
    if breakage == "bad-line":
        assert f"line {len(lines) // 2 + 1}:" in done.stderr
    assert tree_digest(data) == before


def test_invalid_or_unpowered_results_are_skipped_with_the_reason(
    results: Path, data: Path, tmp_path: Path
) -> None:
    folder = one_result(results, tmp_path)
    summary = folder / "performance/run_1/mlperf_log_summary.txt"
    detail = folder / "performance/run_1/mlperf_log_detail.txt"
    summary.write_text(summary.read_text().replace("Result is : VALID", "Result is : INVALID"))
    detail.write_text(detail.read_text().replace('"value": "VALID"', '"value": "INVALID"'))
    unpowered = folder.parent / "Offline/performance/run_1"
    (unpowered / "spl.txt").unlink()
    kept = [
        x
        for x in (unpowered / "mlperf_log_detail.txt").read_text().splitlines()
        if '"power_begin"' not in x and '"power_end"' not in x
    ]
    (unpowered / "mlperf_log_detail.txt").write_text("\n".join(kept) + "\n")
    done = run_cli(folder.parent, "--out", data)
    assert done.returncode == 0, done.stderr
    assert "llama2-70b-99/Server: the result is INVALID" in done.stdout
    assert "llama2-70b-99/Offline: no power measurement" in done.stdout
    assert "2 results found, 0 imported, 2 skipped" in done.stdout
    assert not (data / "mlperf").exists()


def test_a_summary_that_disagrees_with_the_logs_is_located(
    results: Path, data: Path, tmp_path: Path
) -> None:
    rows = official_rows()
    i = next(i for i, r in enumerate(rows) if r["Model"] == "llama3.1-8b")
    rows[i]["Power_Result"] = float(rows[i]["Power_Result"]) * 1.01  # type: ignore[arg-type]
    tampered = tmp_path / "summary_results.json"
    tampered.write_text(json.dumps(rows))
    done = run_cli(results / "inference_results_v5.1", tampered, "--out", data)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"summary_results.json: /{i}/Power_Result: mlperf.summary-mismatch" in done.stderr
    assert not (data / "mlperf").exists()


def test_a_result_outside_the_official_layout_is_refused(
    results: Path, data: Path, tmp_path: Path
) -> None:
    lone = tmp_path / "somewhere" / "Server"
    shutil.copytree(
        results / "inference_results_v5.1/closed/Lenovo/results/SR680a_V3_B200SXMx8_TRT"
        "/llama2-70b-99/Server",
        lone,
    )
    done = run_cli(lone, "--out", data)
    assert done.returncode != 0 and "mlperf.not-in-results-layout" in done.stderr


def test_a_file_the_importer_did_not_write_is_never_replaced(results: Path, data: Path) -> None:
    mine = data / "mlperf/v5.1/Lenovo/SR680a_V3_B200SXMx8_TRT/llama2-70b-99/Server.json"
    mine.parent.mkdir(parents=True)
    mine.write_text("{}\n")
    done = run_cli(results / "inference_results_v5.1", "--out", data)
    assert done.returncode != 0 and "import.would-replace" in done.stderr
    assert mine.read_text() == "{}\n"


def test_every_result_folder_of_the_fixture_is_found(results: Path) -> None:
    assert len(result_folders(results)) == 12 + 10  # v4.1 NVIDIA, v5.1 Lenovo
    with pytest.raises(ValidationFailed):
        registry, _ = load_registry(REPO / "jouleboard" / "skeleton" / "data", task_kind_order())
        assert registry is not None
        from jouleboard.importers.mlperf import plan_import

        plan_import([results / "nothing-here"], registry)


@pytest.mark.parametrize("planted", ["link", "fifo"])
def test_a_log_that_is_a_link_or_a_pipe_is_refused_not_followed(
    results: Path, data: Path, tmp_path: Path, planted: str
) -> None:
    """A link (to a file outside the results) or a pipe in place of spl.txt is never opened:
    a located file.not-regular, no hang, nothing written."""
    import os

    folder = one_result(results, tmp_path)
    spl = folder / "performance" / "run_1" / "spl.txt"
    spl.unlink()
    if planted == "link":
        outside = tmp_path / "secret.txt"
        outside.write_text("Time,07-28-2025 04:30:00.000,Watts,1.0\n")
        spl.symlink_to(outside)
    else:
        os.mkfifo(spl)
    before = tree_digest(data)
    done = jouleboard_here("import-mlperf", folder.parents[4], "--out", data, timeout=60)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert re.search(
        r"llama2-70b-99/Server/performance/run_1/spl\.txt: /: file\.not-regular", done.stderr
    ), done.stderr
    assert tree_digest(data) == before


def test_importing_dot_from_inside_a_result_folder_works(results: Path, data: Path) -> None:
    """`jouleboard import-mlperf .` run inside a Scenario folder: its place in the layout is
    read from the resolved path (a traceback before: "." has no parents)."""
    folder = results / "inference_results_v5.1/closed/Lenovo/results/SR680a_V3_B200SXMx8_TRT"
    done = jouleboard_here(
        "import-mlperf", ".", "--out", data, cwd=folder / "llama2-70b-99" / "Server"
    )
    assert done.returncode == 0, done.stderr
    written = data / "mlperf/v5.1/Lenovo/SR680a_V3_B200SXMx8_TRT/llama2-70b-99/Server.json"
    doc = json.loads(written.read_text())
    assert doc["system"]["host"] == "2x Intel(R) Xeon(R) Platinum 8568Y+"  # systems/*.json
    assert doc["avg_power_watts"] == pytest.approx(10442.2597402597, rel=1e-12)  # official


@pytest.mark.parametrize("nodes", [[1], {"n": 1}, "one", 1.5, True])
def test_a_system_whose_node_count_is_no_number_is_located(
    results: Path, data: Path, tmp_path: Path, nodes: object
) -> None:
    """systems/<system>.json's number_of_nodes multiplies the accelerators: a list, an
    object, text, a fraction or a boolean there is one located problem, not a traceback."""
    folder = one_result(results, tmp_path)
    system = folder.parents[3] / "systems" / "SR680a_V3_B200SXMx8_TRT.json"
    doc = json.loads(system.read_text())
    doc["number_of_nodes"] = nodes
    system.write_text(json.dumps(doc))
    done = run_cli(folder.parents[4], "--out", data)
    assert done.returncode != 0 and "Traceback" not in done.stderr + done.stdout
    assert "systems/SR680a_V3_B200SXMx8_TRT.json: /number_of_nodes: mlperf.bad-system: " in (
        done.stderr
    )
    assert not (data / "mlperf").exists()


SUMMARY_41 = FIXTURES / "summary_results-v4.1-power.json"


def test_a_re_import_never_drops_what_a_file_holds(results: Path, data: Path) -> None:
    """Issue 39: importing the logs with the round's summary, then the logs alone, wrote 10
    files and lost result ID 5.1-0061 in silence; the summary alone lost the latencies, the
    power samples and the date. Both are now refused, naming the fields, with nothing
    written; what a re-import adds is said field by field."""
    registry, _ = load_registry(data, task_kind_order())
    assert registry is not None
    v51 = results / "inference_results_v5.1"
    import_mlperf([v51], data, registry)
    richer = import_mlperf([v51, SUMMARY], data, registry)
    assert richer.changes and all(c.endswith(('/result_id: added "5.1-0061"',
                                              '/result_id: added "5.1-0062"'))
                                  for c in richer.changes)  # fmt: skip
    before = tree_digest(data)
    with pytest.raises(ValidationFailed) as logs_only:
        import_mlperf([v51], data, registry)
    lost = [p for p in logs_only.value.problems if p.rule == "import.would-lose"]
    assert len(lost) == 10 and all(p.pointer == "/result_id" for p in lost)
    with pytest.raises(ValidationFailed) as summary_only:
        import_mlperf([SUMMARY], data, registry)
    messages = " ".join(p.message for p in summary_only.value.problems)
    for field in ("/power_samples", "/latency", "/provenance/date"):
        assert field in messages, field
    assert tree_digest(data) == before


def test_the_v41_summary_gives_v41_results_their_result_id(results: Path, data: Path) -> None:
    """v4.1's summary (MLCommons' own, beside v5.1's) gives every v4.1 row result ID
    v4.1-0049. It reports gptj, counted in samples, in the tokens the run inferred
    (13,096.6 tokens/s Offline = the log's result_inferred_tokens_per_second): matched
    against those, its ID joins the gptj results; the row alone cannot stand for them."""
    registry, _ = load_registry(data, task_kind_order())
    assert registry is not None
    done = import_mlperf([results / "inference_results_v4.1", SUMMARY_41], data, registry)
    assert len(done.written) == 12
    docs = [json.loads((data / rel).read_text()) for rel in done.written]
    assert {d["result_id"] for d in docs} == {"v4.1-0049"}
    gptj = next(d for d in docs if d["benchmark"] == "gptj-99" and d["scenario"] == "Offline")
    assert gptj["throughput_per_sec"] == pytest.approx(189.806)  # samples/s, from the logs
    alone = data.parent / "alone"
    shutil.copytree(REPO / "jouleboard" / "skeleton" / "data", alone)
    only = import_mlperf([SUMMARY_41], alone, registry)
    reasons = [s.why for s in only.skipped if "gptj" in s.why]
    assert len(reasons) == 4 and all("import its logs with the summary" in r for r in reasons)


def test_the_bundled_mlperf_data_is_the_import_of_both_rounds_with_their_summaries(
    results: Path, data: Path
) -> None:
    registry, _ = load_registry(data, task_kind_order())
    assert registry is not None
    sources = [results / "inference_results_v4.1", results / "inference_results_v5.1"]
    done = import_mlperf([*sources, SUMMARY, SUMMARY_41], data, registry)
    assert len(done.written) == 22
    for rel in done.written:
        assert (data / rel).read_text() == (REPO / "data" / rel).read_text(), rel
