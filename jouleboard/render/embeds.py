"""What a reader needs to reuse a chart: exports, the embed code, oEmbed, a citation."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from jouleboard.config.schema import SiteSettings
from jouleboard.core.escape import csv_text, markup
from jouleboard.core.shapes import JsonObject, JsonValue, Scalar
from jouleboard.core.urls import Urls
from jouleboard.plan.views import ChartRef
from jouleboard.rank.tables import Table
from jouleboard.render import citation

# The embed page's title, "Explore interactively" button and credit around the chart, in
# px, at their tallest on the default site's embeds: at 640 px and wider (the desktop
# render), and at 320-390 px (the phone render), where they wrap onto more lines. Measured
# in Chromium; tests/browser/test_embed_frames.py holds every embed to its frame.
EMBED_CHROME_PX = 180
PHONE_CHROME_PX = 220


def frame_height(size: tuple[int, int], phone: tuple[int, int] | None) -> int:
    """The iframe's height for a chart of ``size`` (and its phone render's): the embed page
    whole in any column from 320 px up. The desktop chart's height alone cut off the credit
    (source, licence, link back) below about 800 px, where the embed shows the taller phone
    render and its text wraps."""
    return max(size[1] + EMBED_CHROME_PX, (phone[1] if phone else 0) + PHONE_CHROME_PX)


@dataclass(frozen=True)
class ChartInfo:
    width: int
    height: int
    svg_url: str
    png_url: str  # "" when the build made no PNGs (build --png makes them)
    spec_url: str
    csv_url: str
    embed_url: str
    oembed_url: str
    snippet: str  # the iframe HTML to paste
    citation: str
    bibtex: str
    phone_url: str = ""  # the phone render (SVG), shown on narrow screens
    phone_width: int = 0
    phone_height: int = 0
    frame_height: int = 0  # the embed code's iframe height (frame_height)
    # No site_url: the embed code and citation hold root-relative paths, which the page's
    # script makes absolute from its own address (site.js) and a note asks for site_url.
    relative: bool = False


def chart_info(
    chart: ChartRef,
    size: tuple[int, int],
    urls: Urls,
    site: SiteSettings,
    phone: tuple[int, int] | None = None,
    png: bool = True,
    sources: str = "",
) -> ChartInfo:
    """``phone``: the size of its phone render;
    ``png``: whether the build rendered the chart's 2x PNG; ``sources``: the data sets the
    citation names (render/citation.py measured_by), unless the chart cites its own or
    names the data sets it draws from."""
    sources = chart.cites or (sources if chart.measured is None else chart.measured[1])
    embed_abs = urls.absolute(urls.embed(chart.id))
    height = frame_height(size, phone)
    # (width="100%" is not valid HTML: an iframe's width is a number of pixels.)
    snippet = (
        f'<iframe src="{markup(embed_abs)}" title="{markup(chart.title)}" '
        f'height="{height}" style="width:100%;border:0;max-width:{size[0] + 40}px" '
        'loading="lazy"></iframe>'
    )
    page_abs = urls.origin + chart.page_url
    return ChartInfo(
        width=size[0],
        height=size[1],
        svg_url=chart.export(urls, "svg"),
        png_url=chart.export(urls, "png") if png else "",
        spec_url=chart.export(urls, "vl.json"),
        csv_url=chart.export(urls, "csv"),
        embed_url=urls.url(urls.embed(chart.id)),
        oembed_url=urls.url(urls.oembed(chart.id)),
        snippet=snippet,
        citation=citation.plain(chart.title, page_abs, site, sources),
        bibtex=citation.bibtex(f"jouleboard-{chart.id}", chart.title, page_abs, site, sources),
        # No phone render: ChartInfo's defaults ("", 0, 0).
        phone_url="" if phone is None else chart.export(urls, "phone.svg"),
        phone_width=0 if phone is None else phone[0],
        phone_height=0 if phone is None else phone[1],
        frame_height=height,
        relative=not urls.origin,
    )


def oembed(chart: ChartRef, info: ChartInfo, urls: Urls, site: SiteSettings) -> JsonObject:
    """oEmbed 1.0 "rich" response for a chart (served as a static JSON file)."""
    return {
        "version": "1.0",
        "type": "rich",
        "provider_name": site.title,
        "provider_url": urls.absolute(urls.home),
        "title": chart.title,
        "html": info.snippet,
        "width": info.width + 40,
        "height": info.frame_height,
        **(
            {
                "thumbnail_url": urls.origin + info.png_url,
                "thumbnail_width": info.width * 2,
                "thumbnail_height": info.height * 2,
            }
            if info.png_url
            else {}
        ),
        "cache_age": 86400,
    }


def chart_csv(spec: JsonObject) -> str:
    """The chart's main data set as CSV (columns sorted by name)."""
    datasets = spec.get("datasets", {})
    table = datasets.get("table", []) if isinstance(datasets, dict) else []
    rows = [row for row in table if isinstance(row, dict)] if isinstance(table, list) else []
    flat = [{k: _cell(v) for k, v in row.items()} for row in rows]
    return csv_text(sorted({key for row in rows for key in row}), flat)


def _cell(value: JsonValue) -> Scalar:
    """A chart's data value as a CSV cell: a list or an object as the csv module writes it."""
    return str(value) if isinstance(value, list | dict) else value


def first_chart(body: object) -> ChartRef | None:
    """The first ChartRef found in a page body (for its Open Graph image), or None."""
    if isinstance(body, ChartRef):
        return body
    if isinstance(body, Table):  # tables hold no charts: skip their thousands of cells
        return None
    if dataclasses.is_dataclass(body) and not isinstance(body, type):
        values = [getattr(body, f.name) for f in dataclasses.fields(body)]
    elif isinstance(body, tuple | list):
        values = list(body)
    else:
        return None
    for value in values:
        found = first_chart(value)
        if found is not None:
            return found
    return None
