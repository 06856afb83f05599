"""A valid data set whose every contributor-supplied string carries a script payload."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from tests.golden.tree import DATA

PAYLOADS = [
    "<script>window.__xss=1</script>",
    '"><img src=x onerror="window.__xss=2">',
    "</script><script>window.__xss=3</script>",
    "<svg/onload=window.__xss=4>",
    "' onmouseover='window.__xss=5' x='",
    "{{7*7}} {% raw %}",
    "datum.value + (window.__xss=7)",
    "\u2028\u2029</style><style>body{display:none}</style>",
]
ALL = " ".join(PAYLOADS)
MARKDOWN = (
    "Click [here](javascript:window.__xss=10) or [there](JaVaScRiPt:window.__xss=11).\n\n"
    "<script>window.__xss=12</script>\n\n<img src=x onerror=\"window.__xss=13\">\n\n"
    "<a href=\"#\" onclick=\"window.__xss=14\">link</a> <iframe src=\"javascript:1\"></iframe>\n\n"
    "<svg><script>window.__xss=15</script></svg> ![img](x\" onerror=\"window.__xss=16)\n\n"
    + ALL
)


def write_payload_data(target: Path) -> Path:
    """Copy the golden sample data to ``target`` with payloads in every free-text field."""
    shutil.copytree(DATA, target)

    def edit(name: str, change) -> None:  # type: ignore[no-untyped-def]
        path = target / name
        value = yaml.safe_load(path.read_text())
        change(value)
        path.write_text(yaml.safe_dump(value, allow_unicode=True, sort_keys=False))

    def models(value: dict) -> None:
        for i, info in enumerate(value.values()):
            info["nickname"] = f"{PAYLOADS[i % len(PAYLOADS)]} model {i}"
            info["builder"] = PAYLOADS[(i + 1) % len(PAYLOADS)]
            info["architecture"] = PAYLOADS[(i + 2) % len(PAYLOADS)]
            info["description_md"] = MARKDOWN
            info["links"] = [{"label": ALL[:200], "url": "https://example.org/a?b=%22onmouseover%3D&c=javascript:x"}]

    def tasks(value: dict) -> None:
        for i, info in enumerate(value.values()):
            info["name"] = f"{PAYLOADS[i]} task {i}"
            info["benchmark"] = PAYLOADS[i + 2]
            info["description_md"] = MARKDOWN

    def gpus(value: dict) -> None:
        for i, info in enumerate(value.values()):
            info["name"] = f"{PAYLOADS[i + 3]} gpu"
            info["vendor"] = PAYLOADS[i + 4]
            info["generation"] = PAYLOADS[i + 5]

    def site(value: dict) -> None:
        value["title"] = PAYLOADS[0][:200]
        value["tagline"] = ALL[:500]
        value["attribution_md"] = MARKDOWN[:5000]

    edit("models.yaml", models)
    edit("tasks.yaml", tasks)
    edit("gpus.yaml", gpus)
    edit("site.yaml", site)
    return target
