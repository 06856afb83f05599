"""Hand-built configurations for ranking tests (values chosen by hand, not computed by code)."""

from __future__ import annotations

from jouleboard.kinds.token_records import Configuration

_counter = 0


def config(
    model: str = "org/a",
    *,
    ept: float = 0.1,
    itl: float = 50.0,
    gpu: str = "H100",
    num_gpus: int = 1,
    seqs: int = 8,
    p90: float | None = None,
    p95: float | None = None,
    p99: float | None = None,
    task: str = "t",
    precision: str = "bfloat16",
    repeat: int = 1,
) -> Configuration:
    """A configuration whose power/throughput agree with ``ept`` (J/token)."""
    global _counter
    _counter += 1
    power = 500.0
    p90 = itl * 1.5 if p90 is None else p90
    p95 = p90 * 1.1 if p95 is None else p95
    p99 = p95 * 1.2 if p99 is None else p99
    return Configuration(
        source=f"m/{model}/{gpu}-{num_gpus}-{seqs}-{_counter}.json",
        task=task,
        model_id=model,
        gpu_model=gpu,
        num_gpus=num_gpus,
        weight_precision=precision,
        max_num_seqs=seqs,
        tensor_parallel=num_gpus,
        expert_parallel=1,
        data_parallel=1,
        repeat=repeat,
        energy_per_token_joules=ept,
        avg_power_watts=power,
        output_throughput_tokens_per_sec=power / ept,
        energy_per_response_joules=ept * 1000,
        avg_output_len_tokens=1000.0,
        avg_batch_size=seqs * 0.95,
        median_itl_ms=itl,
        p90_itl_ms=p90,
        p95_itl_ms=p95,
        p99_itl_ms=p99,
    )
