"""A site's template and asset overrides are read as carefully as its content (issue 25
item 5): a templates/prose.html linked to another file published that file as the about
page, linked style.css and favicon.svg published theirs, a pipe or an oversized template
was skipped or published without a word, and ``{{ cycler.__init__.__globals__.os.popen(...)
}}`` in an override ran a shell command; a template error was a traceback.
Each case now fails the build with one located line (file, rule, fix), no traceback, no
output folder and nothing of the payload done. Every build runs the command line under
a timeout (tests/cli_run.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli_run import jouleboard as jouleboard_here
from tests.golden.tree import DATA

SECRET = "secret-marker-5310"
TIMEOUT = 300
PIPE_TIMEOUT = 120  # a build that opened the pipe would wait forever; one needs ~5 s
TEMPLATE_MAX_BYTES = 1024 * 1024  # docs/measurement-format.md, template.* row


def site_folder(root: Path) -> Path:
    """A site folder with the golden data, an empty templates/ and a secret beside it."""
    project = root / "project"
    shutil.copytree(DATA, project / "data")
    (project / "templates" / "assets").mkdir(parents=True)
    (root / "secret.txt").write_text(SECRET + "\n", encoding="utf-8")
    return project


def build(root: Path, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    """``jouleboard build`` of ``root``/project into ``root``/site, run from ``root``."""
    return jouleboard_here(
        "build", "--data", "project/data", "--out", "site", cwd=root, timeout=timeout
    )


def assert_refused(root: Path, result: subprocess.CompletedProcess[str], line: str) -> None:
    """The build failed with ``line`` (a report line's start), no traceback, nothing
    written, and the secret nowhere in what exists."""
    assert result.returncode == 1, result.stdout + result.stderr
    assert line in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert "nothing was written" in result.stderr
    assert not (root / "site").exists()
    assert SECRET not in result.stdout + result.stderr


def link_to_secret(root: Path, relative: str) -> None:
    (root / "project" / relative).symlink_to(root / "secret.txt")


LINKED_FILES = {
    "templates/prose.html": "project/templates/prose.html: /: file.not-regular: ",
    "templates/assets/style.css": "project/templates/assets/style.css: /: file.not-regular: ",
    "templates/assets/favicon.svg": "project/templates/assets/favicon.svg: /: file.not-regular: ",
}


@pytest.mark.parametrize("relative", list(LINKED_FILES))
def test_a_linked_template_or_asset_is_refused(tmp_path: Path, relative: str) -> None:
    site_folder(tmp_path)
    link_to_secret(tmp_path, relative)
    assert_refused(tmp_path, build(tmp_path), LINKED_FILES[relative])


def linked_templates_folder(root: Path) -> None:
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "prose.html").write_text(SECRET, encoding="utf-8")
    shutil.rmtree(root / "project" / "templates")
    (root / "project" / "templates").symlink_to(elsewhere)


def linked_assets_folder(root: Path) -> None:
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "style.css").write_text(f"/* {SECRET} */", encoding="utf-8")
    shutil.rmtree(root / "project" / "templates" / "assets")
    (root / "project" / "templates" / "assets").symlink_to(elsewhere)


def linked_include_folder(root: Path) -> None:
    """prose.html includes parts/secret.html, where parts/ is a link to another folder."""
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.html").write_text(SECRET, encoding="utf-8")
    templates = root / "project" / "templates"
    (templates / "prose.html").write_text(
        '{% extends "base.html" %}{% block main %}{% include "parts/secret.html" %}'
        "{% endblock %}\n",
        encoding="utf-8",
    )
    (templates / "parts").symlink_to(elsewhere)


LINKED_FOLDERS: dict[str, tuple[Callable[[Path], None], str]] = {
    "templates/": (linked_templates_folder, "project/templates: /: file.not-regular: "),
    "templates/assets/": (linked_assets_folder, "project/templates/assets: /: file.not-regular: "),
    "an included template's folder": (
        linked_include_folder,
        "project/templates/parts: /: file.not-regular: ",
    ),
}


@pytest.mark.parametrize("case", list(LINKED_FOLDERS))
def test_a_linked_theme_folder_is_refused(tmp_path: Path, case: str) -> None:
    site_folder(tmp_path)
    make, line = LINKED_FOLDERS[case]
    make(tmp_path)
    assert_refused(tmp_path, build(tmp_path), line)


def test_a_template_that_is_a_pipe_is_refused_without_waiting(tmp_path: Path) -> None:
    site_folder(tmp_path)
    os.mkfifo(tmp_path / "project" / "templates" / "prose.html")
    assert_refused(
        tmp_path,
        build(tmp_path, PIPE_TIMEOUT),
        "project/templates/prose.html: /: file.not-regular: ",
    )


def test_a_template_over_its_cap_is_refused(tmp_path: Path) -> None:
    site_folder(tmp_path)
    (tmp_path / "project" / "templates" / "prose.html").write_text(
        '{% extends "base.html" %}{% block main %}'
        + f"<p>{SECRET}</p>\n" * (TEMPLATE_MAX_BYTES // 20)
        + "{% endblock %}\n",
        encoding="utf-8",
    )
    assert_refused(tmp_path, build(tmp_path), "project/templates/prose.html: /: file.too-large: ")


# Each payload would create ``pwned`` in the folder the build runs from.
PAYLOADS = {
    "cycler globals": "{{ cycler.__init__.__globals__.os.popen('touch pwned').read() }}",
    "str mro subclasses": (
        "{% for c in ''.__class__.__mro__[1].__subclasses__() %}"
        "{% if c.__name__ == 'catch_warnings' %}"
        "{{ c()._module.__builtins__['__import__']('os').popen('touch pwned').read() }}"
        "{% endif %}{% endfor %}"
    ),
}


@pytest.mark.parametrize("payload", list(PAYLOADS))
def test_a_template_reaching_past_its_values_is_refused(tmp_path: Path, payload: str) -> None:
    site_folder(tmp_path)
    (tmp_path / "project" / "templates" / "prose.html").write_text(
        '{% extends "base.html" %}\n{% block main %}\n' + PAYLOADS[payload] + "\n{% endblock %}\n",
        encoding="utf-8",
    )
    result = build(tmp_path)
    assert not (tmp_path / "pwned").exists()
    assert_refused(
        tmp_path,
        result,
        "project/templates/prose.html: /: template.unsafe: line 3: access to attribute '__",
    )


TEMPLATE_ERRORS = {
    "syntax": (
        '{% extends "base.html" %}\n{% block main %}\n\n{% if %}\n{% endblock %}\n',
        "project/templates/prose.html: /: template.syntax: line 4: ",
    ),
    "undefined": (
        '{% extends "base.html" %}\n{% block main %}\n{{ no_such.value }}\n{% endblock %}\n',
        "project/templates/prose.html: /: template.undefined: line 3: 'no_such' is undefined",
    ),
}


@pytest.mark.parametrize("error", list(TEMPLATE_ERRORS))
def test_a_template_error_is_one_located_line(tmp_path: Path, error: str) -> None:
    site_folder(tmp_path)
    text, line = TEMPLATE_ERRORS[error]
    (tmp_path / "project" / "templates" / "prose.html").write_text(text, encoding="utf-8")
    result = build(tmp_path)
    assert_refused(tmp_path, result, line)
    assert result.stderr.count("template.") == 1
