"""Every input a build reads, read and checked: the data folder (through
:func:`jouleboard.loading.dataset.load_dataset`), content/ and the template folders."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from jouleboard.config.content import OwnPage, about_markdown, logo_file, nav_problems, own_pages
from jouleboard.config.schema import SiteSettings
from jouleboard.core.problems import ValidationFailed, shown_path
from jouleboard.core.urls import Urls
from jouleboard.loading.dataset import Dataset, load_dataset
from jouleboard.output.static import static_paths
from jouleboard.plan.links import MarkdownSource, link_problems, registry_sources
from jouleboard.plan.releases import ReleaseData, load_releases
from jouleboard.plan.views import Plan
from jouleboard.render.pages import template_dirs


@dataclass(frozen=True)
class Sources:
    """Everything a build reads from the data and site folders, checked."""

    data: Dataset
    about: str | None  # content/about.md, if any
    themes: tuple[Path, ...]  # template folders, first match wins
    logo: bytes  # site.yaml's logo file ("" without one)
    releases: tuple[ReleaseData, ...]
    pages: tuple[OwnPage, ...] = ()  # the site's own pages: content/<name>.md

    def planned(self) -> Sources:
        """What a build needs of these once its plan is made (which holds no record): the
        same, without the configurations of the data and of each release's. A
        command-line build keeps this while it renders, so a large one does not hold
        its records and the plan made from them at once."""

        def bare(data: Dataset) -> Dataset:
            return dataclasses.replace(data, configurations=())

        releases = tuple(
            dataclasses.replace(
                r,
                side=dataclasses.replace(
                    r.side, data=None if r.side.data is None else bare(r.side.data)
                ),
            )
            for r in self.releases
        )
        return dataclasses.replace(self, data=bare(self.data), releases=releases)


def load_sources(
    data_dir: Path,
    project: Path,
    runs: Sequence[Path] = (),
    require_prometheus: bool = False,
    strict: bool = False,
    load: Callable[..., Dataset] = load_dataset,
) -> Sources:
    """Read and check every input (``load``: :func:`load_dataset` or a memoised one with its
    signature); raise ValidationFailed on invalid data, or on any warning when ``strict``."""
    data = load(data_dir, runs=runs, require_prometheus=require_prometheus)
    about = about_markdown(project)  # a link, folder or bad text: a problem, early
    pages = checked_pages(data, data_dir, project)
    sources = with_theme(Sources(data, about, (), b"", (), pages), data_dir, project)
    if strict and data.warnings:
        raise ValidationFailed(list(data.warnings))
    releases = tuple(load_releases(data, data_dir)) if data.registry.releases else ()
    return dataclasses.replace(sources, releases=releases)


def checked_pages(data: Dataset, data_dir: Path, project: Path) -> tuple[OwnPage, ...]:
    """The site's own pages, and site.yaml's nav checked against them (a target naming no
    page is a located problem)."""
    pages = own_pages(project)
    site_yaml = shown_path(data_dir / "site.yaml")
    if problems := nav_problems(data.registry.site.nav, pages, site_yaml):
        raise ValidationFailed(problems)
    return pages


def check_links(plan: Plan, urls: Urls, sources: Sources, data_dir: Path, project: Path) -> None:
    """Raise ValidationFailed for every internal link of the site's markdown (content
    pages, registry descriptions and notes, the attribution) that names nothing ``plan``
    makes or static/ publishes (jouleboard/plan/links.py)."""
    found = link_problems(
        plan, urls, markdown_sources(sources, data_dir, project, urls), static_paths(project)
    )
    if found:
        raise ValidationFailed(found)


def markdown_sources(
    sources: Sources, data_dir: Path, project: Path, urls: Urls
) -> list[MarkdownSource]:
    """The markdown the site's authors wrote, each with the file messages name. A content
    page's text is on its own page only (so no walk of every page looks for it)."""
    registry = sources.data.registry
    names = {
        name: shown_path(data_dir / name)
        for name in ("site.yaml", "models.yaml", "tasks.yaml", "releases.yaml")
    }
    names |= {
        f"quality/{t}.yaml": shown_path(data_dir / "quality" / f"{t}.yaml")
        for t in registry.quality
    }
    out = registry_sources(registry, names)
    about = project / "content" / "about.md"
    if sources.about is not None and os.path.lexists(about):  # the site's, not jouleboard's
        out.append(MarkdownSource(shown_path(about), "", sources.about, (urls.about,)))
    for page in sources.pages:  # its text starts after the title line
        path = shown_path(project / "content" / f"{page.name}.md")
        out.append(MarkdownSource(path, "", page.markdown, (urls.page(page.name),), first_line=2))
    return out


def with_theme(sources: Sources, data_dir: Path, project: Path) -> Sources:
    """``sources`` with the template folders and site.yaml's logo read (again)."""
    themes = tuple(template_dirs(project))
    logo_name = sources.data.registry.site.logo
    logo = (
        logo_file(logo_name, list(themes), shown_path(data_dir / "site.yaml")) if logo_name else b""
    )
    return dataclasses.replace(sources, themes=themes, logo=logo)


def site_urls(settings: SiteSettings, base_url: str | None, site_url: str | None) -> Urls:
    """The site's URLs: ``base_url`` and ``site_url`` (command line) over site.yaml's."""
    return Urls(base_url or settings.base_url, settings.site_url if site_url is None else site_url)
