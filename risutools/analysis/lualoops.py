"""The strings a ``for ... in`` variable takes over a table of literals (``listenEdit(k, f)``
inside ``for _, k in ipairs({"editInput", "editOutput"}) do``).

One pass over a script's tokens, made once a script and only when a reader asks about a
name it could not resolve otherwise (:func:`loop_literals`: every loop variable's strings
at once); it keeps the tables of string literals assigned to a name and the loops' names,
nothing else.  Linear in the script's tokens.
"""

from __future__ import annotations

from collections.abc import Iterator

from risutools.analysis.lualex import NAME, OP, STR, decode_lua_string, iter_tokens

#: a variable is read as taking at most this many strings (past them: not known)
MAX_LOOP_LITERALS = 16
_ITERATORS = frozenset({"ipairs", "pairs"})

#: a loop over a table's values (``for _, k in``) or keys (``for k in``, ``for k, v in``)
VALUES, KEYS = 1, 0


def loop_literals(code: str) -> dict[str, tuple[str, ...]]:
    """The strings each loop variable of ``code`` takes over a table of string literals:
    ``for _, name in ipairs({"a", "b"})`` (or ``pairs``: the values), ``for name in
    pairs({a = 1, ["b"] = 2})`` (the keys), the table written in the loop or a name assigned
    it once (``local kinds = {"a", "b"}``).  () for a name some loop binds otherwise (a
    numeric loop, another iterator), that is also assigned (``name =``; not in a list of
    targets, ``a, name =``), or that takes more than :data:`MAX_LOOP_LITERALS`."""
    tokens = list(_tokens(code))
    tables, assigned = _literal_tables(tokens)
    out: dict[str, tuple[str, ...]] = {}
    for i, (kind, value) in enumerate(tokens):
        if kind != NAME or value != "for":
            continue
        if i + 2 < len(tokens) and tokens[i + 2] == (OP, "="):  # ``for i = 1, n``
            out[tokens[i + 1][1]] = ()
            continue
        names, at = _loop_names(tokens, i + 1)
        for role, name in enumerate(names):
            got = _iterated(tokens, at, tables, role if role <= VALUES else -1)
            had = out.get(name)
            if got is None or had == () or len(set(got) | set(had or ())) > MAX_LOOP_LITERALS:
                out[name] = ()
            else:
                out[name] = (*(had or ()), *(v for v in got if v not in (had or ())))
    return {k: () if k in assigned else v for k, v in out.items()}


def _tokens(code: str) -> Iterator[tuple[int, str]]:
    """(kind, value) of each token, a string's value decoded."""
    for kind, _s, _e, value, b0, b1 in iter_tokens(code, []):
        if kind == STR and value is None:
            value = decode_lua_string(code, b0, b1)
        yield kind, value or ""


def _loop_names(tokens: list[tuple[int, str]], i: int) -> tuple[list[str], int]:
    """The names a ``for`` at ``i - 1`` binds before its ``in`` (none for a numeric
    loop), and where its ``in`` ends."""
    names: list[str] = []
    while i + 1 < len(tokens) and tokens[i][0] == NAME:
        names.append(tokens[i][1])
        if tokens[i + 1] == (NAME, "in"):
            return names, i + 2
        if tokens[i + 1] != (OP, ","):
            return [], i
        i += 2
    return [], i


def _iterated(tokens: list[tuple[int, str]], i: int, tables: dict[str, list[tuple[str, str]]
              | None], role: int) -> list[str] | None:
    """What a loop variable of ``role`` takes from ``ipairs(T)``/``pairs(T)`` at ``i`` (T a
    table of literals written there or a name assigned one once); None: not known."""
    if role < 0 or i + 3 >= len(tokens) or tokens[i][0] != NAME \
            or tokens[i][1] not in _ITERATORS or tokens[i + 1] != (OP, "("):
        return None
    if tokens[i + 2][0] == NAME and tokens[i + 3] == (OP, ")"):
        table = tables.get(tokens[i + 2][1])
    else:
        table, end = _table(tokens, i + 2)
        if end >= len(tokens) or tokens[end] != (OP, ")"):
            return None
    if table is None:
        return None
    if role == VALUES:
        return [v for k, v in table if not k] if all(not k for k, _v in table) else None
    if tokens[i][1] != "pairs" or not all(k for k, _v in table):
        return None
    return [k for k, _v in table]


def _literal_tables(tokens: list[tuple[int, str]]
                    ) -> tuple[dict[str, list[tuple[str, str]] | None], set[str]]:
    """Each name assigned a table of literals (``kinds = {"a", "b"}``, ``t = {a = 1}``):
    its (key, value) pairs (key "" for a list's item), None for a name assigned twice; and
    every name written before ``=`` (a field's key too)."""
    out: dict[str, list[tuple[str, str]] | None] = {}
    assigned: set[str] = set()
    for i in range(len(tokens) - 1):
        if tokens[i][0] != NAME or tokens[i + 1] != (OP, "="):
            continue
        name = tokens[i][1]
        table = _table(tokens, i + 2)[0]
        out[name] = None if name in out or name in assigned or table is None else table
        assigned.add(name)
    return out, assigned


def _table(tokens: list[tuple[int, str]], i: int) -> tuple[list[tuple[str, str]] | None, int]:
    """The table constructor at ``i`` when each field is a string (``"a"``), or a name or
    string key given a string, number or ``true`` (``a = 1``, ``["b"] = true``): its
    (key, value) pairs, and where it ends; (None, i) for any other."""
    if i >= len(tokens) or tokens[i] != (OP, "{"):
        return None, i
    out: list[tuple[str, str]] = []
    i += 1
    while i < len(tokens) and len(out) <= MAX_LOOP_LITERALS:
        kind, value = tokens[i]
        if (kind, value) == (OP, "}"):
            return out, i + 1
        if kind == OP and value in (",", ";"):
            i += 1
            continue
        key, i = _key(tokens, i)
        if i >= len(tokens) or (tokens[i][0] not in (STR, NAME) and not tokens[i][1][:1].isdigit()):
            return None, i
        if key is None and tokens[i][0] != STR:
            return None, i
        out.append((key or "", tokens[i][1]))
        i += 1
    return None, i


def _key(tokens: list[tuple[int, str]], i: int) -> tuple[str | None, int]:
    """A field's key at ``i`` (``name =``, ``["s"] =``) and where its value starts; (None,
    i) for an item of a list."""
    if i + 1 < len(tokens) and tokens[i][0] == NAME and tokens[i + 1] == (OP, "="):
        return tokens[i][1], i + 2
    if i + 3 < len(tokens) and tokens[i] == (OP, "[") and tokens[i + 1][0] == STR \
            and tokens[i + 2] == (OP, "]") and tokens[i + 3] == (OP, "="):
        return tokens[i + 1][1], i + 4
    return None, i
