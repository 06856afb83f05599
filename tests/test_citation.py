"""Citations name the data the site publishes: its measurements' own data sets (provenance),
never the bundled example's (every site, an init'd one too, cited "The ML.ENERGY Benchmark
v3" in its embeds, citations and BibTeX)."""

from __future__ import annotations

import dataclasses

from jouleboard.config.schema import Provenance, SiteSettings
from jouleboard.render import citation
from tests.factories import config

SITE = SiteSettings(
    title="Our board", default_gpus=["H100"], data_version="v1", data_date="2026-01-01"
)


def provenance(dataset: str, version: str = "v1", cite: str = "") -> Provenance:
    return Provenance(
        dataset=dataset,
        version=version,
        date="2026-01-01",
        license="CC0-1.0",
        source="x",
        citation=cite,
    )


def with_source(p: Provenance) -> object:
    return dataclasses.replace(config(), provenance=p)


def test_a_site_of_ones_own_cites_its_own_measurements() -> None:
    ours = [with_source(provenance("Our lab runs", "2026.1"))] * 3
    sources = citation.measured_by(ours)
    assert sources == "Our lab runs 2026.1 (CC0-1.0)"
    text = citation.plain("Chart", "https://x.org/tasks/chat/", SITE, sources)
    bib = citation.bibtex("k", "Chart", "https://x.org/tasks/chat/", SITE, sources)
    for cited in (text, bib):
        assert "Our lab runs 2026.1 (CC0-1.0)" in cited and "ML.ENERGY" not in cited


def test_each_data_set_once_with_its_citation_and_no_doubled_version() -> None:
    mixed = [
        with_source(provenance("The ML.ENERGY Benchmark v3", "v3", "Chung et al., NeurIPS 2025")),
        with_source(provenance("The ML.ENERGY Benchmark v3", "v3", "Chung et al., NeurIPS 2025")),
        with_source(provenance("MLPerf Inference", "v5.1")),
    ]
    assert citation.measured_by(mixed) == (
        "MLPerf Inference v5.1 (CC0-1.0); "
        "The ML.ENERGY Benchmark v3 (CC0-1.0; Chung et al., NeurIPS 2025)"
    )
    assert citation.measured_by(mixed, full=False) == (
        "MLPerf Inference v5.1 (CC0-1.0); The ML.ENERGY Benchmark v3 (CC0-1.0)"
    )


def test_a_credit_names_the_licence_unless_none_is_stated() -> None:
    """A credit of Apache-2.0 or CC-BY data names the licence (the site's embeds, citations
    and BibTeX did not); SPDX's NOASSERTION names none, so it is not said."""
    stated = [with_source(provenance("Our lab runs", "v1"))]
    unstated = [
        with_source(provenance("Their runs", "v2").model_copy(update={"license": "NOASSERTION"}))
    ]
    assert citation.measured_by(stated, full=False) == "Our lab runs v1 (CC0-1.0)"
    assert citation.measured_by(unstated) == "Their runs v2"
    # An importer's "unknown" version is not said either ("AIPerf runs unknown").
    unknown = [with_source(provenance("AIPerf runs", "unknown"))]
    assert citation.measured_by(unknown) == "AIPerf runs (CC0-1.0)"


def test_no_provenance_cites_no_measurements() -> None:
    assert citation.measured_by([config()]) == ""
    assert "Measurements" not in citation.plain("Chart", "/x/", SITE, "")
    assert "Measurements" not in citation.bibtex("k", "Chart", "/x/", SITE, "")


def test_bibtex_names_author_year_and_url() -> None:
    """BibTeX lacked an author (issue 29): the site is a corporate author, in double braces
    so BibTeX does not read 'Our board' as a first and a last name."""
    bib = citation.bibtex("k", "Chart", "https://x.org/tasks/chat/", SITE, "Our lab runs v1")
    assert "  author = {{Our board}},\n" in bib
    assert "  year = {2026},\n" in bib and "\\url{https://x.org/tasks/chat/}" in bib
