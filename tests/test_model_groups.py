"""Model pages group a task's configurations by GPU count, the best group first and each
group's rows best first (issue 29, item 3), checked against the measurements themselves."""

from __future__ import annotations

import re
from pathlib import Path

from jouleboard.loading.dataset import load_dataset

REPO = Path(__file__).resolve().parents[1]


def test_configurations_come_grouped_by_gpu_count_best_first(default_site: Path) -> None:
    data = load_dataset(REPO / "data")
    model, task = "openai/gpt-oss-20b", "gpqa"
    mine = [c for c in data.configurations if c.model_id == model and c.task == task]
    html = (default_site / "models" / "openai--gpt-oss-20b" / "index.html").read_text()
    table = html.split(f'<table id="configs-{task}"', 1)[1].split("</table>", 1)[0]
    bodies = re.findall(r"<tbody>(.*?)</tbody>", table, re.S)
    groups = [
        (
            re.search(r'<th scope="rowgroup"[^>]*>(.*?)</th>', b).group(1),  # type: ignore[union-attr]
            [
                float(v)
                for v in re.findall(
                    r'<td class="num col-tokens_per_joule[^"]*" data-value="([^"]+)"', b
                )
            ],
        )
        for b in bodies
    ]
    expected: dict[str, list[float]] = {}
    for c in mine:
        expected.setdefault(f"{c.num_gpus}× {c.gpu_model}", []).append(
            1 / c.energy_per_output_joules
        )
    # One body per GPU count, labelled with it and its size; every configuration once.
    assert sorted(label for label, _ in groups) == sorted(
        f"{k}: {len(v)} configuration{'s' * (len(v) != 1)}" for k, v in expected.items()
    )
    assert sum(len(values) for _, values in groups) == len(mine)
    for label, values in groups:
        assert values == sorted(values, reverse=True), label  # best first within a group
        key = label.split(":")[0]
        assert sorted(values) == sorted(expected[key])  # its own configurations only
    bests = [values[0] for _, values in groups]
    assert bests == sorted(bests, reverse=True)  # the group with the best first
