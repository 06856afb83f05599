"""How to cite a chart: plain text and BibTeX, naming the leaderboard, its data version and
the data sets the measurements come from (their provenance: a site of one's own cites its
own measurements, never the bundled example's)."""

from __future__ import annotations

from collections.abc import Iterable

from jouleboard.config.schema import NO_LICENSE, SiteSettings, data_set_name
from jouleboard.rank.tables import Tabled


def measured_by(configs: Iterable[Tabled], full: bool = True) -> str:
    """The data sets behind ``configs``, each once, by name, version and licence (which a
    credit must name: Apache-2.0's, CC-BY's); ``full`` adds each one's citation:
    ``The ML.ENERGY Benchmark v3 (Apache-2.0; Jae-Won Chung et al., ...)``. "" when none
    states its provenance."""
    seen: dict[tuple[str, str, str, str], None] = {}
    for c in configs:
        p = c.provenance
        if p is not None:
            seen[(p.dataset, p.version, p.license, p.citation)] = None
    return "; ".join(
        data_set_name(name, version) + (f" ({'; '.join(notes)})" if notes else "")
        for name, version, licence, cite in sorted(seen)
        for notes in ([n for n in (licence not in NO_LICENSE and licence, full and cite) if n],)
    )


def plain(title: str, url: str, site: SiteSettings, sources: str = "") -> str:
    measured = f" Measurements: {sources}." if sources else ""
    return (
        f"{site.title}, “{title}”, data version {site.data_version} "
        f"({site.data_date}), {url}.{measured}"
    )


def _bib(text: str) -> str:
    """Escape the characters BibTeX treats specially."""
    for char in "\\{}%&$#_^~":
        text = text.replace(char, "\\" + char)
    return text


def bibtex(key: str, title: str, url: str, site: SiteSettings, sources: str = "") -> str:
    measured = f" Measurements: {_bib(sources)}" if sources else ""
    return (
        f"@misc{{{key},\n"
        # The site as a corporate author: double braces keep BibTeX from splitting the name.
        f"  author = {{{{{_bib(site.title)}}}}},\n"
        f"  title = {{{_bib(site.title)}: {_bib(title)}}},\n"
        f"  year = {{{site.data_date[:4]}}},\n"
        f"  howpublished = {{\\url{{{url}}}}},\n"
        f"  note = {{Data version {_bib(site.data_version)} ({site.data_date}).{measured}}}\n}}"
    )
