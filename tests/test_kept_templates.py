"""Compiled templates kept between processes (jouleboard/engine/kept_templates.py): a new
environment loads what an earlier one compiled instead of compiling it, renders the same
text, and compiles anew whenever the kept file is not the one to trust (an edited source,
other code, a damaged, foreign-writable or linked file)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import jinja2
import pytest

from jouleboard.engine import kept_templates
from jouleboard.engine.kept_templates import KeptTemplates
from jouleboard.render.pages import environment, template_problem
from tests.test_kept_reads import a_link, damage, writable_by_others

SOURCE = "<p>{{ name }} has\n{{ n * 2 }} rows</p>\n"


def env(templates: Path, cache: Path, basis: str = "code") -> tuple[jinja2.Environment, list[str]]:
    """An environment with kept templates, and the names it compiles."""
    made = environment(templates)
    made.bytecode_cache = KeptTemplates(cache, basis)
    compiled: list[str] = []
    compile_ = made.compile

    def counting(source: str, name: str | None = None, filename: str | None = None) -> object:
        compiled.append(str(name))
        return compile_(source, name, filename)

    made.compile = counting  # type: ignore[method-assign,assignment]
    return made, compiled


@pytest.fixture
def templates(tmp_path: Path) -> Path:
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "t.html").write_text(SOURCE, encoding="utf-8")
    return folder


def kept_files(cache: Path) -> list[Path]:
    return sorted((cache / "kept-1" / "templates").glob("*.code"))


def test_a_new_environment_loads_what_an_earlier_one_compiled(
    templates: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    first, compiled = env(templates, cache)
    text = first.get_template("t.html").render(name="<b>", n=21)
    assert compiled == ["t.html"] and len(kept_files(cache)) == 1
    second, compiled = env(templates, cache)
    assert second.get_template("t.html").render(name="<b>", n=21) == text
    assert compiled == []
    assert text == "<p>&lt;b&gt; has\n42 rows</p>\n"  # escaped, as the sandbox compiles it


def test_an_edited_template_is_compiled_again(templates: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env(templates, cache)[0].get_template("t.html")
    (templates / "t.html").write_text(SOURCE.replace("rows", "lines"), encoding="utf-8")
    second, compiled = env(templates, cache)
    assert second.get_template("t.html").render(name="a", n=1) == "<p>a has\n2 lines</p>\n"
    assert compiled == ["t.html"]


def test_other_code_compiles_its_own(templates: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env(templates, cache, "code")[0].get_template("t.html")
    other, compiled = env(templates, cache, "other code")
    other.get_template("t.html")
    assert compiled == ["t.html"] and len(kept_files(cache)) == 2


@pytest.mark.parametrize("spoil", [damage, writable_by_others, a_link])
def test_a_kept_template_that_cannot_be_trusted_is_compiled_again(
    templates: Path, tmp_path: Path, spoil: Callable[[Path], None]
) -> None:
    cache = tmp_path / "cache"
    env(templates, cache)[0].get_template("t.html")
    (path,) = kept_files(cache)
    spoil(path)
    second, compiled = env(templates, cache)
    assert second.get_template("t.html").render(name="a", n=1) == "<p>a has\n2 rows</p>\n"
    assert compiled == ["t.html"]


def test_an_error_in_a_kept_template_names_its_file_and_line(
    templates: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    messages = []
    for _ in range(2):  # compiled, then loaded
        template = env(templates, cache)[0].get_template("t.html")
        with pytest.raises(jinja2.UndefinedError) as error:
            template.render(name="a")  # no n
        messages.append(str(template_problem(error.value)))
    assert messages[0] == messages[1]
    assert "t.html" in messages[0] and "line 2" in messages[0]


def test_only_the_newest_compiled_templates_are_kept(
    templates: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kept_templates, "_NEWEST", 2)
    cache = tmp_path / "cache"
    for i in range(4):
        env(templates, cache, f"code {i}")[0].get_template("t.html")
    assert len(kept_files(cache)) == 2
