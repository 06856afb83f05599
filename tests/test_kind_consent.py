"""A kind is code: it runs only with the consent of whoever runs the command, only from the
source text of the file site.yaml lists (never a __pycache__ file beside it), and an import
path is never taken from the working folder or the data folder (issue 25, items 1 and 3).

Every case runs ``python -m jouleboard`` in a fresh interpreter under a timeout, with a kind
module that leaves a marker file when any of its code runs."""

from __future__ import annotations

import importlib.util
import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_third_kind import REPO, site_with_kinds

SPEECH = (REPO / "tests" / "speech_kind.py").read_text(encoding="utf-8")
CONSENT = "JOULEBOARD_ALLOW_KIND_CODE"


def marking(marker: Path, rest: str = "") -> str:
    """A module whose first statement creates ``marker`` (after ``rest``'s future import,
    which must come first), followed by ``rest``."""
    future = "from __future__ import annotations\n"
    head, found, tail = rest.partition(future)
    mark = f"import pathlib\npathlib.Path({json.dumps(str(marker))}).write_text('ran')\n"
    return head + future + mark + tail if found else mark + rest


def run(
    *args: str, cwd: Path, consent: bool = False, pythonpath: str = str(REPO)
) -> subprocess.CompletedProcess[str]:
    """``python -m jouleboard`` from ``cwd``; ``consent`` sets JOULEBOARD_ALLOW_KIND_CODE=1
    (the environment variable, so the old code, which had no option, runs the same)."""
    env = {k: v for k, v in os.environ.items() if k != CONSENT}
    env["PYTHONPATH"] = pythonpath
    if consent:
        env[CONSENT] = "1"
    return subprocess.run(
        [sys.executable, "-m", "jouleboard", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def problem_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if not line.startswith("running kind code: ")]


# --- (a) no consent: refused, located, and nothing of the kind runs -------------------------


@pytest.mark.parametrize("command", ["validate", "build", "rank", "diff"])
@pytest.mark.parametrize("broken", [False, True], ids=["valid-data", "another-error"])
def test_without_consent_a_kind_is_refused_and_none_of_it_runs(
    tmp_path: Path, command: str, broken: bool
) -> None:
    marker = tmp_path / "ran"
    data = site_with_kinds(tmp_path, ["kinds/evil.py"])
    (data / "kinds").mkdir()
    (data / "kinds" / "evil.py").write_text(marking(marker, SPEECH), encoding="utf-8")
    if broken:  # validation fails for another reason too
        (data / "measurements" / "asr" / "broken.json").write_text("{", encoding="utf-8")
    args = {
        "validate": ["validate", "--data", str(data)],
        "build": ["build", "--data", str(data), "--out", str(tmp_path / "out")],
        "rank": ["rank", "--data", str(data), "--task", "asr"],
        "diff": ["diff", "--data", str(data), "--base", str(data)],
    }[command]
    done = run(*args, cwd=tmp_path)
    assert not marker.exists(), "the kind's module-level code ran without consent"
    assert "Traceback" not in done.stderr, done.stderr
    located = f"{data / 'site.yaml'}: /kinds/0: kinds.not-allowed: "
    markdown = done.stdout.replace("\\", "")  # diff's report escapes '_' as markdown
    lines = done.stderr.splitlines() + markdown.splitlines()
    refusal = [line for line in lines if located in line]
    assert refusal, done.stdout + done.stderr
    assert str(data / "kinds" / "evil.py") in refusal[0] and "--allow-kind-code" in refusal[0]
    assert CONSENT in refusal[0]
    if command != "diff":  # diff reports the problems in its markdown, and exits 1
        assert refusal[0].startswith(located)
    assert done.returncode == 1
    assert not (tmp_path / "out").exists()
    assert "running kind code" not in done.stderr


def test_the_api_refuses_a_kind_without_consent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import jouleboard
    from jouleboard.core.problems import ValidationFailed

    monkeypatch.delenv(CONSENT, raising=False)
    marker = tmp_path / "ran"
    data = site_with_kinds(tmp_path, ["kinds/evil.py"])
    (data / "kinds").mkdir()
    (data / "kinds" / "evil.py").write_text(marking(marker), encoding="utf-8")
    with pytest.raises(ValidationFailed) as failed:
        jouleboard.load(data)
    assert not marker.exists()
    first = failed.value.problems[0]
    assert (first.file, first.pointer, first.rule) == (
        str(data / "site.yaml"),
        "/kinds/0",
        "kinds.not-allowed",
    )


def python_without_consent(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``code`` run by a fresh interpreter in ``cwd`` that imports this checkout, with no
    consent in its environment."""
    env = {k: v for k, v in os.environ.items() if k != CONSENT}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_api_runs_a_kind_with_allow_kind_code(tmp_path: Path) -> None:
    data = site_with_kinds(tmp_path, ["kinds/speech.py"], SPEECH)
    code = (
        "import sys, jouleboard\n"
        f"board = jouleboard.load({json.dumps(str(data))}, allow_kind_code=True)\n"
        "print(board.tasks)\n"
    )
    done = python_without_consent(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "asr" in done.stdout
    assert done.stderr.splitlines() == [f"running kind code: {data / 'kinds' / 'speech.py'}"]


# --- (b) the source runs, never a __pycache__ file beside it --------------------------------


def forged_pyc(source_path: Path, other_source: str) -> bytes:
    """A timestamp .pyc of ``other_source`` whose header matches ``source_path``'s mtime and
    size, so importlib's file loader takes it for the cache of the real source."""
    info = source_path.stat()
    code = compile(other_source, str(source_path), "exec")
    return (
        importlib.util.MAGIC_NUMBER
        + (0).to_bytes(4, "little")
        + (int(info.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
        + (info.st_size & 0xFFFFFFFF).to_bytes(4, "little")
        + marshal.dumps(code)
    )


def test_a_committed_pyc_does_not_replace_the_reviewed_source(tmp_path: Path) -> None:
    from_source, from_pyc = tmp_path / "source-ran", tmp_path / "pyc-ran"
    data = site_with_kinds(tmp_path, ["kinds/speech.py"], marking(from_source, SPEECH))
    module = data / "kinds" / "speech.py"
    forged = forged_pyc(module, marking(from_pyc, SPEECH))
    cache = data / "kinds" / "__pycache__"
    cache.mkdir()
    (cache / "speech.cpython-311.pyc").write_bytes(forged)
    Path(importlib.util.cache_from_source(str(module))).write_bytes(forged)
    done = run("validate", "--data", str(data), cwd=tmp_path, consent=True)
    assert (done.returncode, done.stdout.strip()) == (0, "ok: 6 configurations valid"), done.stderr
    assert from_source.exists() and not from_pyc.exists()
    assert sorted(p.name for p in cache.iterdir()) == sorted(
        {"speech.cpython-311.pyc", Path(importlib.util.cache_from_source(str(module))).name}
    )


# --- (c) an import path never comes from the working folder or the data folder -------------


@pytest.mark.parametrize(
    ("where", "rule"),
    [
        ("working-folder", "kinds.missing"),  # python -m puts the working folder on sys.path
        ("data-folder-as-cwd", "kinds.missing"),
        ("data-folder-on-pythonpath", "kinds.missing"),
        ("package-below-working-folder", "kinds.untrusted-import"),
    ],
)
def test_an_import_path_is_not_taken_from_the_working_or_data_folder(
    tmp_path: Path, where: str, rule: str
) -> None:
    marker = tmp_path / "ran"
    evil = marking(marker, "from tests.speech_kind import SpeechKind as X\n")
    work = tmp_path / "work"
    work.mkdir()
    data = site_with_kinds(tmp_path, ["evilmod:X"])
    pythonpath, cwd = str(REPO), work
    if where == "working-folder":
        (work / "evilmod.py").write_text(evil, encoding="utf-8")
    elif where == "data-folder-as-cwd":
        (data / "evilmod.py").write_text(evil, encoding="utf-8")
        cwd = data
    elif where == "data-folder-on-pythonpath":
        (data / "evilmod.py").write_text(evil, encoding="utf-8")
        pythonpath = os.pathsep.join([str(REPO), str(data)])
    else:
        package = work / "lib" / "evilmod"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(evil, encoding="utf-8")
        pythonpath = os.pathsep.join([str(REPO), str(work / "lib")])
    for consent_by in ("environment", "option"):
        option = ["--allow-kind-code"] if consent_by == "option" else []
        done = run(
            "validate",
            *option,
            "--data",
            str(data),
            cwd=cwd,
            consent=consent_by == "environment",
            pythonpath=pythonpath,
        )
        assert not marker.exists(), f"imported from {where} ({consent_by})"
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        # A module put in the data folder is named as a file nothing reads (file.unread).
        first = next(line for line in problem_lines(done) if ": file.unread: " not in line)
        assert first.startswith(f"{data / 'site.yaml'}: /kinds/0: {rule}: "), first


# --- (d) with consent, the command names each file it runs ----------------------------------


def test_with_consent_the_command_names_the_file_it_runs(tmp_path: Path) -> None:
    data = site_with_kinds(tmp_path, ["kinds/speech.py"], SPEECH)
    done = run("validate", "--allow-kind-code", "--data", str(data), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [f"running kind code: {data / 'kinds' / 'speech.py'}"]


def test_a_site_built_with_consent_is_not_up_to_date_without_it(tmp_path: Path) -> None:
    """Consent is an input of a site with kinds: built with it, then built again without,
    the build refuses the kind as a clean build does, instead of saying "up to date"."""
    data = site_with_kinds(tmp_path, ["kinds/speech.py"], SPEECH)
    args = ("build", "--data", str(data), "--out", str(tmp_path / "out"))
    assert run(*args, cwd=tmp_path, consent=True).returncode == 0
    assert "up to date" in run(*args, cwd=tmp_path, consent=True).stdout
    done = run(*args, cwd=tmp_path)
    assert done.returncode == 1 and "up to date" not in done.stdout
    assert f"{data / 'site.yaml'}: /kinds/0: kinds.not-allowed: " in done.stderr


def test_with_consent_an_installed_module_is_named_by_its_file(tmp_path: Path) -> None:
    data = site_with_kinds(tmp_path, ["tests.speech_kind:SpeechKind"])
    done = run("validate", "--allow-kind-code", "--data", str(data), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"running kind code: {REPO / 'tests' / 'speech_kind.py'} (module tests.speech_kind)"
    ]


# --- (e) a kind file that is a link is refused -----------------------------------------------


def test_a_kind_file_that_is_a_link_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    data = site_with_kinds(tmp_path, ["kinds/speech.py"])
    (data / "kinds").mkdir()
    (data / "real.py").write_text(marking(marker, SPEECH), encoding="utf-8")
    (data / "kinds" / "speech.py").symlink_to(data / "real.py")
    done = run("validate", "--data", str(data), cwd=tmp_path, consent=True)
    assert not marker.exists()
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    # The data folder's own check refuses the link before site.yaml's kinds are looked at.
    first = problem_lines(done)[0]
    assert first.startswith("speech/kinds/speech.py: /: file.not-regular: "), first
    assert "symbolic link" in first, first


def test_a_site_kind_serves_its_data_set_only(tmp_path: Path) -> None:
    """Loading a data folder with a site.yaml kind leaves the process's kinds as they were:
    the kind is in that data set's ``kinds`` value, not in the registry other data sets
    (or a second data folder loaded by the same process) start from."""
    data = site_with_kinds(tmp_path, ["kinds/speech.py"], SPEECH)
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from jouleboard import kinds\n"
        "from jouleboard.loading.dataset import load_dataset\n"
        "before = kinds.task_kind_order()\n"
        f"data = load_dataset(Path({json.dumps(str(data))}), allow_kind_code=True)\n"
        "print(json.dumps([before, kinds.task_kind_order(), data.kinds.order()]))\n"
    )
    done = python_without_consent(code, tmp_path)
    assert done.returncode == 0, done.stderr
    before, after, of_data = json.loads(done.stdout)
    assert after == before and "asr" not in before
    assert of_data == [*before, "asr"]
