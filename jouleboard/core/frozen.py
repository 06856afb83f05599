"""Frozen, slotted dataclasses that pickle quickly.

A frozen dataclass with ``slots=True`` pickles through the ``__getstate__`` and
``__setstate__`` that :mod:`dataclasses` gives it, which call ``dataclasses.fields()`` on every
object. A rebuild unpickles every configuration the last process kept (1,857 in the bundled
data) and every table of the pages it keeps, and pickles each page's view to key it
(engine/fresh.py): those calls took about 50 ms of an edit rebuild. :func:`quick_pickle`
reads the field names once, when the class is made.
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Any, TypeVar

T = TypeVar("T")


def quick_pickle(cls: type[T]) -> type[T]:
    """Give the frozen, slotted dataclass ``cls`` a ``__getstate__`` that returns its field
    values as a tuple, in field order, and the ``__setstate__`` that sets them back (put it
    above ``@dataclass``: it replaces the pair ``@dataclass`` adds). The setter is written
    out field by field, as :mod:`dataclasses` writes ``__init__``: a loop over the names
    cost twice as much. A state of another length raises ValueError, as a damaged pickle."""
    names = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
    if len(names) < 2 or not all(name.isidentifier() for name in names):
        raise TypeError(
            f"{cls.__name__}: quick_pickle is for classes of two fields or more, each named "
            "as a Python identifier"
        )
    values = operator.attrgetter(*names)  # one call, a tuple: no loop in Python

    def getstate(self: Any) -> tuple[Any, ...]:
        state: tuple[Any, ...] = values(self)
        return state

    unpacked = ", ".join(f"_{i}" for i in range(len(names)))
    source = f"def setstate(self, state):\n    ({unpacked},) = state\n" + "".join(
        f"    _set(self, {name!r}, _{i})\n" for i, name in enumerate(names)
    )
    scope: dict[str, Any] = {"_set": object.__setattr__}
    exec(source, scope)  # (field names only, checked above)
    setstate = scope["setstate"]
    setstate.__qualname__ = f"{cls.__qualname__}.__setstate__"
    setattr(cls, "__getstate__", getstate)  # noqa: B010  (replacing a method)
    setattr(cls, "__setstate__", setstate)  # noqa: B010
    return cls
