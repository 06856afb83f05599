"""Raw diffusion runs (text-to-image, text-to-video) of the ML.ENERGY benchmark.

    [diffusion/{gpu_family}/current/]run/diffusion/{task}/{org}/{model}/{config}/results.json

``config`` is ``key-value`` pairs joined by ``+``, e.g.
``batch-4+size-1024x1024+steps-20+uly-2+ring-1+tc-False`` (size is height x width).
results.json holds batch_size, ulysses_degree, ring_degree, optional num_frames and fps, and
iteration_energy_measurements: [{time [s], gpu_energy: {gpu index: J}}, ...].

The ML.ENERGY data toolkit's rules (DiffusionRuns.from_raw_results), which this follows:
the folder name wins over results.json for batch size and the parallel degrees; an iteration
with a non-positive time is skipped; batch latency = mean time; energy per output = mean
summed energy / batch size; average power = mean energy / mean time; throughput = batch size /
batch latency; number of GPUs = Ulysses x ring degree; GPU = the gpu_family folder,
upper-cased. Departures (errors instead of a silent skip) are in docs/raw-runs.md.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeGuard

from jouleboard.core.jsonio import parse_strict
from jouleboard.core.problems import Problem, pointer, shown_path
from jouleboard.core.safe_read import FileRefused, read_capped
from jouleboard.core.shapes import JsonObject, JsonValue
from jouleboard.importers.run_layout import RESULTS_JSON, RunLocation
from jouleboard.importers.run_provenance import date_problem

_PARAM_KEYS = {"batch": "batch_size", "uly": "ulysses_degree", "ring": "ring_degree"}
MAX_RESULTS_BYTES = 32 * 1024 * 1024  # real ones hold a few KB: iterations x GPU energies


@dataclass(frozen=True, slots=True)
class DiffusionResults:
    """What a diffusion run reduces to."""

    gpu_model: str
    batch_size: int
    ulysses_degree: int
    ring_degree: int
    inference_steps: int
    height_px: int
    width_px: int
    num_frames: int | None
    fps: float | None
    extra: dict[str, str]  # folder keys not used here (tc, ...), kept as written
    batch_latency_s: float
    batch_energy_joules: float
    iterations: int
    skipped_iterations: int
    date: str | None

    @property
    def num_gpus(self) -> int:
        return self.ulysses_degree * self.ring_degree

    @property
    def energy_per_output_joules(self) -> float:
        return self.batch_energy_joules / self.batch_size

    @property
    def avg_power_watts(self) -> float:
        return self.batch_energy_joules / self.batch_latency_s

    @property
    def throughput_outputs_per_sec(self) -> float:
        return self.batch_size / self.batch_latency_s


def parse_config_folder(name: str) -> tuple[dict[str, str], str | None]:
    """``key-value+key-value...`` -> pairs, or an error message."""
    pairs: dict[str, str] = {}
    for token in name.split("+"):
        key, dash, value = token.partition("-")
        if not dash or not key or not value:
            return {}, f"{token!r} in {name!r} is not key-value"
        if key in pairs:
            return {}, f"key {key!r} appears twice in {name!r}"
        pairs[key] = value
    return pairs, None


def _finite_number(value: JsonValue) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _positive_int(value: JsonValue) -> int | None:
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and float(value).is_integer()
        and value >= 1
    ):
        return int(value)
    return None


class _Reader:
    """Collects problems while one run's folder name and results.json are read."""

    def __init__(self, loc: RunLocation) -> None:
        self.loc = loc
        self.folder = shown_path(loc.run_dir)
        self.file = f"{self.folder}/{RESULTS_JSON}"
        self.problems: list[Problem] = []

    def add(self, where: str, rule: str, message: str, hint: str, in_file: bool = True) -> None:
        self.problems.append(
            Problem(self.file if in_file else self.folder, where, rule, message, hint)
        )

    def setting(self, pairs: dict[str, str], key: str, doc: JsonObject) -> int:
        """A whole-number setting from the folder name, else results.json (the toolkit's
        order); both given and different is an error."""
        field = _PARAM_KEYS[key]
        name_raw = pairs.pop(key, None)
        in_name = None if name_raw is None else _positive_int(name_raw)
        in_file = _positive_int(doc[field]) if field in doc else None
        if name_raw is not None and in_name is None:
            self.add(
                "",
                "run.params-malformed",
                f"{key}-{name_raw} is not a whole number >= 1",
                f"name the folder with {key}-N",
                in_file=False,
            )
        if field in doc and in_file is None:
            self.add(
                pointer(field),
                "run.wrong-type",
                f"{field} is not a whole number >= 1",
                "give it as a positive whole number",
            )
        if in_name is not None and in_file is not None and in_name != in_file:
            self.add(
                pointer(field),
                "run.path-mismatch",
                f"{field} is {in_file} but the folder name says {in_name}",
                "file the run under its own settings, or fix results.json",
            )
        value = in_name or in_file
        if value is None:
            self.add(
                "",
                "run.params-missing",
                f"neither the folder name ({key}-N) nor results.json ({field}) gives the {field}",
                f"add {key}-N to the folder name",
                in_file=False,
            )
            return 1
        return value

    def size(self, pairs: dict[str, str], doc: JsonObject) -> tuple[int, int]:
        raw = pairs.pop("size", None)
        if raw is not None:
            h, _, w = raw.partition("x")
            height, width = _positive_int(h), _positive_int(w)
            if height and width:
                return height, width
            self.add(
                "",
                "run.params-malformed",
                f"size-{raw} is not HEIGHTxWIDTH in pixels",
                "e.g. size-1024x1024",
                in_file=False,
            )
            return 1, 1
        height, width = _positive_int(doc.get("height")), _positive_int(doc.get("width"))
        if height and width:
            return height, width
        self.add(
            "",
            "run.params-missing",
            "no output size: the folder name has no size-HxW and results.json no height and width",
            "add size-HxW to the folder name",
            in_file=False,
        )
        return 1, 1

    def iterations(self, doc: JsonObject) -> tuple[list[float], list[float], int]:
        """Summed energies (J) and times (s) of the timed iterations; skipped count."""
        items = doc.get("iteration_energy_measurements")
        if not isinstance(items, list):
            self.add(
                "/iteration_energy_measurements",
                "run.missing-field",
                "iteration_energy_measurements is missing or not a list",
                "use the results.json the benchmark wrote",
            )
            return [], [], 0
        energies, times, skipped = [], [], 0
        for i, item in enumerate(items):
            energy = item.get("gpu_energy") if isinstance(item, dict) else None
            t = item.get("time") if isinstance(item, dict) else None
            seconds = t if isinstance(t, int | float) and not isinstance(t, bool) else None
            joules = (
                [v for v in energy.values() if _finite_number(v)]
                if isinstance(energy, dict)
                else []
            )
            if (
                not isinstance(energy, dict)
                or len(joules) != len(energy)  # one of them is not a finite number
                or (t is not None and seconds is None)
            ):
                self.add(
                    pointer("iteration_energy_measurements", i),
                    "run.wrong-type",
                    "an iteration needs time (s) and gpu_energy {gpu: J} as numbers",
                    "use the results.json the benchmark wrote",
                )
                continue
            if seconds is None or seconds <= 0:  # the toolkit skips untimed iterations
                skipped += 1
                continue
            energies.append(math.fsum(float(v) for v in joules))
            times.append(float(seconds))
        return energies, times, skipped


def read_diffusion(loc: RunLocation) -> tuple[DiffusionResults | None, list[Problem]]:
    """Read one diffusion run; every problem found is returned. A run whose iterations are
    all untimed comes back with ``iterations == 0`` (it is dropped, as the toolkit drops it)."""
    r = _Reader(loc)
    path = loc.run_dir / RESULTS_JSON
    if not os.path.lexists(path):  # a link is refused below, not followed
        return None, [
            Problem(
                r.folder,
                "",
                "run.missing-results",
                "no results.json in the run",
                "copy the run's results.json here, or remove the folder",
            )
        ]
    try:
        text = read_capped(path, MAX_RESULTS_BYTES).decode("utf-8")
    except FileRefused as e:
        return None, [Problem(r.file, "", e.rule, e.message, e.hint)]
    except UnicodeDecodeError as e:
        return None, [
            Problem(
                r.file,
                "",
                "run.json-syntax",
                f"not valid JSON: not UTF-8 ({e.reason} at byte {e.start})",
                "use the file the benchmark wrote",
            )
        ]
    doc, issues = parse_strict(text)  # duplicate keys, NaN, depth: refused as everywhere
    if issues:
        return None, [
            Problem(
                r.file,
                i.pointer,
                "run.json-syntax" if i.rule == "json.syntax" else i.rule,
                i.message,
                i.hint,
            )
            for i in issues
        ]
    if not isinstance(doc, dict):
        return None, [
            Problem(
                r.file,
                "",
                "run.wrong-type",
                "results.json is not a JSON object",
                "results.json holds one object",
            )
        ]
    pairs, error = parse_config_folder(loc.params_folder)
    if error:
        r.add(
            "",
            "run.params-malformed",
            error,
            "name the folder like batch-1+size-1024x1024+steps-20+uly-1+ring-1",
            in_file=False,
        )
    batch, uly, ring = (r.setting(pairs, k, doc) for k in ("batch", "uly", "ring"))
    height, width = r.size(pairs, doc)
    steps = _positive_int(pairs.pop("steps", doc.get("inference_steps")))
    if steps is None:
        r.add(
            "",
            "run.params-missing",
            "no number of inference steps (steps-N)",
            "add steps-N to the folder name",
            in_file=False,
        )
    frames, fps = doc.get("num_frames"), doc.get("fps")
    bad_fps = fps is not None and (
        not isinstance(fps, int | float) or isinstance(fps, bool) or fps <= 0
    )
    if (frames is not None and _positive_int(frames) is None) or bad_fps:
        r.add(
            "/num_frames",
            "run.wrong-type",
            "num_frames and fps must be positive numbers",
            "leave them out for images",
        )
    named = doc.get("gpu_model")
    gpu = loc.gpu_model or (named if isinstance(named, str) else None)
    if gpu is None:
        r.add(
            "",
            "run.no-gpu",
            "the GPU is not known: the run is not below "
            "diffusion/{gpu_family}/current/ and results.json has no gpu_model",
            "put the run in the benchmark root layout, or add gpu_model to results.json",
            in_file=False,
        )
    energies, times, skipped = r.iterations(doc)
    if r.problems:
        return None, r.problems
    assert steps is not None and gpu is not None
    n = len(times)
    date = doc.get("date")
    if date is not None:
        wrong = (
            date_problem(date, r.file, "/date")
            if isinstance(date, str)
            else Problem(
                r.file,
                "/date",
                "run.wrong-type",
                "date is not a string",
                "give the date as the benchmark writes it, YYYYMMDD-HHMMSS",
            )
        )
        if wrong is not None:
            return None, [wrong]
    return DiffusionResults(
        gpu_model=gpu,
        batch_size=batch,
        ulysses_degree=uly,
        ring_degree=ring,
        inference_steps=steps,
        height_px=height,
        width_px=width,
        num_frames=_positive_int(frames),
        fps=float(fps) if isinstance(fps, int | float) else None,  # else None: checked above
        extra=pairs,
        batch_latency_s=math.fsum(times) / n if n else 0.0,
        batch_energy_joules=math.fsum(energies) / n if n else 0.0,
        iterations=n,
        skipped_iterations=skipped,
        date=date if isinstance(date, str) else None,
    ), []


def diffusion_document(
    loc: RunLocation,
    r: DiffusionResults,
    precision: str,
    repeat: int,
    provenance: Mapping[str, str],
) -> JsonObject:
    """The measurement-file document of a diffusion run (not yet validated)."""
    output: JsonObject = {
        "width_px": r.width_px,
        "height_px": r.height_px,
        "inference_steps": r.inference_steps,
    }
    if r.num_frames is not None:
        output["num_frames"] = r.num_frames
    if r.fps is not None:
        output["fps"] = r.fps
    return {
        "schema_version": 1,
        "kind": "diffusion",
        "task": loc.task,
        "model_id": loc.model_id,
        "gpu_model": r.gpu_model,
        "num_gpus": r.num_gpus,
        "weight_precision": precision,
        "serving": {
            "batch_size": r.batch_size,
            "ulysses_degree": r.ulysses_degree,
            "ring_degree": r.ring_degree,
        },
        "output": output,
        "repeat": repeat,
        "metrics": {
            "energy_per_output_joules": r.energy_per_output_joules,
            "avg_power_watts": r.avg_power_watts,
            "throughput_outputs_per_sec": r.throughput_outputs_per_sec,
            "batch_latency_s": r.batch_latency_s,
        },
        "provenance": {**provenance, "source": loc.source},
    }
