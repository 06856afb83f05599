"""How to cite a chart: plain text and BibTeX, naming the leaderboard, data version and the
ML.ENERGY Benchmark as the measurement source."""

from __future__ import annotations

from jouleboard.config.schema import SiteSettings

SOURCE = "The ML.ENERGY Benchmark v3 (Jae-Won Chung et al., NeurIPS 2025 Datasets and Benchmarks)"


def plain(title: str, url: str, site: SiteSettings) -> str:
    return (
        f"{site.title}, “{title}”, data version {site.data_version} "
        f"({site.data_date}), {url}. Measurements: {SOURCE}."
    )


def _bib(text: str) -> str:
    """Escape the characters BibTeX treats specially."""
    for char in "\\{}%&$#_^~":
        text = text.replace(char, "\\" + char)
    return text


def bibtex(key: str, title: str, url: str, site: SiteSettings) -> str:
    return (
        f"@misc{{{key},\n"
        f"  title = {{{_bib(site.title)}: {_bib(title)}}},\n"
        f"  year = {{{site.data_date[:4]}}},\n"
        f"  howpublished = {{\\url{{{url}}}}},\n"
        f"  note = {{Data version {_bib(site.data_version)} ({site.data_date}). "
        f"Measurements: {_bib(SOURCE)}}}\n}}"
    )
