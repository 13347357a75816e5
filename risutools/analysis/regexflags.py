"""A RisuAI regex script's ``flag`` field read: the JavaScript flags, the ``<...>``
directives, the letters it does not know (:func:`parse_flags`).  One pass, no pattern."""

from __future__ import annotations


def parse_flags(flag: str) -> tuple[str, list[str], list[str]]:
    """Split a RisuAI regex ``flag`` field into (JS flags, ``<directives>``, unknown letters).

    ``"g<order 1>"`` -> ``("g", ["order 1"], [])``.  Never raises.
    """
    letters: list[str] = []
    directives: list[str] = []
    unknown: list[str] = []
    i = 0
    n = len(flag)
    while i < n:
        c = flag[i]
        if c == "<":
            j = flag.find(">", i + 1)
            if j < 0:
                directives.append(flag[i + 1 :].strip())
                break
            directives.append(flag[i + 1 : j].strip())
            i = j + 1
            continue
        if c in "dgimsuvy":
            if c not in letters:
                letters.append(c)
        elif not c.isspace() and c not in (",",):
            unknown.append(c)
        i += 1
    return "".join(letters), directives, unknown
