"""What each column of the published downloads means, for the downloads page: one line per
column name, with its unit. A site's own kind may add columns this list does not know: the
page then lists them by name alone."""

from __future__ import annotations

from collections.abc import Iterable

from jouleboard.plan.views import Download

# Column name -> its meaning, in plain words, unit last. "Empty" is an empty CSV cell and a
# JSON null.
COLUMNS: dict[str, str] = {
    # Which configuration
    "rank": "Place in the ranking (1 is the most efficient); rank_best and rank_worst give "
    "the places the measurement noise allows.",
    "task": "The task's id, as in its page's address (/tasks/<id>/).",
    "model_id": "The model's id as its publisher names it (e.g. openai/gpt-oss-20b).",
    "nickname": "The model's short name, as the pages show it.",
    "builder": "Who built the model.",
    "gpu_model": "The GPU the configuration ran on (B200, H100...).",
    "num_gpus": "How many GPUs it ran on; energy and power are summed over all of them.",
    "weight_precision": "How the model's weights are stored: bfloat16, fp8, mxfp4...",
    "max_num_seqs": "Batch cap: the most requests the server runs at once.",
    "tensor_parallel": "GPUs each layer's matrices are split over (tensor parallelism).",
    "expert_parallel": "GPUs a mixture-of-experts model's experts are spread over.",
    "data_parallel": "Whole copies of the model run side by side.",
    "concurrency": "Requests the benchmark's load generator kept in flight (AIPerf "
    "--concurrency); empty where the data does not say.",
    "request_rate_per_sec": "Requests per second the load generator sent (AIPerf "
    "--request-rate); empty where the data does not say.",
    "batch_size": "Image and video models: outputs generated together in one batch.",
    "inference_steps": "Denoising steps per image or video.",
    "width_px": "Width of an image or video, pixels.",
    "height_px": "Height of an image or video, pixels.",
    "num_frames": "Frames of a video (empty for an image).",
    "fps": "Frames per second of a video (empty for an image).",
    "ulysses_degree": "GPUs a diffusion model's attention is split over by Ulysses "
    "sequence parallelism (1: none).",
    "ring_degree": "GPUs a diffusion model's attention is split over by ring attention (1: none).",
    # What was measured
    "tokens_per_joule": "Output tokens per joule of GPU energy: throughput / power. Higher "
    "is better.",
    "energy_per_token_joules": "GPU energy per output token, joules. Lower is better.",
    "energy_per_response_joules": "GPU energy of an average response: energy per token x "
    "average output length, joules.",
    "energy_per_output_joules": "GPU energy per image or video, joules. Lower is better.",
    "outputs_per_joule": "Images or videos per joule of GPU energy (MLPerf: tokens, samples "
    "or images per joule at the wall, derived from throughput / power).",
    "energy_per_correct_answer_joules": "Energy per response / published accuracy: what "
    "one right answer costs, joules.",
    "accuracy_percent": "The published accuracy on the task's benchmark, percent (not "
    "measured with the energy run; empty where none is published).",
    "avg_power_watts": "Average power over the measured window, watts: the sum over all GPUs "
    "(MLPerf: the whole system at the wall).",
    "output_throughput_tokens_per_sec": "Output tokens generated per second, all requests "
    "together.",
    "throughput_outputs_per_sec": "Images or videos generated per second.",
    "avg_output_len_tokens": "Average length of a response, tokens.",
    "avg_batch_size": "Average number of requests the server ran at once while measured "
    "(empty where the run did not record it).",
    "median_itl_ms": "Median inter-token latency: the time between two tokens a user sees, "
    "milliseconds.",
    "p90_itl_ms": "90th-percentile inter-token latency, milliseconds.",
    "p95_itl_ms": "95th-percentile inter-token latency, milliseconds.",
    "p99_itl_ms": "99th-percentile inter-token latency, milliseconds.",
    "batch_latency_s": "Time to generate one batch of images or videos, seconds.",
    # How sure
    "runs": "Measurements of this configuration behind the row (its geometric mean when "
    "more than one).",
    "relative_uncertainty": "Relative standard uncertainty of the energy (0.05 is 5%); "
    "empty where the measurement noise is unknown.",
    "rank_best": "The best place the measurement noise allows (where the noise is unknown, "
    "the place by point value, as rank_worst; by energy per correct answer, the energy's "
    "noise alone: the accuracy is taken as published).",
    "rank_worst": "The worst place the measurement noise allows (where the noise is "
    "unknown, the place by point value, as rank_best).",
    "critical_value": "The factor c the intervals and places use (Student's t or the normal "
    "quantile at the stated confidence); empty where the noise is unknown.",
    "degrees_of_freedom": "Degrees of freedom of the noise estimate behind c; empty where "
    "unknown or taken as exact.",
    "energy_per_token_joules_low": "Low end of the energy per token's interval at the "
    "stated confidence; empty where the noise is unknown.",
    "energy_per_token_joules_high": "High end of that interval; empty where the noise is unknown.",
    "tokens_per_joule_low": "Low end of the tokens per joule's interval; empty where the "
    "noise is unknown.",
    "tokens_per_joule_high": "High end of that interval; empty where the noise is unknown.",
    "energy_per_output_joules_low": "Low end of the energy per output's interval; empty "
    "where the noise is unknown.",
    "energy_per_output_joules_high": "High end of that interval; empty where the noise is unknown.",
    "outputs_per_joule_low": "Low end of the outputs per joule's interval; empty where the "
    "noise is unknown.",
    "outputs_per_joule_high": "High end of that interval; empty where the noise is unknown.",
    # Where from
    "repeat": "Which of the separately published runs of these settings the row is (1: the "
    "first; a row that folds several shows the first's).",
    "source": "The measurement file the row comes from, in the data folder (the first one "
    "where it folds several runs; the model's page lists them all).",
    "energy_boundary": "What the energy includes: gpu (the GPUs' own energy counters) or "
    "system-ac (the whole system at the wall).",
    "dataset": "The data set the measurement comes from, with its version (its citation is "
    "on the model's page).",
    "energy_window": "The part of each run the energy covers: steady-state (only while the "
    "server is full; start-up and drain left out) or whole-run (the benchmark's whole "
    "measuring phase); empty where the source does not say.",
    # MLPerf Inference results
    "round": "The MLPerf Inference round: v4.1, v5.1...",
    "submitter": "Who submitted the result to MLCommons.",
    "division": "closed (the benchmark's own model and accuracy target) or open.",
    "availability": "As MLCommons classes the system: available, preview or rdi (research, "
    "development, internal).",
    "result_id": "MLCommons' ID of the result, where the round's summary gives one.",
    "unique_id": "MLCommons' Unique ID of the system: category, division, submitter, system.",
    "benchmark": "The MLPerf benchmark and its accuracy target (llama2-70b-99...).",
    "scenario": "Server (queries arrive at random, under a latency limit) or Offline (all "
    "at once).",
    "system_id": "The submitted system's folder name in the results repository.",
    "system_name": "The submitted system, as its submitter names it.",
    "accelerator": "The accelerator, as MLCommons names it.",
    "num_accelerators": "Accelerators in the whole system.",
    "nodes": "Servers in the system.",
    "host": "The host processors.",
    "software": "The serving software and its version.",
    "power_settings": "Power settings the submitter states (power limits, MaxQ tuning).",
    "throughput_per_sec": "Throughput as MLCommons reports it, per second (see throughput_unit).",
    "throughput_unit": "What the throughput counts: tokens/s or samples/s.",
    "power_samples": "Power analyzer readings in the measured window (where the raw logs "
    "give them).",
    "joules_per_output": "Energy at the wall per output (power / throughput), joules; "
    "derived, not verified by MLCommons.",
    "output_unit": "What one output is: a token, a sample or an image.",
    "ttft_p99_ms": "Server: 99th-percentile time to first token, milliseconds.",
    "ttft_limit_ms": "Server: the benchmark's limit on it, milliseconds.",
    "tpot_p99_ms": "Server: 99th-percentile time per output token, milliseconds.",
    "tpot_limit_ms": "Server: the benchmark's limit on it, milliseconds.",
    "query_p99_ms": "Server: 99th-percentile latency of a whole query, milliseconds.",
    "query_limit_ms": "Server: the benchmark's limit on it, milliseconds.",
    "accuracy": "The accuracy the result reached, as MLCommons reports it.",
    "energy_instrument": "How the energy was measured.",
    "derived_figures": "The words every figure derived from the result stands beside.",
    "result_url": "The result's folder in MLCommons' results repository.",
    "license": "The license of the row's data (SPDX id; NOASSERTION: none stated).",
}


def column_lines(downloads: Iterable[Download]) -> tuple[tuple[str, str], ...]:
    """Every column the downloads have, in the order they first appear, with its meaning
    ("" for one a site's own kind adds)."""
    seen = dict.fromkeys(c for d in downloads for c in d.columns)
    return tuple((c, COLUMNS.get(c, "")) for c in seen)
