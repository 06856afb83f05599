"""The one place that knows how numbers are shown: labels, units and digits per column."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ColumnFormat:
    label: str
    unit: str = ""
    digits: int = 3  # significant digits; 0 = integer
    higher_is_better: bool | None = None
    fixed_decimals: int | None = None  # fixed decimals instead of significant digits


FORMATS: dict[str, ColumnFormat] = {
    "rank": ColumnFormat("#", digits=0),
    "num_gpus": ColumnFormat("GPUs", digits=0),
    "max_num_seqs": ColumnFormat("Batch cap", digits=0),
    "tokens_per_joule": ColumnFormat("Tokens/J", "", higher_is_better=True, fixed_decimals=2),
    "energy_per_token_joules": ColumnFormat(
        "J/token", "", higher_is_better=False, fixed_decimals=4
    ),
    "energy_per_response_joules": ColumnFormat("J/response", "", 3, higher_is_better=False),
    "median_itl_ms": ColumnFormat("Median ITL", "ms", 3, higher_is_better=False),
    "p90_itl_ms": ColumnFormat("p90 ITL", "ms", 3, higher_is_better=False),
    "p95_itl_ms": ColumnFormat("p95 ITL", "ms", 3, higher_is_better=False),
    "p99_itl_ms": ColumnFormat("p99 ITL", "ms", 3, higher_is_better=False),
    "avg_power_watts": ColumnFormat("Power", "W", 3),
    "output_throughput_tokens_per_sec": ColumnFormat(
        "Throughput", "tokens/s", 3, higher_is_better=True
    ),
    "avg_output_len_tokens": ColumnFormat("Avg. output", "tokens", 3),
    "avg_batch_size": ColumnFormat("Avg. batch", "", 3),
    "ratio": ColumnFormat("Ratio", "x", 3),
    "accuracy_percent": ColumnFormat("Accuracy †", "%", higher_is_better=True, fixed_decimals=1),
    "energy_per_correct_answer_joules": ColumnFormat(
        "J/correct answer", "", 3, higher_is_better=False
    ),
}

PRECISION_LABELS = {
    "bfloat16": "BF16",
    "float16": "FP16",
    "float32": "FP32",
    "fp8": "FP8",
    "mxfp4": "MXFP4",
    "nvfp4": "NVFP4",
    "int8": "INT8",
    "int4": "INT4",
}


def precision_label(precision: str) -> str:
    """``bfloat16`` -> ``BF16``; a precision without a label, in upper case (as the
    browser's formats.js show does)."""
    return PRECISION_LABELS.get(precision, precision.upper())


def capital(text: str) -> str:
    """The first letter in upper case, the rest unchanged (``on H100 alone``)."""
    return text[:1].upper() + text[1:]


def significant(value: float, digits: int) -> str:
    """``value`` with ``digits`` significant digits, grouped thousands, no exponent."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(digits - 1 - magnitude, 0)
    rounded = round(value, decimals)
    # Rounding may carry into a new digit (9.996 -> 10.00): recompute once.
    if rounded != 0 and math.floor(math.log10(abs(rounded))) != magnitude:
        decimals = max(decimals - 1, 0)
    return f"{value:,.{decimals}f}"


def brief(value: float) -> str:
    """``value`` as a message quotes a figure that may be absurd: at most four significant
    digits, with an exponent from a million (1e300 W is "1.000e+300", not 301 digits)."""
    if not math.isfinite(value) or abs(value) >= 1e6 or 0 < abs(value) < 1e-3:
        return f"{value:.3e}"
    return significant(value, 4)


def format_value(column: str, value: object) -> str:
    """Display string for a cell value of ``column`` (no unit)."""
    if value is None:
        return "–"
    if column == "weight_precision" and isinstance(value, str):
        return precision_label(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    fmt = FORMATS.get(column)
    if fmt is None:
        return f"{value:,}" if isinstance(value, int) else significant(float(value), 3)
    if fmt.digits == 0:
        return f"{int(value):,}"
    if fmt.fixed_decimals is not None:
        return f"{value:,.{fmt.fixed_decimals}f}"
    return significant(float(value), fmt.digits)


def show(rule: str, value: object) -> str:
    """Display string of ``value`` by a display rule: ``int`` (grouped), ``fixedN`` (N
    decimals, grouped), ``sigN`` (N significant digits), ``precision`` (BF16, FP8, ...),
    ``text``. templates/assets/js/formats.js implements the same rules (``show``); a test
    prints the same numbers through both."""
    if value is None:
        return "–"
    if rule == "precision":
        return precision_label(str(value))
    if rule == "text" or isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if rule == "int":
        return f"{int(value):,}"
    if rule.startswith("fixed"):
        return f"{value:,.{int(rule[5:])}f}"
    if rule.startswith("sig"):
        return significant(float(value), int(rule[3:]))
    raise ValueError(f"unknown display rule {rule!r}")
