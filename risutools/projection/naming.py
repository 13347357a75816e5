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

from anyascii import anyascii

_VERSION = re.compile(
    r"[\s(\[【_-]*\b[vV]?(\d{1,6})\.(\d{1,6})(?:\.(\d{1,6}))?\b[)\]】]?"
    r"|[\s(\[_-]*\b[vV](\d{1,6})\b[)\]]?")


def split_version(name: str) -> tuple[str, str | None]:
    """(name without its version numbers, the last one as semver or None)."""
    matches = list(_VERSION.finditer(name))
    if not matches:
        return name, None
    m = matches[-1]
    if m.group(1) is not None:
        parts = [m.group(1), m.group(2), m.group(3) or "0"]
    else:
        parts = [m.group(4), "0", "0"]
    version = ".".join(str(int(p)) for p in parts)
    rest = re.sub(r"\s+", " ", _VERSION.sub(" ", name)).strip()
    return rest, version


def _keep(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return cat[0] in "LN" or ch in " -_."


def slugify(name: str) -> str:
    """ASCII, lowercase, kebab-case; Hangul romanized; emoji and versions dropped."""
    base, _ = split_version(name)
    kept = "".join(ch if _keep(ch) else " " for ch in base)
    ascii_text = anyascii(unicodedata.normalize("NFC", kept))
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if len(slug) > 64:
        slug = slug[:64].rstrip("-")
    return slug


# -- Korean particles -------------------------------------------------------------------
_PAIRS = {"은(는)": ("은", "는"), "이(가)": ("이", "가"), "을(를)": ("을", "를"),
          "과(와)": ("과", "와"), "아(야)": ("아", "야")}
_FALLBACK = re.compile(r"(\S)(은\(는\)|이\(가\)|을\(를\)|과\(와\)|아\(야\)|\(으\)로)")
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


def fix_particles(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        word, fallback = m.group(1), m.group(2)
        final = final_consonant(word)
        if final is None:
            return m.group(0)
        if fallback == "(으)로":
            return word + ("로" if final in (0, 8) else "으로")
        with_final, without = _PAIRS[fallback]
        return word + (with_final if final else without)

    return _FALLBACK.sub(repl, text)
