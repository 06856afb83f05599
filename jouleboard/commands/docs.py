"""``jouleboard docs``: the documentation this installation carries, in the terminal.

Every message that cites documentation names a page (and a section) this command prints,
so a wheel user without the repository can open it: ``jouleboard docs`` lists the pages,
``jouleboard docs measurement-format`` prints one, ``jouleboard docs howto "Add a GPU"`` one
section of it, and ``jouleboard docs registry.unknown-gpu`` where a rule is explained.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path

from jouleboard.commands.common import UsageError

HELP = "print the documentation: a page, a section of it, or where a rule is explained"

RULE = re.compile(r"^[a-z][a-z0-9-]*\.[a-z][a-z0-9.-]*$")


def add_arguments(d: argparse.ArgumentParser) -> None:
    d.add_argument(
        "topic",
        nargs="?",
        help="a page (measurement-format, howto, api, architecture, raw-runs, mlperf, aiperf) or "
        "a rule id such as registry.unknown-gpu; none: list the pages",
    )
    d.add_argument("section", nargs="?", help="a section title of the page, e.g. 'Add a GPU'")


def pages() -> dict[str, Path]:
    from jouleboard.core.resources import docs_dir

    folder = docs_dir()
    return {p.stem: p for p in sorted(folder.glob("*.md"))} if folder.is_dir() else {}


def title(text: str) -> str:
    first = next((line for line in text.splitlines() if line.startswith("# ")), "")
    return first[2:].strip()


def sections(text: str) -> list[tuple[str, str]]:
    """``(title, text)`` of each ``## `` section, the text up to the next one."""
    found: list[tuple[str, str]] = []
    for part in re.split(r"(?m)^(?=## )", text):
        if part.startswith("## "):
            head, _, _ = part.partition("\n")
            found.append((head[3:].strip(), part.rstrip() + "\n"))
    return found


def section_text(text: str, wanted: str, page: str) -> str:
    by_title = {t.casefold(): body for t, body in sections(text)}
    body = by_title.get(wanted.casefold())
    if body is None:
        close = difflib.get_close_matches(wanted.casefold(), list(by_title), n=1, cutoff=0.4)
        titles = ", ".join(repr(t) for t, _ in sections(text))
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise UsageError(f"no section {wanted!r} in {page}; {hint}sections: {titles}")
    return body


def rule_text(rule: str, found: dict[str, Path]) -> str:
    """The lines that explain ``rule`` (table rows and paragraphs naming it in backquotes),
    each under its page and section."""
    out = []
    # The reference that lists every rule first, then the pages that show it in use.
    for name, path in sorted(found.items(), key=lambda item: item[0] != "measurement-format"):
        text = path.read_text(encoding="utf-8")
        for heading, body in [("", text.split("\n## ", 1)[0]), *sections(text)]:
            hits = [
                block.strip()
                for block in re.split(r"\n\n|\n(?=\| |- )", body)
                if f"`{rule}`" in block
            ]
            if hits:
                where = f"{name}: {heading}" if heading else name
                out.append(f"[{where}]\n" + "\n".join(hits) + "\n")
    return "\n".join(out)


def documented_rules(found: dict[str, Path]) -> set[str]:
    """Every rule id the pages name in backquotes (``registry.unknown-gpu``)."""
    rules: set[str] = set()
    for path in found.values():
        text = path.read_text(encoding="utf-8")
        rules.update(m for m in re.findall(r"`([a-z][a-z0-9-]*\.[a-z][a-z0-9.-]*)`", text))
    return {r for r in rules if RULE.match(r)}


def run(args: argparse.Namespace) -> int:
    found = pages()
    if not found:
        raise UsageError("this installation carries no documentation (docs/ is missing)")
    if args.topic is None:
        width = max(len(n) for n in found)
        lines = [f"{n:<{width}}  {title(p.read_text(encoding='utf-8'))}" for n, p in found.items()]
        print("\n".join(lines))
        print("\njouleboard docs PAGE [SECTION] prints a page or one section of it.")
        return 0
    topic = args.topic.removesuffix(".md").removeprefix("docs/")
    if topic not in found and RULE.match(topic):
        text = rule_text(topic, found)
        if not text:
            from jouleboard.core.problems import did_you_mean

            hint = did_you_mean(topic, documented_rules(found))
            raise UsageError(
                f"no page explains the rule {topic!r}"
                + (
                    f"; {hint.rstrip()}"
                    if hint
                    else "; `jouleboard docs measurement-format` explains the rules"
                )
            )
        sys.stdout.write(text)
        return 0
    if topic not in found:
        close = difflib.get_close_matches(topic, list(found), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise UsageError(f"no page {topic!r}; {hint}pages: {', '.join(found)}")
    text = found[topic].read_text(encoding="utf-8")
    sys.stdout.write(text if args.section is None else section_text(text, args.section, topic))
    return 0
