"""Releases: the changelog page, permanent per-version downloads, Atom and JSON feeds."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from jouleboard.config.schema import Release
from jouleboard.core.escape import markup
from jouleboard.core.jsonio import dumps_canonical
from jouleboard.core.problems import Problem, ValidationFailed, shown_path
from jouleboard.core.safe_read import DATA_FILE_CAP, DATA_FOLDER_CAP, ArchiveRefused
from jouleboard.core.urls import Urls
from jouleboard.loading.dataset import Dataset
from jouleboard.plan.diff import RefRefused, Side, diff_markdown, load_side, release_data
from jouleboard.plan.downloads import Records, configuration_downloads, configuration_records
from jouleboard.plan.views import Download, Link, Page, ProseBody
from jouleboard.rank.ranking import runs_of
from jouleboard.render.markdown import render_markdown


@dataclass(frozen=True)
class ReleaseData:
    release: Release
    side: Side  # its data set, or why it could not be read


def load_releases(
    data: Dataset, data_dir: Path, read: Callable[[Path], Side] = load_side
) -> list[ReleaseData]:
    """Every release with its data: the newest is the working data, older ones come from
    their git refs in the site's repository, each read by ``read`` (``validate`` only
    checks that the ref's data/ can be taken out). ValidationFailed, located at the ref,
    when a ref is a path or names a folder (it would publish that folder's data as the
    release's), or when git cannot give its data/ (a tag a shallow clone lacks)."""
    out = []
    refused = []
    for i, release in enumerate(data.registry.releases):
        if i == 0 or release.ref is None:
            out.append(ReleaseData(release, Side(data)))
            continue
        try:
            with release_data(release.ref, data_dir) as folder:
                out.append(ReleaseData(release, read(folder)))
        except (OSError, ValueError) as e:
            refused.append(_ref_refused(data_dir, i, release, e))
    if refused:
        raise ValidationFailed(refused)
    return out


def _ref_refused(data_dir: Path, i: int, release: Release, error: Exception) -> Problem:
    where = (shown_path(data_dir / "releases.yaml"), f"/releases/{i}/ref")
    if isinstance(error, RefRefused):
        return Problem(
            *where,
            "release.ref-not-git",
            str(error),
            "name a tag, branch or commit of this repository holding the release's "
            "data/ (git tag <version> <commit>); a folder is never read",
        )
    if isinstance(error, ArchiveRefused):  # a file over a data folder's caps
        return Problem(
            *where,
            error.rule,
            f"release {release.version}'s data: {error.message}",
            "name a ref whose data/ a data folder could hold (each file at most "
            f"{DATA_FILE_CAP:,} bytes, {DATA_FOLDER_CAP:,} in all)",
        )
    # Never a changelog entry saying so: the release's downloads would vanish from the
    # site while the build went on.
    return Problem(
        *where,
        "release.ref-unreadable",
        f"cannot read release {release.version}'s data at {release.ref!r}: {error}",
        "fetch the history and tags (a CI checkout: actions/checkout with fetch-depth: 0; a "
        "shallow clone: git fetch --unshallow --tags), or correct the ref",
    )


def release_downloads(
    releases: Sequence[ReleaseData], urls: Urls, rows: Records = configuration_records
) -> list[Download]:
    """/data/<version>/<kind's name>.{csv,json}: every configuration of every kind,
    permanent, one folder per release."""
    out = []
    for i, r in enumerate(releases):
        if r.side.data is None:
            continue
        version = r.release.version
        # The newest release's files are the data folder's: an edit without a new release
        # changes them, so they are not called permanent until a newer release is made.
        kept = (
            "this release's data, kept as it is once a newer release is made"
            if i == 0 or r.release.ref is None
            else "permanent: this release's data, never rewritten"
        )

        def path(ext: str, name: str, version: str = version) -> str:
            return urls.release_download(version, ext, name)

        out += configuration_downloads(
            r.side.data,
            path,
            "By release",
            kept,
            rows,
        )
    return out


def _summary(r: ReleaseData, older: ReleaseData | None) -> str:
    if r.side.data is None:
        why = "; ".join(p.message for p in r.side.problems) or "it did not validate"
        return f"The data of this release could not be read: {why}."
    if older is None:
        data = r.side.data
        models = len({c.model_id for c in data.configurations})
        runs = sum(runs_of(c) for c in data.configurations)
        measured = f" ({runs:,} measurements)" if runs != len(data.configurations) else ""
        return (
            f"{len(data.configurations):,} configurations{measured} of {models:,} models on "
            f"{len(data.registry.tasks):,} tasks."
        )
    return diff_markdown(older.side, r.side).replace("## Leaderboard changes\n", "")


def changelog_page(
    releases: Sequence[ReleaseData], urls: Urls, rows: Records = configuration_records
) -> Page:
    parts = []
    for i, r in enumerate(releases):
        older = releases[i + 1] if i + 1 < len(releases) else None
        v = r.release.version
        downloads = (
            ""
            if r.side.data is None
            else " · ".join(
                f"[{d.path.rsplit('/', 1)[-1]}]({urls.url(d.path)})"
                for d in release_downloads([r], urls, rows)
            )
        )
        parts.append(
            f"## {v} ({r.release.date})\n\n{r.release.notes_md}\n\n"
            + (f"Permanent downloads of this release: {downloads}\n\n" if downloads else "")
            + f"### Changes\n\n{_summary(r, older)}\n"
        )
    feeds = (
        f"Follow new releases: [Atom feed]({urls.url(urls.atom_feed)}) · "
        f"[JSON Feed]({urls.url(urls.json_feed)})\n\n"
    )
    return Page(
        urls.changelog,
        "prose.html",
        "Changelog",
        "Data releases and how each changed the leaderboard.",
        ProseBody(render_markdown(feeds + "\n".join(parts))),
    )


def anchor(r: Release) -> str:
    """The changelog heading's id (as markdown's toc extension makes it)."""
    return slug(f"{r.version} ({r.date})")


def slug(text: str) -> str:
    """``markdown.extensions.toc.slugify(text, "-")``, without importing markdown: the feeds
    are made in every build, and a rebuild that renders no text imports no markdown
    (tests/test_releases.py compares the two)."""
    ascii_only = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", ascii_only).strip().lower())


def _entry_id(r: Release) -> str:
    return f"tag:jouleboard,{r.date}:release/{r.version}"


def _new_models(r: ReleaseData, older: ReleaseData | None) -> list[str]:
    if r.side.data is None:
        return []
    before = (
        {c.model_id for c in older.side.data.configurations} if older and older.side.data else set()
    )
    now = {c.model_id for c in r.side.data.configurations}
    return [r.side.data.registry.models[m].nickname for m in sorted(now - before)]


def _entry_html(r: ReleaseData, older: ReleaseData | None) -> str:
    """A feed entry's HTML: the release notes (markdown), then the new models' nicknames as
    plain text. A nickname is never markdown (issue 25: 33 nicknames holding '[' passed
    the renderer's bracket limit together, and one could make a link)."""
    new = _new_models(r, older)
    notes = render_markdown(r.release.notes_md)
    if not new:
        return notes
    listed = f"<p>New models: {markup(', '.join(new))}.</p>"
    return f"{notes}\n{listed}" if notes else listed


def atom_feed(releases: Sequence[ReleaseData], urls: Urls, title: str) -> str:
    """An Atom 1.0 feed of releases (and the models each brought)."""
    updated = f"{releases[0].release.date}T00:00:00Z"
    entries = []
    for i, r in enumerate(releases):
        older = releases[i + 1] if i + 1 < len(releases) else None
        link = urls.absolute(urls.changelog) + f"#{anchor(r.release)}"
        entries.append(
            "  <entry>\n"
            f"    <id>{markup(_entry_id(r.release))}</id>\n"
            f"    <title>{markup(title)} data {markup(r.release.version)}</title>\n"
            f"    <updated>{r.release.date}T00:00:00Z</updated>\n"
            f'    <link rel="alternate" type="text/html" href="{markup(link)}"/>\n'
            f'    <content type="html">{markup(_entry_html(r, older))}'
            "</content>\n  </entry>\n"
        )
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom">\n'
        f"  <id>tag:jouleboard,{releases[-1].release.date}:releases</id>\n"
        f"  <title>{markup(title)}: data releases</title>\n"
        f"  <updated>{updated}</updated>\n"
        f"  <author><name>{markup(title)}</name></author>\n"
        f'  <link rel="self" href="{markup(urls.absolute(urls.atom_feed))}"/>\n'
        f'  <link rel="alternate" type="text/html" '
        f'href="{markup(urls.absolute(urls.changelog))}"/>\n' + "".join(entries) + "</feed>\n"
    )


def json_feed(releases: Sequence[ReleaseData], urls: Urls, title: str) -> str:
    """The same entries as a JSON Feed 1.1 document."""
    items = []
    for i, r in enumerate(releases):
        older = releases[i + 1] if i + 1 < len(releases) else None
        items.append(
            {
                "id": _entry_id(r.release),
                "url": urls.absolute(urls.changelog) + f"#{anchor(r.release)}",
                "title": f"{title} data {r.release.version}",
                "content_html": _entry_html(r, older),
                "date_published": f"{r.release.date}T00:00:00Z",
            }
        )
    return dumps_canonical(
        {
            "version": "https://jsonfeed.org/version/1.1",
            "title": f"{title}: data releases",
            "home_page_url": urls.absolute(urls.home),
            "feed_url": urls.absolute(urls.json_feed),
            "items": items,
        },
        indent=2,
    )


def feed_links(urls: Urls) -> tuple[Link, ...]:
    return (Link("Atom", urls.url(urls.atom_feed)), Link("JSON Feed", urls.url(urls.json_feed)))
