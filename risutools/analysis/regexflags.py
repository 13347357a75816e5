"""A RisuAI regex script's ``flag`` field read: the JavaScript flags, the ``<...>``
directives, the letters it does not know (:func:`parse_flags`).  One pass, no pattern."""

from __future__ import annotations

from risutools.printable import quoted

#: the flag letters JavaScript's ``RegExp`` takes (each at most once; ``u`` and ``v`` not
#: together: :func:`~risutools.analysis.regexunicode.unicode_mode_error` says that one)
JS_FLAGS = "dgimsuvy"


def flags_error(flags: str) -> str | None:
    """Why ``new RegExp(pattern, flags)`` throws for ``flags`` given as written (a lorebook
    key's ``/pattern/flags``, a trigger's flags field): a character that is no flag
    letter (``x``, a blank, ``<``), or a letter given twice (``gg``); None when it takes
    them."""
    for i, c in enumerate(flags):
        if c not in JS_FLAGS:
            return f"RegExp refuses the flag {quoted(c)}"
        if c in flags[:i]:
            return f"RegExp refuses the flag {quoted(c)} given twice"
    return None


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
        if c in JS_FLAGS:
            if c not in letters:
                letters.append(c)
        elif not c.isspace() and c not in (",",):
            unknown.append(c)
        i += 1
    return "".join(letters), directives, unknown
