"""The texts MC500 reads (:func:`risutools.contract.rules.active_code`): every string below
a document's payload and projection, its values and its keys alike (a key can carry code
as well as a value can: ``{"<script>...</script>": "remembers the page"}``), but the
values of the fields that hold an identifier or a digest (:data:`SKIP_KEYS`).

Three listings of them, one answer: :func:`strings` with each one's place (a key's place
is its member's: its pointer is the key's), for the findings; :func:`texts`, the same
strings in the same order without their places; :func:`all_texts` and
:func:`plain_strings` a level of the tree at a time (in another order, maybe with more),
for the fast path that asks of them all joined.  The loaders' level walk
(:func:`risutools.canonical.plain_levels_texts`) lists them as :func:`plain_strings` does.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from itertools import chain, compress, repeat
from operator import is_
from typing import Any

from risutools.jsonplaces import Place

#: the fields of a section whose string value MC500 does not read (an identifier or a
#: digest, not prose); their keys are read like any other
SKIP_KEYS = {"payload": frozenset({"namespace", "controller"}),
             "projection": frozenset({"prompt_sha256", "harness_compatibility",
                                      "replay_status"})}

#: the exact types of a plain value (what the loaders give: JSON's, and YAML's as checked)
_PLAIN_TYPES = frozenset({dict, list, str, int, float, bool, type(None)})
_MAX_LEVELS = 256


def strings(value: Any, place: Place) -> Iterator[tuple[Place, str, bool]]:
    """(place, string, is a key) for every string below ``value`` at ``place``, each
    member's key (at the member's place) before its value (iterative): a place a string,
    its pointer written only for a finding (:func:`~risutools.jsonplaces.pointer_at`)."""
    stack: list[tuple[Any, Place, bool]] = [(value, place, False)]
    while stack:
        v, p, key = stack.pop()
        if isinstance(v, str):
            yield (p, v, key)
        elif isinstance(v, dict):
            for k in reversed(list(v)):
                stack.append((v[k], (p, k), False))
                stack.append((k, (p, k), True))
        elif isinstance(v, list):
            for i in range(len(v) - 1, -1, -1):
                stack.append((v[i], (p, i), False))


def skipped(place: Place, section: str, key: bool = False) -> bool:
    """Whether the string at ``place`` is the value of a field MC500 skips
    (:data:`SKIP_KEYS`: a member of the section itself); a key never is."""
    return (not key and place is not None and place[0] == (None, section)
            and place[1] in SKIP_KEYS.get(section, ()))


def texts(section: str, value: Any) -> Iterator[str]:
    """The strings :func:`strings` gives for a section (less the skipped fields' values),
    in its order, without their places."""
    skip = SKIP_KEYS.get(section, frozenset())
    stack: list[Any] = [value]
    if isinstance(value, dict):  # a skipped field: its own string only (below it counts)
        stack = []
        for k, v in reversed(value.items()):
            if not (k in skip and isinstance(v, str)):
                stack.append(v)
            stack.append(k)
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            for k, x in reversed(v.items()):
                stack.append(x)
                stack.append(k)
        elif isinstance(v, list):
            stack.extend(reversed(v))


def all_texts(section: str, value: Any) -> list[str]:
    """The strings of :func:`texts` (and maybe more), in another order, a level of the
    tree at a time: one C call lists a level's values (``gc.get_referents``: a dict's
    values when its keys are all ``str``, as a document's are), and the keys of its dicts
    are added.  Order and extra strings do not change MC500's answer: the fast path only
    says that the joined text holds no match, so that no string does; any other answer
    goes to the exact path, string by string.  (A dict with another key, or a subclass,
    lists more: its keys again, its type, its attributes; never less.)"""
    skip = SKIP_KEYS.get(section, frozenset())
    out: list[str] = []
    level = [value]
    if isinstance(value, dict):
        level = [v for k, v in value.items() if not (k in skip and isinstance(v, str))]
        out = [k for k in value if isinstance(k, str)]
    while level:
        out += [v for v in level if isinstance(v, str)]
        out += [k for v in level if isinstance(v, dict) for k in v if isinstance(k, str)]
        level = [v for v in level if isinstance(v, (dict, list))]
        if level:
            level = gc.get_referents(*level)
    return out


def plain_strings(level: list[Any]) -> list[str] | None:
    """Every string in the values of ``level`` and every key of their dicts (and maybe
    more; in another order), a level of the tree at a time, each step a few C passes: the
    types of a level, its strings by exact type, its dicts' keys (``str`` ones), the next
    level by ``gc.get_referents`` handed the whole level (a string, number, boolean or
    None is no container the collector knows: it is skipped; a dict with keys all
    ``str`` gives its values, any other its keys too).  None when a value is not of an
    exact plain type (a subclass, a tuple ...) or the tree is deeper than 256 levels:
    :func:`all_texts` then lists them."""
    out: list[str] = []
    for _ in range(_MAX_LEVELS):
        kinds = [*map(type, level)]  # (once a level: its set, and where its strings are)
        types = set(kinds)
        if not _PLAIN_TYPES.issuperset(types):
            return None
        if str in types:
            out += compress(level, map(is_, kinds, repeat(str)))
        if dict in types:
            keys = [*chain.from_iterable(compress(level, map(is_, kinds, repeat(dict))))]
            out += compress(keys, map(is_, map(type, keys), repeat(str)))
        elif list not in types:
            return out
        level = gc.get_referents(*level)
    return None
