"""Hostile modules of the project's own for the analysis scanners (issue 8).

Each builder returns a module object (the ``module`` of a ``risuModule`` JSON export)
that is as hard as we know how to make it for one scanner, at ``size`` characters of
the field it attacks.  Used by tests/test_analysis_hostile.py (under a memory cap) and
bench/bench_analysis.py (peak memory and time, n vs 4n)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MB = 1 << 20


def _lua(code: str) -> dict[str, Any]:
    return {"name": "hostile", "trigger": [{"type": "start", "conditions": [], "effect": [
        {"type": "triggerlua", "code": code}]}]}


def lua_escapes(size: int) -> dict[str, Any]:
    """One string of ``\\n`` escapes (used to cost ~100 bytes per escape)."""
    return _lua('x = "' + "\\n" * (size // 2) + '"\n')


def lua_escaped_quotes_url(size: int) -> dict[str, Any]:
    """A constant that may hold a URL (so it is decoded), all escaped quotes."""
    return _lua('local U = "https:' + '\\"' * (size // 2) + '"\nrequest(U)\n')


def lua_key_escapes(size: int) -> dict[str, Any]:
    """A state key literal (decoded) of numeric escapes."""
    return _lua('getChatVar(id, "' + "\\65" * (size // 3) + '")\n')


def lua_calls(size: int) -> dict[str, Any]:
    """Host calls back to back (each one recorded)."""
    return _lua('getChatVar(id,"k")' * (size // 18))


def js_escapes(size: int) -> dict[str, Any]:
    return {"name": "hostile", "cjs": 'x = "' + "\\n" * (size // 2) + '";\n'}


def js_template(size: int) -> dict[str, Any]:
    return {"name": "hostile", "cjs": "x = `" + "\\`" * (size // 2) + "`;\n"}


def js_regex_classes(size: int) -> dict[str, Any]:
    """A regex literal of classes holding "/".  (No backslashes here: with more than 200
    brackets in the file, the JSON reader's own nesting pre-scan is escape-sensitive.)"""
    return {"name": "hostile", "cjs": "x = /" + "[/]" * (size // 3) + "/g;\n"}


def js_regex_escapes(size: int) -> dict[str, Any]:
    return {"name": "hostile", "cjs": "x = /" + "\\/" * (size // 2) + "/g;\n"}


def cbs_open_close(size: int) -> dict[str, Any]:
    """``{{`` x n then ``}}`` x n: nested past the depth bound, bodies as long as the text."""
    return {"name": "hostile", "lorebook": [{"content": "{{" * (size // 4) + "}}" * (size // 4)}]}


def cbs_deep_tags(size: int) -> dict[str, Any]:
    unit = "{{getvar::" * 60 + "x" + "}}" * 60
    return {"name": "hostile", "backgroundEmbedding": unit * (size // len(unit))}


def toggles_many(size: int) -> dict[str, Any]:
    lines = []
    total = 0
    i = 0
    while total < size:
        line = f"k{i}=Label {i}\n"
        lines.append(line)
        total += len(line)
        i += 1
    return {"name": "hostile", "customModuleToggle": "".join(lines)}


def regex_patterns(size: int) -> dict[str, Any]:
    """Patterns at the checker's 100,000-character bound, ``size`` characters in all."""
    n = 100_000
    pats = [
        "a{" * (n // 2),
        "\\p{" * (n // 3),
        "(?:" * 190 + "(" + "|".join(chr(0xAC00 + i) for i in range(48_000)) + ")" + ")*" * 190,
        "(" + "".join(chr(0xAC00 + i) + "*" for i in range(n // 2 - 1)) + ")*",
        "(?:a|b)*" * (n // 8),
    ]
    regex = []
    total = 0
    i = 0
    while total < size:
        p = pats[i % len(pats)]
        regex.append({"comment": "", "in": p, "out": "", "type": "editinput", "flag": "g"})
        total += len(p)
        i += 1
    return {"name": "hostile", "regex": regex}


def wrong_types(size: int) -> dict[str, Any]:
    """Every field of the wrong type, ``size // 100`` times over."""
    odd: list[Any] = [[], {}, 3, 2.5, None, True, [[]], {"a": []}]
    trig = [{"type": odd[i % 8], "conditions": [{"type": odd[(i + 1) % 8], "var": odd[i % 8]}],
             "effect": [{"type": odd[i % 8], "code": odd[(i + 2) % 8]}, {"type": []},
                        {"type": "triggerlua", "code": odd[i % 8]}], "lowLevelAccess": odd[i % 8]}
            for i in range(max(1, size // 100))]
    return {"name": "hostile", "trigger": trig,
            "regex": [{"in": odd[i % 8], "out": odd[(i + 3) % 8], "type": odd[i % 8],
                       "flag": odd[(i + 1) % 8]} for i in range(max(1, size // 100))],
            "lorebook": [{"content": odd[i % 8]} for i in range(max(1, size // 100))],
            "customModuleToggle": [], "backgroundEmbedding": {}, "cjs": 3, "mcp": []}


#: name -> (builder, size used by the test)
def lua_lore_flow(size: int) -> dict[str, Any]:
    """Assignments back to back in a script that loads text built at run time (so the
    lorebook-code flow follows every one of them)."""
    line = "v = a .. 'x' .. b\n"
    return _lua("load(v)\n" + line * (size // len(line)))


def lua_helper_calls(size: int) -> dict[str, Any]:
    """A helper with many state calls on its key parameter, called back to back (issue 22:
    each call gives a key to every state call of the helper)."""
    body = "".join(f"  setChatVar(id, k .. '{i}', '1')\n" for i in range(150))
    call = "h(id, 'key')\n"
    return _lua(f"local function h(id, k)\n{body}end\n" + call * (size // len(call)))


def lua_dead_functions(size: int) -> dict[str, Any]:
    """Functions nothing calls, each only named by the next one (issue 22: the search
    for unreached functions)."""
    parts = ["local function f0(id) return getChatVar(id, 'x') end\n"]
    i = 1
    total = 0
    while total < size:
        line = f"local function f{i}(id) return f{i - 1}(id) end\n"
        parts.append(line)
        total += len(line)
        i += 1
    return _lua("".join(parts))


def lua_named_listeners(size: int) -> dict[str, Any]:
    """listenEdit with a handler named, back to back, and a refused call in each handler
    (issue 22: the handler's body runs as that listener)."""
    unit = "local function h(t, d) alertNormal(t, 'x') return d end\nlistenEdit('editDisplay', h)\n"
    return _lua(unit * (size // len(unit)))


def lua_buttons(size: int) -> dict[str, Any]:
    """Buttons written in Lua strings, concatenations and format templates (issue 22)."""
    unit = ("local a = '<b risu-btn=\"go;' .. x .. '\">' .. "
            "string.format('<i risu-trigger=\"F%s\">', y)\n")
    return _lua(unit * (size // len(unit)))


def lore_chain(size: int) -> dict[str, Any]:
    """Lorebook code entries each loading the next by name (issue 22: the entries the
    module's own code loads, round after round)."""
    n = max(2, size // 120)
    entries = [{"comment": f"m{i}.lua", "key": "",
                "content": f"local M = {{}}\nlocal n = load(getLoreBooks(id, 'm{i + 1}.lua')"
                           "[1].content)\nreturn M\n"} for i in range(n)]
    module = _lua("local m = load(getLoreBooks(id, 'm0.lua')[1].content)\n")
    module["lorebook"] = entries
    module["lowLevelAccess"] = True
    return module


def url_slashes(size: int) -> dict[str, Any]:
    # one address whose slashes run for megabytes (a browser reads any number of them)
    return {"name": "hostile", "backgroundEmbedding":
            '<a href="https:' + "\\/" * (size // 2) + 'h.example">x</a> https:' + "/" * size + "h"}


def url_host_text(size: int) -> dict[str, Any]:
    # hosts of megabytes: full-width letters, percent escapes, ignored characters, Hangul
    quarter = size // 4
    return {"name": "hostile", "backgroundEmbedding": " ".join([
        '<img src="https://' + "\uff45" * quarter + '.example">',
        '<img src="https://' + "%41" * (quarter // 3) + '.example">',
        '<img src="//h' + "\u00ad" * quarter + '.example">',
        "https://" + "\ud55c" * quarter + ".example"])}


def url_many_numbers(size: int) -> dict[str, Any]:
    # addresses whose hosts are numbers (read as IPv4 addresses)
    return {"name": "hostile", "backgroundEmbedding": " ".join(
        f'<img src="http://0x{i:x}.0x1.{i % 300}">' for i in range(size // 32))}


CASES: dict[str, tuple[Callable[[int], dict[str, Any]], int]] = {
    "url-slashes": (url_slashes, 4 * MB),
    "url-host-text": (url_host_text, 4 * MB),
    "url-many-numbers": (url_many_numbers, 1 * MB),
    "lua-helper-calls": (lua_helper_calls, 2 * MB),
    "lua-dead-functions": (lua_dead_functions, 2 * MB),
    "lua-named-listeners": (lua_named_listeners, 2 * MB),
    "lua-buttons": (lua_buttons, 2 * MB),
    "lore-chain": (lore_chain, 1 * MB),
    "lua-escapes": (lua_escapes, 12 * MB),
    "lua-escaped-quotes-url": (lua_escaped_quotes_url, 12 * MB),
    "lua-key-escapes": (lua_key_escapes, 12 * MB),
    "lua-calls": (lua_calls, 2 * MB),
    "lua-lore-flow": (lua_lore_flow, 2 * MB),
    "js-escapes": (js_escapes, 12 * MB),
    "js-template": (js_template, 12 * MB),
    "js-regex-classes": (js_regex_classes, 12 * MB),
    "js-regex-escapes": (js_regex_escapes, 12 * MB),
    "cbs-open-close": (cbs_open_close, 2 * MB),
    "cbs-deep-tags": (cbs_deep_tags, 2 * MB),
    "toggles-many": (toggles_many, 1 * MB),
    "regex-patterns": (regex_patterns, 300_000),
    "wrong-types": (wrong_types, 200_000),
}
