"""Rank ranges as uncertain as the data (issue 37), on the bundled ML.ENERGY data: the
critical value is Student's t from the repeats' degrees of freedom (SciPy is the oracle),
an estimate is used only for the kind of task it was measured on, and every sentence, label
and chart text on the built site that names a place names the range its table prints."""

from __future__ import annotations

import html
import math
import re
from pathlib import Path

import pytest

from jouleboard.measure.formats import PRECISION_LABELS
from jouleboard.plan.site import noise_scopes
from jouleboard.plan.views import SiteView
from jouleboard.rank.glossary import glossary_html
from jouleboard.rank.noise import UNKNOWN, rank_ranges
from jouleboard.rank.ranking import Deadline, rank
from jouleboard.rank.tables import runs_of
from tests.conftest import ScipyQuantiles

REPO = Path(__file__).resolve().parents[1]
TOKEN_TASKS = ("gpqa", "lm-arena-chat", "sourcegraph-fim", "image-chat", "video-chat")
DIFFUSION_TASKS = ("text-to-image", "text-to-video")


@pytest.fixture(scope="module")
def site(default_view: SiteView) -> SiteView:
    return default_view


def recomputed_ranges(values: list[float], runs: list[int], s: float, c: float) -> list[list[int]]:
    """Rank ranges written out again from the rule's words (docs/measurement-format.md), not
    from rank/noise.py: j is surely better than i when ln(E_i / E_j) > c s sqrt(1/n_i + 1/n_j)."""
    out = []
    for i, (v, n) in enumerate(zip(values, runs, strict=True)):
        better = worse = 0
        for j, (w, m) in enumerate(zip(values, runs, strict=True)):
            if i == j:
                continue
            threshold = c * s * math.sqrt(1 / n + 1 / m)
            better += math.log(v / w) > threshold
            worse += math.log(w / v) > threshold
        out.append([1 + better, len(values) - worse])
    return out


def test_the_estimate_serves_only_the_kind_it_was_measured_on(
    site: SiteView, scipy_quantiles: ScipyQuantiles
) -> None:
    """The three repeat pairs are language-model runs: token tasks (text, image and video
    chat) use s = 8.37% with 3 degrees of freedom; text-to-image and text-to-video, with no
    repeat of their own, show measurement noise unknown and exact places."""
    for task in TOKEN_TASKS:
        noise = site.tasks[task].noise
        assert noise.per_run == pytest.approx(0.08374, abs=1e-5)
        assert noise.freedom == 3
        assert noise.critical == pytest.approx(scipy_quantiles.t(0.975, 3), rel=1e-12)
    for task in DIFFUSION_TASKS:
        t = site.tasks[task]
        assert t.noise.per_run is None and t.noise.browser() is None
        assert all(r.rank_best == r.rank == r.rank_worst for r in t.ranking)


@pytest.mark.parametrize("task", TOKEN_TASKS)
def test_ranges_equal_a_recomputation_with_t_at_3_degrees(
    site: SiteView, task: str, scipy_quantiles: ScipyQuantiles
) -> None:
    t = site.tasks[task]
    values = [r.config.energy_per_output_joules for r in t.ranking]
    runs = [runs_of(r.config) for r in t.ranking]
    c = scipy_quantiles.t(0.975, 3)
    assert t.noise.per_run is not None
    expected = recomputed_ranges(values, runs, t.noise.per_run, c)
    assert [[r.rank_best, r.rank_worst] for r in t.ranking] == expected


@pytest.mark.parametrize(
    ("task", "widened", "models"),
    [("gpqa", 8, 12), ("lm-arena-chat", 8, 18), ("image-chat", 6, 11), ("video-chat", 5, 6)],
)
def test_t_widens_the_ranges_the_issue_counted(
    site: SiteView, task: str, widened: int, models: int
) -> None:
    """Issue 37's independent recomputation: with t (3.18) instead of the normal 1.96 the
    ranges widen for 8 of 12 models on gpqa, 8 of 18 on lm-arena-chat, 6 of 11 on image-chat
    and 5 of 6 on video-chat."""
    t = site.tasks[task]
    values = [r.config.energy_per_output_joules for r in t.ranking]
    us = [t.noise.u(runs_of(r.config)) for r in t.ranking]
    normal = rank_ranges(values, us, UNKNOWN.__class__(t.noise.per_run))
    now = [(r.rank_best, r.rank_worst) for r in t.ranking]
    assert len(now) == models
    assert sum(b - a > d - c for (a, b), (c, d) in zip(now, normal, strict=True)) == widened


def test_gpqa_keeps_the_reference_order_with_its_new_ranges(
    site: SiteView, scipy_quantiles: ScipyQuantiles
) -> None:
    """The reference top 7 (docs/metrics.md) keeps its order by point value; GPT OSS 20B and
    120B now share places 1-2 (their ratio 1.39 is under the 1.46 two single runs may differ
    by) and Nemotron Nano 12B V2 is 3-7 (issue 37)."""
    top = site.tasks["gpqa"].ranking[:7]
    names = [site.registry.models[r.config.model_id].nickname for r in top]
    assert names == [
        "GPT OSS 20B",
        "GPT OSS 120B",
        "Qwen 3 30B A3B Thinking",
        "NVIDIA Nemotron Nano 9B V2",
        "NVIDIA Nemotron Nano 12B V2",
        "Qwen 3 8B",
        "Qwen 3 14B",
    ]
    ranges = {n: (r.rank_best, r.rank_worst) for n, r in zip(names, top, strict=True)}
    assert ranges["GPT OSS 20B"] == ranges["GPT OSS 120B"] == (1, 2)
    assert ranges["NVIDIA Nemotron Nano 12B V2"] == (3, 7)
    assert math.exp(scipy_quantiles.t(0.975, 3) * 0.08374 * math.sqrt(2)) == pytest.approx(
        1.458, 1e-3
    )


def test_the_glossary_says_how_uncertain_s_is(
    site: SiteView, scipy_quantiles: ScipyQuantiles
) -> None:
    """s = 8.37% from 3 degrees of freedom; its 95% interval from chi-square with 3 degrees
    (issue 37: 4.7% to 31%), and words on what more repeats would change."""
    text = html.unescape(re.sub(r"<[^>]+>", "", glossary_html(noise_scopes(site))))
    s = 0.08373835972873074
    low = s * math.sqrt(3 / scipy_quantiles.chi2(0.975, 3))
    high = s * math.sqrt(3 / scipy_quantiles.chi2(0.025, 3))
    assert (round(low * 100, 1), round(high * 100, 1)) == (4.7, 31.2)
    assert f"it lies between {low * 100:.2g}% and {high * 100:.3g}%" in text
    assert "with 3 degrees of freedom" in text and "c = 3.18" in text
    assert "This estimate rests on few repeats" in text
    assert "No repeat ran on the tasks Code Completion, Image Chat, Video Chat or on B200" in text
    assert "Text to Image, Text to Video: measurement noise unknown" in text
    assert "not a simultaneous statement" in text


# --- every place the built site names ---------------------------------------------------

ORDINAL = r"(\d+)(?:st|nd|rd|th)"
PLACE = rf"{ORDINAL}(?:–{ORDINAL})?"


def place_range(text: str) -> tuple[int, int]:
    """``5th–7th`` -> (5, 7); ``3rd`` -> (3, 3)."""
    m = re.fullmatch(PLACE, text)
    assert m, text
    return int(m[1]), int(m[2] or m[1])


def table_ranges(page: str) -> dict[str, tuple[int, int]]:
    """Model -> the range the page's first ranking table prints ("3–4" or "3")."""
    body = page[page.index("<tbody>") : page.index("</tbody>")]
    ranges = {}
    for cell, model in re.findall(
        r'<td class="num col-rank"[^>]*>([^<]*)</td>\s*<td class="col-model" data-value="([^"]*)"',
        body,
    ):
        best, _, worst = cell.partition("–")
        ranges[html.unescape(model)] = (int(best), int(worst or best))
    return ranges


def scenario_ranges(site: SiteView, task: str, label: str) -> dict[str, tuple[int, int]]:
    """The ranking a "what changes it" line describes (``At 50 ms``, ``On H100 alone``,
    ``BF16 only``), with its ranges."""
    t = site.tasks[task]
    gpus = set(site.registry.site.default_gpus)
    deadline, precisions = t.deadline, None
    if m := re.fullmatch(r"At ([\d.]+) (ms|s)", label):
        scale = 1000 if m[2] == "s" else 1
        deadline = Deadline(float(m[1]) * scale, t.deadline.percentile)
    elif m := re.fullmatch(r"On (\S+) alone", label):
        gpus = {m[1]}
    elif m := re.fullmatch(r"(\S+) only", label):
        precisions = {p for p, shown in PRECISION_LABELS.items() if shown == m[1]}
    rows = rank(list(t.configs), deadline, gpus=gpus, precisions=precisions, noise=t.noise)
    names = site.registry.models
    return {names[r.config.model_id].nickname: (r.rank_best, r.rank_worst) for r in rows}


@pytest.mark.parametrize("task", TOKEN_TASKS + DIFFUSION_TASKS)
def test_every_place_a_task_page_names_is_its_table_s(
    default_site: Path, site: SiteView, task: str
) -> None:
    page = (default_site / "tasks" / task / "index.html").read_text()
    table = table_ranges(page)
    finding = html.unescape(re.search(r'<p class="finding-text">(.*?)</p>', page, re.S)[1])
    named = re.findall(rf"(?:the work of |, but )?([A-Z][^,;()]*?) \(({PLACE})\)", finding)
    places = [(model, text) for model, text, *_ in named]
    assert places or "only model" in finding
    for model, text in places:
        assert table[model] == place_range(text), (model, text)
    if shared := re.search(r"places (\d+)–(\d+) shared", finding):
        leader = next(m for m, r in table.items() if r[0] == 1)
        assert table[leader] == (1, int(shared[2]))
    strip = [html.unescape(li) for li in re.findall(r"<li>(.*?)</li>", page.split("changes")[1])]
    for line in strip:
        label = line.split(":")[0]
        for model, verb_from, *_, verb_to, _, _ in re.findall(
            rf"([A-Z][^,;:]*?) (?:rises|falls|moves) from ({PLACE}) to ({PLACE})", line
        ):
            assert table[model] == place_range(verb_from), line
            if label.startswith("The "):  # with no deadline at all
                continue
            assert scenario_ranges(site, task, label)[model] == place_range(verb_to), line
    # The note above the table states the whiskers' interval, or that the noise is unknown.
    note = "Measurement noise unknown" if task in DIFFUSION_TASKS else "−23% to +31%"
    assert note in page


def test_chart_texts_and_labels_name_the_table_s_places(default_site: Path) -> None:
    """The bar chart's description ("35.15 (#1–2)") and each energy label ("place 3–7 of
    12") give the places the task's table prints."""
    for task in TOKEN_TASKS:
        page = (default_site / "tasks" / task / "index.html").read_text()
        table = table_ranges(page)
        alt = html.unescape(re.search(r'alt="(Bar chart of [^"]*)"', page)[1])
        bars = re.findall(
            r"(?:: |; )([^;:]+?) [\d.,]+(?: \(#(\d+)(?:–(\d+))?\))?(?=; |\. |\.$)", alt
        )
        assert len(bars) == min(7, len(table)), alt
        for model, best, worst in bars:
            if best:  # a bar names its places only where the noise lets it share them
                assert table[model] == (int(best), int(worst or best)), model
            else:
                assert table[model][0] == table[model][1], model
    labels = list((default_site / "labels").glob("*--gpqa.svg"))
    assert labels
    table = table_ranges((default_site / "tasks" / "gpqa" / "index.html").read_text())
    for label in labels:
        svg = html.unescape(label.read_text())
        m = re.search(
            r'aria-label="Energy label \w+: (.+?), [^,]+, [\d.]+ tokens/J, [^,]+, '
            r"place (\d+)(?:–(\d+))? of",
            svg,
        )
        assert m, label.name
        assert table[m[1]] == (int(m[2]), int(m[3] or m[2])), label.name


def test_the_home_page_cards_name_each_task_s_places(default_site: Path) -> None:
    """Each home card's top rows print the places its task's table prints, and its brief
    answer names as tied with the leader exactly the models that share place 1."""
    home = (default_site / "index.html").read_text()
    cards = re.findall(r'<li class="answer">(.*?)</li>\s*(?=<li class="answer">|</ul>)', home, re.S)
    assert len(cards) == 7
    for card in cards:
        task = re.search(r'href="/tasks/([^/]+)/"', card)[1]
        table = table_ranges((default_site / "tasks" / task / "index.html").read_text())
        rows = re.findall(r'<tr><td class="num">([^<]+)</td><td><a [^>]*>([^<]+)</a>', card)
        assert len(rows) == 3, task
        for places, model in rows:
            best, _, worst = places.partition("–")
            assert table[html.unescape(model)] == (int(best), int(worst or best)), (task, model)
        answer = html.unescape(re.search(r'<p class="answer-text">(.*?)</p>', card, re.S)[1])
        sharing = sorted(m for m, r in table.items() if r[0] == 1)
        if len(sharing) > 1:
            assert "within measurement noise of it" in answer
            assert all(m in answer for m in sharing), (task, answer)
        else:
            assert "within measurement noise of it" not in answer


def test_a_download_leaves_the_bounds_empty_where_the_noise_is_unknown(
    default_dataset: object,
) -> None:
    """Text to Image has no repeat run, so its noise is unknown: its ranking download gave
    each bound equal to the value ("337.94, 337.94, 337.94"), which a script reads as an
    exact figure. The bounds are now empty there, as relative_uncertainty is; a task whose
    noise is known still gives bounds around the value."""
    from jouleboard.api import rank_task

    unknown = rank_task(default_dataset, "text-to-image").records  # type: ignore[arg-type]
    known = rank_task(default_dataset, "gpqa").records  # type: ignore[arg-type]
    assert unknown and known
    for r in unknown:
        assert r["relative_uncertainty"] is None and r["rank_best"] == r["rank_worst"]
        for key in ("energy_per_output_joules", "outputs_per_joule"):
            assert r[f"{key}_low"] is None and r[f"{key}_high"] is None, r
    for r in known:
        value = r["energy_per_token_joules"]
        assert r["energy_per_token_joules_low"] < value < r["energy_per_token_joules_high"]


def test_the_glossary_speaks_to_readers_not_to_maintainers(site: SiteView) -> None:
    """The glossary is for readers: it said "site.yaml declares no uncertainty" and
    "(rule dataset.mixed-boundary)", a file and a validation rule a reader never sees."""
    text = html.unescape(re.sub(r"<[^>]+>", "", glossary_html(noise_scopes(site))))
    assert "measurement noise unknown" in text  # the default data has such tasks
    assert not re.findall(r"\w+\.yaml|dataset\.[a-z-]+|\brule\b", text)


def test_a_bar_chart_claims_intervals_only_where_the_noise_is_known(default_site: Path) -> None:
    """Every bar chart's description ended "Each bar carries the interval measurement noise
    allows", also for text-to-image and text-to-video, which have no repeat run: their bars
    carry none (the chart data's interval is "unknown", low = high)."""
    for task in (*TOKEN_TASKS, *DIFFUSION_TASKS):
        page = (default_site / "tasks" / task / "index.html").read_text()
        alt = html.unescape(re.search(r'alt="(Bar chart of [^"]*)"', page)[1])
        unknown = task in DIFFUSION_TASKS
        assert alt.endswith(
            "Measurement noise unknown: the bars carry no interval."
            if unknown
            else "Each bar carries the interval measurement noise allows."
        ), (task, alt)


def test_the_correct_answer_ranking_says_its_ranges_leave_out_accuracy(
    default_site: Path,
) -> None:
    """Energy per correct answer divides by a vendor-reported accuracy whose own
    uncertainty (GPQA Diamond's 198 questions alone: 3-6% of the figure) the ranges do not
    count; the page presented them like the energy rankings' ranges."""
    page = (default_site / "tasks" / "gpqa" / "index.html").read_text()
    section = page.split('id="energy-per-correct-answer"')[1].split("<table")[0]
    assert "count the energy's measurement noise only" in section
    assert "narrower than the whole uncertainty" in section
