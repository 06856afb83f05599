"""A valid data set whose every contributor-supplied string carries a hostile payload.

Script payloads set ``window.__xss`` (or open a dialog) if they ever run; formula payloads
would run in a spreadsheet opening a CSV download; markdown payloads would add links,
images, table cells or HTML to a report. :func:`write_payload_data` puts them in every
registry and content field the build publishes: models, GPUs, tasks (names, units,
descriptions), site.yaml strings, quality sources, release notes, measurement provenance
and notes, and about.md (through :func:`write_payload_project`).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.git_repo import git
from tests.golden.tree import DATA, REPO

PAYLOADS = [
    "<script>window.__xss=1</script>",
    '"><img src=x onerror="window.__xss=2">',
    "</script><script>window.__xss=3</script>",
    "<svg/onload=window.__xss=4>",
    "' onmouseover='window.__xss=5' x='",
    "{{7*7}} {% raw %}",
    "datum.value + (window.__xss=7)",
    "\u2028\u2029</style><style>body{display:none}</style>",
    # Breaks out of a double-quoted attribute (the energy label's aria-label) into a new
    # one: runs when an SVG holding it is opened.
    'x" onload="alert(document.domain)" y="',
    'x" onload="window.__xss=9" y="',
    # Spreadsheet formulas (CSV injection).
    '=HYPERLINK("http://x","y")',
    "+SUM(1+1)*cmd|' /C calc'!A0",
    "@SUM(1+1)",
    "-2+3+cmd|' /C calc'!A0",
    # Markdown that would add a link, an image, a table cell or a heading to a report.
    "[click](http://evil.example) ![img](http://evil.example/x.png) | cell | # head",
]
FORMULAS = [p for p in PAYLOADS if p[0] in "=+-@"]
# Hidden characters (U+2028, U+2029) are refused in every text field by validation
# (value.hidden-character), so a valid data set cannot carry them; that escaping holds
# without validation too is tested on the escaping functions (tests/test_escape.py).
ACCEPTED = [p for p in PAYLOADS if "\u2028" not in p and "\u2029" not in p]
ALL = " ".join(ACCEPTED)
MARKDOWN = (
    "Click [here](javascript:window.__xss=10) or [there](JaVaScRiPt:window.__xss=11).\n\n"
    '<script>window.__xss=12</script>\n\n<img src=x onerror="window.__xss=13">\n\n'
    '<a href="#" onclick="window.__xss=14">link</a> <iframe src="javascript:1"></iframe>\n\n'
    '<svg><script>window.__xss=15</script></svg> ![img](x" onerror="window.__xss=16)\n\n' + ALL
)


def payload(i: int) -> str:
    """The ``i``-th payload validation accepts, wrapping around."""
    return ACCEPTED[i % len(ACCEPTED)]


def write_payload_data(target: Path) -> Path:
    """Copy the golden sample data to ``target`` with payloads in every free-text field,
    plus a quality registry and two releases (for the changelog and the feeds)."""
    shutil.copytree(DATA, target)

    def edit(name: str, change: Callable[[Any], None]) -> None:
        path = target / name
        value = yaml.safe_load(path.read_text())
        change(value)
        path.write_text(yaml.safe_dump(value, allow_unicode=True, sort_keys=False))

    def models(value: dict[str, Any]) -> None:
        for i, info in enumerate(value.values()):
            info["nickname"] = f"{payload(i)} model {i}"
            info["builder"] = payload(i + 1)
            info["architecture"] = payload(i + 2)
            info["description_md"] = MARKDOWN
            info["links"] = [
                {
                    "label": ALL[:200],
                    "url": "https://example.org/a?b=%22onmouseover%3D&c=javascript:x",
                }
            ]
        # The attribute-breaking and formula payloads by themselves, as a whole nickname.
        names = list(value.values())
        names[0]["nickname"] = 'x" onload="alert(document.domain)" y="'
        names[1]["nickname"] = '=HYPERLINK("http://x","y")'

    def tasks(value: dict[str, Any]) -> None:
        for i, info in enumerate(value.values()):
            info["name"] = f"{payload(i + 8)} task {i}"
            info["benchmark"] = payload(i + 2)
            info["description_md"] = MARKDOWN
            info["response_unit"] = payload(i + 10)

    def gpus(value: dict[str, Any]) -> None:
        for i, info in enumerate(value.values()):
            info["name"] = f"{payload(i + 3)} gpu"
            info["vendor"] = payload(i + 4)
            info["generation"] = payload(i + 5)

    def site(value: dict[str, Any]) -> None:
        value["title"] = payload(9)
        value["tagline"] = ALL[:500]
        value["attribution_md"] = MARKDOWN[:5000]

    edit("models.yaml", models)
    edit("tasks.yaml", tasks)
    edit("gpus.yaml", gpus)
    edit("site.yaml", site)
    _write_quality(target)
    _write_releases(target)
    _edit_measurements(target)
    _write_mlperf(target)
    _tag_as_v1(target)
    return target


def _write_mlperf(target: Path) -> None:
    """Two MLPerf results of data/mlperf (a Server and an Offline one) with payloads in
    every free-text field: system, software, host, notes, accuracy, citation. (The
    submitter names a folder, so it is one of letters, digits and . _ + - only: a payload
    there is refused, tests/test_mlperf_hostile.py.)"""
    sources = sorted((REPO / "data" / "mlperf").rglob("*.json"))
    picked = [p for p in sources if "llama2-70b-99/" in p.as_posix()][:2]
    assert len(picked) == 2
    for i, path in enumerate(picked):
        doc = json.loads(path.read_text(encoding="utf-8"))
        doc["accuracy"] = payload(i + 1)
        doc["availability"] = payload(i + 2)
        system = doc["system"]
        for j, key in enumerate(("name", "accelerator", "host", "software", "power_settings")):
            system[key] = payload(i + j + 3)[:200]
        system["gpu_model"] = None
        doc["provenance"]["citation"] = payload(i + 4)
        doc["provenance"]["dataset"] = payload(i + 5)[:200]
        out = target / "mlperf" / path.relative_to(REPO / "data" / "mlperf")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")


def _tag_as_v1(target: Path) -> None:
    """The data folder as a git repository whose tag v1 (the older release's ref) holds this
    same data: the older release is read from git, as a site's would be."""
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "v1"], ["tag", "v1"]):
        git(target, *cmd)


def _write_quality(target: Path) -> None:
    """A gpqa accuracy registry whose every text field carries a payload."""
    folders = (target / "measurements" / "gpqa").glob("*/*/*.json")
    models = sorted({f"{p.parent.parent.name}/{p.parent.name}" for p in folders})
    scores = [
        {
            "model_id": m,
            "accuracy_percent": 50.0 + i,
            "setting": payload(i),
            "source_url": "https://example.org/paper?a=javascript:x",
            "source_detail": payload(i + 1),
            "confidence": "high",
        }
        for i, m in enumerate(models)
    ]
    (target / "quality").mkdir(exist_ok=True)
    (target / "quality" / "gpqa.yaml").write_text(
        yaml.safe_dump(
            {
                "task": "gpqa",
                "benchmark": payload(12),
                "note_md": MARKDOWN[:5000],
                "scores": scores,
            },
            allow_unicode=True,
            sort_keys=False,
        )
    )


def _write_releases(target: Path) -> None:
    """Two releases: the changelog, Atom and JSON feeds get built. The older one's ref is a
    tag of the same data (:func:`_tag_as_v1`): its feed entry lists every model as new."""
    version = yaml.safe_load((target / "site.yaml").read_text())["data_version"]
    (target / "releases.yaml").write_text(
        yaml.safe_dump(
            {
                "releases": [
                    {"version": version, "date": "2026-03-01", "notes_md": MARKDOWN[:10_000]},
                    {"version": "v1", "date": "2026-02-16", "notes_md": ALL, "ref": "v1"},
                ]
            },
            allow_unicode=True,
            sort_keys=False,
        )
    )


def _edit_measurements(target: Path) -> None:
    """Payloads in the free-text provenance and serving notes of every measurement file."""
    for i, path in enumerate(sorted((target / "measurements").rglob("*.json"))):
        doc = json.loads(path.read_text(encoding="utf-8"))
        doc["provenance"]["dataset"] = payload(i)[:200]
        doc["provenance"]["citation"] = payload(i + 1)
        if "max_num_seqs" in doc["serving"]:  # token tasks' serving settings carry notes
            doc["serving"]["notes"] = payload(i + 2)
        path.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")


def write_payload_project(target: Path) -> Path:
    """A project folder (templates and content) whose about.md carries the payloads."""
    shutil.copytree(REPO / "templates", target / "templates")
    (target / "content").mkdir(parents=True)
    (target / "content" / "about.md").write_text(MARKDOWN, encoding="utf-8")
    return target
