"""Markdown inputs are bounded (issue 14): over-limit text is refused with a located rule
before it reaches the renderer, and what passes renders in time linear in its length.

Timing tests compare the time for an input and for the same input doubled (the minimum of
several runs, so a busy machine does not decide): a quadratic renderer gives about 4x, a
linear one about 2x. No absolute time is asserted (that belongs in benchmarks/).
"""

from __future__ import annotations

import concurrent.futures
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from jouleboard.config.registry import load_registry
from jouleboard.core.markdown_limits import (
    MAX_BREAKS,
    MAX_NESTING,
    MAX_OPEN_BRACKETS,
    MAX_PARAGRAPH_CHARS,
    MAX_TAGS,
    markdown_issues,
)
from jouleboard.render import markdown
from jouleboard.render.markdown import MarkdownRefused, render_markdown
from tests.golden.tree import DATA, REPO


def nested_list(levels: int) -> str:
    """The reported about.md case: each item two spaces deeper than the last."""
    return "".join("  " * i + "- x\n" for i in range(levels))


# Adversarial inputs by size n (characters, about): each was super-linear in the renderer.
ADVERSARIAL: dict[str, Callable[[int], str]] = {
    "open brackets": lambda n: "[" * n,  # the reported description_md case
    "open link parentheses": lambda n: "[a](" * (n // 4),
    "images": lambda n: "![" * (n // 2),
    "nested quotes": lambda n: ">" * n + " x\n",
    "nested list markers": lambda n: "- " * (n // 2) + "x\n",
    "nested list by indentation": lambda n: nested_list(int((n / 2) ** 0.5) * 2),
    "quote and list": lambda n: "> - " * (n // 4) + "x\n",
    "unclosed tags": lambda n: "<a " * (n // 3),
    "escaped unclosed tags": lambda n: "\\<a " * (n // 4),
    "headings in a paragraph": lambda n: "#\n" * (n // 2),
    "setext headings in a paragraph": lambda n: "a\n-\n" * (n // 4),
    "rules in a paragraph": lambda n: "- - -\n" * (n // 6),
}


def best_time(action: Callable[[], object], repeats: int = 5) -> float:
    """The fastest of ``repeats`` runs of ``action``, in seconds."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - started)
    return best


def fresh_render(text: str) -> str:
    """``render_markdown(text)`` as the first call for ``text`` makes it: the renderer keeps
    each text's HTML, and a timing or a comparison of renders must not see a kept one."""
    markdown._rendered.pop(text, None)
    return render_markdown(text)


def checked_render(text: str) -> str | None:
    """What every source of markdown does: check, then render only what passes."""
    if markdown_issues(text, max_chars=len(text)):
        return None
    return fresh_render(text)


def doubling_ratio(make: Callable[[int], str], n: int, work: Callable[[str], object]) -> float:
    """time(work(make(2n))) / time(work(make(n))): each the best of 4 runs of a loop long
    enough (about 30 ms) for the clock, the two sizes taking turns so that a burst of load
    from elsewhere hits both. (Under three busy loops on two cores, 4 runs measured every
    case at 2.3x or less, 7 runs took twice as long for the same; quadratic work is 4x.)"""
    small, large = make(n), make(2 * n)
    once = best_time(lambda: work(small), repeats=3)
    loops = max(1, int(0.03 / max(once, 1e-6)))
    best_small = best_large = float("inf")
    for _ in range(4):
        best_small = min(best_small, best_time(lambda: [work(small) for _ in range(loops)], 1))
        best_large = min(best_large, best_time(lambda: [work(large) for _ in range(loops)], 1))
    return best_large / best_small


def linear_ratio(make: Callable[[int], str], n: int, work: Callable[[str], object]) -> float:
    """The lowest of up to three :func:`doubling_ratio` measurements, stopping at the first
    under 3: quadratic work measures about 4x every time, while a burst of load from
    elsewhere (a shared 2-core CI machine) can push one linear measurement past 3x."""
    ratio = float("inf")
    for _ in range(3):
        ratio = min(ratio, doubling_ratio(make, n, work))
        if ratio < 3:
            break
    return ratio


@pytest.mark.slow  # times inputs of growing size
@pytest.mark.parametrize("case", list(ADVERSARIAL))
def test_adversarial_markdown_costs_linear_time(case: str) -> None:
    # Before the limits these took 4x-10x when doubled (20,000 '[' took 52 s).
    make = ADVERSARIAL[case]
    assert markdown_issues(make(4000), max_chars=10**6), "the adversarial case passes the check"
    ratio = linear_ratio(make, 4000, checked_render)
    assert ratio < 3, f"{case}: doubling the input took {ratio:.1f}x the time"


def paragraphs(body: str, n: int) -> str:
    """``body`` repeated as paragraphs to about ``n`` characters."""
    return "\n\n".join([body] * max(1, n // (len(body) + 2)))


# Inputs just inside every limit: they render, and in linear time.
AT_THE_LIMITS: dict[str, Callable[[int], str]] = {
    "open brackets": lambda n: paragraphs("[" * MAX_OPEN_BRACKETS + " a b" * 150, n),
    "open link parentheses": lambda n: paragraphs("[a](" * MAX_OPEN_BRACKETS + " a" * 300, n),
    "nested list": lambda n: paragraphs(nested_list(MAX_NESTING) * 10, n),
    "nested quotes": lambda n: paragraphs((">" * MAX_NESTING + " [x\n") * 30, n),
    "headings in a paragraph": lambda n: paragraphs("#\n" * MAX_BREAKS + "a\n" * 400, n),
    "tags": lambda n: "<a " * MAX_TAGS + paragraphs("a " * 500, n),
    "dense inline markup": lambda n: paragraphs("*a* `b` [c](d) &#1; " * 100, n),
}


@pytest.mark.slow  # times inputs of growing size
@pytest.mark.parametrize("case", list(AT_THE_LIMITS))
def test_markdown_at_the_limits_renders_in_linear_time(case: str) -> None:
    make = AT_THE_LIMITS[case]
    assert not markdown_issues(make(20_000), max_chars=20_000), "meant to pass the check"
    ratio = linear_ratio(make, 10_000, fresh_render)
    assert ratio < 3, f"{case}: doubling the input took {ratio:.1f}x the time"


@pytest.mark.parametrize(
    ("text", "rule", "line"),
    [
        ("a" * 101, "markdown.too-long", 1),
        ("ok\n\n" + "[" * (MAX_OPEN_BRACKETS + 1), "markdown.too-deep", 3),
        ("[a](" * (MAX_OPEN_BRACKETS + 1), "markdown.too-deep", 1),
        ("x\n" + ">" * (MAX_NESTING + 1) + " deep", "markdown.too-deep", 2),
        ("- " * (MAX_NESTING + 1) + "x", "markdown.too-deep", 1),
        (nested_list(40), "markdown.too-deep", 2 * MAX_NESTING + 1),
        ("<b>" * (MAX_TAGS + 1), "markdown.too-many-tags", 1),
        ("#\n" * (MAX_BREAKS + 1), "markdown.too-many-breaks", 1),
        ("> #\n" * (MAX_BREAKS + 1), "markdown.too-many-breaks", 1),
        ("a\n\n" + "b" * (MAX_PARAGRAPH_CHARS + 1), "markdown.paragraph-too-long", 3),
    ],
)
def test_over_limit_markdown_is_refused_with_its_rule_and_line(
    text: str, rule: str, line: int
) -> None:
    issues = markdown_issues(text, max_chars=100 if rule == "markdown.too-long" else None)
    assert [(i.rule, i.line) for i in issues] == [(rule, line)]
    assert issues[0].hint


@pytest.mark.parametrize(
    "text",
    [
        "[" * MAX_OPEN_BRACKETS + "\n\n" + "[" * MAX_OPEN_BRACKETS,  # each paragraph on its own
        "\\[" * 1000,  # escaped brackets never open anything
        "(" * 1000,  # parentheses outside a link destination are text
        "> " * MAX_NESTING + "x",
        "a < b and c<5 " * MAX_TAGS,  # '<' that cannot open a tag
        "b" * MAX_PARAGRAPH_CHARS,  # a paragraph of exactly the cap
    ],
)
def test_markdown_within_the_limits_passes(text: str) -> None:
    assert markdown_issues(text) == []
    render_markdown(text)


@pytest.mark.slow  # a nesting deep enough to hit Python's recursion limit: about a second
def test_the_renderer_itself_refuses_deep_nesting() -> None:
    with pytest.raises(MarkdownRefused, match=r"markdown\.too-deep"):
        render_markdown(nested_list(3000))


def test_the_project_markdown_passes_the_limits() -> None:
    texts = [(REPO / "content" / "about.md").read_text(encoding="utf-8")]
    for name in ("models.yaml", "tasks.yaml", "site.yaml"):
        doc = yaml.safe_load((REPO / "data" / name).read_text(encoding="utf-8"))
        entries = doc.values() if name != "site.yaml" else [doc]
        texts += [v for e in entries for k, v in e.items() if k.endswith("_md")]
    assert all(markdown_issues(t) == [] for t in texts)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    shutil.copytree(DATA, tmp_path / "data")
    return tmp_path / "data"


def set_field(path: Path, keys: tuple[str, ...], value: str) -> None:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    target = doc
    for key in keys[:-1]:
        target = target[key]
    target[keys[-1]] = value
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")


def first_model(data: Path) -> str:
    return next(iter(yaml.safe_load((data / "models.yaml").read_text(encoding="utf-8"))))


def test_validate_locates_over_limit_markdown_in_every_registry(data: Path) -> None:
    model = first_model(data)
    task = next(iter(yaml.safe_load((data / "tasks.yaml").read_text(encoding="utf-8"))))
    set_field(data / "models.yaml", (model, "description_md"), "[" * 20_000)  # the report
    set_field(data / "tasks.yaml", (task, "description_md"), nested_list(40))
    set_field(data / "site.yaml", ("attribution_md",), "<i>" * (MAX_TAGS + 1))
    registry, problems = load_registry(data)
    assert registry is None
    # The refused model and task also leave the golden quality file naming unknown ones.
    found = {
        (Path(p.file).name, p.pointer, p.rule) for p in problems if p.rule.startswith("markdown.")
    }
    assert found == {
        ("models.yaml", f"/{model.replace('/', '~1')}/description_md", "markdown.too-deep"),
        ("tasks.yaml", f"/{task}/description_md", "markdown.too-deep"),
        ("site.yaml", "/attribution_md", "markdown.too-many-tags"),
    }
    assert all(p.hint and "docs/" not in p.hint for p in problems)


@pytest.mark.slow  # runs jouleboard validate in a new process
def test_validate_command_reports_the_reported_case_quickly(data: Path) -> None:
    set_field(data / "models.yaml", (first_model(data), "description_md"), "[" * 20_000)
    result = subprocess.run(
        [sys.executable, "-m", "jouleboard", "validate", "--data", str(data)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert "description_md: markdown.too-deep:" in result.stderr
    assert "Traceback" not in result.stderr


def _in_a_new_thread(text: str) -> str:
    """``render_markdown(text)`` by a fresh converter: the first of a new thread."""
    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        return thread.submit(fresh_render, text).result()


def test_one_text_leaves_nothing_behind_for_the_next() -> None:
    """The renderer keeps one converter per thread (making one per text cost 3 s of the plan
    at 100,000 configurations): each text renders as a fresh converter renders it, whatever
    came before. A reference defined in one text does not resolve in the next, and heading
    ids (toc) and stashed HTML start over."""
    texts = [
        "## Results\n\nSee [the paper][p].\n\n[p]: https://example.org/paper\n",
        "## Results\n\nSee [the paper][p] again.\n",
        "<b>raw</b> and <script>alert(1)</script>\n\n## Results\n\n## Results\n",
        "| a | b |\n|---|---|\n| 1 | 2 |\n",
        "## Results\n",
    ]
    for text in [*texts, *reversed(texts)]:
        assert fresh_render(text) == _in_a_new_thread(text), text
    assert 'id="results"' in fresh_render("## Results\n")
    assert "example.org" in fresh_render(texts[0])
    assert "example.org" not in fresh_render(texts[1])


def test_a_text_is_rendered_once_and_a_refused_one_every_time(
    monkeypatch: pytest.MonkeyPatch, rendered: list[str]
) -> None:
    """The renderer keeps each text's HTML (a pure function of the text): asked again, it
    gives the same HTML without rendering, also after other texts; a text it refuses is
    refused every time; and it keeps at most _RENDERED_CAP texts (here 3)."""
    renders = rendered
    monkeypatch.setattr(markdown, "_RENDERED_CAP", 3)
    texts = [f"## Part {i}\n\nSee [the *paper*](https://example.org/{i})." for i in range(5)]
    first = [render_markdown(t) for t in texts[:2]]
    assert [render_markdown(t) for t in reversed(texts[:2])] == first[::-1]
    assert renders == texts[:2]
    assert first == [_in_a_new_thread(t) for t in texts[:2]]  # as a fresh converter renders
    renders.clear()
    deep = ">" * (MAX_NESTING + 5) + " x\n"
    for _ in range(2):
        with pytest.raises(MarkdownRefused, match=r"markdown\.too-deep"):
            render_markdown(deep)
    assert renders == [deep] * 2
    for text in texts:
        render_markdown(text)
        assert len(markdown._rendered) <= 3
