"""Every validation rule id the code can report is documented in docs/measurement-format.md
(MLPerf's import and result rules in docs/mlperf.md, serving benchmarks' in docs/aiperf.md).

Rule ids are found in the code, not listed here: any string literal shaped like
``family.rule-name`` (e.g. "bounds.power-above-limit", "run.no-gpu") is a rule id, except
file names ("about.md") and the few dotted names that are not rules (NOT_RULES below).
A new rule therefore fails this test until it is documented.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.package_source import package_trees

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "measurement-format.md"
DOCS = (DOC, REPO / "docs" / "mlperf.md", REPO / "docs" / "aiperf.md")
RULE_SHAPE = re.compile(r"^[a-z]+\.[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
FILE_SUFFIXES = {
    "md",
    "html",
    "js",
    "svg",
    "json",
    "xml",
    "yaml",
    "yml",
    "toml",
    "txt",
    "css",
    "csv",
    "png",
    "conf",  # fontconfig's files (core/fonts.py)
}
# Dotted strings that are not rule ids: Vega-Lite field paths, an ijson item prefix and the
# package's own module names (engine/fingerprint.py looks "jouleboard.kinds" up).
NOT_RULES = {"datum", "results", "jouleboard"}


def rule_ids_in_code() -> set[str]:
    found = set()
    for tree in package_trees().values():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and RULE_SHAPE.match(node.value)
            ):
                family, name = node.value.split(".", 1)
                if name not in FILE_SUFFIXES and family not in NOT_RULES:
                    found.add(node.value)
    return found


def test_the_extraction_finds_rules_of_every_family() -> None:
    """The extraction itself works: known rules of several families are found."""
    ids = rule_ids_in_code()
    for known in (
        "bounds.power-above-limit",
        "registry.unknown-gpu",
        "schema.wrong-type",
        "file.missing",
        "dataset.duplicate-configuration",
    ):
        assert known in ids
    assert {i.split(".")[0] for i in ids} >= {"bounds", "registry", "schema", "file", "value"}
    assert not any(i.endswith((".md", ".json")) for i in ids)


def test_every_rule_id_in_the_code_is_documented() -> None:
    text = "\n".join(d.read_text(encoding="utf-8") for d in DOCS)
    documented = set(re.findall(r"`([a-z]+\.[a-z0-9-]+)`", text))
    missing = sorted(rule_ids_in_code() - documented)
    assert not missing, (
        f"document these rule ids in {DOC.name}, mlperf.md or aiperf.md (as `rule.id`): {missing}"
    )
