"""The package's modules import in a straight line: no circle among module-level imports,
every module imports on its own in a fresh interpreter, and the stages point down only."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.package_source import PACKAGE, package_trees

REPO = PACKAGE.parent
# Function-level imports that close a circle, each with its reason. Adding one needs a reason.
KNOWN_LATE: set[tuple[str, str]] = set()  # none today


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, top_level_only: bool, modules: set[str]) -> set[str]:
    """What a module imports: ``from a import b`` is ``a.b`` when that is a module (the
    package ``a`` runs too, but it only imports lazily), else ``a``."""
    tree = package_trees()[path]
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            subs = {f"{node.module}.{a.name}" for a in node.names} & modules
            found.update(subs or {node.module})
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def graph(top_level_only: bool) -> dict[str, set[str]]:
    modules = {module_name(p): p for p in package_trees()}
    return {
        m: {i for i in imports(p, top_level_only, set(modules)) if i in modules and i != m}
        for m, p in modules.items()
    }


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    found, state, stack = [], {}, []

    def visit(m: str) -> None:
        state[m] = "open"
        stack.append(m)
        for n in sorted(edges[m]):
            if state.get(n) == "open":
                found.append([*stack[stack.index(n) :], n])
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = "done"

    for m in sorted(edges):
        if m not in state:
            visit(m)
    return found


def test_no_circle_among_module_level_imports() -> None:
    assert cycles(graph(top_level_only=True)) == []


def test_function_level_imports_close_no_new_circle() -> None:
    edges = graph(top_level_only=False)
    for a, b in KNOWN_LATE:
        edges[a].discard(b)
    assert cycles(edges) == []


# The package's stages, from the ground floor up (docs/architecture.md): a module imports
# from its own stage or below. plan/, render/ and output/ are siblings; api.py sits beside
# commands/; cli.py (and the package itself) above everything.
STAGES = (
    ("core",),
    ("config",),
    ("measure",),
    ("rank",),
    ("kinds",),
    ("importers",),
    ("loading",),
    ("plan", "render", "output"),
    ("engine",),
    ("commands",),
)
# Imports that point up, each with its reason (function-level or for type checking only:
# none runs at import time). Adding one needs a reason.
KNOWN_UPWARD = {
    # A type annotation (the Rankable protocol), under TYPE_CHECKING.
    ("jouleboard.measure.units", "jouleboard.rank.ranking"),
    # The version number init writes into requirements.txt.
    ("jouleboard.commands.init", "jouleboard"),
}


def stage(module: str) -> int:
    if module == "jouleboard.api":  # the Python API sits beside commands/ (rank calls it)
        return STAGES.index(("commands",))
    parts = module.split(".")
    for level, names in enumerate(STAGES):
        if len(parts) > 1 and parts[1] in names:
            return level
    return len(STAGES)  # jouleboard itself, api, cli, __main__


def test_every_module_sits_in_a_stage() -> None:
    top = {module_name(p) for p in PACKAGE.glob("*.py")}
    assert top == {"jouleboard", "jouleboard.__main__", "jouleboard.api", "jouleboard.cli"}
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert folders == {name for names in STAGES for name in names}


def test_imports_point_down_the_stages() -> None:
    edges = graph(top_level_only=False)
    upward = {(m, d) for m, deps in edges.items() for d in deps if stage(d) > stage(m)}
    assert upward == KNOWN_UPWARD


# One child process per module, forked from an interpreter that has imported the
# third-party libraries but nothing of jouleboard: each module is imported alone (an import
# circle inside the package fails as in a fresh interpreter) without paying ~100 starts.
_IMPORT_EACH_ALONE = """
import os, sys, traceback
import jinja2, markdown, pydantic, yaml  # third-party: never part of a circle of ours
assert not any(m.startswith("jouleboard") for m in sys.modules)
bad = []
for name in sys.argv[1:]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            __import__(name)
            os._exit(0)
        except BaseException:
            os.write(write, traceback.format_exc().strip().splitlines()[-1].encode())
            os._exit(1)
    os.close(write)
    with os.fdopen(read) as why:
        reason = why.read()
    if os.waitpid(pid, 0)[1]:
        bad.append((name, reason))
print(bad)
"""


@pytest.mark.slow  # one forked child per module: ~110 imports
def test_every_module_imports_alone_in_a_fresh_interpreter() -> None:
    names = sorted(
        module_name(p) for p in PACKAGE.rglob("*.py") if p.name != "__main__.py"
    )  # runs the CLI when imported
    out = subprocess.run(
        [sys.executable, "-c", _IMPORT_EACH_ALONE, *names],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_the_pipeline_loads_no_importer_it_does_not_use() -> None:
    """A build imports the whole pipeline (engine/assemble.py) on every rebuild; the raw-run
    importer (only for --runs) and xml.sax.saxutils (which loads urllib.request and
    http.client) are not part of it, so an edit rebuild does not pay for them."""
    unused = ["jouleboard.importers.mlenergy_runs", "xml.sax.saxutils", "http.client"]
    code = (
        "import sys\nimport jouleboard.engine.assemble\n"
        f"print([m for m in {unused!r} if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
