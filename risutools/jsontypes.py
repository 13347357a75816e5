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
