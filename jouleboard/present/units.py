"""How a task's output reads: tokens per joule, images per kJ, videos per MJ."""

from __future__ import annotations

from dataclasses import dataclass

from jouleboard.records import TaskInfo

_SCALE_WORDS = {1: "J", 1000: "kJ", 1_000_000: "MJ"}


@dataclass(frozen=True)
class TaskUnits:
    output: str  # token, image, video
    scale_joules: int  # outputs per J (1), per kJ (1000), per MJ (1e6)

    @classmethod
    def of(cls, task: TaskInfo) -> TaskUnits:
        return cls(task.output_unit, task.efficiency_scale_joules)

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
    def energy_label(self) -> str:
        return f"J/{self.output}"

    def efficiency(self, energy_per_output_joules: float) -> float:
        return self.scale_joules / energy_per_output_joules
