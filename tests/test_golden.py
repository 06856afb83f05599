"""Golden output: the sample data set builds into exactly the reviewed expected tree."""

from __future__ import annotations

import difflib
import hashlib
import os
import subprocess
import sys
from pathlib import Path

from tests.golden.tree import DATA, EXPECTED, build_sample, is_chart_svg, snapshot, svg_signature


def test_sample_site_matches_the_reviewed_tree(tmp_path):
    out = tmp_path / "site"
    build_sample(out)
    got = snapshot(out)
    expected = {
        p.relative_to(EXPECTED).as_posix(): p.read_bytes()
        for p in sorted(EXPECTED.rglob("*"))
        if p.is_file()
    }
    assert sorted(got) == sorted(expected), "files differ; run python -m tests.golden.tree"
    for path, content in got.items():
        if content is None:
            assert (out / path).stat().st_size > 0, path
            continue
        if is_chart_svg(path):
            assert svg_signature(content) == svg_signature(expected[path]), (
                f"chart {path} shows other texts, labels or marks (python -m tests.golden.tree)"
            )
            continue
        if content != expected[path]:
            diff = "\n".join(
                difflib.unified_diff(
                    expected[path].decode(errors="replace").splitlines(),
                    content.decode(errors="replace").splitlines(),
                    lineterm="",
                    n=1,
                )
            )
            raise AssertionError(f"{path} differs (python -m tests.golden.tree):\n{diff[:3000]}")


def _tree_sha(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_builds_are_byte_identical_across_environments(tmp_path):
    """Same inputs, different hash seed, time zone, locale and working folder: same bytes."""
    outs = []
    for i, (seed, tz, lang) in enumerate(
        [("1", "UTC", "C.UTF-8"), ("4242", "Asia/Kolkata", "en_US.UTF-8")]
    ):
        cwd = tmp_path / f"cwd{i}"
        cwd.mkdir()
        out = tmp_path / f"site{i}"
        env = {
            **os.environ,
            "PYTHONHASHSEED": seed,
            "TZ": tz,
            "LANG": lang,
            "LC_ALL": lang,
            "SOURCE_DATE_EPOCH": "1764460800",
        }
        subprocess.run(
            [sys.executable, "-m", "jouleboard", "build", "--data", str(DATA), "--out", str(out)],
            cwd=cwd,
            env=env,
            check=True,
            capture_output=True,
            timeout=300,
        )
        outs.append(_tree_sha(out))
    assert outs[0] == outs[1]
