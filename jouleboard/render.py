"""Jinja2 environment (autoescape on for everything) and page -> HTML."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jinja2

from jouleboard.plan.views import Link, Page
from jouleboard.present.embeds import ChartInfo, first_chart


@dataclass(frozen=True)
class SiteContext:
    """What every page's frame shows: the site's name, navigation, data version, assets."""

    title: str
    tagline: str
    data_version: str
    data_date: str
    attribution_html: str
    base_url: str
    nav: tuple[Link, ...]
    tasks: tuple[Link, ...]
    css_url: str
    js_url: str
    rank_js_url: str
    explore_js_url: str
    compare_url: str
    models_url: str
    downloads_url: str
    about_url: str
    atom_url: str
    reload_js_url: str  # only in `jouleboard serve` previews
    vega_url: str
    favicon_url: str
    origin: str  # https://host when configured, else ""


def environment(templates: Path) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates),
        autoescape=True,  # every template, whatever its extension
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    return env


def render_page(env: jinja2.Environment, page: Page, site: SiteContext,
                charts: dict[str, ChartInfo]) -> str:
    """HTML of a page; ``charts`` gives every chart's sizes, exports and embed code."""
    template = env.get_template(page.template)
    chart = first_chart(page.body)
    og_image = charts[chart.id].png_url if chart is not None else ""
    return template.render(page=page, body=page.body, site=site, charts=charts,
                           og_image=site.origin + og_image if og_image else "")
