"""Names a Lua script reads as values (issue: host functions through an alias).

The scanner (:func:`risutools.analysis.lua.scan_lua`) records the host functions and the
table of globals read as values (``f(request)``, ``{__index = _G}``) and the simple aliases
(``local fetch = request``, ``{go = simpleLLM}``, ``local G = _G``).  :func:`scan_script`
scans a script again with the aliases kept (their calls recorded, their arguments read as
those of the function they stand for), at most ``MAX_ALIAS_ROUNDS`` scans in all (an alias
of an alias is found in the second); :func:`alias_roots` says what each alias stands for.
"""

from __future__ import annotations

from collections.abc import Iterable

from risutools.analysis.lua import ARG_CALLS, ENV_NAMES, LuaScan, scan_lua
from risutools.analysis.lualex import OP, STR, LineIndex, decode_lua_string, iter_tokens

#: at most this many alias names are followed per script (their calls kept); past it, the
#: names read as values still count (a use of the host function), the calls through the
#: aliases left are not seen, and RA601 says so
MAX_ALIASES = 64
#: a script is scanned at most this many times (the first scan, then again with the aliases
#: found kept: an alias of an alias is found in the second)
MAX_ALIAS_ROUNDS = 3
#: the reads ``t["go"]`` of fields holding a host function kept per script
MAX_BRACKET_READS = 1_000
#: an alias stands for at most this many names (``f = request`` here, ``f = LLM`` there)
MAX_ROOTS = 4


def alias_roots(aliases: Iterable[tuple[str, str, int, int]], base: frozenset[str]
                ) -> dict[str, frozenset[str]]:
    """What each alias stands for: the names of ``base`` (kept calls, ``_G``/``_ENV``) it
    reaches through aliases of aliases; the first ``MAX_ALIASES`` alias names only."""
    direct: dict[str, set[str]] = {}
    for name, target, _line, _at in aliases:
        if name == target:
            continue
        if name in direct or len(direct) < MAX_ALIASES:
            got = direct.setdefault(name, set())
            if len(got) < MAX_ROOTS:
                got.add(target)
    roots: dict[str, frozenset[str]] = {}
    for name in direct:
        seen: set[str] = set()
        todo, out = [name], set()
        while todo:
            for target in direct.get(todo.pop(), ()):
                if target not in seen:
                    seen.add(target)
                    if target in base:
                        out.add(target)
                    if target in direct:
                        todo.append(target)
        if out:
            roots[name] = frozenset(sorted(out)[:MAX_ROOTS])
    return roots


def scan_script(code: str, keep: frozenset[str]) -> LuaScan:
    """:func:`scan_lua` keeping the calls of ``keep``, made again with the aliases found
    kept (``need``: as many arguments as the names they stand for), while new ones are
    found, at most ``MAX_ALIAS_ROUNDS`` scans."""
    base = keep | ENV_NAMES
    scan = scan_lua(code, keep)
    kept: frozenset[str] = keep
    for round_no in range(MAX_ALIAS_ROUNDS):
        if not scan.aliases:
            break
        roots = alias_roots(scan.aliases, base)
        if not {a.lstrip(".") for a in roots} - kept:
            break
        if round_no == MAX_ALIAS_ROUNDS - 1:  # aliases of aliases deeper than followed:
            _cut_short(scan)  # their calls unseen, each alias a loose use
            break
        need: dict[str, int] = {}
        for a, rs in roots.items():  # ``.go`` (a field): calls ``t.go(...)`` are kept
            bare = a.lstrip(".")
            need[bare] = max(need.get(bare, 0), *(ARG_CALLS.get(r, 0) for r in rs))
        env = frozenset(a for a, rs in roots.items() if rs & ENV_NAMES and a[0] != ".")
        fields = frozenset(a[1:] for a in roots if a[0] == ".")
        packages = frozenset(a for a, rs in roots.items() if "package" in rs and a[0] != ".")
        kept = keep | frozenset(need)
        scan = scan_lua(code, kept, need=need, env=env, fields=fields, packages=packages)
        if fields:
            _bracket_reads(code, fields, scan)
    if len({a for a, t, _l, _o in scan.aliases if a != t}) > MAX_ALIASES:
        line = scan.aliases[-1][2]
        scan.errors.append((line, f"more than {MAX_ALIASES} aliases of host functions; the "
                                  "calls through the rest were not followed"))
        scan.errors.sort()
    return scan


def _bracket_reads(code: str, fields: frozenset[str], scan: LuaScan) -> None:
    """``t["go"]`` with ``{go = request}``: the field's value read by its key, called or
    not (a loose use: the calls through it are not followed, so a ``request`` this way
    goes to an address not known, RA104).  Read in one more pass over the tokens, made only
    for a script that keeps a host function in a table's field (``fields``)."""
    lines = LineIndex(code)
    window: list[tuple[int, str | None, int]] = []  # the last three tokens
    for kind, s, _e, value, b0, b1 in iter_tokens(code, []):
        if kind == STR and value is None:
            value = decode_lua_string(code, b0, b1)
        window = [*window[-2:], (kind, value, s)]
        if len(window) == 3 and window[2][:2] == (OP, "]") and window[0][:2] == (OP, "["):
            key_kind, key, at = window[1]
            if key_kind == STR and key in fields and len(scan.values) < MAX_BRACKET_READS:
                scan.values.append(("." + key, lines.line(at), at))


def _cut_short(scan: LuaScan) -> None:
    """The scans ended with aliases not yet followed (an alias of an alias of an alias ...):
    the calls through them are not seen, so each alias counts as a loose use of what it
    stands for (a ``request`` whose address is not known: RA104), and RA601 says so."""
    scan.values.extend((target, line, at) for _a, target, line, at in scan.aliases)
    line = scan.aliases[-1][2]
    scan.errors.append((line, f"aliases of aliases deeper than {MAX_ALIAS_ROUNDS - 1} levels; "
                              "the calls through the deeper ones were not followed"))
    scan.errors.sort()
