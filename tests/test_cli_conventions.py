"""Command-line conventions: --version from one source, -q/-v, progress on stderr, one
clear line (never a traceback) for ordinary mistakes, serve binding before it builds, a
rank table that fits the terminal, environment variables documented in --help."""

from __future__ import annotations

import io
import re
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import jouleboard
from jouleboard.core.console import Progress
from tests.cli_run import jouleboard as jouleboard_here

REPO = Path(__file__).resolve().parents[1]
GOLDEN_DATA = REPO / "tests" / "golden" / "data"


def cli(*args: str, cwd: Path = REPO, **env: str) -> subprocess.CompletedProcess[str]:
    return jouleboard_here(*args, cwd=cwd, env=env)


def assert_one_line_error(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode in (1, 2), result
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0]


def test_version_has_one_source() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert cli("--version").stdout.strip() == f"jouleboard {jouleboard.__version__}"


@pytest.mark.parametrize(
    "command",
    [["build"], ["validate"], ["rank", "--task", "gpqa"], ["diff", "--base", "HEAD"], ["serve"]],
)
def test_missing_data_folder_is_one_line(command: list[str], tmp_path: Path) -> None:
    result = cli(*command, cwd=tmp_path)
    assert_one_line_error(result, "no data folder at ./data: run `jouleboard init` or pass --data")
    assert not any(tmp_path.iterdir())  # nothing written


def test_schema_into_a_missing_folder_is_one_line(tmp_path: Path) -> None:
    assert_one_line_error(
        cli("schema", "--out", str(tmp_path / "no" / "schema.json")), "No such file or directory"
    )


def test_init_into_a_non_empty_folder_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "keep").write_text("x")
    assert_one_line_error(cli("init", str(tmp_path)), "non-empty")


def test_bad_site_url_and_unknown_column_are_usage_errors(tmp_path: Path) -> None:
    result = cli(
        "build",
        "--data",
        str(GOLDEN_DATA),
        "--out",
        str(tmp_path / "s"),
        "--site-url",
        "https://example.org/path",
    )
    assert_one_line_error(result, "--site-url")
    assert result.returncode == 2 and not (tmp_path / "s").exists()
    result = cli("rank", "--data", str(GOLDEN_DATA), "--task", "gpqa", "--columns", "watts")
    assert_one_line_error(result, "unknown column 'watts'")


def test_serve_on_a_port_in_use_fails_before_building(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = cli(
            "serve",
            "--data",
            str(GOLDEN_DATA),
            "--out",
            str(tmp_path / "preview"),
            "--port",
            str(port),
        )
    assert_one_line_error(result, f"127.0.0.1:{port}", "--port")
    assert result.returncode == 1 and not (tmp_path / "preview").exists()  # no build ran


@pytest.mark.parametrize("port", ["65536", "99999", "-1", "eighty"])
def test_serve_with_an_impossible_port_is_a_usage_error(port: str, tmp_path: Path) -> None:
    result = cli(
        "serve", "--data", str(GOLDEN_DATA), "--out", str(tmp_path / "preview"), "--port", port
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result
    assert "--port" in result.stderr.strip().splitlines()[-1]
    assert not (tmp_path / "preview").exists()


def test_build_progress_on_stderr_and_quiet(tmp_path: Path) -> None:
    normal = cli("build", "--data", str(GOLDEN_DATA), "--out", str(tmp_path / "a"))
    assert normal.returncode == 0, normal.stderr
    stages = [
        line.split()[0]
        for line in normal.stderr.splitlines()
        if re.match(r"^\S+\s+\d+\.\d\d s$", line)
    ]
    assert stages == ["load+validate", "rank+plan", "charts", "render", "write"]
    assert "warning: site_url is empty" in normal.stderr and "sitemap.xml" in normal.stderr
    # What the warning says: the sitemap's entries are paths, and robots.txt names no sitemap.
    locs = re.findall(r"<loc>([^<]*)</loc>", (tmp_path / "a" / "sitemap.xml").read_text())
    assert locs and all(loc.startswith("/") for loc in locs), locs[:3]
    assert "Sitemap:" not in (tmp_path / "a" / "robots.txt").read_text()
    assert normal.stdout.startswith("built ")
    quiet = cli(
        "-q",
        "build",
        "--data",
        str(GOLDEN_DATA),
        "--out",
        str(tmp_path / "b"),
        "--site-url",
        "https://example.org",
    )
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert quiet.stdout.startswith("built ")
    # With site_url the sitemap's entries are full URLs, as the sitemap protocol requires
    # (they were paths, which search engines reject).
    locs = re.findall(r"<loc>([^<]*)</loc>", (tmp_path / "b" / "sitemap.xml").read_text())
    assert locs and all(loc.startswith("https://example.org/") for loc in locs), locs[:3]
    assert "https://example.org/tasks/gpqa/" in locs
    # Each page names its own address as canonical (a view's query string is not part of
    # it), the 404 page none: it is served at every missing address.
    page = (tmp_path / "b" / "tasks" / "gpqa" / "index.html").read_text()
    assert '<link rel="canonical" href="https://example.org/tasks/gpqa/">' in page
    assert '<meta property="og:url" content="https://example.org/tasks/gpqa/">' in page
    assert 'rel="canonical"' not in (tmp_path / "b" / "404.html").read_text()
    assert 'rel="canonical"' not in (tmp_path / "a" / "tasks" / "gpqa" / "index.html").read_text()


def test_chart_progress_is_a_bar_on_a_terminal_and_plain_lines_otherwise() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    plain, tty, quiet = io.StringIO(), Terminal(), io.StringIO()
    for stream, level in ((plain, 1), (tty, 1), (quiet, 0)):
        progress = Progress(level, stream)
        progress.start("rendering SVG charts", 8)
        for _ in range(8):
            progress.advance()
    lines = plain.getvalue().splitlines()
    assert lines[0] == "rendering SVG charts: 0/8" and lines[-1] == "rendering SVG charts: 8/8"
    assert "\r" not in plain.getvalue() and 2 <= len(lines) <= 6
    assert tty.getvalue().count("\r") == 8 and tty.getvalue().endswith("] 8/8\n")
    assert "[" + "#" * 30 + "]" in tty.getvalue()
    assert quiet.getvalue() == ""


@pytest.mark.parametrize("width", [60, 80, 120])
def test_rank_table_fits_the_terminal(width: int) -> None:
    result = cli("rank", "--task", "gpqa", "--deadline-ms", "300", COLUMNS=str(width))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert max(map(len, lines)) <= width
    assert lines[0].split()[:2] == ["#", "model"] and "GPT OSS 20B" in lines[1]


def test_wider_terminals_show_more_columns_and_columns_picks() -> None:
    narrow = cli("rank", "--task", "gpqa", COLUMNS="80").stdout.splitlines()[0]
    wide = cli("rank", "--task", "gpqa", COLUMNS="250").stdout.splitlines()[0]
    assert len(wide.split("  ")) > len(narrow.split("  "))
    picked = cli(
        "rank",
        "--task",
        "gpqa",
        "--top",
        "2",
        "--columns",
        "nickname,tokens_per_joule",
        COLUMNS="20",
    ).stdout.splitlines()
    assert picked[0].split() == ["model", "tokens/J"]
    assert picked[1].split()[-1] == "35.15"


def test_environment_variables_of_the_code_are_documented_in_help() -> None:
    names = set()
    for path in (REPO / "jouleboard").rglob("*.py"):
        names |= set(re.findall(r"\"((?:JOULEBOARD|XDG)_[A-Z_]+)\"", path.read_text()))
    assert {"JOULEBOARD_CACHE"} <= names
    help_text = cli("--help").stdout
    for name in names:
        assert name in help_text, name
    for command in ("init", "build", "serve"):
        assert command in help_text
    serve_help = cli("serve", "--help").stdout
    assert "--host" in serve_help and "--open" in serve_help and "--port" in serve_help


def test_columns_accepts_the_names_the_table_prints() -> None:
    by_header = cli(
        "rank",
        "--data",
        str(GOLDEN_DATA),
        "--task",
        "gpqa",
        "--top",
        "2",
        "--columns",
        "model,tokens/J",
    )
    by_key = cli(
        "rank",
        "--data",
        str(GOLDEN_DATA),
        "--task",
        "gpqa",
        "--top",
        "2",
        "--columns",
        "nickname,tokens_per_joule",
    )
    assert by_header.returncode == 0, by_header.stderr
    assert by_header.stdout == by_key.stdout
    assert by_header.stdout.splitlines()[0].split() == ["model", "tokens/J"]


def test_serve_on_an_unknown_host_says_to_check_the_host(tmp_path: Path) -> None:
    result = cli(
        "serve",
        "--data",
        str(GOLDEN_DATA),
        "--out",
        str(tmp_path / "preview"),
        "--host",
        "no-such-host.invalid",
        "--port",
        "0",
    )
    assert_one_line_error(result, "no-such-host.invalid", "--host")
    assert "another --port" not in result.stderr


def test_quiet_and_verbose_also_follow_the_command(tmp_path: Path) -> None:
    # build.py passes its arguments after "build": `python build.py -q` must be quiet.
    after = subprocess.run(
        [
            sys.executable,
            "build.py",
            "-q",
            "--data",
            str(GOLDEN_DATA),
            "--out",
            str(tmp_path / "a"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    before = cli("-q", "build", "--data", str(GOLDEN_DATA), "--out", str(tmp_path / "b"))
    assert after.returncode == 0 == before.returncode, after.stderr
    assert "load+validate" not in after.stderr and "load+validate" not in before.stderr
    verbose = cli("validate", "--data", str(GOLDEN_DATA), "-v")
    assert verbose.returncode == 0, verbose.stderr


@pytest.mark.parametrize(
    ("args", "meant"),
    [
        (["build", "--output", "x"], "did you mean --out for --output?"),
        (
            ["rank", "--task", "gpqa", "--dedline-ms", "100", "--data", str(GOLDEN_DATA)],
            "did you mean --deadline-ms for --dedline-ms?",
        ),
        (["validate", "--strcit"], "did you mean --strict for --strcit?"),
    ],
)
def test_a_misspelt_option_names_the_one_it_is_closest_to(args: list[str], meant: str) -> None:
    """argparse says only "unrecognized arguments"; the command's own option closest to a
    misspelt one is named, from that command's options (usage line, then the error)."""
    done = cli(*args)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    usage, error = done.stderr.strip().splitlines()[0], done.stderr.strip().splitlines()[-1]
    assert usage.startswith(f"usage: jouleboard {args[0]} ")
    assert error.startswith(f"jouleboard {args[0]}: error: unrecognized arguments: ")
    assert error.endswith(meant), error


def test_an_unknown_option_far_from_any_gets_no_guess() -> None:
    done = cli("build", "--zzzzzz")
    assert done.returncode == 2
    assert done.stderr.strip().endswith("unrecognized arguments: --zzzzzz"), done.stderr


def test_validate_notes_a_measured_gpu_the_rankings_leave_out(tmp_path: Path) -> None:
    """A GPU with measurements but not in default_gpus is left out of the main rankings
    without a word (issue 30): validate names it and counts its configurations, and the
    note does not fail --strict."""
    import json
    import shutil

    import yaml

    data = tmp_path / "data"
    shutil.copytree(GOLDEN_DATA, data)
    site = yaml.safe_load((data / "site.yaml").read_text())
    site["default_gpus"] = ["B200"]
    (data / "site.yaml").write_text(yaml.safe_dump(site))
    # Configurations, not files: a repeat run (repeat > 1) is folded into its first run.
    h100 = sum(
        doc["gpu_model"] == "H100" and doc.get("repeat", 1) == 1
        for doc in (json.loads(p.read_text()) for p in (data / "measurements").rglob("*.json"))
    )
    assert h100 > 0
    done = cli("validate", "--strict", "--data", str(data))
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"note: H100 has {h100} configurations but is not in site.yaml default_gpus, so the "
        "main rankings leave it out (add it there to rank it; its GPU page and comparisons "
        "show it either way)"
    ]
    assert cli("validate", "--data", str(GOLDEN_DATA)).stderr == ""


def test_an_accent_colour_error_says_how_to_write_one(tmp_path: Path) -> None:
    """It printed the regular expression ('String should match pattern ...')."""
    import shutil

    import yaml

    data = tmp_path / "data"
    shutil.copytree(GOLDEN_DATA, data)
    site = yaml.safe_load((data / "site.yaml").read_text())
    site["accent_color"] = "red"
    (data / "site.yaml").write_text(yaml.safe_dump(site))
    line = cli("validate", "--data", str(data)).stderr.splitlines()[0]
    assert line.startswith(f"{data / 'site.yaml'}: /accent_color: value.bad-identifier: ")
    assert "'red' is not a colour written as #rrggbb" in line and "'#0a7d5a'" in line
    assert "pattern" not in line


def test_every_data_option_has_help_and_import_runs_says_each_default_once() -> None:
    for command in ("build", "validate", "diff", "rank", "serve"):
        text = " ".join(cli(command, "--help").stdout.split())
        assert "--data DATA data folder (default: data)" in text, command
    text = " ".join(cli("import-runs", "--help").stdout.split())
    assert text.count("the run's own") == 1 and "--date DATE provenance date (default: the" in text


def test_the_site_url_warning_is_not_repeated_for_an_up_to_date_site(tmp_path: Path) -> None:
    """The warning belongs to the build that made the links; a build that finds the site up
    to date writes nothing and says only that (it repeated the warning each time)."""
    out = tmp_path / "site"
    first = cli("build", "--data", str(GOLDEN_DATA), "--out", str(out))
    assert first.returncode == 0 and "warning: site_url is empty" in first.stderr
    again = cli("build", "--data", str(GOLDEN_DATA), "--out", str(out))
    assert again.returncode == 0 and "up to date" in again.stdout + again.stderr
    assert "site_url" not in again.stderr


def test_verbose_says_where_everything_is_and_each_stage_time(tmp_path: Path) -> None:
    """-v promised where templates, data and the chart cache are, and printed nothing more
    (issue 30): now every folder a build reads or writes, then the stage times."""
    out = tmp_path / "site"
    done = cli("-v", "build", "--data", str(GOLDEN_DATA), "--out", str(out))
    assert done.returncode == 0, done.stderr
    names = ("data", "site folder", "templates", "content", "chart cache", "output")
    # Each location line is "<name padded to 14> <place>".
    lines = {
        line[:14].strip(): line[15:]
        for line in done.stderr.splitlines()
        if line[:14].strip() in names
    }
    assert set(lines) == set(names)
    assert Path(lines["data"]) == GOLDEN_DATA.resolve()
    assert lines["templates"].endswith("templates")
    assert Path(lines["output"]) == out.resolve()
    assert Path(lines["chart cache"]).is_dir()
    stages = [ln.split()[0] for ln in done.stderr.splitlines() if ln.rstrip().endswith(" s")]
    assert stages[:2] == ["load+validate", "rank+plan"] and "write" in stages
    quiet = cli("build", "--data", str(GOLDEN_DATA), "--out", str(tmp_path / "b"))
    assert "chart cache" not in quiet.stderr and "load+validate" in quiet.stderr
