"""A chart cache that cannot poison the site (issue 25, item 4): whoever can write the cache
folder can also recompute an entry's digest, so what a build publishes is checked, not
trusted: the Vega bundle must be the installed vl-convert's own, a cached SVG must hold no
script, event attribute, foreign object or outside link, a PNG must be a PNG, and an entry
must be a regular file written for its own key. A refused entry is made again, with a
one-line warning naming it. Each attack runs under a time limit (a cache entry could be a
pipe that never ends)."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from jouleboard.core.console import Progress
from jouleboard.core.problems import ValidationFailed
from jouleboard.core.shapes import JsonObject
from jouleboard.engine.build import build_site
from jouleboard.render import chart_files as export
from jouleboard.render.chart_files import render_charts
from tests.measured import within
from tests.test_validation_rules import make_data_dir, valid_measurement, write_measurement

pytestmark = pytest.mark.slow  # renders charts and builds sites
T = TypeVar("T")
LIMIT = 120.0  # seconds an attack may take (a cold small build takes ~3 s)


def _within(call: Callable[[], T], seconds: float = LIMIT) -> T:
    return within(call, seconds)


def _bars(labels: list[str]) -> dict[str, object]:
    return {
        "data": {"values": [{"v": i + 1, "k": k} for i, k in enumerate(labels)]},
        "mark": "bar",
        "encoding": {
            "x": {"field": "v", "type": "quantitative"},
            "y": {"field": "k", "type": "nominal"},
        },
    }


def _entries(cache: Path, suffix: str) -> list[Path]:
    """The cache's entries of one kind (``svg``, ``png``, ``js``), whatever its layout."""
    return sorted(path for path in cache.rglob(f"*.{suffix}") if not path.name.startswith("."))


def _forge(path: Path, content: bytes) -> None:
    """Overwrite the entry at ``path`` with ``content`` under a header recomputed the way
    the genuine one was made (what anyone who can write the cache can do)."""
    header = path.read_bytes().partition(b"\n")[0].decode("ascii").split(" ")
    digest = hashlib.sha256(content).hexdigest()
    header[-2:] = [digest, str(len(content))]
    path.write_bytes(" ".join(header).encode("ascii") + b"\n" + content)


def _content(path: Path) -> bytes:
    return path.read_bytes().partition(b"\n")[2]


class _Counting(Progress):
    """Counts the renders a call of render_charts plans (an SVG and a PNG are one each)."""

    def __init__(self) -> None:
        super().__init__()
        self.renders = 0

    def start(self, what: str, total: int) -> None:
        self.renders += total

    def advance(self, count: int = 1) -> None:
        pass


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A small data folder, a site built from it with PNGs and the cache that build filled:
    ``(data, site, cache)``; tests copy the cache before they forge in it."""
    root = tmp_path_factory.mktemp("clean")
    data = make_data_dir(root)
    write_measurement(data, valid_measurement())
    build_site(data, root / "site", cache=root / "cache", png=True)
    return data, root / "site", root / "cache"


def _rebuild(clean: tuple[Path, Path, Path], cache: Path, out: Path) -> Path:
    data, _, _ = clean
    _within(lambda: build_site(data, out, cache=cache, png=True))
    return out


def _vl_convert_bundle() -> bytes:
    import vl_convert

    bundle: str = vl_convert.javascript_bundle()  # type: ignore[call-arg]
    return bundle.encode("utf-8")


def test_a_forged_vega_bundle_and_forged_svgs_are_not_published(
    clean: tuple[Path, Path, Path],
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    cache = tmp_path / "cache"
    shutil.copytree(clean[2], cache)
    [bundle] = _entries(cache, "js")
    _forge(bundle, _content(bundle) + b"\n;document.title='forged';\n")
    svgs = _entries(cache, "svg")
    for path in svgs:
        _forge(path, _content(path).replace(b">", b"><script>alert(1)</script>", 1))
    capfd.readouterr()
    site = _rebuild(clean, cache, tmp_path / "site")
    [published] = (site / "assets").glob("vega-*.js")
    assert published.read_bytes() == _vl_convert_bundle()
    charts = sorted(p.relative_to(site) for p in (site / "charts").glob("*.svg"))
    assert charts == sorted(p.relative_to(clean[1]) for p in (clean[1] / "charts").glob("*.svg"))
    for chart in charts:
        assert (site / chart).read_bytes() == (clean[1] / chart).read_bytes()
    warnings = capfd.readouterr().err.splitlines()
    assert (
        f"warning: chart cache entry {bundle} refused (not the Vega bundle vl-convert "
        f"{export._vl_version()} makes); made again from vl-convert" in warnings
    )
    assert sum("cached SVG holds element script" in line for line in warnings) == len(svgs)
    # The entries were made again: the next build finds them good and warns about nothing.
    _rebuild(clean, cache, tmp_path / "again")
    assert capfd.readouterr().err.count("warning: chart cache") == 0


PAYLOADS = {
    "script": (b"<script>alert(1)</script>", "element script"),
    "onload": (b'<g onload="alert(1)"/>', "attribute onload"),
    "foreign-object": (
        b'<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">'
        b'<img src="x" onerror="alert(1)"/></div></foreignObject>',
        "element foreignObject",
    ),
    "javascript-href": (b'<a xlink:href="javascript:alert(1)"><text>x</text></a>', "element a"),
    "href-on-allowed-element": (b'<g xlink:href="javascript:alert(1)"/>', "attribute href"),
    "outside-url": (
        b'<g fill="url(https://evil.example/x.svg#p)"/>',
        "a link outside the file in fill",
    ),
    "entity": (b'<!ENTITY x "y">', "a declaration, entity, comment or processing"),
}


@pytest.mark.parametrize("payload", sorted(PAYLOADS))
def test_a_forged_svg_entry_is_rendered_again(
    payload: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    specs = {"a": _bars(["x", "y"])}
    genuine = render_charts(specs, ("svg",), tmp_path)
    [path] = _entries(tmp_path, "svg")
    markup, reason = PAYLOADS[payload]
    _forge(path, genuine[("a", "svg")].replace(b">", b">" + markup, 1))
    capfd.readouterr()
    progress = _Counting()
    assert _within(lambda: render_charts(specs, ("svg",), tmp_path, progress)) == genuine
    assert progress.renders == 1
    [warning] = capfd.readouterr().err.splitlines()
    assert warning.startswith(
        f"warning: chart cache entry {path} refused (cached SVG holds {reason}"
    )


def test_a_cached_png_that_is_not_a_png_is_rendered_again(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    specs = {"a": _bars(["x"])}
    genuine = render_charts(specs, ("svg", "png"), tmp_path)
    [path] = _entries(tmp_path, "png")
    _forge(path, b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>')
    capfd.readouterr()
    again = _within(lambda: render_charts(specs, ("svg", "png"), tmp_path))
    assert again[("a", "png")] == genuine[("a", "png")]
    assert again[("a", "png")].startswith(b"\x89PNG\r\n\x1a\n")
    assert f"{path} refused (not a PNG image)" in capfd.readouterr().err


def test_an_entry_linked_or_copied_to_another_key_is_not_used(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    specs = {"a": _bars(["x"]), "b": _bars(["p", "q", "r"]), "c": _bars(["z"])}
    genuine = render_charts(specs, ("svg",), tmp_path)
    by_content = {_content(path): path for path in _entries(tmp_path, "svg")}
    a, b, c = (by_content[genuine[(cid, "svg")]] for cid in "abc")
    a.unlink()
    a.symlink_to(b)  # a's entry is b's picture
    shutil.copyfile(b, c)  # and so is c's
    capfd.readouterr()
    progress = _Counting()
    assert _within(lambda: render_charts(specs, ("svg",), tmp_path, progress)) == genuine
    assert progress.renders == 2
    err = capfd.readouterr().err
    assert f"{a} refused (not a regular file (a symbolic link))" in err
    assert f"{c} refused (its header names another entry)" in err
    assert not a.is_symlink() and b.is_file()  # the link was dropped, its target kept


def test_an_entry_that_is_a_pipe_is_not_waited_for(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    specs = {"a": _bars(["x"])}
    genuine = render_charts(specs, ("svg",), tmp_path)
    [path] = _entries(tmp_path, "svg")
    path.unlink()
    os.mkfifo(path)  # a reader of a pipe with no writer waits forever
    capfd.readouterr()
    assert _within(lambda: render_charts(specs, ("svg",), tmp_path), 60) == genuine
    assert f"{path} refused (not a regular file (a pipe (FIFO)))" in capfd.readouterr().err


def test_a_warm_rebuild_reuses_every_entry_and_warns_about_nothing(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    specs = {"a": _bars(["x"]), "b": _bars(["p", "q"])}
    first = render_charts(specs, ("svg", "png"), tmp_path)
    capfd.readouterr()
    progress = _Counting()
    assert render_charts(specs, ("svg", "png"), tmp_path, progress) == first
    assert progress.renders == 0
    assert capfd.readouterr().err == ""


def test_the_bundle_digest_of_the_installed_vl_convert_is_known() -> None:
    """The cached bundle is trusted only through this table; without the installed version's
    digest every build makes the bundle again (~1.8 s)."""
    digest = hashlib.sha256(_vl_convert_bundle()).hexdigest()
    assert export.BUNDLE_SHA256.get(export._vl_version()) == digest, (
        f"add {export._vl_version()!r}: {digest!r} to BUNDLE_SHA256 in "
        "jouleboard/render/chart_files.py"
    )


@pytest.fixture(autouse=True)
def _no_shipped_templates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The templates these tests forge are the disk cache's: those shipped with the package
    (tests/test_chart_templates.py) would leave the cache unread."""
    from jouleboard.render import charts

    monkeypatch.setattr(charts, "PACKAGED", tmp_path / "none-shipped.json")
    charts._packaged.cache_clear()
    yield
    charts._packaged.cache_clear()  # (read again once PACKAGED is restored)


def test_a_linked_chart_template_in_the_cache_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chart templates (jouleboard/render/charts.py) are cached beside the renders: an
    entry that is a link to a forged spec is made again, not read."""
    from jouleboard.render import charts

    monkeypatch.setattr(export, "DEFAULT_CACHE", tmp_path)
    charts.length_histogram.cache_clear()  # type: ignore[attr-defined]
    genuine = charts.length_histogram()
    [entry] = (tmp_path / "chart-templates").glob("*.json")
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps({**genuine, "usermeta": {"forged": True}}), encoding="utf-8")
    entry.unlink()
    entry.symlink_to(forged)
    charts.length_histogram.cache_clear()  # type: ignore[attr-defined]
    try:
        assert _within(charts.length_histogram) == genuine
    finally:
        charts.length_histogram.cache_clear()  # type: ignore[attr-defined]
    assert not entry.is_symlink()


def _template_memos() -> list[Callable[[], object]]:
    from jouleboard.render import charts

    return [f for f in vars(charts).values() if callable(getattr(f, "cache_clear", None))]


EVIL = "https://evil.example/"


def _clear(memos: list[Callable[[], object]]) -> None:
    for memo in memos:
        memo.cache_clear()  # type: ignore[attr-defined]


def test_an_edited_chart_template_is_never_published(
    clean: tuple[Path, Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Issue 41 item 1: a template in the cache's chart-templates/ edited to point the
    published spec's loader elsewhere (before: published as is in charts/*.vl.json) is made
    again, with a warning naming it, whether the build goes into a fresh --out or into the
    output whose manifest recorded the genuine templates; the charts published are the
    clean build's, byte for byte."""
    site = clean[1]
    data = tmp_path / "data"
    shutil.copytree(clean[0], data)
    cache = tmp_path / "cache"
    monkeypatch.setattr(export, "DEFAULT_CACHE", cache)
    memos = _template_memos()
    _clear(memos)
    first = tmp_path / "first"
    try:
        build_site(data, first, cache=cache)  # fills chart-templates/ and trusts them
        models = data / "models.yaml"
        registry = models.read_text(encoding="utf-8")
        for edit, out in enumerate((tmp_path / "fresh", first)):
            templates = sorted((cache / "chart-templates").glob("*.json"))
            assert templates
            for path in templates:
                spec = json.loads(path.read_text(encoding="utf-8"))
                spec["usermeta"] = {"embedOptions": {"loader": {"baseURL": EVIL}}}
                path.write_text(json.dumps(spec, sort_keys=True), encoding="utf-8")
            # A model's description edited: the build into the same output has work to do,
            # and every part of the plan reads the registry, so every chart is bound again
            # (a part kept from the last build holds the genuine template's spec).
            described = f"  builder: Acme\n  description_md: Edited {edit}.\n"
            models.write_text(registry.replace("  builder: Acme\n", described), encoding="utf-8")
            _clear(memos)
            capfd.readouterr()
            _within(functools.partial(build_site, data, out, cache=cache))
            warnings = capfd.readouterr().err.splitlines()
            for path in templates:
                assert (
                    f"warning: chart cache entry {path} refused (not the chart template this "
                    "jouleboard makes); made again from Altair"
                ) in warnings
            files = [p for p in out.rglob("*") if p.is_file()]
            assert not [p for p in files if EVIL.encode() in p.read_bytes()]
            specs = sorted(p.relative_to(out) for p in out.glob("charts/*.vl.json"))
            assert specs == sorted(p.relative_to(site) for p in site.glob("charts/*.vl.json"))
            for spec_path in specs:
                assert (out / spec_path).read_bytes() == (site / spec_path).read_bytes()
    finally:
        _clear(memos)


def test_a_cached_template_is_used_only_with_the_digest_its_output_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """The template cache by itself: without a recorded digest an entry is built again (and
    found equal: no warning); with the digest the last build recorded it is read, Altair
    not asked; edited, it is refused even then."""
    from jouleboard.render import charts

    monkeypatch.setattr(export, "DEFAULT_CACHE", tmp_path)
    monkeypatch.setattr(charts, "_trusted", {})
    builds: list[str] = []

    def probe_chart(title: str) -> JsonObject:
        builds.append(title)
        return {"mark": "bar", "title": title}

    made = charts.template(probe_chart)
    assert made("a") == {"mark": "bar", "title": "a"} and builds == ["a"]
    [entry] = (tmp_path / "chart-templates").glob("*.json")
    recorded = charts.templates_made()
    assert recorded[entry.stem] == hashlib.sha256(entry.read_bytes()).hexdigest()
    made.cache_clear()  # type: ignore[attr-defined]
    assert made("a") == {"mark": "bar", "title": "a"} and builds == ["a", "a"]  # untrusted
    charts.trust_templates(recorded)
    made.cache_clear()  # type: ignore[attr-defined]
    assert made("a") == {"mark": "bar", "title": "a"} and builds == ["a", "a"]  # read
    entry.write_text('{"mark": "bar", "title": "b"}', encoding="utf-8")
    made.cache_clear()  # type: ignore[attr-defined]
    capfd.readouterr()
    assert made("a") == {"mark": "bar", "title": "a"} and builds == ["a", "a", "a"]
    assert f"chart cache entry {entry} refused" in capfd.readouterr().err
    assert json.loads(entry.read_text(encoding="utf-8"))["title"] == "a"  # replaced


def test_a_forged_template_trusted_by_a_forged_manifest_still_fails_the_build(
    clean: tuple[Path, Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The second line: were a forged template trusted (its digest written into the
    output's manifest too), its chart is drawn fresh and checked like a cached SVG, so the
    build stops with a located line instead of publishing it, and the output is untouched."""
    from jouleboard.render import charts

    data, site, _ = clean
    monkeypatch.setattr(export, "DEFAULT_CACHE", tmp_path / "cache")
    memos = _template_memos()
    assert memos, "charts.py has no cached templates: this test needs updating"
    _clear(memos)
    out = tmp_path / "site"
    shutil.copytree(site, out)
    before = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    try:
        build_site(data, tmp_path / "warm", cache=tmp_path / "cache")  # fills the templates
        image = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4"
        forged = {
            "data": {"values": [{"v": 1}]},
            "mark": {"type": "image", "width": 9, "height": 9},
            "encoding": {"x": {"field": "v", "type": "quantitative"}, "url": {"value": image}},
        }
        templates = sorted((tmp_path / "cache" / "chart-templates").glob("*.json"))
        assert templates
        text = json.dumps(forged)
        for path in templates:
            path.write_text(text, encoding="utf-8")
        digest = hashlib.sha256(text.encode()).hexdigest()
        real_trust = charts.trust_templates
        monkeypatch.setattr(
            charts, "trust_templates", lambda _: real_trust({p.stem: digest for p in templates})
        )
        _clear(memos)
        with pytest.raises(ValidationFailed) as failed:
            _within(lambda: build_site(data, out, cache=tmp_path / "cache"))
    finally:
        _clear(memos)
    [problem] = failed.value.problems
    assert problem.rule == "chart.unsafe-render" and "element image" in problem.message
    assert {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} == before


def test_a_chart_cache_that_is_not_a_folder_is_one_line(
    clean: tuple[Path, Path, Path], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Issue 41 item 8: JOULEBOARD_CACHE naming a file or /dev/null (before: "exception
    calling callback for <Future ...>" and a NotADirectoryError traceback, then a line) is
    one line, before any work, and the output is not made."""
    data = clean[0]
    cache_file = tmp_path / "cache-file"
    cache_file.write_text("not a folder")
    with pytest.raises(NotADirectoryError) as refused:
        _within(lambda: build_site(data, tmp_path / "site", cache=cache_file))
    assert refused.value.filename == str(cache_file) and "chart cache" in str(refused.value)
    assert not (tmp_path / "site").exists()
    env = {**os.environ, "JOULEBOARD_CACHE": "/dev/null"}
    command = [sys.executable, "-m", "jouleboard", "build", "--data", str(data)]
    done = subprocess.run(
        [*command, "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        timeout=LIMIT,
        check=False,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        "jouleboard build: error: the chart cache is not a folder (set JOULEBOARD_CACHE "
        "to a folder, or unset it): /dev/null\n"
    )
    assert not (tmp_path / "out").exists()
