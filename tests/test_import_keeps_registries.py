"""import-mlenergy edits the user's registries in place (issue 30, item 6): comments, key
order (tasks.yaml's order is the site's) and hand edits survive a re-import, a registry the
import would not change is not rewritten, and the summary lists every change it made."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from tests.cli_run import jouleboard as jouleboard_here

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "mlenergy-site"


def import_into(src: Path, out: Path) -> list[str]:
    done = jouleboard_here("import-mlenergy", src, "--out", out, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_fresh_import_says_what_it_created(tmp_path: Path) -> None:
    lines = import_into(FIXTURE, tmp_path / "data")
    for name in ("models.yaml", "tasks.yaml", "gpus.yaml", "site.yaml"):
        assert any(line.startswith(f"{name}: created") for line in lines), lines


def test_comments_order_and_hand_edits_survive_a_reimport(tmp_path: Path) -> None:
    data = tmp_path / "data"
    import_into(FIXTURE, data)
    # The user's edits: a comment, tasks in another order, a builder, a model of their own.
    tasks_text = (data / "tasks.yaml").read_text()
    tasks = yaml.safe_load(tasks_text)
    order = list(reversed(list(tasks)))
    reordered = "# Our task order: the home page follows it.\n" + "".join(
        yaml.safe_dump({t: tasks[t]}, sort_keys=False, width=100) for t in order
    )
    (data / "tasks.yaml").write_text(reordered)
    models_text = (data / "models.yaml").read_text()
    first = next(iter(yaml.safe_load(models_text)))
    edited = models_text.replace("builder:", "builder: Our Lab  # checked by hand\n  x_builder:", 1)
    edited = edited.replace("  x_builder:", "  #", 1)  # the old value, now a comment
    (data / "models.yaml").write_text(edited)
    before = {name: (data / name).read_bytes() for name in ("models.yaml", "tasks.yaml")}

    lines = import_into(FIXTURE, data)
    assert "registries unchanged" in lines
    for name, text in before.items():  # not rewritten at all
        assert (data / name).read_bytes() == text, name
    assert list(yaml.safe_load((data / "tasks.yaml").read_text())) == order
    assert yaml.safe_load((data / "models.yaml").read_text())[first]["builder"] == "Our Lab"


def test_a_changed_source_fact_is_updated_in_place_and_reported(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(FIXTURE, src)
    data = tmp_path / "data"
    import_into(src, data)
    text = (data / "models.yaml").read_text()
    (data / "models.yaml").write_text(
        "# Models we publish.\n"
        + text.replace("builder:", "# a note the import must keep\n  builder:", 1)
    )
    index = json.loads((src / "index.json").read_text())
    model_id = sorted(index["models"])[0]
    old_name = index["models"][model_id]["nickname"]
    index["models"][model_id]["nickname"] = "Renamed Upstream"
    (src / "index.json").write_text(json.dumps(index))

    lines = import_into(src, data)
    assert f"models.yaml: {model_id}: nickname {old_name!r} -> 'Renamed Upstream'" in lines
    after = (data / "models.yaml").read_text()
    assert after.startswith("# Models we publish.\n")
    assert "# a note the import must keep" in after
    assert yaml.safe_load(after)[model_id]["nickname"] == "Renamed Upstream"
    assert not any(line.startswith(("tasks.yaml", "gpus.yaml")) for line in lines)
