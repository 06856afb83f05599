"""Synthetic jouleboard data at N configurations, drawn from the default data's distributions.

    python benchmarks/synth.py N OUT_DIR [--seed 0] [--reference data] [--validate]

Writes a complete data folder (site.yaml, models.yaml, gpus.yaml, tasks.yaml, releases.yaml,
quality/gpqa.yaml and measurements/<task>/<org>/<model>/*.json) with exactly N
configurations that passes ``python -m jouleboard validate OUT_DIR``.

How it draws (everything from one seeded ``random.Random``, inputs visited in sorted order,
so the same N and seed give byte-identical output):
- each synthetic model copies a real *prototype* model (uniformly drawn from data/): its
  builder, architecture, precision, tasks, and for each task its serving *series* (GPU, GPU
  count, precision, tensor/expert/data parallel degrees) with their max_num_seqs sweeps;
  parameter counts are scaled by a log-normal factor; about a third get a description_md;
- the metrics of each sweep point are the prototype's, scaled per model (efficiency,
  log-normal sigma 0.35), per model and task (output length, latency; sigma 0.15-0.2) and
  per point (sigma 0.05), then made consistent: power clipped to
  [1.1 x 30 W, board limit] x num_gpus, energy_per_token = power / throughput,
  energy_per_response = energy_per_token x avg length, ITL percentiles ordered, average
  batch at most max_num_seqs, the length histogram's edges scaled with the average length;
- about 5% of sweep points are dropped (so configurations per model average ~23, as in the
  real data's 838 / 34 = 24.6: 10k configurations are ~430 models) and ~0.4% get a second
  ``repeat``; models are added until N is reached and the last one is trimmed;
- about 40% of the synthetic models that run gpqa get a published-accuracy entry.

The GPUs and tasks are the real registries (B200, H100; the LLM and multimodal-LLM tasks:
reference files of other kinds, e.g. diffusion, are skipped).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REFERENCE = REPO / "data"
MAX_YAML_BYTES = 2 * 1024 * 1024  # the loader's cap on a registry file
LLM_KINDS = ("llm", "mllm")


@dataclass
class Series:
    """One serving setup of a real model on a task, with its sweep over max_num_seqs."""

    gpu: str
    num_gpus: int
    precision: str
    tp: int
    ep: int
    dp: int
    notes: str
    points: list[dict[str, Any]] = field(default_factory=list)  # measurement docs by seqs


@dataclass
class Reference:
    models: dict[str, dict[str, Any]]
    gpus: dict[str, dict[str, Any]]
    tasks: dict[str, dict[str, Any]]
    site: dict[str, Any]
    quality: dict[str, dict[str, Any]]  # task -> quality file
    # model -> task -> series (sorted)
    series: dict[str, dict[str, list[Series]]]


def load_reference(data_dir: Path) -> Reference:
    def y(name: str) -> Any:
        return yaml.safe_load((data_dir / name).read_text(encoding="utf-8"))

    grouped: dict[tuple[Any, ...], Series] = {}
    for path in sorted((data_dir / "measurements").rglob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("kind") not in LLM_KINDS or "max_num_seqs" not in doc.get("serving", {}):
            continue  # only LLM and multimodal-LLM configurations are synthesised
        s = doc["serving"]
        key = (
            doc["model_id"],
            doc["task"],
            doc["gpu_model"],
            doc["num_gpus"],
            doc["weight_precision"],
            s.get("tensor_parallel", 1),
            s.get("expert_parallel", 1),
            s.get("data_parallel", 1),
            s.get("notes", ""),
        )
        if doc.get("repeat", 1) != 1:
            continue  # repeats are re-created at their own rate
        if key not in grouped:
            grouped[key] = Series(*key[2:])
        grouped[key].points.append(doc)
    series: dict[str, dict[str, list[Series]]] = defaultdict(lambda: defaultdict(list))
    for key in sorted(grouped, key=str):
        ser = grouped[key]
        ser.points.sort(key=lambda d: d["serving"]["max_num_seqs"])
        series[key[0]][key[1]].append(ser)
    quality = {}
    if (data_dir / "quality").is_dir():
        for path in sorted((data_dir / "quality").glob("*.yaml")):
            quality[path.stem] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return Reference(
        models=y("models.yaml"),
        gpus=y("gpus.yaml"),
        tasks=y("tasks.yaml"),
        site=y("site.yaml"),
        quality=quality,
        series={m: dict(t) for m, t in series.items()},
    )


def _ln(rng: random.Random, sigma: float) -> float:
    return math.exp(rng.gauss(0.0, sigma))


def _point(
    rng: random.Random,
    proto: dict[str, Any],
    model_id: str,
    task: str,
    kind: str,
    board_watts: float,
    eff: float,
    lat: float,
    length: float,
    repeat: int,
    provenance: dict[str, Any],
) -> dict[str, Any]:
    """One measurement document derived from a real one, with consistent metrics."""
    m = proto["metrics"]
    s = proto["serving"]
    n = proto["num_gpus"]
    seqs = s["max_num_seqs"]
    power = m["avg_power_watts"] * _ln(rng, 0.08)
    power = min(max(power, n * 30.0 * 1.1), n * board_watts)
    throughput = m["output_throughput_tokens_per_sec"] * eff * _ln(rng, 0.05)
    avg_len = m["avg_output_len_tokens"] * length * _ln(rng, 0.03)
    median = max(m["median_itl_ms"] * lat * _ln(rng, 0.05), 0.6)
    batch = min(m["avg_batch_size"] * _ln(rng, 0.05), float(seqs))
    # the per-model scale factors move throughput and ITL apart: keep throughput within
    # the validator's 0.02-2x of batch / ITL (bounds.throughput-inconsistent), with margin
    rate = batch / (median / 1000.0)
    throughput = min(max(throughput, 0.03 * rate), 1.9 * rate)
    ept = power / throughput
    r90 = max(1.0, m["p90_itl_ms"] / m["median_itl_ms"] * _ln(rng, 0.05))
    r95 = max(r90, m["p95_itl_ms"] / m["median_itl_ms"] * _ln(rng, 0.05))
    r99 = max(r95, m["p99_itl_ms"] / m["median_itl_ms"] * _ln(rng, 0.05))
    p90, p95, p99 = (min(median * r, 110_000.0) for r in (r90, r95, r99))
    doc: dict[str, Any] = {
        "schema_version": 1,
        "kind": kind,
        "task": task,
        "model_id": model_id,
        "gpu_model": proto["gpu_model"],
        "num_gpus": n,
        "weight_precision": proto["weight_precision"],
        "serving": {
            "max_num_seqs": seqs,
            "tensor_parallel": s.get("tensor_parallel", 1),
            "expert_parallel": s.get("expert_parallel", 1),
            "data_parallel": s.get("data_parallel", 1),
            "notes": s.get("notes", ""),
        },
        "repeat": repeat,
        "metrics": {
            "energy_per_token_joules": ept,
            "avg_power_watts": power,
            "output_throughput_tokens_per_sec": throughput,
            "energy_per_response_joules": ept * avg_len,
            "avg_output_len_tokens": avg_len,
            "avg_batch_size": batch,
            "median_itl_ms": median,
            "p90_itl_ms": p90,
            "p95_itl_ms": p95,
            "p99_itl_ms": p99,
        },
        "provenance": provenance,
    }
    hist = proto.get("output_length_distribution")
    if hist:
        edges = [e * length for e in hist["bin_edges_tokens"]]
        counts = [max(0, round(c * _ln(rng, 0.1))) for c in hist["counts"]]
        doc["output_length_distribution"] = {"bin_edges_tokens": edges, "counts": counts}
    return doc


def _file_name(doc: dict[str, Any]) -> str:
    s = doc["serving"]
    name = (
        f"{doc['gpu_model']}-x{doc['num_gpus']}-{doc['weight_precision']}-"
        f"tp{s['tensor_parallel']}-ep{s['expert_parallel']}-dp{s['data_parallel']}-"
        f"seqs{s['max_num_seqs']}"
    )
    return name + (f"-r{doc['repeat']}" if doc["repeat"] != 1 else "") + ".json"


def generate(
    n_configs: int, out: Path, seed: int = 0, reference: Path = DEFAULT_REFERENCE
) -> dict[str, Any]:
    """Write a synthetic data folder with exactly ``n_configs`` configurations."""
    ref = load_reference(reference)
    rng = random.Random(seed)
    if out.exists():
        shutil.rmtree(out)
    (out / "measurements").mkdir(parents=True)
    protos = sorted(m for m in ref.series if m in ref.models)
    task_order = list(ref.tasks)
    data_version = f"synthetic-{n_configs}"
    date = str(ref.site.get("data_date", "2026-01-01"))
    provenance = {
        "dataset": "jouleboard synthetic benchmark data",
        "version": data_version,
        "date": date,
        "license": "CC0-1.0",
        "source": f"benchmarks/synth.py seed={seed} n={n_configs}",
        "citation": "",
    }
    proto_scores = {q["model_id"]: q for q in ref.quality.get("gpqa", {}).get("scores", [])}

    models: dict[str, dict[str, Any]] = {}
    docs: list[dict[str, Any]] = []
    scores: list[dict[str, Any]] = []
    k = 0
    while len(docs) < n_configs:
        k += 1
        proto_id = rng.choice(protos)
        org, _, name = proto_id.partition("/")
        model_id = f"{org}/{name}-syn{k:05d}"
        info = dict(ref.models[proto_id])
        size = _ln(rng, 0.3)
        total = round(info["total_params_billions"] * size, 1) or 0.1
        active = min(total, round(info["active_params_billions"] * size, 1) or 0.1)
        description = ""
        if rng.random() < 0.35:
            description = (
                f"Synthetic variant {k} of **{info['nickname']}** by "
                f"{info['builder']}, generated for scale benchmarks. "
                f"See the [model card](https://huggingface.co/{model_id})."
            )
        models[model_id] = {
            "nickname": f"{info['nickname']} S{k}",
            "builder": info["builder"],
            "total_params_billions": total,
            "active_params_billions": active,
            "architecture": info.get("architecture", ""),
            "weight_precision": info["weight_precision"],
            "links": [{"label": "Hugging Face", "url": f"https://huggingface.co/{model_id}"}],
            "description_md": description,
        }
        eff = _ln(rng, 0.35)
        for task in (t for t in task_order if t in ref.series[proto_id]):
            kind = ref.tasks[task]["kind"]
            lat = _ln(rng, 0.2) / eff**0.5
            length = _ln(rng, 0.15)
            for ser in ref.series[proto_id][task]:
                board = float(ref.gpus[ser.gpu]["board_power_watts"])
                for proto in ser.points:
                    if rng.random() < 0.05:
                        continue
                    docs.append(
                        _point(
                            rng, proto, model_id, task, kind, board, eff, lat, length, 1, provenance
                        )
                    )
                    if rng.random() < 0.004:
                        docs.append(
                            _point(
                                rng,
                                proto,
                                model_id,
                                task,
                                kind,
                                board,
                                eff,
                                lat,
                                length,
                                2,
                                provenance,
                            )
                        )
            if task == "gpqa" and rng.random() < 0.4:
                base = proto_scores.get(proto_id, {}).get(
                    "accuracy_percent", rng.uniform(30.0, 80.0)
                )
                scores.append(
                    {
                        "model_id": model_id,
                        "accuracy_percent": round(min(99.0, max(1.0, base + rng.gauss(0, 4))), 1),
                        "setting": "synthetic score",
                        "source_url": f"https://huggingface.co/{model_id}",
                        "source_detail": "generated by benchmarks/synth.py",
                        "confidence": rng.choice(["high", "medium", "low"]),
                        "matches_energy_run": rng.random() < 0.8,
                    }
                )
    del docs[n_configs:]
    used = {d["model_id"] for d in docs}
    models = {m: v for m, v in models.items() if m in used}
    pairs = {(d["model_id"], d["task"]) for d in docs}
    scores = [s for s in scores if (s["model_id"], "gpqa") in pairs]

    for doc in docs:
        org, _, name = doc["model_id"].partition("/")
        folder = out / "measurements" / doc["task"] / org / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / _file_name(doc)).write_text(
            json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )

    def dump(name: str, value: Any, header: str = "") -> int:
        text = header + yaml.safe_dump(value, sort_keys=True, allow_unicode=True, width=100)
        (out / name).write_text(text, encoding="utf-8")
        return len(text.encode("utf-8"))

    models_bytes = dump(
        "models.yaml", models, f"# Synthetic models (benchmarks/synth.py, seed {seed}).\n"
    )
    dump("gpus.yaml", ref.gpus)
    # tasks keep their file order (the site lists tasks in it); LLM kinds only
    tasks = {t: v for t, v in ref.tasks.items() if v.get("kind") in LLM_KINDS}
    (out / "tasks.yaml").write_text(
        yaml.safe_dump(tasks, sort_keys=False, width=100), encoding="utf-8"
    )
    site = dict(ref.site)
    site.update(
        data_version=data_version,
        data_date=date,
        tagline=f"Synthetic benchmark data: {n_configs} configurations",
    )
    dump("site.yaml", site)
    dump(
        "releases.yaml",
        {
            "releases": [
                {
                    "version": data_version,
                    "date": date,
                    "notes_md": (
                        f"Synthetic data: {n_configs} configurations of {len(models)} models."
                    ),
                }
            ]
        },
    )
    if "gpqa" in ref.tasks:
        (out / "quality").mkdir()
        q = dict(ref.quality.get("gpqa", {"task": "gpqa", "benchmark": "GPQA Diamond"}))
        q["scores"] = scores
        q["note_md"] = "Synthetic accuracy figures for benchmarks."
        dump("quality/gpqa.yaml", q)
    if models_bytes > MAX_YAML_BYTES:
        print(
            f"warning: models.yaml is {models_bytes} bytes, over the loader's "
            f"{MAX_YAML_BYTES}-byte registry cap",
            file=sys.stderr,
        )
    return {
        "configurations": len(docs),
        "models": len(models),
        "model_tasks": len({(d["model_id"], d["task"]) for d in docs}),
        "quality_scores": len(scores),
        "models_yaml_bytes": models_bytes,
        "seed": seed,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("n", type=int, help="number of configurations")
    p.add_argument("out", type=Path, help="data folder to (re)create")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--reference",
        type=Path,
        default=DEFAULT_REFERENCE,
        help="real data folder whose distributions are drawn from (default: data/)",
    )
    p.add_argument(
        "--validate", action="store_true", help="then run `python -m jouleboard validate OUT`"
    )
    args = p.parse_args(argv)
    stats = generate(args.n, args.out, args.seed, args.reference)
    print(json.dumps(stats))
    if args.validate:
        return subprocess.call([sys.executable, "-m", "jouleboard", "validate", str(args.out)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
