"""Incremental builds equal clean builds; `jouleboard serve` serves, rebuilds and stops."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from jouleboard.engine.build import build_site
from tests.golden.tree import DATA, REPO, tree

GPQA = Path("measurements/gpqa")


def new_file(data: Path, project: Path) -> None:
    src = data / GPQA / "Qwen/Qwen3-8B/B200-x1-bfloat16-tp1-ep1-dp1-seqs32.json"
    doc = json.loads(src.read_text())
    doc["serving"]["max_num_seqs"] = 40
    src.with_name("B200-x1-bfloat16-tp1-ep1-dp1-seqs40.json").write_text(json.dumps(doc))


def edited_metric(data: Path, project: Path) -> None:
    path = data / GPQA / "Qwen/Qwen3-8B/B200-x1-bfloat16-tp1-ep1-dp1-seqs128.json"
    doc = json.loads(path.read_text())
    doc["metrics"]["median_itl_ms"] = 48.5  # still <= p90
    path.write_text(json.dumps(doc))


def new_model(data: Path, project: Path) -> None:
    models = yaml.safe_load((data / "models.yaml").read_text())
    models["acme/tiny-1b"] = {**models["Qwen/Qwen3-8B"], "nickname": "Tiny 1B", "builder": "Acme"}
    (data / "models.yaml").write_text(yaml.safe_dump(models, sort_keys=False))
    src = data / GPQA / "Qwen/Qwen3-8B/B200-x1-bfloat16-tp1-ep1-dp1-seqs32.json"
    doc = json.loads(src.read_text())
    doc["model_id"] = "acme/tiny-1b"
    (data / GPQA / "acme").mkdir()
    (data / GPQA / "acme" / "tiny.json").write_text(json.dumps(doc))


def removed_model(data: Path, project: Path) -> None:
    shutil.rmtree(data / "measurements/image-chat")  # gemma-3-12b's only task


def registry_edit(data: Path, project: Path) -> None:
    gpus = yaml.safe_load((data / "gpus.yaml").read_text())
    gpus["H100"]["name"] = "NVIDIA H100 SXM5 80GB"
    (data / "gpus.yaml").write_text(yaml.safe_dump(gpus))


def template_edit(data: Path, project: Path) -> None:
    path = project / "templates" / "base.html"
    path.write_text(path.read_text().replace("Built with jouleboard.", "Built with care."))


CHANGES: list[Callable[[Path, Path], None]] = [
    new_file,
    edited_metric,
    new_model,
    removed_model,
    registry_edit,
    template_edit,
]


@pytest.mark.parametrize("change", CHANGES, ids=[c.__name__ for c in CHANGES])
def test_incremental_build_equals_a_clean_build(tmp_path: Path, change) -> None:
    project = tmp_path / "project"
    shutil.copytree(REPO / "templates", project / "templates")
    shutil.copytree(REPO / "content", project / "content")
    data = project / "data"
    shutil.copytree(DATA, data)
    out = tmp_path / "site"
    build_site(data, out, project=project)
    change(data, project)
    incremental = build_site(data, out, project=project)
    clean = tmp_path / "clean"
    build_site(data, clean, project=project)
    assert tree(out) == tree(clean)
    # Most files did not change and were reused, not rewritten.
    assert incremental.linked > 0 and incremental.written < incremental.files


def test_serve_serves_rebuilds_and_stops(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    out = tmp_path / "preview"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; "
            "from jouleboard.engine.serve import serve; "
            "import jouleboard.engine.serve as s; s.WAIT_S = 2; "
            f"serve(Path({str(data)!r}), Path({str(out)!r}), port=0, interval_s=0.2, "
            "max_seconds=90)",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        line = ""
        deadline = time.monotonic() + 120
        while "serving on" not in line and time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line or proc.poll() is None, "serve exited early"
        url = line.split("serving on ", 1)[1].split()[0]
        home = urllib.request.urlopen(url, timeout=10).read().decode()
        assert "/__jouleboard__/reload.js" in home and "jouleboard sample" in home
        assert urllib.request.urlopen(url + "__jouleboard__/version").read() == b"0"

        # A page's reload request is held open until a rebuild, then answered at once.
        def wait(since: str) -> dict[str, str]:
            answer = urllib.request.urlopen(f"{url}__jouleboard__/wait?since={since}", timeout=60)
            status: dict[str, str] = json.loads(answer.read())
            return status

        held = urllib.request.urlopen(url + "__jouleboard__/wait?since=0", timeout=5)
        # (nothing changed within the hold: WAIT_S cut short)
        assert json.loads(held.read()) == {"version": "0", "error": "", "withdrawn": ""}
        site = yaml.safe_load((data / "site.yaml").read_text())
        site["title"] = "Edited while serving"
        (data / "site.yaml").write_text(yaml.safe_dump(site))
        # Built, so nothing withdrawn (a failure after publishing names its version).
        assert wait("0") == {"version": "1", "error": "", "withdrawn": ""}
        # The rebuilt site is in place when the reload is signalled.
        assert "Edited while serving" in urllib.request.urlopen(url).read().decode()

        (data / "site.yaml").write_text("title: [unclosed")  # a broken edit...
        failed = wait("1")
        # ... keeps serving the previous site, and tells open pages why (issue 39).
        assert failed["version"] == "2" and "site.yaml" in failed["error"]
        assert "Edited while serving" in urllib.request.urlopen(url).read().decode()
        (data / "site.yaml").write_text(yaml.safe_dump(site))  # fixed: the error is gone
        status = failed
        deadline = time.monotonic() + 60
        while status["error"]:  # (the watcher may have seen the broken file twice)
            assert time.monotonic() < deadline, "the error stayed after a good build"
            status = wait(status["version"])
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert proc.returncode is not None
