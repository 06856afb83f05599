"""Located problems: what a contributor needs to fix bad input."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    """One problem in one file: ``file: /json/pointer: rule-id: message (hint)``."""

    file: str
    pointer: str
    rule: str
    message: str
    hint: str = ""

    def __str__(self) -> str:
        text = f"{self.file}: {self.pointer or '/'}: {self.rule}: {self.message}"
        return f"{text} ({self.hint})" if self.hint else text


class ValidationFailed(Exception):
    """Raised with every problem found; nothing has been written when it is raised."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems)
        super().__init__(f"{len(self.problems)} problem(s)")

    def report(self) -> str:
        lines = [str(p) for p in self.problems]
        files = len({p.file for p in self.problems})
        lines.append(f"{len(self.problems)} problem(s) in {files} file(s)")
        return "\n".join(lines)


def pointer(*parts: object) -> str:
    """JSON pointer (RFC 6901) for a path of keys and indices."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)
