"""Builds at the same time: two into one folder give one complete site (the second waits
for the first), the manifest always describes the site on disk, and builds sharing a chart
cache never use a partial or damaged entry."""

from __future__ import annotations

import fcntl
import json
import os
import random
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jouleboard.engine.build import build_site
from jouleboard.engine.kept import kept_file
from jouleboard.engine.kept_parts import parts_file
from jouleboard.output import writer
from tests.golden.tree import DATA, REPO, tree
from tests.in_time import in_time
from tests.sitebuild import copy_chart_cache

TRIALS = 12


def command(data: Path, out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "jouleboard",
        "build",
        "--data",
        str(data),
        "--out",
        str(out),
        "--project",
        str(REPO),
    ]


class Inputs:
    """Two data sets (the sample, and the sample with a new title and one changed
    measurement), their clean builds, and a chart cache for the builds under test."""

    def __init__(self, root: Path) -> None:
        self.a = DATA
        self.b = root / "data-b"
        shutil.copytree(DATA, self.b)
        site = self.b / "site.yaml"
        site.write_text(site.read_text().replace("jouleboard sample", "jouleboard sample B"))
        path = next(p for p in sorted((self.b / "measurements/gpqa").rglob("*.json")))
        doc = json.loads(path.read_text())
        doc["metrics"]["avg_power_watts"] *= 1.01
        doc["metrics"]["energy_per_token_joules"] *= 1.01
        doc["metrics"]["energy_per_response_joules"] *= 1.01
        path.write_text(json.dumps(doc))
        self.cache = root / "cache"  # cold: the first trial renders into it from two builds
        # The run's charts, with the golden data's (the a side's) among them.
        reference_cache = copy_chart_cache(root / "reference-cache")
        self.refs = {}
        for data in (self.a, self.b):
            out = root / f"reference-{data.name}"
            build_site(data, out, project=REPO, cache=reference_cache)
            self.refs[data] = tree(out)
        assert self.refs[self.a] != self.refs[self.b]
        self.reference_cache = reference_cache

    def env(self, **extra: str) -> dict[str, str]:
        return {**os.environ, "JOULEBOARD_CACHE": str(self.cache), **extra}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory, golden_site: Path) -> Inputs:
    return Inputs(tmp_path_factory.mktemp("inputs"))


def leftovers(folder: Path, name: str) -> list[str]:
    return sorted(
        p.name
        for p in folder.iterdir()
        if p.name.startswith((f".{name}-", f".{name}.manifest.tmp"))
    )


def test_two_builds_at_once_give_one_complete_site(inputs: Inputs, tmp_path: Path) -> None:
    out = tmp_path / "site"
    rnd = random.Random(20261201)
    outcomes = []
    for trial in range(TRIALS):
        before = tree(out) if out.exists() else {}
        pair = [inputs.a, inputs.b]
        rnd.shuffle(pair)
        first = subprocess.Popen(
            command(pair[0], out),
            env=inputs.env(),
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        time.sleep(rnd.uniform(0, 0.15))
        second = subprocess.Popen(
            command(pair[1], out),
            env=inputs.env(),
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        results = [(p, *p.communicate(timeout=300)) for p in (first, second)]
        for proc, stdout, stderr in results:
            assert "Traceback" not in stderr, stderr[-3000:]
            assert proc.returncode == 0, stderr[-3000:]
            # A build whose inputs are those of the site it finds there has nothing to do.
            assert "built " in stdout or "is up to date" in stdout, stdout
        state = tree(out)
        assert state in (inputs.refs[inputs.a], inputs.refs[inputs.b]), (
            f"trial {trial}: the output is not one complete site "
            f"({len(state)} files, before: {len(before)})"
        )
        assert not leftovers(tmp_path, "site"), leftovers(tmp_path, "site")
        winner = "a" if state == inputs.refs[inputs.a] else "b"
        waited = any("waiting for another build" in r[2] for r in results)
        outcomes.append((winner, waited))

        # A normal build afterwards rewrites exactly the files that differ, no more, no less,
        # and leaves the site a clean build would.
        data = inputs.a if trial % 2 else inputs.b
        expected = inputs.refs[data]
        differing = sum(1 for path, digest in expected.items() if state.get(path) != digest)
        summary = build_site(data, out, project=REPO, cache=inputs.cache)
        assert (summary.written, summary.linked) == (differing, len(expected) - differing), (
            f"trial {trial}: counts do not match the files that changed"
        )
        assert tree(out) == expected
    print(f"concurrent-build trials: {outcomes}")
    # Both data sets won some trial, so builds really did run in either order.
    assert {w for w, _ in outcomes} == {"a", "b"}, outcomes


def test_a_build_waits_for_the_lock_and_gives_up_cleanly(inputs: Inputs, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build_site(inputs.a, out, project=REPO, cache=inputs.reference_cache)
    before = tree(out)
    with open(tmp_path / ".site.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another build is writing
        result = subprocess.run(
            command(inputs.b, out),
            capture_output=True,
            text=True,
            env=inputs.env(JOULEBOARD_LOCK_TIMEOUT="1.5"),
            timeout=300,
        )
        assert result.returncode == 1, result.stderr
        assert "Traceback" not in result.stderr
        assert "waiting for another build to finish writing" in result.stderr
        assert result.stderr.splitlines()[-1].startswith(
            "jouleboard build: error: another build is still writing"
        ), result.stderr
        assert tree(out) == before

        waiting = subprocess.Popen(
            command(inputs.b, out),
            text=True,
            env=inputs.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert waiting.stderr is not None
        for line in waiting.stderr:
            if "waiting for another build" in line:
                break
        else:
            raise AssertionError("the second build did not say it was waiting")
        assert tree(out) == before  # nothing written while it waits
    # The lock is released: the waiting build goes on and writes its site.
    _, stderr = waiting.communicate(timeout=300)
    assert waiting.returncode == 0 and "Traceback" not in stderr, stderr
    assert tree(out) == inputs.refs[inputs.b]


def _bad_json(doc: dict, text: str, other: dict, twin: str) -> str:
    return text[: len(text) // 2]


def _wrong_shape(doc: dict, text: str, other: dict, twin: str) -> str:
    return json.dumps({**doc, "files": sorted(doc["files"])})


def _edited_digest(doc: dict, text: str, other: dict, twin: str) -> str:
    """A digest changed by hand to the next build's: trusting it would keep the old file."""
    changed = next(p for p in sorted(doc["files"]) if p.endswith("index.html"))
    doc["files"][changed][0] = other[changed]
    return json.dumps(doc)


def _foreign(doc: dict, text: str, other: dict, twin: str) -> str:
    """The manifest of another output folder (one made from the same data)."""
    return twin


def _not_a_dict(doc: dict, text: str, other: dict, twin: str) -> str:
    return "[]"


CORRUPTIONS = [_bad_json, _wrong_shape, _edited_digest, _foreign, _not_a_dict]


@pytest.mark.parametrize("corrupt", CORRUPTIONS, ids=[c.__name__[1:] for c in CORRUPTIONS])
def test_a_damaged_or_foreign_manifest_means_a_full_write(
    inputs: Inputs, tmp_path: Path, corrupt
) -> None:
    out, twin = tmp_path / "site", tmp_path / "twin"
    for folder in (out, twin):
        build_site(inputs.a, folder, project=REPO, cache=inputs.reference_cache)
    manifest = tmp_path / ".site.manifest.json"
    text = manifest.read_text()
    manifest.write_text(
        corrupt(
            json.loads(text),
            text,
            inputs.refs[inputs.b],
            (tmp_path / ".twin.manifest.json").read_text(),
        )
    )
    summary = build_site(inputs.b, out, project=REPO, cache=inputs.reference_cache)
    assert tree(out) == inputs.refs[inputs.b]
    assert (summary.written, summary.linked) == (summary.files, 0)
    again = build_site(inputs.b, out, project=REPO, cache=inputs.reference_cache)
    assert (again.written, again.linked) == (0, again.files)  # a sound manifest again


@pytest.mark.parametrize("kind", ["pipe", "link to /dev/zero", "link to a manifest"])
def test_a_manifest_that_is_not_a_regular_file_is_not_read(
    inputs: Inputs, tmp_path: Path, kind: str
) -> None:
    """The manifest sits beside the output, where a pull request can commit a link (git keeps
    links): a pipe or a link is not opened (reading /dev/zero would take every byte of
    memory, a pipe would wait for ever); the build writes the whole site and a manifest of
    its own in its place, and leaves what the link names as it was."""
    out = tmp_path / "site"
    build_site(inputs.a, out, project=REPO, cache=inputs.reference_cache)
    manifest = tmp_path / ".site.manifest.json"
    kept = tmp_path / "kept.json"
    shutil.copyfile(manifest, kept)
    kept_bytes = kept.read_bytes()
    manifest.unlink()
    if kind == "pipe":
        os.mkfifo(manifest)
    else:
        manifest.symlink_to("/dev/zero" if kind == "link to /dev/zero" else kept)
    done = in_time(
        lambda: build_site(inputs.a, out, project=REPO, cache=inputs.reference_cache), 120
    )
    assert not done.unchanged and (done.written, done.linked) == (done.files, 0)
    assert tree(out) == inputs.refs[inputs.a]
    assert stat.S_ISREG(manifest.lstat().st_mode) and kept.read_bytes() == kept_bytes
    again = build_site(inputs.a, out, project=REPO, cache=inputs.reference_cache)
    assert again.unchanged  # the new manifest is sound


def test_a_manifest_entry_is_trusted_only_inside_the_output_and_unchanged(tmp_path: Path) -> None:
    """The manifest's checksum is no secret, so each entry is checked: a name that leaves the
    output (absolute, or through a '..' part) is never trusted, even for a file that is
    there as described; a name with dots that is no '..' part is a name like any other."""
    out = tmp_path / "site"
    (out / "sub").mkdir(parents=True)
    for path in (tmp_path / "outside.html", out / "a..b.html", out / "sub" / "..html"):
        path.write_text("x")

    def entry(path: Path) -> list[object]:
        st = os.lstat(path)
        return ["0" * 64, st.st_size, st.st_mtime_ns, st.st_ino]

    for name in ("a..b.html", "sub/..html", "sub//..html"):
        assert writer._trusted_digest(out, name, entry(out / name)) == "0" * 64
    outside = entry(tmp_path / "outside.html")
    for name in ("../outside.html", "sub/../../outside.html", str(tmp_path / "outside.html")):
        with pytest.raises(ValueError, match="bad manifest entry"):
            writer._trusted_digest(out, name, outside)
    moved = entry(out / "a..b.html")
    (out / "a..b.html").write_text("xy")
    with pytest.raises(ValueError, match="changed since"):
        writer._trusted_digest(out, "a..b.html", moved)


def test_damaged_chart_cache_entries_are_rendered_again(inputs: Inputs, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    # The chart entries (other tests' builds keep their parsed measurements there too).
    shutil.copytree(inputs.reference_cache, cache, ignore=shutil.ignore_patterns("kept-*"))
    entries = sorted(p for p in cache.rglob("*") if p.is_file())
    assert len(entries) > 10
    for i, path in enumerate(entries):
        raw = path.read_bytes()
        kind = i % 4
        if kind == 0:
            path.write_bytes(raw[: len(raw) // 2])  # a partial write
        elif kind == 1:
            path.write_bytes(b"")
        elif kind == 2:
            flipped = bytearray(raw)
            flipped[-2] ^= 0x01  # one bit, length unchanged
            path.write_bytes(bytes(flipped))
        else:
            path.write_bytes(raw[raw.index(b"\n") + 1 :] if b"\n" in raw else raw[:-1])
    out = tmp_path / "site"
    build_site(inputs.a, out, project=REPO, cache=cache)
    assert tree(out) == inputs.refs[inputs.a]
    # The entries were repaired, atomically: no temporary file is left behind; the new
    # files are the measurement files this build parsed, the registries it loaded, the
    # parts it planned and the templates it compiled, kept for the next
    # (jouleboard/engine/kept.py, state.py, kept_parts.py, kept_templates.py).
    after = sorted(p for p in cache.rglob("*") if p.is_file())
    new = [p for p in after if p not in entries]
    compiled = [p for p in new if p.parent == kept_file(cache, out).parent / "templates"]
    reads = kept_file(cache, out)
    kept_for_next = sorted([reads, reads.with_suffix(".registries"), parts_file(cache, out)])
    assert [p for p in new if p not in compiled] == kept_for_next
    assert compiled and all(p.suffix == ".code" and p.name[0] != "." for p in compiled)
    assert set(entries) < set(after)
    again = tmp_path / "again"
    build_site(inputs.a, again, project=REPO, cache=cache)
    assert tree(again) == inputs.refs[inputs.a]
