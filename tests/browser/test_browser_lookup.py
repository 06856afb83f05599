"""Which Chromium the browser tests launch: $JOULEBOARD_CHROMIUM alone when set, else each
installed Debian build in turn (the headless shell, then the browser), else Playwright's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser import conftest


class FakeChromium:
    """Playwright's ``chromium`` launcher: fails for the executables in ``broken``."""

    def __init__(self, broken: set[str | None]) -> None:
        self.broken = broken
        self.tried: list[str | None] = []

    def launch(self, executable_path: str | None = None, **options: Any) -> str:
        self.tried.append(executable_path)
        assert options["headless"] is True and options["args"] == conftest.LAUNCH_ARGS
        if executable_path in self.broken:
            raise RuntimeError(f"cannot start {executable_path}\nlog lines")
        return f"browser of {executable_path}"


class FakePlaywright:
    def __init__(self, broken: set[str | None]) -> None:
        self.chromium = FakeChromium(broken)


@pytest.fixture
def debian(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """Both Debian executables installed (as files in ``tmp_path``), no $JOULEBOARD_CHROMIUM."""
    shell, full = tmp_path / "chromium-headless-shell", tmp_path / "chromium"
    shell.touch()
    full.touch()
    monkeypatch.setattr(conftest, "SYSTEM_CHROMIUM", (shell, full))
    monkeypatch.delenv("JOULEBOARD_CHROMIUM", raising=False)
    return str(shell), str(full)


def test_the_headless_shell_is_launched_first(debian: tuple[str, str]) -> None:
    shell, _ = debian
    playwright = FakePlaywright(broken=set())
    assert conftest.launch_chromium(playwright) == (f"browser of {shell}", [])
    assert playwright.chromium.tried == [shell]


def test_the_browser_is_tried_when_the_shell_fails(debian: tuple[str, str]) -> None:
    shell, full = debian
    playwright = FakePlaywright(broken={shell})
    browser, errors = conftest.launch_chromium(playwright)
    assert browser == f"browser of {full}"
    assert errors == [f"{shell}: cannot start {shell}"]


def test_an_uninstalled_shell_is_not_tried(debian: tuple[str, str]) -> None:
    shell, full = debian
    Path(shell).unlink()
    playwright = FakePlaywright(broken=set())
    assert conftest.launch_chromium(playwright)[0] == f"browser of {full}"
    assert playwright.chromium.tried == [full]


def test_playwrights_own_browser_when_debian_has_none(debian: tuple[str, str]) -> None:
    for path in debian:
        Path(path).unlink()
    playwright = FakePlaywright(broken=set())
    assert conftest.launch_chromium(playwright)[0] == "browser of None"


def test_the_environment_variable_alone_is_tried(
    debian: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JOULEBOARD_CHROMIUM", "/opt/my/chrome")
    playwright = FakePlaywright(broken={"/opt/my/chrome"})
    browser, errors = conftest.launch_chromium(playwright)
    assert browser is None
    assert playwright.chromium.tried == ["/opt/my/chrome"]
    assert errors == ["/opt/my/chrome: cannot start /opt/my/chrome"]
