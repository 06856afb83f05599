"""What the simulated GPU server (tools/aiperf/sim_server.py) knows about an AIPerf run, from
its ``served.json``: the counters it served and the energy its GPUs really drew. Independent
of the importer: the tests of import-aiperf hold AIPerf's figures (and so jouleboard's) to it.
"""

from __future__ import annotations

import datetime
import itertools
import json
from dataclasses import dataclass
from pathlib import Path


def seconds(text: str) -> float:
    """An export's local ISO time, in seconds since the epoch (as the server logged times)."""
    return datetime.datetime.fromisoformat(text).timestamp()


@dataclass(frozen=True)
class Served:
    scrapes: list[tuple[float, int]]  # (time s, the GPUs' counters as served, summed, mJ)
    loads: list[tuple[float, int]]  # (time s, requests in flight from then on)
    idle_watts: list[float]
    watts_per_request: list[float]

    @classmethod
    def read(cls, path: Path) -> Served:
        log = json.loads(path.read_text())
        model = log["gpu_model"]
        return cls(
            [(s["time_ns"] / 1e9, sum(s["energy_mj"])) for s in log["scrapes"]],
            [(t / 1e9, n) for t, n in log["loads"]],
            model["idle_watts"],
            model["watts_per_request"],
        )

    def power(self, in_flight: int) -> float:
        """All GPUs' power at a load, W."""
        return sum(
            i + w * in_flight for i, w in zip(self.idle_watts, self.watts_per_request, strict=True)
        )

    def energy(self, start: float, end: float) -> float:
        """The energy the GPUs drew between two times, J (exact: power is piecewise constant)."""
        ends = [t for t, _ in self.loads[1:]] + [max(end, self.loads[-1][0])]
        return sum(
            self.power(n) * max(0.0, min(e, end) - max(t, start))
            for (t, n), e in zip(self.loads, ends, strict=True)
        )

    def check(self, export: dict) -> None:
        """AIPerf's total energy is the served counters' change between two scrapes near the
        profiling window, and lies within the window's true energy plus or minus the most
        power times its slack (the longest gap between scrapes + the grace period)."""
        energy = export["nvidia_total_gpu_energy"]["avg"]
        start, end = seconds(export["start_time"]), seconds(export["end_time"])
        to = seconds(export["telemetry_data"]["summary"]["end_time"])
        near = [s for s in self.scrapes if start - 2 <= s[0] <= to + 2]
        changes = {b[1] - a[1] for a, b in itertools.combinations(near, 2)}
        assert round(energy * 1000) in changes, "not a change of the served counters"
        slack = max(b[0] - a[0] for a, b in itertools.pairwise(near)) + (to - end)
        true = self.energy(start, end)
        most = max(self.power(n) for _, n in self.loads)
        assert abs(energy - true) <= most * slack, (energy, true, most * slack)
