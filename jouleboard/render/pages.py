"""Jinja2 environment (autoescape on for everything) and page -> HTML.

Themes: a site folder's own templates/ (and templates/assets/) override the packaged ones
file by file, like MkDocs' custom_dir; anything it does not have comes from the package.

A theme is read as carefully as the data (issue 25): a link could publish any file the
builder can read (a prose.html linked to /etc/passwd did), and a template is code, so its
files must be regular files reached without following a link, under a cap, and every page
renders in Jinja's sandbox (an override reached ``os.popen`` through ``cycler``). A refused
file or a template error is one located problem, and the build writes nothing.
"""

from __future__ import annotations

import os
import stat
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import jinja2
import jinja2.exceptions
import jinja2.sandbox
from jinja2.loaders import split_template_path

from jouleboard.config.schema import NavLink
from jouleboard.core.problems import Problem, ValidationFailed, shown_path
from jouleboard.core.safe_read import FileRefused, read_capped
from jouleboard.core.urls import Urls
from jouleboard.plan.views import Link, Page
from jouleboard.render.embeds import ChartInfo, first_chart
from jouleboard.render.sandbox import (
    MAX_TEXT,
    PAGE_MAX_CHARS,
    Sandbox,
    TemplateTooLarge,
    page_text,
)

# (label, target) pairs, not NavLink models: making one would build the model's validator,
# which a rebuild whose site.yaml it kept from the last build otherwise never needs.
_DEFAULT_NAV = (
    ("Leaderboard", "leaderboard"),
    ("Models", "models"),
    ("GPUs", "gpus"),
    ("Compare", "compare"),
    ("MLPerf", "mlperf"),
    ("Downloads", "downloads"),
    ("Changelog", "changelog"),
    ("About", "about"),
)


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
    js_url: str  # the entry module of every page (site.js); the task and compare pages'
    task_js_url: str
    compare_js_url: str
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
    measured_by: str = ""  # the data sets the measurements come from, by name and version
    mlperf_url: str = ""  # the MLPerf pages (energy at the wall, not GPU-only); "": none
    energy_window: str = ""  # measure/units.py window_words: the part of each run measured


TEMPLATE_MAX_BYTES = 1024 * 1024  # a template of a theme folder
ASSET_MAX_BYTES = 4 * 1024 * 1024  # style.css, each module of js/, favicon.svg
ASSETS_MAX_BYTES = 16 * 1024 * 1024  # all of them and the logo (the packaged ones: ~100 kB)


def template_dirs(site_dir: Path | None) -> list[Path]:
    """Where templates are looked up, first match wins: the site folder's templates/, then
    the packaged ones (each folder once). Raises :class:`ValidationFailed` when the site's
    templates/ is a symbolic link (its files would come from elsewhere)."""
    from jouleboard.core.resources import templates_dir

    dirs = [site_dir / "templates"] if site_dir is not None else []
    if dirs and dirs[0].is_symlink():
        raise ValidationFailed(
            [
                _refused(
                    dirs[0],
                    FileRefused(
                        "file.not-regular",
                        "the templates folder is a symbolic link",
                        "replace the link with the folder itself",
                    ),
                )
            ]
        )
    dirs.append(templates_dir())
    unique: list[Path] = []
    for d in dirs:
        if d.is_dir() and all(d.resolve() != u.resolve() for u in unique):
            unique.append(d)
    return unique


def _refused(path: Path, refusal: FileRefused) -> Problem:
    return Problem(shown_path(path), "", refusal.rule, refusal.message, refusal.hint)


def _theme_file(root: Path, parts: Sequence[str], cap: int) -> tuple[bytes, int] | None:
    """The bytes and modification time (ns) of ``root``/``parts``, or None when it is not
    there. Raises :class:`ValidationFailed` when a folder on the way or the file is a link,
    or the file is not a regular file, is over ``cap`` bytes or cannot be read: nothing
    outside ``root`` is reached, and nothing but a plain file is read."""
    path = root
    for depth, part in enumerate(parts, 1):
        path = path / part
        try:
            info = path.lstat()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as e:
            raise ValidationFailed(
                [
                    _refused(
                        path,
                        FileRefused(
                            "file.unreadable",
                            f"cannot read it: {e.strerror or e}",
                            "check the path and permissions",
                        ),
                    )
                ]
            ) from None
        if stat.S_ISLNK(info.st_mode):
            what = "file" if depth == len(parts) else "folder"
            raise ValidationFailed(
                [
                    _refused(
                        path,
                        FileRefused(
                            "file.not-regular",
                            f"the theme {what} is a symbolic link",
                            f"replace the link with the {what} itself",
                        ),
                    )
                ]
            )
        if depth < len(parts) and not stat.S_ISDIR(info.st_mode):
            return None
    try:
        return read_capped(path, cap), info.st_mtime_ns  # the time seen before the read
    except FileRefused as e:
        raise ValidationFailed([_refused(path, e)]) from None


def _utf8(raw: bytes, path: Path) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValidationFailed(
            [
                Problem(
                    shown_path(path),
                    "",
                    "file.not-utf8",
                    f"byte {e.start} is not UTF-8",
                    "save the file as UTF-8",
                )
            ]
        ) from None


def _mtime_ns(path: Path) -> int | None:
    try:
        return path.lstat().st_mtime_ns
    except OSError:
        return None


class ThemeLoader(jinja2.BaseLoader):
    """The templates of one folder, each a plain file under :data:`TEMPLATE_MAX_BYTES`
    reached without following a link (see :func:`_theme_file`); a template is reloaded
    when its modification time changes, as with Jinja's FileSystemLoader."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        parts = split_template_path(template)  # ".." raises TemplateNotFound
        found = _theme_file(self.root, parts, TEMPLATE_MAX_BYTES)
        if found is None:
            raise jinja2.TemplateNotFound(template)
        raw, mtime = found
        path = self.root.joinpath(*parts)
        return _utf8(raw, path), os.fspath(path), lambda: _mtime_ns(path) == mtime


def read_asset(name: str, dirs: Sequence[Path]) -> str:
    """The text of templates/assets/``name`` (``js/site.js``: a file in a folder) from the
    first of ``dirs`` that has it, read as :func:`_theme_file` reads a template (cap
    :data:`ASSET_MAX_BYTES`)."""
    for d in dirs:
        found = _theme_file(d, ("assets", *name.split("/")), ASSET_MAX_BYTES)
        if found is not None:
            return _utf8(found[0], d / "assets" / name)
    raise FileNotFoundError(f"no assets/{name} in {', '.join(map(str, dirs))}")


def environment(templates: Path | Sequence[Path]) -> jinja2.Environment:
    """Templates from ``templates`` (a folder, or folders searched in order), rendered in
    Jinja's sandbox: a template reads the values it is given and calls no code beyond
    them (no attribute starting with ``_``, no method that changes a list or dict)."""
    folders = [templates] if isinstance(templates, Path) else list(templates)
    env = Sandbox(
        loader=jinja2.ChoiceLoader([ThemeLoader(f) for f in folders]),
        autoescape=True,  # every template, whatever its extension
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    return env


def template_problem(error: BaseException) -> Problem:
    """``error`` located at its template's file and line: a syntax error names them, an
    error while rendering is found in the traceback, whose template frames Jinja rewrites
    to the template's file and line."""
    file, line = getattr(error, "filename", None), getattr(error, "lineno", None)
    if file is None:
        for frame, number in traceback.walk_tb(error.__traceback__):
            if "__jinja_exception__" in frame.f_globals:  # a template's frame
                file, line = frame.f_code.co_filename, number
    rule, hint = (
        ("template.unsafe", "a template may only read the values it is given")
        if isinstance(error, jinja2.exceptions.SecurityError)
        else (
            "template.too-large",
            f"a page holds at most {PAGE_MAX_CHARS:,} characters, a text a template makes "
            f"{MAX_TEXT:,}",
        )
        if isinstance(error, TemplateTooLarge)
        else ("template.syntax", "fix the template's syntax")
        if isinstance(error, jinja2.TemplateSyntaxError)
        else ("template.undefined", "use a value the page gives, or guard it with 'is defined'")
        if isinstance(error, jinja2.UndefinedError)
        else ("template.error", "fix the template")
    )
    where = f"line {line}: " if line else ""
    return Problem(
        shown_path(Path(file)) if file else "templates",
        "",
        rule,
        f"{where}{_what(error)}",
        hint,
    )


# What a template's own code can raise (1/0, 10.0**999, int('x'), a macro calling itself
# without end, a value too large to hold): one located line each, like a template error.
TEMPLATE_FAILURES = (
    jinja2.TemplateError,
    ArithmeticError,
    LookupError,
    MemoryError,
    RecursionError,
    TypeError,
    ValueError,
)


def _what(error: BaseException) -> str:
    """The error's words: a template error's message, else its type and message (cut: a
    message can quote a value)."""
    if isinstance(error, jinja2.TemplateError) and error.message:
        return error.message
    text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    return text if len(text) <= 300 else text[:299] + "…"


def navigation(
    nav: Sequence[NavLink], urls: Urls, has_changelog: bool, has_mlperf: bool = False
) -> tuple[Link, ...]:
    """site.yaml's ``nav`` (default: every built-in page) as links: a built-in page, a page
    of the site's own by name, or an https URL; the changelog only exists with releases and
    the MLPerf pages with MLPerf results, so a link to either is dropped without them."""
    pages = {
        "leaderboard": urls.home,
        "models": urls.models_index,
        "gpus": urls.gpus_index,
        "compare": urls.compare,
        "downloads": urls.downloads,
        "changelog": urls.changelog,
        "about": urls.about,
        "mlperf": urls.mlperf_index,
    }

    def href(target: str) -> str:
        if target in pages:
            return urls.url(pages[target])
        if target.startswith("https://"):
            return target
        return urls.url(urls.page(target))  # a page of the site's own (content/<name>.md)

    entries = [(item.label, item.target) for item in nav] or _DEFAULT_NAV
    return tuple(
        Link(label, href(target))
        for label, target in entries
        if (target != "changelog" or has_changelog) and (target != "mlperf" or has_mlperf)
    )


def canonical_url(page: Page, site: SiteContext) -> str:
    """The page's absolute address without a view's query (a task page's controls write
    theirs into the address bar), or of the page it repeats; "" when the origin is unknown,
    and for the 404 page, which is served at every missing address."""
    if not site.origin or page.path == Urls.not_found:
        return ""
    return Urls(base=site.base_url, origin=site.origin).absolute(page.canonical or page.path)


def render_page(
    env: jinja2.Environment, page: Page, site: SiteContext, charts: Mapping[str, ChartInfo]
) -> str:
    """HTML of a page; ``charts`` gives the sizes, exports and embed code of the charts it
    shows, and of no other (the page's key holds those alone).
    Raises :class:`ValidationFailed` on a template error or a refused template file."""
    chart = first_chart(page.body)
    og_image = charts[chart.id].png_url if chart is not None else ""
    try:
        template = env.get_template(page.template)
        chunks = template.generate(
            page=page,
            body=page.body,
            site=site,
            charts=charts,
            og_image=site.origin + og_image if og_image else "",
            og_image_alt=chart.page_alt if og_image and chart is not None else "",
            canonical=canonical_url(page, site),
        )
        return page_text(chunks, template.filename or page.template)
    except TEMPLATE_FAILURES as e:  # a site's template: one located line, no traceback
        raise ValidationFailed([template_problem(e)]) from None
