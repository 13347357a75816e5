"""The JSON type of a parsed value and its nesting depth: what every reader of untrusted
JSON (the formats' readers, the contract's loaders, the analyser's field checks) says about a
value, in one spelling."""

from __future__ import annotations

import gc
import math
from typing import Any, TypeGuard


def nests_deeper(root: object, limit: int) -> bool:
    """Whether a parsed value nests deeper than ``limit``.

    Containers are visited level by level; ``gc.get_referents`` lists the values of a
    whole level of dicts and lists in one C call (keys may come too: strings, skipped)."""
    level: list[Any] = [root] if type(root) is dict or type(root) is list else []
    depth = 1
    while level:
        if depth > limit:
            return True
        level = [x for x in gc.get_referents(*level) if type(x) is dict or type(x) is list]
        depth += 1
    return False


def js_truthy(value: object) -> bool:
    """JavaScript's truthiness of a JSON value: null, false, 0 and "" (and NaN) are false;
    everything else -- any object or array, empty or not, ``"false"``, ``"0"`` -- is true.
    RisuAI tests its flags so (``if(lowLevelAccess)``, ``if(script.ableFlag)``, ``regex:
    useRegex``), and its importers their fields (``importData.type === 'risu' &&
    importData.data``)."""
    if value is None or value is False or value == "":
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return bool(value) and value == value
    return True


def js_key(key: object) -> str:
    """The property name JavaScript makes of a decoded map's key (``String(key)``, what an
    object keeps): a string itself, ``null``, ``true``/``false``, a number as JavaScript
    writes it (``1.0`` -> ``1``, ``1e21``, ``1e-7``), a byte string as its bytes joined
    by commas (a ``Uint8Array``), anything else as Python writes it."""
    if isinstance(key, str):
        return key
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return js_number_text(key)
    if isinstance(key, (bytes, bytearray)):
        return ",".join(map(str, key))
    return str(key)


def js_number_text(x: float) -> str:
    """JavaScript's ``Number.prototype.toString()`` of ``x`` (ECMA-262 Number::toString:
    the shortest digits that read back, which Python's ``repr`` gives too, laid out as
    JavaScript lays them: positional from 1e-6 to below 1e21, else an exponent)."""
    if x != x:
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    mant, _, exp = repr(abs(x)).partition("e")
    whole, _, frac = mant.partition(".")
    digits = (whole + frac).lstrip("0")
    n = len(whole.lstrip("0")) + (int(exp) if exp else 0)
    if not whole.lstrip("0"):  # (0.000123: the point moves left past the zeros)
        n = (int(exp) if exp else 0) - (len(frac) - len(frac.lstrip("0")))
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = n - 1
    tail = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{tail}e{'+' if e > 0 else '-'}{abs(e)}"


_TYPE_NAMES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
               int: "an integer", float: "a number", type(None): "null"}


def json_type_name(value: object, object_word: str = "an object") -> str:
    """The JSON name of a value's type, with an article ("an array", "null"): the one
    spelling error messages use (schema errors, readers, the analyser; YAML readers pass
    ``object_word="a mapping"``)."""
    if isinstance(value, dict):
        return object_word
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def is_number(value: object) -> TypeGuard[int | float]:
    """A JSON number a range can be checked on: an ``int`` (not a ``bool``), of any size, or
    a finite ``float``.  (``math.isfinite`` of an integer past a float's range raises
    ``OverflowError``: an integer is compared with the bounds as it is, exactly.)"""
    if type(value) is int or (isinstance(value, int) and not isinstance(value, bool)):
        return True
    return isinstance(value, float) and math.isfinite(value)


def finite_float(token: str) -> float:
    """A JSON number token with a fraction or an exponent as a float (``json``'s
    ``parse_float``), refused (``ValueError``) when it overflows to an infinity (``1E400``):
    what it reads as is Infinity, which JSON has no number for, nor a canonical form."""
    value = float(token)
    if math.isinf(value):
        raise ValueError(f"{token[:40]} is out of a JSON number's range (it reads as Infinity)")
    return value
