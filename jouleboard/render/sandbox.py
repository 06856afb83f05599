"""The sandbox every page renders in: Jinja's immutable sandbox, with bounds on what a
template can make.

A template is code (a site's theme, or a pull request's change to it): Jinja's sandbox
keeps it from reaching anything but the values it is given, and ``range()`` under
``MAX_RANGE`` (100,000) items, but not from making huge values: ``{{ 'x' * 10**9 }}``
rendered for 91 s into a 3 GB site. Here, checked before the value is made:

- a text made by ``*``, ``+``, ``~``, ``%``, a block, a macro or a filter or method that
  pads, joins or replaces holds at most :data:`MAX_TEXT` characters; a list or tuple made
  by ``*`` or ``+`` at most :data:`MAX_ITEMS` items; ``**`` on whole numbers at most
  :data:`MAX_POWER_BITS` bits; ``lipsum()`` a few paragraphs;
- a page holds at most :data:`PAGE_MAX_CHARS` characters (counted as it streams).

Each is a :class:`TemplateTooLarge` raised inside the template, so the page's problem names
the template's file and line. Texts are measured inside lists, tuples and dicts (8 levels
down); a value whose text is made only when it is printed (a namespace holding long texts,
printed whole) is not measured before it is made.
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any, cast

import jinja2
import jinja2.compiler
import jinja2.exceptions
import jinja2.nodes
import jinja2.sandbox
from markupsafe import soft_str

PAGE_MAX_CHARS = 32 * 1024 * 1024  # a page; the default site's largest is ~0.13 MB
MAX_TEXT = 8 * 1024 * 1024  # characters of one text a template makes
MAX_ITEMS = jinja2.sandbox.MAX_RANGE  # items of one list or tuple, as range() has
MAX_POWER_BITS = 4096  # 10**1233: far past any figure a page shows
_LIPSUM_MAX = 100  # lipsum()'s paragraphs and words per paragraph
_WIDTHS = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")  # in "%8.2f"
_FIELD_NUMBERS = re.compile(r"\{[^{}]*?(\d+)[^{}]*\}")  # a width in "{:>80}"


class TemplateTooLarge(jinja2.exceptions.TemplateRuntimeError):
    """What a template would make is over one of this module's bounds; ``filename``: the
    template, where it is not found in the traceback (a page too large)."""

    def __init__(self, message: str, filename: str | None = None) -> None:
        super().__init__(message)
        self.filename = filename


def _refuse(what: str, size: int, bound: int, unit: str = "characters") -> TemplateTooLarge:
    return TemplateTooLarge(
        f"{what} would make {size:,} {unit}, over the {bound:,} a template may make"
    )


def _text_size(value: object, depth: int = 0) -> int:
    """The characters of the texts ``value`` holds: a text's length, a list's, tuple's or
    dict's texts (as far as 8 levels down) in all; 0 for anything else (a number or a
    name is short)."""
    if isinstance(value, str):
        return len(value)
    if depth >= 8:
        return 0
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list | tuple):
        return sum(_text_size(item, depth + 1) for item in value)
    return 0


def _check_text(what: str, size: int, bound: int = MAX_TEXT) -> None:
    if size > bound:
        raise _refuse(what, size, bound)


def _check_repeat(sequence: object, times: object) -> None:
    """``sequence * times`` before it is made."""
    if not isinstance(times, int) or times <= 0:
        return
    if isinstance(sequence, str | bytes):
        _check_text("'*'", len(sequence) * times)
    elif isinstance(sequence, list | tuple):
        if len(sequence) * times > MAX_ITEMS:
            raise _refuse("'*'", len(sequence) * times, MAX_ITEMS, "items")
        _check_text("'*'", _text_size(sequence) * times)


def _both_sequences(left: object, right: object) -> bool:
    return isinstance(left, list | tuple) and isinstance(right, list | tuple)


def _check_power(base: object, exponent: object) -> None:
    """``base ** exponent`` on whole numbers before it is computed (it could take hours)."""
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1:
        bits = exponent * abs(base).bit_length()
        if bits > MAX_POWER_BITS:
            raise _refuse("'**'", bits, MAX_POWER_BITS, "bits")


def _check_percent(text: str, values: object) -> None:
    """``text % values`` before it is made: its widths, and the texts it holds."""
    given = values if isinstance(values, tuple) else (values,)
    if isinstance(values, dict):
        given = tuple(values.values())
    widths = [int(n) for match in _WIDTHS.finditer(text) for n in match.groups() if n and n != "*"]
    if any(n == "*" for match in _WIDTHS.finditer(text) for n in match.groups()):
        widths += [v for v in given if isinstance(v, int)]
    _check_text("'%'", len(text) + sum(map(_text_size, given)) + sum(widths, 0))


def _check_format(text: str, args: Iterable[object]) -> None:
    """``text.format(*args)`` before it is made: the widths in its fields, and its texts."""
    values = list(args)
    widths = [int(n) for n in _FIELD_NUMBERS.findall(text)]
    widths += [v for v in values if isinstance(v, int) and "{" in text]
    _check_text("format", len(text) + sum(map(_text_size, values)) + sum(widths, 0))


def _check_method(method: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """A call of a text's method that can make a long text from a short one."""
    owner = getattr(method, "__self__", None)
    name = getattr(method, "__name__", "")
    if not isinstance(owner, str):
        return
    given = [*args, *kwargs.values()]
    if name in ("center", "ljust", "rjust", "zfill") and given:
        width = given[0]
        _check_text(f"{name}()", width if isinstance(width, int) else 0)
    elif name == "expandtabs":
        size = given[0] if given and isinstance(given[0], int) else 8
        _check_text("expandtabs()", len(owner) * max(size, 1))
    elif name == "replace" and len(given) >= 2 and isinstance(given[0], str):
        new = _text_size(given[1])
        count = owner.count(given[0]) if given[0] else len(owner) + 1
        _check_text("replace()", len(owner) + count * new)
    elif name == "join" and given:
        _check_join(owner, given[0])


def _is_join(method: object) -> bool:
    return isinstance(getattr(method, "__self__", None), str) and (
        getattr(method, "__name__", "") == "join"
    )


def _items(values: Iterable[object]) -> tuple[object, ...]:
    """The items of what a template joins, held (at most :data:`MAX_ITEMS` of them) so
    they can be measured first."""
    held = []
    for value in values:
        held.append(value)
        if len(held) > MAX_ITEMS:
            raise _refuse("join", len(held), MAX_ITEMS, "items")
    return tuple(held)


def _check_join(separator: str, items: object) -> None:
    if isinstance(items, list | tuple):
        gaps = max(len(items) - 1, 0) * len(separator)
        _check_text("join", gaps + sum(len(soft_str(i)) for i in items))


def _bounded_filters(filters: dict[str, Callable[..., Any]]) -> None:
    """Jinja's filters that can make a long text or list from short arguments, checked."""

    def wrap(name: str, check: Callable[..., None]) -> None:
        original = filters[name]

        def bounded(*args: Any, **kwargs: Any) -> Any:
            check(*args, **kwargs)
            return original(*args, **kwargs)

        bounded.__dict__.update(original.__dict__)  # pass_context and the like
        filters[name] = bounded

    def width(value: object, size: object = 80, *_: object, **__: object) -> None:
        _check_text("center", size if isinstance(size, int) else 0)

    def indent(value: object, size: object = 4, *_: object, **__: object) -> None:
        lines = soft_str(value).count("\n") + 1
        pad = size if isinstance(size, int) else _text_size(size)
        _check_text("indent", _text_size(value) + lines * pad)

    def count(value: object, number: object = 1, *_: object, **__: object) -> None:
        if isinstance(number, int) and number > MAX_ITEMS:
            raise _refuse("batch or slice", number, MAX_ITEMS, "items")

    def slices(context: object, value: object, number: object = 1, *_: object) -> None:
        count(value, number)  # (slice is given the evaluation context first)

    def percent(value: object, *args: object, **kwargs: object) -> None:
        _check_percent(soft_str(value), tuple(kwargs.values()) or args)

    original_join = filters["join"]

    def join(context: Any, value: Any, separator: Any = "", *args: Any, **kwargs: Any) -> Any:
        items = value if isinstance(value, list | tuple) else _items(value)
        _check_join(soft_str(separator), items)
        return original_join(context, items, separator, *args, **kwargs)

    join.__dict__.update(original_join.__dict__)  # pass_eval_context
    filters["join"] = join

    def replace(context: object, value: object, old: object, new: object, *_: object) -> None:
        if isinstance(value, str) and isinstance(old, str):
            hits = value.count(old) if old else len(value) + 1
            _check_text("replace", len(value) + hits * _text_size(soft_str(new)))

    for name, check in (
        ("center", width),
        ("indent", indent),
        ("batch", count),
        ("slice", slices),
        ("format", percent),
        ("replace", replace),
    ):
        wrap(name, check)


def _bounded_lipsum(original: Callable[..., str]) -> Callable[..., str]:
    def lipsum(*args: object, **kwargs: object) -> str:
        for value in (*args, *kwargs.values()):
            if isinstance(value, int) and not isinstance(value, bool) and value > _LIPSUM_MAX:
                raise _refuse("lipsum()", value, _LIPSUM_MAX, "paragraphs or words")
        return original(*args, **kwargs)

    return lipsum


class _CodeGenerator(jinja2.compiler.CodeGenerator):
    """Jinja's code generator, with ``a ~ b`` joined by :meth:`Sandbox.joined`, which
    measures the parts first (Jinja joins them with a function no environment can
    replace)."""

    @jinja2.compiler.optimizeconst
    def visit_Concat(self, node: jinja2.nodes.Concat, frame: jinja2.compiler.Frame) -> None:
        if frame.eval_ctx.volatile:
            join = "(markup_join if context.eval_ctx.volatile else str_join)"
        elif frame.eval_ctx.autoescape:
            join = "markup_join"
        else:
            join = "str_join"
        self.write(f"environment.joined({join}, (")
        for part in node.nodes:
            self.visit(part, frame)
            self.write(", ")
        self.write("))")


class Sandbox(jinja2.sandbox.ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox, with each attribute's verdict kept, and the bounds of
    this module. The sandbox's rules look only at the object's type and the attribute's
    name, and asking them again for each of the ~200,000 attribute reads of the default
    site's pages tripled its render time."""

    code_generator_class = _CodeGenerator
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(
        self, loader: jinja2.BaseLoader, undefined: type[jinja2.Undefined], **flags: bool
    ) -> None:
        """Jinja's options: the loader, the undefined type, and on/off flags
        (``autoescape``, ``trim_blocks``...)."""
        super().__init__(loader=loader, undefined=undefined, **flags)
        self._safe: dict[tuple[type, str], bool] = {}
        self.concat = self._concat  # type: ignore[method-assign]  # blocks, macros, calls
        _bounded_filters(self.filters)
        self.globals["lipsum"] = _bounded_lipsum(cast(Callable[..., str], self.globals["lipsum"]))

    def is_safe_attribute(self, obj: object, attr: str, value: object) -> bool:
        key = (type(obj), attr)
        safe = self._safe.get(key)
        if safe is None:
            safe = self._safe[key] = super().is_safe_attribute(obj, attr, value)
        return safe

    def call_binop(
        self, context: jinja2.runtime.Context, operator: str, left: Any, right: Any
    ) -> Any:
        if operator == "*":
            _check_repeat(left, right)
            _check_repeat(right, left)
        elif operator == "**":
            _check_power(left, right)
        elif operator == "+":
            items = len(left) + len(right) if _both_sequences(left, right) else 0
            if items > MAX_ITEMS:
                raise _refuse("'+'", items, MAX_ITEMS, "items")
            _check_text("'+'", _text_size(left) + _text_size(right))
        elif operator == "%" and isinstance(left, str):
            _check_percent(left, right)
        return super().call_binop(context, operator, left, right)

    def call(self, context: jinja2.runtime.Context, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        if _is_join(obj) and args and not isinstance(args[0], list | tuple):
            args = (_items(args[0]), *args[1:])  # measured before the text is made
        _check_method(obj, args, kwargs)
        return super().call(context, obj, *args, **kwargs)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        if not isinstance(value, types.MethodType | types.BuiltinMethodType):  # every read
            return None
        wrapper = super().wrap_str_format(value)
        if wrapper is None:
            return None
        text = str(value.__self__)  # (a str: Jinja wraps only a text's format methods)

        def bounded(*args: Any, **kwargs: Any) -> str:
            given = [*args, *kwargs.values()]
            if given and isinstance(given[0], dict) and value.__name__ == "format_map":
                given = list(given[0].values())
            _check_format(text, given)
            return wrapper(*args, **kwargs)

        return bounded

    @staticmethod
    def joined(join: Callable[[Iterable[object]], str], parts: tuple[object, ...]) -> str:
        """``a ~ b``: the parts as text, joined by Jinja's ``join`` once they fit."""
        texts = [soft_str(part) for part in parts]
        _check_text("'~'", sum(map(len, texts)))
        return join(texts)

    @staticmethod
    def _concat(parts: Iterable[str]) -> str:
        """What a block, macro or call block made, joined once it is known to fit."""
        held = parts if isinstance(parts, list) else list(parts)
        _check_text("a block or macro", sum(map(len, held)), PAGE_MAX_CHARS)
        return "".join(held)


def page_text(chunks: Iterator[str], name: str) -> str:
    """A page's text from its chunks as the template makes them, stopped past
    :data:`PAGE_MAX_CHARS`."""
    held: list[str] = []
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > PAGE_MAX_CHARS:
            raise TemplateTooLarge(
                f"the page is over {PAGE_MAX_CHARS:,} characters (stopped at {size:,}); "
                "a page of the default site is at most ~0.13 MB",
                filename=name,
            )
        held.append(chunk)
    return "".join(held)
