"""Slugs, versions and Korean particles for generated documents.

* :func:`split_version` takes a version number out of a module name
  (``"Board 3.4.0"`` -> ``("Board", "3.4.0")``; ``"v0.3"`` -> ``"0.3.0"``): the
  number goes to ``component_version``, never into the slug.
* :func:`slugify` strips emoji and symbols, romanizes Hangul (``anyascii``: the
  Revised Romanization letter values of each syllable; see the README's
  Dependencies table), folds other letters to ASCII and joins words with ``-``.
* :func:`fix_particles` replaces the ``은(는)``-style fallbacks of a Korean sentence
  with the particle that fits the word before it (its final consonant; digits are
  read as Sino-Korean numbers: 1 일 -> 은, 2 이 -> 는, 10 십 -> 은).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from anyascii import anyascii

# a version starts a word, or follows a letter of another script directly ("선택지1.5"):
# never right after a Latin letter, a digit, "_" or "." ("abc1.2", "x2.0.1.3")
_VERSION = re.compile(
    r"[\s(\[【_-]*(?<![A-Za-z0-9_.])[vV]?(\d{1,6})\.(\d{1,6})(?:\.(\d{1,6}))?\b[)\]】]?"
    r"|[\s(\[_-]*(?<![A-Za-z0-9_.])[vV](\d{1,6})\b[)\]]?")
#: :data:`_VERSION` without its leading run of separators, which is found by walking back
#: from each match (:func:`_versions`): the pattern itself, tried at every offset of a long
#: run of separators, read the whole run each time (a name of 20,000 "-": 12 s)
_CORE = re.compile(
    r"(?<![A-Za-z0-9_.])(?:[vV]?(\d{1,6})\.(\d{1,6})(?:\.(\d{1,6}))?\b[)\]】]?"
    r"|[vV](\d{1,6})\b[)\]]?)")
#: what may stand before a version (and goes with it): ``_VERSION``'s first alternative's
#: separators (whitespace too), and its second's (no "【")
_BEFORE = ("([【_-", "([_-")


def _versions(name: str) -> list[tuple[int, int, re.Match[str]]]:
    """What ``_VERSION.finditer(name)`` finds, in linear time: (start, end, the match of
    the version itself) each; the separators before a version are its own back to the
    previous one's end."""
    out: list[tuple[int, int, re.Match[str]]] = []
    floor = 0
    for m in _CORE.finditer(name):
        before = _BEFORE[m.group(1) is None]
        start = m.start()
        while start > floor and (name[start - 1] in before or name[start - 1].isspace()):
            start -= 1
        out.append((start, m.end(), m))
        floor = m.end()
    return out


def fold(text: str) -> str:
    """``text`` on one line: runs of whitespace become one space, ends trimmed.

    (``str.split`` and the regex ``\\s`` take the same characters as whitespace, every
    code point checked by tests/test_fast_paths.py; the split is ~4x quicker.)"""
    return " ".join(text.split())


def split_version(name: str) -> tuple[str, str | None]:
    """(name without its version numbers, the last one as semver or None)."""
    found = _versions(name)
    if not found:
        return name, None
    m = found[-1][2]
    if m.group(1) is not None:
        parts = [m.group(1), m.group(2), m.group(3) or "0"]
    else:
        parts = [m.group(4), "0", "0"]
    version = ".".join(str(int(p)) for p in parts)
    pieces, at = [], 0
    for start, end, _m in found:
        pieces += [name[at:start], " "]
        at = end
    rest = fold("".join(pieces) + name[at:])
    return rest, version


def _keep(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return cat[0] in "LN" or ch in " -_."


class _KeepTable(dict[int, "int | str"]):
    """``str.translate`` table: a character :func:`_keep` keeps maps to itself, any other
    to a space; filled as characters are met (at most ``_KEEP_CACHED`` of them; past
    that each new one is decided without being stored)."""

    def __missing__(self, code: int) -> int | str:
        got: int | str = code if _keep(chr(code)) else " "
        if len(self) < _KEEP_CACHED:
            self[code] = got
        return got


_KEEP_CACHED = 1 << 14
_KEEP = _KeepTable()


def _kebab(text: str) -> str:
    slug = _NOT_SLUG.sub("-", text.lower()).strip("-")
    return slug[:64].rstrip("-") if len(slug) > 64 else slug


def slugify(name: str) -> str:
    """ASCII, lowercase, kebab-case; emoji and versions dropped.

    A name that already has a Latin-letter word (``컨텍스트 커터 (Context Cutter)``) keeps
    that part only (``context-cutter``: the name its author gave for other readers, and
    the ids catalogs already use); a name without one is romanized (``라이트보드`` ->
    ``laiteubodeu``)."""
    return slug_and_version(name)[0]


@lru_cache(maxsize=1024)
def slug_and_version(name: str) -> tuple[str, str | None]:
    """(:func:`slugify` of ``name``, the version :func:`split_version` finds in it)."""
    base, version = split_version(name)
    base = _COPY_SUFFIX.sub("", base)
    if _HANGUL.search(base):  # Hanja glosses beside Hangul would be read as Mandarin
        base = _HAN.sub(" ", base)
    kept = base.translate(_KEEP)  # "".join(ch if _keep(ch) else " " for ch in base)
    folded = _kebab(unicodedata.normalize("NFKD", kept).encode("ascii", "ignore")
                    .decode("ascii"))
    if len(_LATIN.findall(folded)) >= 4 and _LATIN_WORD.search(folded):
        return folded, version
    return _kebab(anyascii(unicodedata.normalize("NFC", kept))), version


_NOT_SLUG = re.compile(r"[^a-z0-9]+")
_LATIN = re.compile(r"[a-z]")
_LATIN_WORD = re.compile(r"[a-z]{3}")
_COPY_SUFFIX = re.compile(r"\s*\(\d{1,3}\)\s*$")  # "name (1)": a downloaded copy
_HANGUL = re.compile("[\uac00-\ud7a3]")
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


# -- Korean particles -------------------------------------------------------------------
_PAIRS = {"은(는)": ("은", "는"), "이(가)": ("이", "가"), "을(를)": ("을", "를"),
          "과(와)": ("과", "와"), "아(야)": ("아", "야")}
_FALLBACKS = "|".join(re.escape(f) for f in (*_PAIRS, "(으)로"))
_FALLBACK = re.compile(rf"(\S)({_FALLBACKS})")
#: a fallback at the start of a text (a template's literal right after a placeholder)
LEADING_FALLBACK = re.compile(_FALLBACKS)
_DIGIT_FINAL = {"0": True, "1": True, "2": False, "3": True, "4": False, "5": False,
                "6": True, "7": True, "8": True, "9": False}


def final_consonant(ch: str) -> int | None:
    """0 = the word ends in a vowel, 8 = ends in ㄹ, other > 0 = another final consonant;
    None when unknown (not Hangul, not a digit)."""
    code = ord(ch)
    if 0xAC00 <= code <= 0xD7A3:
        return (code - 0xAC00) % 28
    if ch in _DIGIT_FINAL:  # Sino-Korean reading; 10, 100, 1000... end in a consonant
        return {"1": 8, "7": 8, "8": 8}.get(ch, 1) if _DIGIT_FINAL[ch] else 0
    if ch.isascii() and ch.isalpha():  # English letters as read aloud
        return 8 if ch in "lLrR" else (1 if ch in "mnMN" else 0)
    return None


def particle(prev: str, fallback: str) -> str | None:
    """The particle that replaces ``fallback`` (``은(는)`` ...) after the character ``prev``;
    None when the reading of ``prev`` is unknown (the fallback stays)."""
    final = final_consonant(prev) if prev else None
    if final is None:
        return None
    if fallback == "(으)로":
        return "로" if final in (0, 8) else "으로"
    with_final, without = _PAIRS[fallback]
    return with_final if final else without


def fix_particles(text: str) -> str:
    """``text`` with each ``은(는)``-style fallback replaced by the particle that fits the
    character before it (see :func:`particle`)."""
    def repl(m: re.Match[str]) -> str:
        word, fallback = m.group(1), m.group(2)
        chosen = particle(word, fallback)
        return m.group(0) if chosen is None else word + chosen

    return _FALLBACK.sub(repl, text)
