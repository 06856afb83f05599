"""Per-configuration metrics as pure functions (see docs/metrics.md).

Energy is GPU energy only, summed over every GPU of a configuration, measured in the
steady-state window of a run.
"""

from __future__ import annotations


def tokens_per_joule(energy_per_token_joules: float) -> float:
    """Output tokens per joule (= throughput / average power, "tokens/s/W"). Higher is better."""
    return 1.0 / energy_per_token_joules


def energy_per_token(energy_joules: float, output_tokens: float) -> float:
    """Steady-state energy per output token, J/token."""
    return energy_joules / output_tokens


def average_power(energy_joules: float, duration_s: float) -> float:
    """Average power over a window, W."""
    return energy_joules / duration_s


def output_throughput(
    energy_joules: float, energy_per_token_joules: float, duration_s: float
) -> float:
    """Output tokens per second in the steady window: (energy / J per token) / duration."""
    return energy_joules / energy_per_token_joules / duration_s


def energy_per_response(energy_per_token_joules: float, avg_output_len_tokens: float) -> float:
    """Energy of an average response, J: J/token x average output length."""
    return energy_per_token_joules * avg_output_len_tokens


def decode_throughput(avg_batch_size: float, median_itl_ms: float) -> float:
    """Output tokens/s if ``avg_batch_size`` sequences each emit one token every median
    inter-token latency (ms): avg_batch_size / (median_itl_ms / 1000)."""
    return avg_batch_size / (median_itl_ms / 1000.0)


def megapixel_steps(
    width_px: int, height_px: int, inference_steps: int, num_frames: int | None = None
) -> float:
    """Denoising work of one image or video, in megapixel-steps: width x height x steps
    (x frames for a video) / 1e6."""
    return width_px * height_px * inference_steps * (num_frames or 1) / 1e6


def relative_difference(a: float, b: float) -> float:
    """|a - b| relative to the larger magnitude; 0 when both are 0."""
    scale = max(abs(a), abs(b))
    return 0.0 if scale == 0 else abs(a - b) / scale


def energy_per_correct_answer(energy_per_response_joules: float, accuracy_percent: float) -> float:
    """Energy spent per correct answer, J: energy per response / (accuracy / 100)."""
    return energy_per_response_joules / (accuracy_percent / 100.0)


def correct_answers_per_kwh(energy_per_correct_answer_joules: float) -> float:
    """Correct answers per kWh of GPU energy."""
    return 3.6e6 / energy_per_correct_answer_joules
