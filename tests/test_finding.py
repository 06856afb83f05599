"""The finding sentence and its "what changes it" strip (jouleboard/render/finding.py):
hand-built rankings, and the committed data checked against the published reference figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from jouleboard.measure.units import per_thousand
from jouleboard.plan.finding import task_finding
from jouleboard.plan.task_charts import sensitivity_rows
from jouleboard.rank.noise import Noise
from jouleboard.render.finding import (
    Scenario,
    Standing,
    biggest_move,
    finding,
    headline,
    ordinal,
    summary,
)

REPO = Path(__file__).resolve().parents[1]

A, B, C, D = (
    Standing(name, "BF16, 1× H100", value)
    for name, value in (("A", 30.0), ("B", 20.0), ("C", 10.0), ("D", 4.0))
)


def test_ordinals() -> None:
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st",
        "2nd",
        "3rd",
        "4th",
        "11th",
        "12th",
        "13th",
        "21st",
        "22nd",
        "101st",
        "111th",
    ]


def test_headline_names_leader_config_and_ratios_to_second_and_last_shown() -> None:
    # 30 / 20 = 1.5; 30 / 10 = 3.0 (C is the last of a top 3, D is beyond it).
    text = headline("T, with x ≤ 1 ms", (A, B, C, D), "tokens/J", "fixed2", top_n=3)
    assert text == (
        "On T, with x ≤ 1 ms, A (BF16, 1× H100) does the most work per joule: "
        "30.00 tokens/J, 1.5× the work of B (2nd) and 3.0× the work of C (3rd)."
    )


def test_headline_small_rankings() -> None:
    assert headline("T", (A, B), "u", "fixed2", 7).endswith("30.00 u, 1.5× the work of B (2nd).")
    assert headline("T", (A,), "u", "fixed2", 7).endswith("it is the only model that qualifies.")
    assert headline("T", (), "u", "fixed2", 7) == "On T, no configuration qualifies."


def test_headline_names_the_models_tied_with_the_leader() -> None:
    # s = 0.1 per run, single runs: two models are apart beyond exp(1.96 x 0.1 x sqrt 2) =
    # 1.32x. A 30 and B 27 are tied (1.11x), D 4 is far (7.5x; interval 7.5 / 1.32 = 5.7 to
    # 7.5 x 1.32 = 9.9).
    noise = Noise(0.1)
    a = Standing("A", "BF16, 1× H100", 30.0, 1, 2, 0.1)
    b = Standing("B", "BF16, 1× H100", 27.0, 1, 2, 0.1)
    d = Standing("D", "BF16, 1× H100", 4.0, 3, 3, 0.1)
    text = headline("T", (a, b, d), "u", "fixed2", 3, noise)
    assert text == (
        "On T, A (BF16, 1× H100) does the most work per joule (30.00 u), but B is within "
        "measurement noise of it (places 1–2 shared); it does 7.5× (5.7–9.9×) the work of D "
        "(3rd)."
    )
    # A leader ahead beyond the noise is named as such, each ratio with its interval.
    lead = Standing("A", "BF16, 1× H100", 30.0, 1, 1, 0.1)
    second = Standing("D", "BF16, 1× H100", 4.0, 2, 2, 0.1)
    assert headline("T", (lead, second), "u", "fixed2", 3, noise) == (
        "On T, A (BF16, 1× H100) does the most work per joule, beyond measurement noise: "
        "30.00 u, 7.5× (5.7–9.9×) the work of D (2nd)."
    )
    # A place the noise leaves open is named as the range the table prints (6–7 there).
    e = Standing("E", "BF16, 1× H100", 3.9, 2, 3, 0.1)
    f = Standing("F", "BF16, 1× H100", 3.8, 2, 3, 0.1)
    assert headline("T", (lead, e, f), "u", "fixed2", 3, noise).endswith(
        "the work of E (2nd–3rd) and 7.9× (6.0–10.4×) the work of F (2nd–3rd)."
    )


def test_biggest_move_prefers_drop_out_then_largest_shift() -> None:
    def move(before: tuple[Standing, ...], after: tuple[Standing, ...]) -> object:
        m = biggest_move(before, after)
        return None if m is None else (m.model, m.was, m.now, m.was_text, m.now_text)

    assert move((A, B, C), (A, B, C)) is None
    assert move((A, B, C, D), (A, C, D, B)) == ("B", 2, 4, "2nd", "4th")  # C and D rise 1
    assert move((A, B, C), (A, B)) == ("C", 3, None, "3rd", "")
    assert move((A, B, C), (B, A, C)) == ("A", 1, 2, "1st", "2nd")  # a tie: the higher one


def test_moves_name_places_as_the_tables_print_them() -> None:
    """A move between rankings names each place as its range (the table's 3–4 is 3rd–4th);
    ranges that share a place make it a move, not a rise or a fall."""
    a, b = (Standing(n, "BF16, 1× H100", v, 1, 1, 0.1) for n, v in (("A", 30.0), ("B", 20.0)))
    c3 = Standing("C", "BF16, 1× H100", 10.0, 3, 4, 0.1)
    d4 = Standing("D", "BF16, 1× H100", 9.5, 3, 4, 0.1)
    c_far = Standing("C", "BF16, 1× H100", 1.0, 5, 7, 0.1)
    c_near = Standing("C", "BF16, 1× H100", 9.0, 4, 5, 0.1)
    f = finding(
        "T",
        "1 ms",
        (a, b, c3, d4),
        (a, b, c3, d4),
        Scenario(
            "at 1 ms",
            (a, b, d4, *(Standing(x, "BF16, 1× H100", 5.0, 4, 4, 0.1) for x in "XY"), c_far),
        ),
        [],
        [],
        "u",
        "fixed2",
        7,
    )
    assert f.changes[1].endswith("C falls from 3rd–4th to 5th–7th.")
    f = finding(
        "T",
        "1 ms",
        (a, b, c3, d4),
        (a, b, c3, d4),
        Scenario("at 1 ms", (a, b, d4, c_near)),
        [],
        [],
        "u",
        "fixed2",
        7,
    )
    assert f.changes[1].endswith("C moves from 3rd–4th to 4th–5th.")


def test_strip_says_whether_the_deadline_binds_and_what_a_tighter_one_does() -> None:
    f = finding(
        "T",
        "300 ms",
        (A, B, C),
        (A, B, C),
        Scenario("at 50 ms", (A, C, B)),
        [Scenario("on H100 alone", (B, A))],
        [],
        "tokens/J",
        "fixed2",
        7,
    )
    assert f.changes == (
        "The 300 ms deadline does not bind: with no deadline at all the ranking is identical.",
        "At 50 ms: A still leads, with 30.00 tokens/J; B falls from 2nd to 3rd.",
    )
    # One GPU is not a choice: the per-GPU lines appear only with two or more.
    f = finding(
        "T",
        "300 ms",
        (A, B),
        (B, A),
        None,
        [Scenario("on H100 alone", (B,)), Scenario("on B200 alone", ())],
        [],
        "u",
        "fixed2",
        7,
    )
    assert f.changes == (
        "The 300 ms deadline binds: with no deadline, B leads (BF16, 1× H100), with 20.00 u; "
        "A falls from 1st to 2nd.",
        "On H100 alone: B leads (BF16, 1× H100), with 20.00 u.",
        "On B200 alone: no model qualifies.",
    )


@pytest.fixture(scope="module")
def site(default_view):  # type: ignore[no-untyped-def]
    return default_view


def test_gpqa_finding_matches_the_published_reference(site) -> None:  # type: ignore[no-untyped-def]
    # Independent facts from the published reference ranking (the team's metrics reference,
    # "The reference ranking"): GPQA at 300 ms median ITL, B200 and H100: GPT OSS 20B leads
    # with 35.15 tokens/s/W on 1x B200 in MXFP4; GPT OSS 120B 25.21; Qwen 3 14B 5.48.
    # 35.15 / 25.21 = 1.394 -> 1.4x; 35.15 / 5.48 = 6.41 -> 6.4x ("more than six times").
    # s = 8.37% per run comes from three repeat pairs: 3 degrees of freedom, so the critical
    # value is Student's t(0.975, 3) = 3.182 (printed tables), and a ratio of two single runs
    # is uncertain by a factor exp(3.182 x 0.0837 x sqrt 2) = 1.458: 1.394 is within it, so
    # GPT OSS 120B shares places 1-2 with the leader (issue 37); 6.41 / 1.458 = 4.40,
    # 6.41 x 1.458 = 9.35. Its 61.0 J per response (the reference table) is
    # 61.0 x 1,000 / 3,600 = 16.9 Wh per 1,000 responses.
    f = task_finding(site, site.tasks["gpqa"])
    ranking = {
        site.registry.models[r.config.model_id].nickname: r for r in site.tasks["gpqa"].ranking
    }
    qwen = ranking["Qwen 3 14B"]
    assert f.sentence.endswith(
        "GPT OSS 20B (MXFP4, 1× B200) does the most work per joule (35.15 tokens/J, 17 Wh per "
        "1,000 responses), but GPT OSS 120B is within measurement noise of it (places 1–2 "
        f"shared); it does 6.4× (4.4–9.4×) the work of Qwen 3 14B ({qwen.rank_best}th–"
        f"{qwen.rank_worst}th)."
    )
    # From the issue that asked for the finding (measured with `jouleboard rank`): the
    # ranking at 1,000 ms (and with no deadline) is the one at 300 ms; at 50 ms GPT OSS 20B
    # gives 31.49 and Qwen 3 30B A3B Thinking goes from 3rd to 7th by point value; on H100
    # alone GPT OSS 20B gives 22.62.
    assert f.changes[0].startswith("The 300 ms deadline does not bind")
    assert f.changes[1].startswith("At 50 ms: GPT OSS 20B still leads, with 31.49 tokens/J")
    thinking = ranking["Qwen 3 30B A3B Thinking"]
    assert f"Qwen 3 30B A3B Thinking moves from 3rd–{thinking.rank_worst}th to " in f.changes[1]
    assert any(
        c.startswith("On H100 alone: GPT OSS 20B still leads, with 22.62") for c in f.changes
    )
    assert any(c.startswith("BF16 only: Qwen 3 30B A3B Thinking leads") for c in f.changes)


def test_sensitivity_lines_reach_the_ranking_at_every_deadline(site) -> None:  # type: ignore[no-untyped-def]
    """Property: each model's line at the default deadline is its ranked efficiency, and
    each line never falls as the deadline loosens."""
    t = site.tasks["gpqa"]
    rows = sensitivity_rows(site, t)
    names = {r.config.model_id: site.registry.models[r.config.model_id].nickname for r in t.ranking}
    for row in t.ranking:
        line = sorted(
            (r for r in rows if r["model"] == names[row.config.model_id]),
            key=lambda r: r["latency"],
        )
        values = [r["value"] for r in line]
        assert values == sorted(values)
        at_default = [r["value"] for r in line if r["latency"] <= t.deadline.ms][-1]
        assert at_default == pytest.approx(1 / row.config.energy_per_output_joules)
    assert [r["value"] for r in rows if r["model"] == "GPT OSS 20B"][-1] == pytest.approx(
        35.15, abs=0.005
    )


@pytest.mark.parametrize(
    ("ms", "slug"),
    [
        (300.0, "p50-300ms"),
        (1800000.0, "p50-1800s"),
        (30000.0, "p50-30s"),
        (2.5, "p50-2_5ms"),
        (1500.0, "p50-1500ms"),
        (1e-05, "p50-1e-05ms"),
    ],
)
def test_download_deadlines_read_as_people_write_them(ms: float, slug: str) -> None:
    from jouleboard.core.urls import deadline_slug

    assert deadline_slug(ms, "p50") == slug


def test_a_binding_deadline_says_what_changes_when_the_order_holds() -> None:
    # A deadline that binds without moving anyone either keeps a model out (E ranks only
    # with no deadline) or holds a model's figure down (B: 20 -> 25 with no deadline).
    E = Standing("E", "BF16, 1× H100", 2.0)
    B_faster = Standing("B", "BF16, 1× H100", 25.0)
    joined = finding("T", "30 s", (A, B), (A, B, E), None, [], [], "u", "fixed2", 7)
    assert joined.changes[0] == (
        "The 30 s deadline binds: with no deadline, A still leads, with 30.00 u; E joins at 3rd."
    )
    held = finding("T", "30 s", (A, B), (A, B_faster), None, [], [], "u", "fixed2", 7)
    assert held.changes[0] == (
        "The 30 s deadline binds: with no deadline, A still leads, "
        "with 30.00 u; the places hold, but B goes from 20.00 to "
        "25.00 u."
    )


def test_a_finding_comparing_unlike_outputs_says_so() -> None:
    """Images of different step counts (or videos of different size and length) are not the
    same work per output (issue 29): the headline names each compared model's output."""
    fast = Standing("A", "BF16, 1× H100", 3.0, output="1024×1024, 20 steps")
    slow = Standing("B", "BF16, 1× H100", 1.5, output="1024×1024, 50 steps")
    text = headline("T", (fast, slow), "images/kJ", "sig3", 7)
    assert text.endswith(" Outputs differ: A at 1024×1024, 20 steps; B at 1024×1024, 50 steps.")
    alike = Standing("C", "BF16, 1× H100", 1.0, output="1024×1024, 20 steps")
    assert "Outputs differ" not in headline("T", (fast, alike), "images/kJ", "sig3", 7)
    assert "Outputs differ" not in headline("T", (A, B, C), "tokens/J", "fixed2", 7)  # tokens


def test_the_default_text_to_video_finding_names_the_videos_it_compares(site) -> None:  # type: ignore[no-untyped-def]
    # From the measurement files: CogVideoX 2B makes 720×480 videos of 49 frames at 8 fps,
    # HunyuanVideo 1280×720 of 129 frames at 15 fps (both 50 steps).
    sentence = site.findings["text-to-video"].sentence
    assert "CogVideoX 2B at 720×480, 49 frames at 8 fps, 50 steps" in sentence
    assert "HunyuanVideo at 1280×720, 129 frames at 15 fps, 50 steps" in sentence


def test_per_thousand_by_hand() -> None:
    """Energy a reader can relate to: J per response x 1,000 / 3,600 = Wh per 1,000."""
    assert per_thousand(61.0, "response") == "17 Wh per 1,000 responses"  # 16.94
    assert per_thousand(338.0, "image") == "94 Wh per 1,000 images"  # 93.9
    assert per_thousand(26_500.0, "video") == "7.4 kWh per 1,000 videos"  # 7,361 Wh


def test_unlike_outputs_name_each_output_once() -> None:
    """Issue 40: the caveat listed two models with identical settings as if they differed;
    now each output is named once, with the models that make it."""
    a = Standing("A", "BF16, 1× H100", 3.0, output="1024×1024, 20 steps")
    b = Standing("B", "BF16, 1× H100", 2.0, output="1024×1024, 20 steps")
    c = Standing("C", "BF16, 1× H100", 1.0, output="1024×1024, 50 steps")
    assert headline("T", (a, b, c), "images/kJ", "sig3", 7).endswith(
        " Outputs differ: A and B at 1024×1024, 20 steps; C at 1024×1024, 50 steps."
    )


def test_summary_is_the_answer_in_brief() -> None:
    """The home card's sentence: the leader and its figure, then who shares place 1 or how
    far ahead it is of the second (hand-worked: 30 / 20 = 1.5)."""
    noise = Noise(0.1)
    lead = Standing("A", "BF16, 1× H100", 30.0, 1, 1, 0.1)
    second = Standing("B", "BF16, 1× H100", 20.0, 2, 2, 0.1)
    assert summary((A, B), "tokens/J", "fixed2") == (
        "A leads with 30.00 tokens/J: 1.5× the work of B (2nd)."
    )
    assert summary((lead, second), "tokens/J", "fixed2", noise).startswith(
        "A leads beyond measurement noise with 30.00 tokens/J: 1.5× ("
    )
    tied = (
        Standing("A", "x", 30.0, 1, 3, 0.1),
        Standing("B", "x", 29.0, 1, 3, 0.1),
        Standing("C", "x", 28.0, 1, 3, 0.1),
    )
    assert summary(tied, "u", "fixed2", noise) == (
        "A leads with 30.00 u; B and C are within measurement noise of it."
    )
    assert summary((A,), "u", "fixed2") == "A is the only model that qualifies: 30.00 u."
    assert summary((), "u", "fixed2") == "No configuration qualifies."


def test_a_point_move_inside_the_same_places_is_no_move() -> None:
    """C and D swap their point places but both keep 3rd–4th: for a reader nothing moved
    (it once read "D moves from 3rd–4th to 3rd–4th")."""
    a, b = (Standing(n, "x", v, 1, 1, 0.1) for n, v in (("A", 30.0), ("B", 20.0)))
    c, d = (Standing(n, "x", v, 3, 4, 0.1) for n, v in (("C", 10.0), ("D", 9.5)))
    d_up = Standing("D", "x", 10.5, 3, 4, 0.1)
    f = finding(
        "T",
        "1 ms",
        (a, b, c, d),
        (a, b, c, d),
        Scenario("at 1 ms", (a, b, d_up, c)),
        [],
        [],
        "u",
        "fixed2",
        7,
    )
    assert (
        f.changes[1] == "At 1 ms: A still leads, with 30.00 u; the places hold, but D goes "
        "from 9.50 to 10.50 u."
    )


def test_a_range_that_changes_round_a_held_point_place_is_a_move() -> None:
    """At 50 ms Code Completion's 2nd and 3rd (0.81 and 0.50 tokens/J) came within the noise
    of each other (0.26 and 0.19: 1.4x, under the 1.46x two runs need), and the tables
    print both as 2–3; the finding said "the places hold", as neither point place moved."""
    a = Standing("A", "x", 6.67, 1, 1, 0.08)
    b, c = Standing("B", "x", 0.81, 2, 2, 0.08), Standing("C", "x", 0.50, 3, 3, 0.08)
    b50, c50 = Standing("B", "x", 0.26, 2, 3, 0.08), Standing("C", "x", 0.19, 2, 3, 0.08)
    f = finding(
        "T", "1 ms", (a, b, c), (a, b, c), Scenario("at 50 ms", (a, b50, c50)), [], [], "u",
        "fixed2", 7,
    )  # fmt: skip
    assert f.changes[1] == "At 50 ms: A still leads, with 6.67 u; B moves from 2nd to 2nd–3rd."
