"""Pages name only the GPUs they have figures for, as a reader would list them: a new site
from `jouleboard init` lists B200, H100, H200 and MI300X as default GPUs but has one H100
measurement, and its pages said "B200 and H100 and H200 and MI300X"."""

from __future__ import annotations

from pathlib import Path

from jouleboard.commands.init import init_site
from jouleboard.core.urls import Urls
from jouleboard.loading.dataset import load_dataset
from jouleboard.measure.units import in_words
from jouleboard.plan.entities import gpu_page
from jouleboard.plan.site import home_page, site_view
from jouleboard.plan.task import task_page


def test_in_words() -> None:
    assert [in_words(x) for x in ([], ["A"], ["A", "B"], ["A", "B", "C"])] == [
        "",
        "A",
        "A and B",
        "A, B and C",
    ]


def test_a_new_site_names_only_its_measured_gpu(tmp_path: Path) -> None:
    init_site(tmp_path / "site")
    data = load_dataset(tmp_path / "site" / "data")
    assert len(data.registry.site.default_gpus) > 1  # the premise: several defaults
    site = site_view(data, Urls())
    (home,) = home_page(site).pages
    # (The example measurement states no energy window: no steady state is claimed.)
    assert home.body.intro.endswith("on the GPUs only, in serving benchmarks on H100 GPUs.")
    task = next(iter(site.tasks.values()))
    page = next(p for p in task_page(site, task).pages if p.template == "task.html")
    assert page.body.gpus_text == "H100"


def test_a_gpu_no_measurement_ran_on_says_so(tmp_path: Path) -> None:
    """A new site lists four GPUs and measured one: the other three GPU pages showed their
    facts and nothing else; now they say no task has a configuration on them."""
    init_site(tmp_path / "site")
    site = site_view(load_dataset(tmp_path / "site" / "data"), Urls())
    measured = {c.gpu_model for t in site.tasks.values() for c in t.configs}
    assert measured == {"H100"} and len(site.registry.gpus) == 4  # the premise
    for gpu, info in site.registry.gpus.items():
        page = next(p for p in gpu_page(site, gpu).pages if p.template == "gpu.html")
        if gpu in measured:
            assert page.body.sections and not page.body.unmeasured
        else:
            said = f"No task has a configuration measured on {info.name} yet."
            assert not page.body.sections and page.body.unmeasured == said
            assert page.description == said
