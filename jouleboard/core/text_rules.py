"""Characters that must not appear in names people read, and a safe way to show any name.

Bidi controls (U+202A-U+202E, U+2066-U+2069) reorder what a reader sees, zero-width
characters (U+200B-U+200F, U+2060, U+FEFF) hide differences between two names, and control
characters (newline, NUL, ...) forge lines in reports. Names, nicknames, link hosts and file
names may hold none of them, and neither may any other text field of a registry or a
measurement file (records.Strict applies the rule to every string field); markdown fields may
hold line breaks and tabs, nothing else hidden.
"""

from __future__ import annotations

import unicodedata

# Cc control, Cf format (bidi, zero-width, BOM, soft hyphen, tags), Cs lone surrogate (a
# file name byte that is not UTF-8), Co private use, Zl/Zp line and paragraph separators.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})


# Control characters have no Unicode name; the common ones are named for the report.
_UNNAMED = {
    "\x00": "NUL",
    "\t": "TAB",
    "\n": "LINE FEED",
    "\r": "CARRIAGE RETURN",
    "\x1b": "ESCAPE",
    "\x7f": "DELETE",
}

# What a text of several lines (a markdown field) may hold besides visible characters.
_LINE_BREAKS = frozenset("\n\r\t")


def hidden_characters(text: str, multiline: bool = False) -> list[str]:
    """Each distinct hidden character of ``text``, described as ``U+202E (RIGHT-TO-LEFT
    OVERRIDE)``, in order of first appearance; empty when the text is clean.
    ``multiline``: newline, carriage return and tab are allowed (markdown fields)."""
    if text.isprintable():  # no Other or Separator but the space: none of them (fast)
        return []
    found: list[str] = []
    for ch in text:
        if unicodedata.category(ch) in _HIDDEN_CATEGORIES and not (
            multiline and ch in _LINE_BREAKS
        ):
            described = f"U+{ord(ch):04X} ({unicodedata.name(ch, _UNNAMED.get(ch, 'unnamed'))})"
            if described not in found:
                found.append(described)
    return found


def printable(text: str) -> str:
    """``text`` with every hidden character escaped (``\\n``, ``\\u202e``; a byte that was
    not UTF-8, kept by the OS as a lone surrogate, as ``\\xff``): safe on one report line."""
    if text.isascii() and text.isprintable():  # no control character: nothing to escape
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the undecodable byte code - 0xDC00
            out.append(f"\\x{code - 0xDC00:02x}")
        elif unicodedata.category(ch) in _HIDDEN_CATEGORIES:
            out.append(
                ch.encode("unicode_escape").decode("ascii") if code < 0x10000 else f"\\U{code:08x}"
            )
        else:
            out.append(ch)
    return "".join(out)


# Cyrillic and Greek letters drawn like Latin ones (lower case: keys are case-folded). A
# model named "Qwеn 3 8B" with a Cyrillic е would otherwise pass for "Qwen 3 8B". Only
# look-alikes are mapped, so names that really use Greek (PixArt-Σ) keep their meaning.
_LOOK_ALIKES = str.maketrans(
    {
        "а": "a",
        "в": "b",
        "е": "e",
        "ё": "e",
        "к": "k",
        "м": "m",
        "н": "h",
        "о": "o",
        "р": "p",
        "с": "c",
        "т": "t",
        "у": "y",
        "х": "x",
        "і": "i",
        "ї": "i",
        "ј": "j",
        "ѕ": "s",
        "ԁ": "d",
        "ԛ": "q",
        "ԝ": "w",
        "һ": "h",
        "ӏ": "l",
        "α": "a",
        "β": "b",
        "ε": "e",
        "η": "n",
        "ι": "i",
        "κ": "k",
        "ν": "v",
        "ο": "o",
        "ρ": "p",
        "τ": "t",
        "υ": "u",
        "χ": "x",
        "ζ": "z",
    }
)


def same_name_key(text: str) -> str:
    """What two names must not share to be told apart: compatibility-normalised (NFKC:
    full-width letters become ASCII), case-folded, Cyrillic and Greek look-alikes read as
    the Latin letters they imitate, runs of whitespace as one space."""
    folded = unicodedata.normalize("NFKC", text).casefold().translate(_LOOK_ALIKES)
    return " ".join(folded.split())
