"""Jinja2 environment (autoescape on for everything) and page -> HTML.

Themes: a site folder's own templates/ (and templates/assets/) override the packaged ones
file by file, like MkDocs' custom_dir; anything it does not have comes from the package.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import jinja2

from jouleboard.plan.views import Link, Page
from jouleboard.present.embeds import ChartInfo, first_chart
from jouleboard.records import NavLink
from jouleboard.urls import Urls

_DEFAULT_NAV = (NavLink(label="Leaderboard", target="leaderboard"),
                NavLink(label="Models", target="models"), NavLink(label="GPUs", target="gpus"),
                NavLink(label="Compare", target="compare"),
                NavLink(label="Downloads", target="downloads"),
                NavLink(label="Changelog", target="changelog"),
                NavLink(label="About", target="about"))


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
    home_url: str = ""  # where the title links (the first nav entry may be anything)
    logo_url: str = ""  # site.yaml's logo, shown before the title
    accent_color: str = ""  # site.yaml's #rrggbb, overrides the theme's --accent
    glossary_url: str = ""  # every term defined (footer link)


def template_dirs(site_dir: Path | None) -> list[Path]:
    """Where templates are looked up, first match wins: the site folder's templates/, then
    the packaged ones (each folder once)."""
    from jouleboard.resources import templates_dir

    dirs = [site_dir / "templates"] if site_dir is not None else []
    dirs.append(templates_dir())
    unique: list[Path] = []
    for d in dirs:
        if d.is_dir() and all(d.resolve() != u.resolve() for u in unique):
            unique.append(d)
    return unique


def find_asset(name: str, dirs: Sequence[Path]) -> Path:
    """templates/assets/``name`` from the first of ``dirs`` that has it."""
    for d in dirs:
        if (d / "assets" / name).is_file():
            return d / "assets" / name
    raise FileNotFoundError(f"no assets/{name} in {', '.join(map(str, dirs))}")


def environment(templates: Path | Sequence[Path]) -> jinja2.Environment:
    """Templates from ``templates`` (a folder, or folders searched in order)."""
    folders = [templates] if isinstance(templates, Path) else list(templates)
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader([jinja2.FileSystemLoader(f) for f in folders]),
        autoescape=True,  # every template, whatever its extension
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    return env


def navigation(nav: Sequence[NavLink], urls: Urls, has_changelog: bool) -> tuple[Link, ...]:
    """site.yaml's ``nav`` (default: every built-in page) as links; the changelog only
    exists with releases, so a link to it is dropped without them."""
    pages = {"leaderboard": urls.home, "models": urls.models_index, "gpus": urls.gpus_index,
             "compare": urls.compare, "downloads": urls.downloads,
             "changelog": urls.changelog, "about": urls.about}
    return tuple(Link(item.label, urls.url(pages[item.target]) if item.target in pages
                      else item.target)
                 for item in (nav or _DEFAULT_NAV)
                 if item.target != "changelog" or has_changelog)


def render_page(env: jinja2.Environment, page: Page, site: SiteContext,
                charts: dict[str, ChartInfo]) -> str:
    """HTML of a page; ``charts`` gives every chart's sizes, exports and embed code."""
    template = env.get_template(page.template)
    chart = first_chart(page.body)
    og_image = charts[chart.id].png_url if chart is not None else ""
    return template.render(page=page, body=page.body, site=site, charts=charts,
                           og_image=site.origin + og_image if og_image else "")
