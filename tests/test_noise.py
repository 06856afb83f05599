"""Measurement noise: the pooled estimate, the fold of repeat runs and the rank-range rule,
against hand-computed figures and properties (the shared cases in tests/ranking_cases.json
run the rule through Python, Node and Chromium)."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jouleboard.config.schema import Provenance
from jouleboard.loading.dataset import Dataset, load_dataset
from jouleboard.loading.repeats import fold_repeats, geometric_mean
from jouleboard.rank.glossary import NoiseScope, glossary_html
from jouleboard.rank.noise import (
    Noise,
    RepeatGroup,
    pooled_log_sd,
    rank_ranges,
    table_note,
    z_of,
)
from jouleboard.rank.ranking import Deadline, rank
from tests.factories import config
from tests.test_validation_rules import (
    SITE_YAML,
    make_data_dir,
    only_problem,
    valid_measurement,
    write_measurement,
)

FIXTURES = Path(__file__).parent / "fixtures"


def test_z_is_the_two_sided_normal_quantile() -> None:
    assert z_of(0.95) == pytest.approx(1.959964, abs=1e-6)
    assert z_of(0.90) == pytest.approx(1.644854, abs=1e-6)
    assert z_of(0.99) == pytest.approx(2.575829, abs=1e-6)


def test_pooled_estimate_by_hand() -> None:
    # One pair 1 and 4: logs 0 and ln 4, mean ln 2, (k-1) var = 2 (ln 2)^2 over 1 degree of
    # freedom. Adding three equal runs adds 2 degrees of freedom and nothing to the squares.
    assert pooled_log_sd([[1.0, 4.0]]) == pytest.approx(math.sqrt(2) * math.log(2))
    assert pooled_log_sd([[1.0, 4.0], [3.0, 3.0, 3.0]]) == pytest.approx(
        math.sqrt(2 * math.log(2) ** 2 / 3)
    )
    # Single runs carry no information about the noise.
    assert pooled_log_sd([[1.0], [2.0]]) is None
    assert pooled_log_sd([]) is None


def test_pooled_estimate_of_the_bundled_repeats_by_hand() -> None:
    # The three repeat pairs of the bundled data moved energy per token by 5.19%, 10.15% and
    # 18.97% (docs/metrics.md): s^2 = (d1^2 + d2^2 + d3^2) / 6 with d = ln(1 + spread).
    spreads = [0.05191361377276871, 0.10151310847398021, 0.18966971938918742]
    hand = math.sqrt(sum(math.log1p(x) ** 2 for x in spreads) / 6)
    assert hand == pytest.approx(0.08374, abs=1e-5)
    groups = [RepeatGroup(("a", "b"), (1.0, 1.0 + x)) for x in spreads]
    assert Noise.of(groups).per_run == pytest.approx(hand, rel=1e-12)


def test_declared_noise_wins_over_the_estimate() -> None:
    groups = [RepeatGroup(("a", "b"), (1.0, 2.0))]
    noise = Noise.of(groups, relative=0.05, confidence=0.9, basis="vendor spec")
    assert (noise.per_run, noise.confidence, noise.declared) == (0.05, 0.9, "vendor spec")
    assert noise.u(4) == pytest.approx(0.025)
    assert Noise.of([]).per_run is None


def test_interval_by_hand() -> None:
    noise = Noise(0.1)
    low, high = noise.interval(10.0, 0.1)
    assert low == pytest.approx(10 / math.exp(0.1959964), rel=1e-6)
    assert high == pytest.approx(10 * math.exp(0.1959964), rel=1e-6)
    assert Noise(None).interval(10.0, None) == (10.0, 10.0)


def test_within_noise_of_a_change() -> None:
    noise = Noise(0.1)  # threshold for two single runs: 1.96 x 0.1 x sqrt(2) = 0.2772
    assert noise.within(1.0, math.exp(0.27), (1, 1))
    assert not noise.within(1.0, math.exp(0.28), (1, 1))
    assert not Noise(None).within(1.0, 1.0, (1, 1))


def test_a_repeat_added_is_judged_by_half_the_difference_it_makes() -> None:
    """A second run x added to a first run m makes the mean sqrt(m x): the change, half of
    ln(x / m), has the variance s^2 (1/1 - 1/2) = s^2 / 2 (the first run is on both
    sides), so the limit is 1.96 x 0.1 / sqrt 2 = 0.1386. The diff applied two runs' u to
    two independent measurements, a limit of 1.96 x 0.1 = 0.196: a new run 55% above the
    first (a +22% move) passed for noise at s = 0.084. Two means of one and of two runs
    that share none differ by up to 1.96 x 0.1 x sqrt(1 + 1/2) = 0.2400."""
    noise = Noise(0.1)
    assert noise.within(1.0, math.exp(0.138), (1, 2), nested=True)
    assert not noise.within(1.0, math.exp(0.140), (1, 2), nested=True)
    assert not noise.within(1.0, math.exp(0.140), (2, 1), nested=True)  # the repeat removed
    assert noise.within(1.0, math.exp(0.239), (1, 2))
    assert not noise.within(1.0, math.exp(0.241), (1, 2))


def test_fold_takes_geometric_means_and_keeps_ratios() -> None:
    a = config("org/a", ept=0.1, seqs=96)
    b = dataclasses.replace(
        config("org/a", ept=0.4, seqs=96, repeat=2),
        avg_power_watts=800.0,
        output_throughput_tokens_per_sec=2000.0,
    )
    other = config("org/b", ept=0.3)
    folded, groups = fold_repeats([a, other, b])
    assert [c.model_id for c in folded] == ["org/a", "org/b"]
    one = folded[0]
    assert one.runs == 2 and one.run_sources == (a.source, b.source)
    assert one.energy_per_token_joules == pytest.approx(0.2)  # sqrt(0.1 x 0.4)
    assert one.avg_power_watts == pytest.approx(math.sqrt(500 * 800))
    assert one.output_throughput_tokens_per_sec == pytest.approx(math.sqrt(5000 * 2000))
    # E = P / T holds for the means as for each run.
    assert one.energy_per_token_joules == pytest.approx(
        one.avg_power_watts / one.output_throughput_tokens_per_sec
    )
    assert one.median_itl_ms == a.median_itl_ms  # equal in both runs: kept exactly
    assert [(g.sources, g.energy_per_output_joules) for g in groups] == [
        ((a.source, b.source), (0.1, 0.4))
    ]
    assert (groups[0].task, groups[0].model, groups[0].gpu) == (a.task, "org/a", a.gpu_model)
    assert folded[1] is other


def test_fold_sums_histograms_over_shared_bins_only() -> None:
    edges = (0.0, 100.0, 200.0)
    a = dataclasses.replace(
        config("org/a", ept=0.1), output_length_bin_edges_tokens=edges, output_length_counts=(1, 2)
    )
    b = dataclasses.replace(a, repeat=2, source="b.json", output_length_counts=(3, 4))
    (one,), _ = fold_repeats([a, b])
    assert one.output_length_counts == (4, 6)  # every response of both runs
    other = dataclasses.replace(b, output_length_bin_edges_tokens=(0.0, 50.0, 200.0))
    (one,), _ = fold_repeats([a, other])
    assert one.output_length_counts == (1, 2)  # bins differ: the first run's histogram


def test_geometric_mean_edges() -> None:
    assert geometric_mean([0.1, 0.1, 0.1]) == 0.1
    assert geometric_mean([2.0, 8.0]) == pytest.approx(4.0)
    assert geometric_mean([0.0, 2.0]) == 1.0  # not positive: the arithmetic mean


def test_bundled_repeats_fold_into_one_row_each(default_dataset: Dataset) -> None:
    dataset = default_dataset
    folded = [c for c in dataset.configurations if getattr(c, "runs", 1) > 1]
    assert len(folded) == 3 and all(c.runs == 2 for c in folded)
    assert all(c.run_sources[1].endswith("-r2.json") for c in folded)
    assert len(dataset.configurations) == 1858 - 3
    assert dataset.noise.per_run == pytest.approx(0.08374, abs=1e-5)
    assert dataset.noise.declared is None


# --- properties ------------------------------------------------------------------------

energies = st.lists(st.floats(0.01, 10.0), min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(energies, st.floats(0.0, 0.5), st.floats(0.0, 0.5))
def test_raising_s_never_narrows_a_range(values: list[float], s1: float, s2: float) -> None:
    ordered = sorted(values)
    low, high = sorted((s1, s2))
    narrow = rank_ranges(ordered, [low] * len(ordered), Noise(low))
    wide = rank_ranges(ordered, [high] * len(ordered), Noise(high))
    for (b1, w1), (b2, w2) in zip(narrow, wide, strict=True):
        assert b2 <= b1 and w2 >= w1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.01, 10.0), min_size=1, max_size=12, unique=True))
def test_zero_noise_gives_exact_ranks_for_distinct_values(values: list[float]) -> None:
    ordered = sorted(values)
    assert rank_ranges(ordered, [0.0] * len(ordered), Noise(0.0)) == [
        (i, i) for i in range(1, len(ordered) + 1)
    ]


@settings(max_examples=200, deadline=None)
@given(energies, st.floats(0.0, 0.5))
def test_every_range_holds_its_point_rank(values: list[float], s: float) -> None:
    ordered = sorted(values)
    for i, (best, worst) in enumerate(rank_ranges(ordered, [s] * len(ordered), Noise(s)), 1):
        assert 1 <= best <= i <= worst <= len(ordered)


def test_unknown_noise_keeps_exact_ranks() -> None:
    rows = rank([config("org/a", ept=0.1), config("org/b", ept=0.1001)], Deadline(300))
    assert [(r.rank_best, r.rank_worst, r.u) for r in rows] == [(1, 1, None), (2, 2, None)]


# --- site.yaml `uncertainty` ----------------------------------------------------------


def test_declared_uncertainty_in_site_yaml_is_used_and_shown(tmp_path: Path) -> None:
    data = make_data_dir(
        tmp_path,
        site_yaml=SITE_YAML
        + "uncertainty: {relative: 0.05, confidence: 0.9, basis: 'NVML counters, vendor note'}\n",
    )
    write_measurement(data, valid_measurement())
    noise = load_dataset(data).noise
    assert (noise.per_run, noise.confidence, noise.declared) == (
        0.05,
        0.9,
        "NVML counters, vendor note",
    )
    html = glossary_html([NoiseScope(noise, {"t": "T"}, frozenset({"H100"}))])
    assert "s = 5%" in html and "declared by the site (NVML counters, vendor note)" in html
    # Declared without degrees of freedom: taken as exact, the normal quantile (1.645 at 90%).
    assert noise.freedom is None and noise.critical == pytest.approx(1.644854, abs=1e-6)
    assert "the normal quantile, c = 1.64, s taken as exact" in html


def test_uncertainty_basis_without_a_relative_value_is_located(tmp_path: Path) -> None:
    data = make_data_dir(tmp_path, site_yaml=SITE_YAML + "uncertainty: {basis: 'a guess'}\n")
    p = only_problem(data)
    assert p.pointer == "/uncertainty/basis" and "set relative too" in p.message + p.hint


@pytest.mark.parametrize("bad", ["relative: -0.1", "relative: 1.5", "confidence: 1.0"])
def test_uncertainty_out_of_range_is_located(tmp_path: Path, bad: str) -> None:
    data = make_data_dir(tmp_path, site_yaml=SITE_YAML + f"uncertainty: {{{bad}}}\n")
    p = only_problem(data)
    assert p.pointer == f"/uncertainty/{bad.split(':')[0]}"


def test_no_repeats_and_nothing_declared_leaves_places_exact_and_says_so(
    tmp_path: Path,
) -> None:
    data = make_data_dir(tmp_path)
    write_measurement(data, valid_measurement())
    noise = load_dataset(data).noise
    assert noise.per_run is None and noise.browser() is None
    assert table_note(noise) == "Measurement noise unknown: places are by point value."
    scope = NoiseScope(noise, {"t": "Task T"}, frozenset({"H100"}))
    assert "<strong>Task T</strong>: measurement noise unknown" in glossary_html([scope])


def test_each_data_source_has_its_own_noise(tmp_path: Path) -> None:
    """With two data sets, one set's repeats never stand for the other's noise: the sample's
    repeat pair is in the ML.ENERGY set, so text-to-image, moved to a second set without
    repeats, has unknown noise and exact places, while gpqa keeps s = 3.58%."""
    from jouleboard.core.urls import Urls
    from jouleboard.plan.site import noise_scopes, site_view
    from tests.golden.tree import DATA

    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    for path in (data / "measurements" / "text-to-image").rglob("*.json"):
        doc = json.loads(path.read_text())
        doc["provenance"]["dataset"] = "Other Bench"
        path.write_text(json.dumps(doc))
    dataset = load_dataset(data)
    assert len(dataset.datasets) == 2
    site = site_view(dataset, Urls())
    assert site.tasks["gpqa"].noise.per_run == pytest.approx(0.0358, abs=1e-4)
    image = site.tasks["text-to-image"]
    assert image.noise.per_run is None
    assert all(r.rank_best == r.rank == r.rank_worst for r in image.ranking)
    html = glossary_html(noise_scopes(site))
    assert f"<strong>{image.info.name}</strong>: measurement noise unknown" in html
    assert "s = 3.6%" in html


# --- the critical value follows how s is known (issue 37) -------------------------------

T_0975_3 = 3.182446305284263  # Student's t(0.975, 3), printed tables: 3.182


def test_an_estimate_has_the_repeats_degrees_of_freedom() -> None:
    """nu = sum over groups of (k - 1): a pair gives 1, three runs give 2."""
    groups = [RepeatGroup(("a", "b"), (1.0, 1.1)), RepeatGroup(("c", "d", "e"), (1.0, 1.2, 0.9))]
    noise = Noise.of(groups)
    assert noise.freedom == 3
    assert noise.critical == pytest.approx(T_0975_3, rel=1e-12)
    # u = s for one run: the interval is [v e^(-c s), v e^(c s)] with c = t, not 1.96.
    low, high = noise.interval(1.0, noise.per_run)
    assert high == pytest.approx(math.exp(T_0975_3 * noise.per_run), rel=1e-12)
    assert low * high == pytest.approx(1.0)


def test_a_declared_s_is_exact_unless_its_degrees_of_freedom_are_given() -> None:
    exact = Noise.of([], relative=0.05)
    assert exact.freedom is None and exact.critical == pytest.approx(1.959963984540054)
    assert exact.s_interval() is None
    estimated = Noise.of([], relative=0.05, freedom=3)
    assert estimated.critical == pytest.approx(T_0975_3, rel=1e-12)
    # Declared figures ignore the data's repeats, and so do their degrees of freedom.
    repeats = [RepeatGroup(("a", "b"), (1.0, 2.0))]
    assert Noise.of(repeats, relative=0.05).freedom is None


def test_the_interval_of_s_by_hand() -> None:
    """s = 8.37% from 3 degrees of freedom: chi2(0.975, 3) = 9.348 and chi2(0.025, 3) =
    0.2158 (printed tables) give s sqrt(3 / 9.348) = 4.74% and s sqrt(3 / 0.2158) = 31.2%."""
    low, high = Noise(0.0837, freedom=3).s_interval() or (0.0, 0.0)
    assert low == pytest.approx(0.0837 * math.sqrt(3 / 9.348), rel=1e-3)
    assert high == pytest.approx(0.0837 * math.sqrt(3 / 0.2158), rel=1e-3)


def test_more_repeats_narrow_the_range_of_places() -> None:
    """Property: with s held, more degrees of freedom lower c, so ranges only narrow."""
    values = [0.1, 0.12, 0.14, 0.2, 0.3]
    widths = []
    for nu in (1, 3, 10, 30, None):
        noise = Noise(0.1, freedom=nu)
        ranges = rank_ranges(values, [0.1] * 5, noise)
        widths.append(sum(w - b for b, w in ranges))
    assert widths == sorted(widths, reverse=True) and widths[0] > widths[-1]


def test_table_note_states_the_interval_the_whiskers_draw() -> None:
    """Not s beside "95% confidence": the one-run interval exp(-c s) .. exp(c s), here
    exp(-3.182 x 0.0837) = 0.766 (-23%) and exp(0.2664) = 1.305 (+31%)."""
    note = table_note(Noise(0.0837, freedom=3))
    assert "−23% to +31%" in note and "95% confidence" in note and "±" not in note
    assert "−15% to +18%" in table_note(Noise(0.0837))  # exp(-+1.96 x 0.0837): 0.849, 1.178


def test_runs_to_separate_by_hand() -> None:
    """GPT OSS 20B and 120B stand 1.394 apart; with s = 8.37% and c = 3.182 they would
    separate at n > 2 (0.2664 / ln 1.394)^2 = 1.32: two runs of each."""
    noise = Noise(0.0837, freedom=3)
    assert noise.runs_to_separate(35.15 / 25.21) == 2
    assert noise.runs_to_separate(1.0) is None and Noise(None).runs_to_separate(2.0) is None


@pytest.mark.parametrize(
    ("bad", "pointer"),
    [
        ("{degrees_of_freedom: 3}", "/uncertainty/degrees_of_freedom"),
        ("{relative: 0.05, degrees_of_freedom: 0}", "/uncertainty/degrees_of_freedom"),
        # Rounds to 1 in (1 + c) / 2: no quantile (issue 41's traceback at build).
        ("{relative: 0.05, confidence: 0.9999999999999999}", "/uncertainty/confidence"),
        ("{confidence: 0.9999999}", "/uncertainty/confidence"),
    ],
)
def test_uncertainty_settings_without_a_quantile_are_located(
    tmp_path: Path, bad: str, pointer: str
) -> None:
    data = make_data_dir(tmp_path, site_yaml=SITE_YAML + f"uncertainty: {bad}\n")
    assert only_problem(data).pointer == pointer


def test_the_highest_confidence_allowed_still_ranks(tmp_path: Path) -> None:
    data = make_data_dir(
        tmp_path,
        site_yaml=SITE_YAML + "uncertainty: {relative: 0.05, confidence: 0.999999, "
        "degrees_of_freedom: 2}\n",
    )
    write_measurement(data, valid_measurement())
    noise = load_dataset(data).noise
    p = (1 + 0.999999) / 2  # t with 2 degrees: (2p - 1) sqrt(2 / (4 p (1 - p))) = 999.9992
    assert noise.critical == pytest.approx((2 * p - 1) * math.sqrt(2 / (4 * p * (1 - p))))
    assert rank([config("org/a", ept=0.1)], Deadline(300), noise=noise)[0].rank_best == 1


def pairwise_ranges(values: list[float], us: list[float], noise: Noise) -> list[tuple[int, int]]:
    """The rule as written, every pair compared (the O(n²) definition rank_ranges keeps)."""
    n = len(values)
    return [
        (
            1
            + sum(
                noise.surely_lower(w, uw, v, u)
                for j, (w, uw) in enumerate(zip(values, us, strict=True))
                if j != i
            ),
            n
            - sum(
                noise.surely_lower(v, u, w, uw)
                for j, (w, uw) in enumerate(zip(values, us, strict=True))
                if j != i
            ),
        )
        for i, (v, u) in enumerate(zip(values, us, strict=True))
    ]


@settings(max_examples=300, deadline=None)
@given(
    energies=st.lists(
        st.one_of(st.floats(0.01, 10.0), st.sampled_from([0.1, 0.105, 0.11, 0.2])),
        min_size=1,
        max_size=40,
    ),
    runs=st.lists(st.integers(1, 3), min_size=40, max_size=40),
    s=st.sampled_from([0.0, 0.02, 0.0837, 0.3]),
    freedom=st.sampled_from([None, 1, 3, 30]),
)
def test_rank_ranges_equal_every_pair_compared(
    energies: list[float], runs: list[int], s: float, freedom: int | None
) -> None:
    """The binary search finds exactly the counts of comparing every pair, ties, equal
    values and mixed numbers of runs included."""
    values = sorted(energies)
    noise = Noise(s, freedom=freedom)
    us = [noise.u(r) or 0.0 for r in runs[: len(values)]]
    assert rank_ranges(values, us, noise) == pairwise_ranges(values, us, noise)


def test_only_an_estimate_from_the_data_promises_more_runs_will_help() -> None:
    """A declared s (site.yaml) does not change when runs are added, yet the glossary said
    "Each further run of a configuration adds one degree of freedom: ten more would bring
    c from 2.78 to ...": only an estimate from the data's repeats gains from them."""
    from jouleboard.rank.noise import describe

    declared = describe(Noise.of([], relative=0.05, freedom=4))
    assert "degrees of freedom" in declared and "further run" not in declared
    estimated = Noise(0.05, freedom=4)  # as Noise.of makes it from repeats: no declaration
    assert "Each further run of a configuration adds one degree of freedom" in describe(estimated)


def test_the_about_page_states_the_bundled_repeats_as_they_differ() -> None:
    """The About page said the same configuration measured twice "uses a few percent more
    or less energy"; the bundled data's three repeat pairs differ by 5%, 10% and 19%. The
    figures it now states are those of the data's -r2 files against their first runs."""
    import json
    import re
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    differ = []
    for second in sorted((repo / "data" / "measurements").rglob("*-r2.json")):
        first = second.with_name(second.name.replace("-r2.json", ".json"))
        a, b = (
            json.loads(p.read_text())["metrics"]["energy_per_token_joules"] for p in (first, second)
        )
        differ.append(round((max(a, b) / min(a, b) - 1) * 100))
    about = (repo / "content" / "about.md").read_text(encoding="utf-8")
    stated = re.search(r"measured twice here differ by (\d+)%, (\d+)% and (\d+)%", about)
    assert stated and sorted(map(int, stated.groups())) == sorted(differ), differ


def test_runs_of_two_energy_windows_are_not_folded_as_repeats() -> None:
    """A configuration measured in its steady state and again over a whole run (an AIPerf
    import) was folded as two repeats: one row, its window the first run's, and the gap
    between the windows counted as measurement noise."""

    def measured(repeat: int, window: str | None) -> Any:
        provenance = Provenance(
            dataset="d", version="1", date="unknown", license="MIT", source="s", window=window
        )
        return dataclasses.replace(
            config("org/a", ept=0.1 * repeat, seqs=96, repeat=repeat), provenance=provenance
        )

    steady, whole, steady_again = (
        measured(1, "steady-state"),
        measured(2, "whole-run"),
        measured(3, "steady-state"),
    )
    folded, groups = fold_repeats([steady, whole, steady_again])
    assert [(c.provenance.window, c.runs) for c in folded] == [
        ("steady-state", 2),
        ("whole-run", 1),
    ]
    assert [g.energy_per_output_joules for g in groups] == [(0.1, pytest.approx(0.3))]
