"""The part of each run a site's energy covers (provenance.window): every page's footer and
the home page claimed "the steady state of each run", which AIPerf and benchmark_serving
data are not (their energy spans the whole run: tests/test_aiperf_cli.py). The claim is now
made only where every GPU measurement states it."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from jouleboard.config.schema import Provenance
from jouleboard.measure.units import window_words


def stated(window: str | None, boundary: str = "gpu") -> Provenance:
    return Provenance.model_validate(
        {
            "dataset": "d",
            "version": "1",
            "date": "unknown",
            "license": "MIT",
            "source": "s",
            "boundary": boundary,
            **({"window": window} if window else {}),
        }
    )


STEADY = "in the steady state of each run"
WHOLE = "over each benchmark run as a whole"


@pytest.mark.parametrize(
    ("provenances", "words"),
    [
        ([stated("steady-state")] * 3, STEADY),
        ([stated("whole-run")] * 2, WHOLE),
        # One file that does not say, or says nothing at all: no claim either way.
        ([stated("steady-state"), stated(None)], ""),
        ([stated("whole-run"), None], ""),
        ([], ""),
        # Both windows: named as such, and the model pages say which is which.
        ([stated("whole-run"), stated("steady-state")], "in the steady state of some runs"),
        # Wall energy (MLPerf's pages, apart) does not count toward the GPU energy's claim.
        ([stated("steady-state"), stated(None, "system-ac")], STEADY),
    ],
)
def test_the_claim_is_made_only_when_every_gpu_measurement_states_it(
    provenances: list[Provenance | None], words: str
) -> None:
    said = window_words(provenances)
    assert said.startswith(words) and bool(said) == bool(words), said


def test_a_file_of_another_window_is_refused() -> None:
    with pytest.raises(ValueError, match="window"):
        stated("warm-up")


@pytest.mark.slow
def test_the_bundled_site_says_its_steady_state_and_where_it_is_not(default_site: Path) -> None:
    """The ML.ENERGY Benchmark measures each run's steady state (content/about.md,
    docs/raw-runs.md); MLPerf's pages, at the wall, are named apart."""
    for page in ("index.html", "about/index.html", "models/openai--gpt-oss-20b/index.html"):
        html = (default_site / page).read_text(encoding="utf-8")
        footer = html[html.index("<footer") :]
        assert "GPU energy only, measured in the steady state of each run, except on" in footer
    home = (default_site / "index.html").read_text(encoding="utf-8")
    assert "GPUs only, in the steady state of each run, in serving benchmarks on B200" in home
    model = (default_site / "models/openai--gpt-oss-20b/index.html").read_text(encoding="utf-8")
    sources = model[model.index('id="data-sources"') :]
    assert "Energy measured in the steady state of each run." in sources
    # (Its name says its version: not "The ML.ENERGY Benchmark v3 v3".)
    assert "<strong>The ML.ENERGY Benchmark v3</strong> (2026-02-16, Apache-2.0): " in sources
    text = (default_site / "downloads/configurations.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) > 100 and {r["energy_window"] for r in rows} == {"steady-state"}
