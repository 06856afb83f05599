"""The glossary: every term the tables, charts and findings use, one definition each.

Column headers link their term here (``COLUMN_TERMS``), so a definition is one tap away on
a phone, where a hover title never shows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jouleboard.core.escape import markup
from jouleboard.rank.noise import Noise, describe

# (anchor, term, definition); the definitions are plain text.
TERMS: tuple[tuple[str, str, str], ...] = (
    (
        "efficiency",
        "Tokens/J, images/kJ, videos/MJ (efficiency)",
        "Output tokens produced per joule of GPU energy: throughput (tokens/s) divided by "
        "average GPU power (W). Higher is better. Images/kJ and videos/MJ are the same idea for "
        "image and video models, scaled so the figures are readable.",
    ),
    (
        "energy-per-output",
        "J/token, kJ/image, MJ/video",
        "GPU energy per output: the inverse of the efficiency figure. Lower is better.",
    ),
    (
        "energy-per-response",
        "J/response (energy per response)",
        "GPU energy of an average answer: J/token times the average output length. A model "
        "that writes long reasoning traces spends more per answer even at a good J/token.",
    ),
    (
        "energy-per-correct-answer",
        "J/correct answer",
        "Energy per response divided by the published accuracy: what one right answer costs.",
    ),
    (
        "accuracy",
        "Accuracy",
        "The benchmark score the model's builder or a public leaderboard published, not "
        "measured with the energy run; each figure links its source.",
    ),
    (
        "itl",
        "ITL (inter-token latency)",
        "The time between two output tokens a user sees while a response streams, in ms. A "
        "deadline on ITL keeps streaming fast enough to read.",
    ),
    (
        "percentile",
        "Percentile (p50, p90, p95, p99)",
        "p50 (the median) is the ITL half of the measured ones stay under; p90 is the one 90% "
        "stay under, and so on. The ML.ENERGY Benchmark takes every gap between tokens (a "
        "chunk's gap shared among its tokens), TensorRT-LLM's benchmark_serving every gap "
        "between chunks; AIPerf gives each request's average gap, so its percentiles are over "
        "requests. A deadline on p90 or p99 also bounds the slow moments.",
    ),
    (
        "deadline",
        "Deadline",
        "The largest latency a configuration may have to be ranked: each model appears in its "
        "most energy-efficient configuration that meets it. Larger batches save energy but "
        "cost latency, so the deadline decides how much batching is allowed.",
    ),
    (
        "batch-latency",
        "Batch latency",
        "For image and video models: the time to generate one batch of outputs, in seconds.",
    ),
    (
        "batch-size",
        "Batch (image and video models)",
        "How many images or videos one generation call makes at once. A larger batch shares "
        "the GPU's work among more outputs, usually lowering the energy per output, and "
        "lengthens the batch latency. It is not a language model's batch cap.",
    ),
    (
        "steps",
        "Steps (denoising steps)",
        "How many denoising steps an image or video model takes for each output. Its energy "
        "grows about in proportion, so two models at different step counts do not do the same "
        "work per output; the pages say so where they differ.",
    ),
    (
        "output",
        "Output (image or video)",
        "What one output of an image or video model is: its resolution, and for a video its "
        "frames and frame rate. Energy per image or per video compares like with like only "
        "between equal outputs.",
    ),
    (
        "footprint",
        "Electricity, cost, CO₂e",
        "GPU energy for many outputs or responses (a billion output tokens, a million responses, a "
        "thousand videos) times the PUE, in kWh; what that electricity costs at the price "
        "given; and its emissions at the grid's carbon intensity (grams of CO₂-equivalent per "
        "kWh). The defaults are illustrative: set your own in the calculator.",
    ),
    (
        "batch-cap",
        "Batch cap (max_num_seqs)",
        "The most requests the server runs at once. A larger cap shares each GPU step among "
        "more requests (less energy per token) but makes each token wait longer.",
    ),
    (
        "precision",
        "Precision: BF16, FP8, MXFP4",
        "How the model's weights are stored. BF16 uses 16 bits per weight; FP8 uses 8 bits; "
        "MXFP4 uses 4-bit numbers sharing a scale per block of 32. Fewer bits move less data "
        "per token and usually save energy, sometimes at some cost in accuracy.",
    ),
    (
        "parallelism",
        "Parallelism: TP, EP, DP",
        "How a model is split over several GPUs. TP (tensor parallel) splits each layer's "
        "matrices; EP (expert parallel) places a mixture-of-experts model's experts on "
        "different GPUs; DP (data parallel) runs whole copies side by side. TP1 EP1 DP1 is one "
        "GPU. Ulysses and ring degrees split a diffusion model's attention the same way.",
    ),
    (
        "gpu",
        "GPU",
        "The accelerator the configuration ran on, and how many: 2× H100 is two NVIDIA H100 "
        "GPUs. Energy is summed over all of them.",
    ),
    (
        "pue",
        "PUE (power usage effectiveness)",
        "A data centre's total energy divided by its IT energy: 1.2 means 20% more for cooling "
        "and power conversion. It is at least 1. The calculator multiplies GPU energy by it.",
    ),
    (
        "rank-range",
        "Rank range (2–4)",
        "The places a model could hold once measurement noise is counted: two models share "
        "places when their energies differ by less than the noise of the two measurements "
        "allows, each pair compared on its own at the stated confidence (a range is not a "
        "simultaneous statement about the whole table). The order within a range is by point "
        "value; a single number is a place no other model's energy comes within the noise "
        "of, at that confidence. Where the noise is unknown (no repeat runs), places go by "
        "point value alone and every place is a single number. The whiskers on bar and "
        "Pareto charts show the interval a value lies in at the same confidence. Repeat runs "
        "of one configuration are one row (their geometric mean), with a narrower interval.",
    ),
    (
        "mlperf-scenario",
        "Server and Offline (MLPerf scenarios)",
        "How an MLPerf Inference benchmark sends its queries. Server: queries arrive at random "
        "times, as in a live service, and a result is valid only if its 99th-percentile "
        "latency meets the benchmark's limit (for a language model, the time to the first "
        "token and the time per output token); its throughput is the highest rate of queries "
        "the system keeps up with inside that limit. Offline: every query is handed over at "
        "once and the system answers them as fast as it can, with no latency limit, so its "
        "figures are usually a little better than the same system's Server figures.",
    ),
    (
        "mlperf-system",
        "Closed division and MaxQ (MLPerf systems)",
        "Closed: the division whose submissions run the benchmark's own model, data and "
        "accuracy target, so that their systems can be compared (the open division allows "
        "other models and methods). MaxQ: the name NVIDIA gives its submissions tuned for "
        "energy efficiency rather than for the most throughput (MaxP), for example with lower "
        "GPU power limits; the result states the system's power settings. Each row names its "
        "submitter, round (v4.1, v5.1: MLPerf Inference publishes a round of results about "
        "twice a year) and division.",
    ),
    (
        "steady-state",
        "Steady state",
        "The part of a benchmark run when the server is full (as many requests running as the "
        "batch cap allows). Energy measured in the steady state (as the ML.ENERGY Benchmark "
        "measures it) counts only that part, so start-up and drain do not count; energy "
        "measured over the whole run (as AIPerf and TensorRT-LLM's benchmark_serving measure "
        "it) counts them too. Each model page's data sources, and the energy_window column of "
        "the downloads, say which.",
    ),
)

# Table column key -> glossary anchor.
COLUMN_TERMS: dict[str, str] = {
    "tokens_per_joule": "efficiency",
    "efficiency": "efficiency",
    "energy_per_token_joules": "energy-per-output",
    "energy_per_output_joules": "energy-per-output",
    "energy_per_output_scaled": "energy-per-output",
    "energy_per_response_joules": "energy-per-response",
    "energy_per_correct_answer_joules": "energy-per-correct-answer",
    "accuracy_percent": "accuracy",
    "median_itl_ms": "itl",
    "p90_itl_ms": "itl",
    "p95_itl_ms": "itl",
    "p99_itl_ms": "itl",
    "max_num_seqs": "batch-cap",
    "weight_precision": "precision",
    "parallel": "parallelism",
    "gpu": "gpu",
    "batch_latency_s": "batch-latency",
    "rank": "rank-range",
    "scenario": "mlperf-scenario",  # MLPerf tables (plan/mlperf.py)
    "system": "mlperf-system",
    "batch_size": "batch-size",  # image and video models (kinds/diffusion.py)
    "inference_steps": "steps",
    "resolution": "output",
}
# Footprint columns (render/footprint.py) are named by what and per how much:
# kwh_per_btok, cost_per_mresp, co2_per_kout...
FOOTPRINT_PREFIXES = ("kwh_per_", "cost_per_", "co2_per_")


def column_term(key: str) -> str:
    """The glossary anchor that defines the column ``key``, or ""."""
    return COLUMN_TERMS.get(key) or ("footprint" if key.startswith(FOOTPRINT_PREFIXES) else "")


@dataclass(frozen=True, slots=True)
class NoiseScope:
    """One measurement-noise estimate and where it is used: the tasks (id -> name, in site
    order), the GPUs their configurations ran on and the data sets they come from."""

    noise: Noise
    tasks: Mapping[str, str]
    gpus: frozenset[str]
    datasets: frozenset[str] = frozenset()

    def unrepeated(self) -> tuple[list[str], list[str], list[str]]:
        """The task names, GPUs and data sets the estimate is applied to without a repeat
        run there (a task mixing data sets takes the estimate of those that have repeats)."""
        if self.noise.declared is not None:
            return [], [], []
        tasks = {g.task for g in self.noise.groups}
        gpus = {g.gpu for g in self.noise.groups}
        datasets = {g.dataset for g in self.noise.groups}
        return (
            [name for task, name in self.tasks.items() if task not in tasks],
            sorted(self.gpus - gpus),
            sorted(d for d in self.datasets - datasets if d),
        )


def scope_html(scope: NoiseScope) -> str:
    """One estimate's paragraph: the tasks it serves, what it says, the repeat runs it rests
    on, and the tasks and GPUs it is applied to without a repeat there."""
    noise = scope.noise
    listed = markup(", ".join(scope.tasks.values()))
    if not noise.known:
        return (
            f"<p><strong>{listed}</strong>: measurement noise unknown. None of these tasks' "
            "configurations was measured more than once, the leaderboard states no uncertainty "
            "for them, and an estimate from other kinds of task or data sets is not used here, "
            "so their places are by point value and no range is shown.</p>\n"
        )
    text = f"<p><strong>{listed}</strong>: {markup(describe(noise))}</p>\n"
    if noise.declared is not None or not noise.groups:
        return text
    runs = "".join(
        f"<li>{markup(g.label or g.task)} ({len(g.sources)} runs, "
        f"{g.spread * 100:.1f}% apart): {markup(' and '.join(g.sources))}</li>\n"
        for g in noise.groups
    )
    text += f"<p>The repeat runs it rests on:</p>\n<ul>\n{runs}</ul>\n"
    tasks, gpus, datasets = scope.unrepeated()
    if tasks or gpus or datasets:
        where = [
            *([f"the tasks {', '.join(tasks)}"] if tasks else []),
            *([f"{' or '.join(gpus)}"] if gpus else []),
            *([f"the measurements of {' or '.join(datasets)}"] if datasets else []),
        ]
        every = "every task of this kind and every GPU" + (" and data set" if datasets else "")
        text += (
            f"<p>No repeat ran on {markup(' or on '.join(where))}; the estimate is applied "
            f"there too, on the assumption that run-to-run noise is the same for {every}.</p>\n"
        )
    return text


def noise_html(scopes: Sequence[NoiseScope]) -> str:
    """The glossary's section on measurement noise (anchor ``noise``): one paragraph per
    estimate, naming the tasks it serves: an estimate holds only for the data set and kind
    of task whose repeats made it."""
    body = "".join(scope_html(scope) for scope in scopes)
    return (
        '<h2 id="noise">Measurement noise and rank ranges</h2>\n'
        "<p>Two models share places when their energies differ by less than their "
        "measurements could. Each pair of models is compared on its own at the stated "
        "confidence, so a range such as 2–4 is the set of places these pairwise comparisons "
        "leave open, not a simultaneous statement about the whole table.</p>\n"
        f"{body}"
    )


BOUNDARY_HTML = """<h2 id="boundary">Measurement boundary: what an energy figure includes</h2>
<p>Every energy figure on this site says what it includes, and figures with different
boundaries are never ranked together.</p>
<ul>
<li><strong>GPU energy</strong> (boundary <code>gpu</code>): the energy the GPUs themselves
report through their energy counters (NVML on NVIDIA GPUs: the ML.ENERGY Benchmark reads
them with Zeus, AIPerf through DCGM), summed over the GPUs that serve the model. It leaves
out the host CPUs, memory, network, fans, power supplies and cooling. Every task
leaderboard, model and GPU ranking measures this.</li>
<li><strong>Whole system at the wall</strong> (boundary <code>system-ac</code>): the
alternating-current power of the whole server (every power supply: host CPUs, memory,
fans and all accelerators) measured by an external power analyzer through SPEC PTDaemon,
as MLPerf Inference requires. It is larger than the GPU energy of the same work, by an
amount that depends on the server, so systems measured this way (MLPerf's) are ranked
among themselves only.</li>
</ul>
<p>Neither includes the data centre's cooling and power distribution (its PUE). No table
mixes the two: a task's measurements all have one boundary.</p>
"""


def glossary_html(scopes: Sequence[NoiseScope] = ()) -> str:
    """The glossary as HTML: a definition list with an anchor per term, then what the
    measurement noise of this data is, per estimate (:func:`noise_html`)."""
    items = "".join(
        f'<div id="{markup(anchor)}"><dt>{markup(term)}</dt><dd>{markup(text)}</dd></div>\n'
        for anchor, term, text in TERMS
    )
    return (
        "<p>The terms the tables, charts and findings use. Column headers link here.</p>\n"
        f'<dl class="glossary">\n{items}</dl>\n{noise_html(scopes)}{BOUNDARY_HTML}'
    )
