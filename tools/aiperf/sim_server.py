"""A simulated GPU inference server on the loopback address, for running the real AIPerf.

Two HTTP servers in one process, sharing one model of the GPUs:
- an OpenAI-compatible server (``POST /v1/chat/completions``, streaming server-sent events,
  one word per chunk; ``GET /v1/models``) whose inter-token latency grows with the number
  of requests in flight, as a batching server's does;
- a metrics endpoint in dcgm-exporter's Prometheus format (``GET /metrics``):
  ``DCGM_FI_DEV_POWER_USAGE`` (W, gauge) and ``DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION`` (mJ,
  counter) per GPU, labelled ``gpu``, ``UUID``, ``pci_bus_id``, ``device``, ``modelName`` and
  ``Hostname`` as dcgm-exporter labels them (the labels AIPerf 0.13.0's DCGM collector reads).

Each GPU draws ``idle_watts + watts_per_request x in-flight requests``; its energy counter
is that power integrated exactly (piecewise constant between changes of the load), so the
energy any window holds is known. Every scrape is logged (time, counters as served, and the
exact energy at that instant) so a test can check AIPerf's figure against the counters.

Standard library only: it runs under any Python 3.11+ (the AIPerf environment's or the
project's).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_WORD_TEXT = (
    "the of and to in is was he for it with as his on be at by had are but from or have an "
    "they which one you were all we her she there would their will when who him been has "
    "more if no out so said what up its about into than them can only other new some could "
    "time these two may then do first any my now such like our over man me even most made "
    "after also did many before must through back years where much your way well down "
    "should because each just those people how too little state good very make world still "
    "own see men work long get here between both life being under never day same another "
    "know while last might us great old year off come since against go came right used take "
    "three light energy joule token watt power grid"
)
WORDS = tuple(_WORD_TEXT.split())


# What an exporter that sees no GPU serves: its own process metrics, no GPU's sample.
NO_GPU_TEXT = "# HELP process_open_fds Open file descriptors.\n# TYPE process_open_fds gauge\n"
NO_GPU_TEXT += "process_open_fds 12\n"


@dataclass(frozen=True)
class GpuModel:
    """How the simulated server behaves: latency (s) and power (W) as the load varies."""

    gpu_names: tuple[str, ...] = ("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3")
    idle_watts: tuple[float, ...] = (118.0, 122.0)  # one per GPU
    watts_per_request: tuple[float, ...] = (11.0, 9.0)  # one per GPU, per request in flight
    prefill_s: float = 0.030  # time to first token at no load
    itl_base_s: float = 0.020  # inter-token latency of a lone request
    itl_per_request_s: float = 0.002  # added per request in flight
    start_energy_mj: tuple[int, ...] = (987_654_321_000, 123_456_789_000)  # counters at start

    def power(self, in_flight: int) -> list[float]:
        return [
            idle + per * in_flight
            for idle, per in zip(self.idle_watts, self.watts_per_request, strict=True)
        ]

    def itl(self, in_flight: int) -> float:
        return self.itl_base_s + self.itl_per_request_s * max(in_flight, 1)


@dataclass
class GpuState:
    """The load and the exact energy counters (J, continuous) of the simulated GPUs."""

    model: GpuModel
    in_flight: int = 0
    energy_j: list[float] = field(default_factory=list)
    last_ns: int = 0
    scrapes: list[dict[str, Any]] = field(default_factory=list)
    loads: list[tuple[int, int]] = field(default_factory=list)  # (time ns, in flight from then)
    lock: threading.Lock = field(default_factory=threading.Lock)
    gpu_samples: bool = True  # False: /metrics answers, but with no GPU's sample
    energy_counter: bool = True  # False: power only, as exporters without the counter
    fail_every: int = 0  # > 0: every n-th chat request fails with HTTP 500
    energy_endpoint: bool = True  # trtllm-serve's /energy_metrics (enable_energy_metrics)
    requests: int = 0

    def __post_init__(self) -> None:
        self.energy_j = [mj / 1000.0 for mj in self.model.start_energy_mj]
        self.start_j = sum(self.energy_j)
        self.last_ns = time.time_ns()
        self.loads.append((self.last_ns, 0))

    def _advance(self, now_ns: int) -> None:
        """Integrate the power drawn since the last change (caller holds the lock)."""
        dt = (now_ns - self.last_ns) / 1e9
        for i, watts in enumerate(self.model.power(self.in_flight)):
            self.energy_j[i] += watts * dt
        self.last_ns = now_ns

    def change_load(self, delta: int) -> int:
        with self.lock:
            now = time.time_ns()
            self._advance(now)
            self.in_flight += delta
            self.loads.append((now, self.in_flight))
            return self.in_flight

    def energy_at_now(self) -> tuple[int, list[float], list[float]]:
        """(time ns, energy J per GPU, power W per GPU) at this instant."""
        with self.lock:
            now = time.time_ns()
            self._advance(now)
            return now, list(self.energy_j), self.model.power(self.in_flight)

    def scrape(self) -> str:
        """The dcgm-exporter text for this instant; the scrape is logged."""
        if not self.gpu_samples:  # an exporter that sees no GPU (only its own metrics)
            return NO_GPU_TEXT
        now, energy, power = self.energy_at_now()
        served = [int(e * 1000.0) for e in energy]  # mJ, whole, as DCGM reports them
        self.scrapes.append({"time_ns": now, "energy_mj": served, "energy_j": energy})
        return dcgm_text(self.model, served if self.energy_counter else [], power)


def energy_between(model: GpuModel, loads: list[tuple[int, int]], a_ns: int, b_ns: int) -> float:
    """The energy (J, all GPUs) the simulated GPUs drew in [a_ns, b_ns], from the load log."""
    total = 0.0
    ends = [t for t, _ in loads[1:]] + [max(b_ns, loads[-1][0])]
    for (t, in_flight), end in zip(loads, ends, strict=True):
        overlap = (min(end, b_ns) - max(t, a_ns)) / 1e9
        if overlap > 0:
            total += sum(model.power(in_flight)) * overlap
    return total


def dcgm_text(model: GpuModel, energy_mj: list[int], power_w: list[float]) -> str:
    """Prometheus exposition text in dcgm-exporter's shape (its metric and label names); no
    energy lines when ``energy_mj`` is empty."""

    def labels(i: int) -> str:
        return (
            f'gpu="{i}",UUID="GPU-5a1d0000-0000-4000-8000-00000000000{i}",'
            f'pci_bus_id="00000000:{0x18 + i:02X}:00.0",device="nvidia{i}",'
            f'modelName="{model.gpu_names[i]}",Hostname="sim-node",'
            'DCGM_FI_DRIVER_VERSION="570.124.06"'
        )

    lines = [
        "# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).",
        "# TYPE DCGM_FI_DEV_POWER_USAGE gauge",
        *(f"DCGM_FI_DEV_POWER_USAGE{{{labels(i)}}} {p:.6f}" for i, p in enumerate(power_w)),
        *(
            [
                "# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since "
                "boot (in mJ).",
                "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter",
            ]
            if energy_mj
            else []
        ),
        *(
            f"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{{labels(i)}}} {e}"
            for i, e in enumerate(energy_mj)
        ),
        "# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).",
        "# TYPE DCGM_FI_DEV_GPU_TEMP gauge",
        *(f"DCGM_FI_DEV_GPU_TEMP{{{labels(i)}}} {41 + i}" for i in range(len(power_w))),
    ]
    return "\n".join(lines) + "\n"


def _chunk(served_name: str, created: int, delta: dict[str, Any], finish: str | None) -> bytes:
    body = {
        "id": "chatcmpl-sim",
        "object": "chat.completion.chunk",
        "created": created,
        "model": served_name,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body)}\n\n".encode()


def _text(content: Any) -> str:
    """A chat message's text: a string, or the text parts of a list of parts."""
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def make_handler(state: GpuState, served_name: str, metrics_only: bool) -> type:
    """A request handler class bound to ``state`` (the OpenAI API, or /metrics alone)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Each streamed token is sent as it is written, as vLLM's server (uvicorn) sends it:
        # with Nagle's algorithm a token written while the last one is unacknowledged waits.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _send(self, status: int, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path == "/metrics" and metrics_only:
                self._send(200, state.scrape().encode(), "text/plain; version=0.0.4")
            elif self.path == "/energy_metrics" and not metrics_only:
                # As trtllm-serve answers: the GPUs' energy since the server started (J, 4
                # decimals) and the server's perf_counter; 503 when monitoring is off.
                if state.energy_endpoint:
                    _, energy, _ = state.energy_at_now()
                    body = {
                        "total_energy_j": round(sum(energy) - state.start_j, 4),
                        "query_time": time.perf_counter(),
                    }
                    self._send(200, json.dumps(body).encode(), "application/json")
                else:
                    body = {"error": "Energy monitoring is not available"}
                    self._send(503, json.dumps(body).encode(), "application/json")
            elif self.path == "/v1/models" and not metrics_only:
                models = {"object": "list", "data": [{"id": served_name, "object": "model"}]}
                self._send(200, json.dumps(models).encode(), "application/json")
            else:
                self._send(404, b"not found\n", "text/plain")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            payload = json.loads(self.rfile.read(length) or b"{}")
            if metrics_only or self.path != "/v1/chat/completions":
                self._send(404, b"not found\n", "text/plain")
                return
            with state.lock:
                state.requests += 1
                failing = state.fail_every > 0 and state.requests % state.fail_every == 0
            if failing:
                error = {"error": {"message": "simulated failure", "type": "server_error"}}
                self._send(500, json.dumps(error).encode(), "application/json")
                return
            tokens = int(payload.get("max_completion_tokens") or payload.get("max_tokens") or 64)
            usage = (payload.get("stream_options") or {}).get("include_usage", False)
            prompt = " ".join(_text(m.get("content")) for m in payload.get("messages", []))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            created = int(time.time())
            in_flight = state.change_load(+1)
            try:
                time.sleep(state.model.prefill_s * (1 + 0.1 * in_flight))
                self.wfile.write(_chunk(served_name, created, {"role": "assistant"}, None))
                for i in range(tokens):
                    if i:
                        time.sleep(state.model.itl(state.in_flight))
                    word = WORDS[(i * 7 + len(prompt)) % len(WORDS)]
                    self.wfile.write(_chunk(served_name, created, {"content": f" {word}"}, None))
                    self.wfile.flush()
                self.wfile.write(_chunk(served_name, created, {}, "stop"))
                if usage:
                    counts = {
                        "prompt_tokens": len(prompt.split()),
                        "completion_tokens": tokens,
                        "total_tokens": len(prompt.split()) + tokens,
                    }
                    body = {
                        "id": "chatcmpl-sim",
                        "object": "chat.completion.chunk",
                        "created": created,
                        "model": served_name,
                        "choices": [],
                        "usage": counts,
                    }
                    self.wfile.write(f"data: {json.dumps(body)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            finally:
                state.change_load(-1)
            self.close_connection = True

    return Handler


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-stream (AIPerf at the end of a phase) is no error."""


class SimulatedServer:
    """Both servers on 127.0.0.1 (ports chosen by the system), started in daemon threads."""

    def __init__(self, model: GpuModel | None = None, served_name: str = "sim-llm") -> None:
        self.state = GpuState(model or GpuModel())
        self.api = _QuietServer(
            ("127.0.0.1", 0), make_handler(self.state, served_name, metrics_only=False)
        )
        self.metrics = _QuietServer(
            ("127.0.0.1", 0), make_handler(self.state, served_name, metrics_only=True)
        )
        for server in (self.api, self.metrics):
            threading.Thread(target=server.serve_forever, daemon=True).start()

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.api.server_address[1]}"

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.metrics.server_address[1]}/metrics"

    def stop(self) -> None:
        for server in (self.api, self.metrics):
            server.shutdown()
            server.server_close()
