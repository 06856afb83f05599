"""How a task's output reads: tokens per joule, images per kJ, videos per MJ."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jouleboard.config.schema import Provenance, TaskInfo

if TYPE_CHECKING:
    from jouleboard.rank.ranking import Rankable as Record

_SCALE_WORDS = {1: "J", 1000: "kJ", 1_000_000: "MJ"}
# What an energy figure includes (config/schema.py Boundary), as tables, labels, charts and
# embeds state it; the glossary's #boundary section explains both.
BOUNDARY_WORDS = {"gpu": "GPU energy only", "system-ac": "whole system at the wall"}
BOUNDARY_SHORT = {"gpu": "GPU energy", "system-ac": "wall energy"}


def boundary_words(boundary: str, short: bool = False) -> str:
    """``GPU energy only`` / ``whole system at the wall`` (``short``: for badges)."""
    return (BOUNDARY_SHORT if short else BOUNDARY_WORDS).get(boundary, boundary)


# The part of each run the energy covers (config/schema.py Window), as every page's footer
# and the home page's intro state it.
WINDOW_WORDS = {
    "steady-state": "in the steady state of each run",
    "whole-run": "over each benchmark run as a whole",
}
MIXED_WINDOWS = (
    "in the steady state of some runs and over whole runs of others (each model page says which)"
)


def window_words(provenances: Iterable[Provenance | None]) -> str:
    """The part of each run the GPU energy of records of ``provenances`` covers, in words:
    ``in the steady state of each run`` when every one says so; "" when one does not say
    (no claim is made)."""
    found = {
        None if p is None else p.window for p in provenances if p is None or p.boundary == "gpu"
    }
    stated = sorted(w for w in found if w is not None)
    if not stated or len(stated) < len(found):
        return ""
    return WINDOW_WORDS[stated[0]] if len(stated) == 1 else MIXED_WINDOWS


def per_thousand(joules_per_response: float, response: str) -> str:
    """Energy a reader can relate to: ``17 Wh per 1,000 responses``, ``7.4 kWh per 1,000
    videos`` (two significant digits; Wh below 1 kWh)."""
    from jouleboard.measure.formats import significant

    wh = joules_per_response * 1000 / 3600
    amount = f"{significant(wh, 2)} Wh" if wh < 1000 else f"{significant(wh / 1000, 2)} kWh"
    return f"{amount} per 1,000 {response}s"


@dataclass(frozen=True)
class TaskUnits:
    output: str  # token, image, video
    scale_joules: int  # outputs per J (1), per kJ (1000), per MJ (1e6)
    response: str = "response"  # what one answer is: a response, an image, a video
    axis: str = ""  # the efficiency axis title, e.g. "Tokens per joule" (default: the label)
    label_unit: str = ""  # the unit on an energy label, e.g. "tokens/J" (default: the label)

    @classmethod
    def of(cls, task: TaskInfo) -> TaskUnits:
        return cls(task.output_unit, task.efficiency_scale_joules, task.response_unit)

    @property
    def efficiency_label(self) -> str:
        """e.g. Tokens/J, Images/kJ."""
        return f"{self.output.capitalize()}s/{_SCALE_WORDS[self.scale_joules]}"

    @property
    def efficiency_words(self) -> str:
        """e.g. tokens per joule, images per kJ."""
        per = {1: "joule", 1000: "kJ", 1_000_000: "MJ"}[self.scale_joules]
        return f"{self.output}s per {per}"

    @property
    def efficiency_axis(self) -> str:
        return self.axis or self.efficiency_label

    @property
    def efficiency_unit(self) -> str:
        return self.label_unit or self.efficiency_label

    @property
    def efficiency_unit_lower(self) -> str:
        """e.g. tokens/J, images/kJ (mid-sentence)."""
        unit = self.efficiency_unit
        return unit[0].lower() + unit[1:]

    @property
    def efficiency_show(self) -> str:
        """How efficiency figures read (a measure/formats.py rule)."""
        return "fixed2" if self.scale_joules == 1 else "sig3"

    @property
    def energy_label(self) -> str:
        return f"J/{self.output}"

    @property
    def energy_scaled_label(self) -> str:
        """Energy per output in the efficiency figure's scale: J/token, kJ/image, MJ/video
        (so the two related columns read on one scale)."""
        return f"{_SCALE_WORDS[self.scale_joules]}/{self.output}"

    def energy_scaled(self, energy_per_output_joules: float) -> float:
        """J, kJ or MJ per output."""
        return energy_per_output_joules / self.scale_joules

    def efficiency(self, energy_per_output_joules: float) -> float:
        """Outputs per J, kJ or MJ."""
        return self.scale_joules / energy_per_output_joules


def efficiency_phrase(units: Iterable[TaskUnits]) -> str:
    """What the tasks rank by, each wording once in order: ``tokens per joule``, ``tokens
    per joule or images per kJ``, ``tokens per joule, images per kJ or videos per MJ``."""
    words = list(dict.fromkeys(u.efficiency_words for u in units)) or ["output per joule"]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def in_words(items: Iterable[str]) -> str:
    """``A``, ``A and B``, ``A, B and C``."""
    names = list(items)
    return " and ".join(filter(None, (", ".join(names[:-1]), names[-1]))) if names else ""


def measured_gpus(default_gpus: Iterable[str], configs: Iterable[Record]) -> list[str]:
    """The default GPUs (in their order) that at least one of ``configs`` ran on: a page
    names only GPUs it has figures for."""
    used = {c.gpu_model for c in configs}
    return [g for g in default_gpus if g in used]
