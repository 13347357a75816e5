"""The walk's reading of the lorebook (part of :func:`risutools.analysis.walk.walk`).

Every entry's text is CBS RisuAI evaluates, and may hold buttons.  An entry whose text
reads as Lua, in a module that can run it (its Lua calls a loader, or the entry is named
``*.lua``), is one of three things (issue 22: what RisuAI really runs):

* **loaded** by the module's own code: an entry name its lookups ask for
  (``getLoreBooks(id, "lib/" .. n .. ".lua")``, followed by
  :func:`risutools.analysis.lorecode.lore_flow`), an entry its Lua names in a string
  (``prelude.import(id, "toon.decode")``), or any entry when a lookup's name is computed
  or the code comes from ``loadLoreBooks``; entries loaded that way may load others in
  turn.  Analysed as code (RA114).
* a **callback** another module loads and calls: its name fits a loader we know
  (LightBoard's backend reads ``<identifier>.lb.on<Name>``), or its code returns a
  function.  Analysed as code (it runs, in the loader's engine), listed under
  ``callbacks``, and never a hook or an entry point of this module.
* **unreached**: nothing loads it.  Listed under ``unreached``, not analysed as code.
"""

from __future__ import annotations

import re
from typing import Any

from risutools.analysis.htmlscan import scan_html
from risutools.analysis.lore_decorators import (
    KEY_DECORATORS,
    Head,
    read_head,
    show_name,
)
from risutools.analysis.lorecode import (
    WILD,
    LoreFlow,
    is_lua_file_name,
    looks_like_lua,
    lore_flow,
    lore_reads,
    pattern_matches,
    show_pattern,
)
from risutools.analysis.lualex import name_positions
from risutools.analysis.model import Callback
from risutools.analysis.seen import LOREBOOK_CODE, Seen
from risutools.analysis.walk_lua import calls_load, read_lua
from risutools.analysis.walk_text import read_cbs, read_pattern, read_risu_buttons
from risutools.jsontypes import js_truthy

#: lorebook names another module's loader reads and then calls: (the names, as a pattern
#: of literal parts and ``*``; the loader).  LightBoard's backend (``loadCallback``) reads
#: ``<identifier>.lb.onInput``, ``.lb.onOutput``, ``.lb.onMutation``, ``.lb.onValidate``
#: (and newer ones of that form) from every enabled module and calls the function each
#: returns.
CALLBACK_LOADERS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("*", ".lb.on", "*"), "LightBoard backend (loadCallback)"),
)
#: each loader's pattern with its longest literal part (a substring test first)
_CALLBACK_NEEDLES = tuple((max(p, key=len), p, loader) for p, loader in CALLBACK_LOADERS)
LOADED, CALLBACK, UNREACHED = "loaded", "callback", "unreached"
#: entries loaded by entries loaded by ... the module's own code: at most this many rounds
MAX_LOAD_ROUNDS = 32
#: a short string literal of Lua (``_string_literals``): each alternative starts with its
#: own character, so ``re`` looks for the next ``"``, ``'`` or ``[`` before trying a match
_LITERAL = re.compile(r""""([^"'\\\n]{1,200})"|'([^"'\\\n]{1,200})'|\[\[([^\]\n]{1,200})\]\]""")
#: the last statement of a chunk that returns a function (``return main``, ``return
#: function``), read on the last 400 characters
#: a button attribute in a lorebook entry's text (``risu-btn``, ``risu-trigger``; HTML reads
#: an attribute's name in any case)
_BUTTON_ATTRIBUTE = re.compile(r"risu-(?:btn|trigger)", re.IGNORECASE)
_RETURNS = re.compile(r"\breturn\s+(function\b|[A-Za-z_]\w*)\s*;?\s*(?:--[^\n]*\s*)*$")


def lorebook(s: Seen) -> None:
    """Every entry: Lua kept as text (loaded, a callback or unreached), CBS, buttons; then
    the entries found to hold code (RA114)."""
    entries = s.module.lorebook
    s.counts["lorebook"] = len(entries)
    code = _code_entries(s, entries)
    fate = _fates(s, entries, code) if code or s.pending_loads else {}
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            s.wrong_type(f"/lorebook/{i}", "an object", e)
            continue
        content = e.get("content")
        if content is not None and not isinstance(content, str):
            s.wrong_type(f"/lorebook/{i}/content", "a string", content)
            continue
        head = _decorators(s, i, content, e) if isinstance(content, str) else None
        if isinstance(content, str):
            _entry(s, i, content, fate.get(i), head)
        if js_truthy(e.get("useRegex")):
            _regex_keys(s, i, e)
    s.lorebook_code_at = s.tick()
    if s.lorebook_code:
        s.counts["lorebook_code"] = len(s.lorebook_code)


def _code_entries(s: Seen, entries: list[Any]) -> dict[int, str]:
    """The entries whose text reads as Lua in a module that can run it (index -> text)."""
    loads_code = bool(s.pending_loads)
    out: dict[int, str] = {}
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            continue
        content = e.get("content")
        if not isinstance(content, str):
            continue
        if not loads_code:
            comment = e.get("comment")
            if not isinstance(comment, str) or not (
                    is_lua_file_name(comment) or _callback_loader(comment) is not None):
                continue
        if looks_like_lua(content):
            out[i] = content
    return out


def _entry(s: Seen, i: int, content: str, fate: str | None, head: Head | None) -> None:
    if fate in (LOADED, CALLBACK):
        s.lorebook_code.append(i)
        read_lua(s, content, f"lorebook[{i}]", LOREBOOK_CODE, callback=fate == CALLBACK)
    elif fate == UNREACHED:
        s.fact(s.unreached, f"lorebook[{i}]", f"lorebook[{i}]")
    if head is not None and head.body_at:
        # RisuAI evaluates only the text after the decorators (their lines kept blank, so
        # that lines are counted as written)
        content = "\n" * content.count("\n", 0, head.body_at) + content[head.body_at:]
    if "{{" in content:
        read_cbs(s, content, f"lorebook[{i}].content")
    if _BUTTON_ATTRIBUTE.search(content):  # (an attribute's name in any case)
        scan = scan_html(content)
        read_risu_buttons(s, scan, f"lorebook[{i}].content")
        for fn, line in scan.risu_triggers:
            ev = f"lorebook[{i}].content line {line}"
            s.hook("hook.manual", ev)
            s.fact(s.buttons, fn, ev)
            s.named_buttons.append((fn, ev))


def _regex_keys(s: Seen, i: int, e: dict[str, Any]) -> None:
    """The keys of an entry with ``useRegex``: RisuAI splits ``key`` (and ``secondkey``)
    on commas and runs each piece written ``/pattern/flags`` on the chat
    (lorebook.svelte.ts ``searchMatch``, each piece as split: blanks after its flags are
    flags ``RegExp`` refuses); a piece in another form is not run by current RisuAI, but is
    still checked for backtracking risks (an older reader may run it)."""
    for field in ("key", "secondkey"):
        text = e.get(field)
        if not isinstance(text, str) or not text.strip():
            continue
        for n, piece in enumerate(p.lstrip() for p in text.split(",")):  # (a blank after
            # the flags is one: ``new RegExp(body, "g ")`` throws)
            where = f"lorebook[{i}].{field}" + (f"[{n}]" if "," in text else "")
            regex_key(s, where, piece)


def regex_key(s: Seen, where: str, piece: str) -> None:
    """One key of an entry with ``useRegex`` (see :func:`_regex_keys`)."""
    body, slash, flags = piece[1:].rpartition("/")
    if piece.startswith("/") and slash and flags:  # (``new RegExp(body, flags)``: flags as
        read_pattern(s, where, body, flags, verbatim=True)  # written, refused ones RA202)
    elif piece:
        read_pattern(s, where, piece, "", risks_only=True)


def _decorators(s: Seen, i: int, content: str, e: dict[str, Any]) -> Head | None:
    """The decorators at the head of an entry's text (:mod:`lore_decorators`): each one a
    ``lore_decorators`` fact; an injection into a part of the prompt (``@@inject_at``) is
    ``request.write``, into another entry (``@@inject_lore``) ``lorebook.write``, both a
    ``lore_injections`` fact; the keys of ``@@additional_keys``/``@@exclude_keys`` are
    patterns when the entry has ``useRegex``.  At most ``MAX_DECORATORS`` lines a module."""
    if not content.lstrip().startswith("@@"):
        return None
    if s.decorator_budget <= 0:
        s.counts["decorators_unread"] = s.counts.get("decorators_unread", 0) + 1
        return None
    head, s.decorator_budget = read_head(content, s.decorator_budget)
    where = f"lorebook[{i}].content"
    s.counts["decorators"] = s.counts.get("decorators", 0) + len(head.applied)
    for d in head.applied:
        s.fact(s.lore_decorators, d.name, f"{where} line {d.line}")
        if d.name in KEY_DECORATORS and js_truthy(e.get("useRegex")):
            for n, piece in enumerate(d.args[:64]):
                regex_key(s, f"{where} line {d.line} @@{d.name}[{n}]", piece)
    for name, line in head.unknown:
        s.fact(s.lore_decorators, f"{show_name(name)} (unknown)", f"{where} line {line}")
    inj = head.injection
    if inj is not None:
        ev = f"{where} line {inj.line}"
        target = inj.location.replace("\n", " ")[:80]
        kind = "lorebook" if inj.lore else "prompt"
        s.fact(s.lore_injections, f"{inj.operation} {kind}:{target or '(nowhere)'}", ev)
        if target:  # an empty location matches no part: RisuAI places the entry nowhere
            s.cap("lorebook.write" if inj.lore else "request.write", ev)
    return head


def _named_lua(comment: Any) -> bool:
    """A lorebook entry named like a Lua file (``*.lua``)."""
    return isinstance(comment, str) and is_lua_file_name(comment)


def _name(e: Any) -> str:
    comment = e.get("comment") if isinstance(e, dict) else None
    return comment if isinstance(comment, str) else ""


def _fates(s: Seen, entries: list[Any], code: dict[int, str]) -> dict[int, str]:
    """Which code entries the module's own code loads (a worklist: an entry loaded may
    load others, at most ``MAX_LOAD_ROUNDS`` rounds; past them every code entry left counts
    as loaded), which another module calls, and which nothing loads."""
    flows = [(where, flow_of(s, where)) for where in sorted(
        {w for _, c, w in s.pending_loads if c.name in ("load", "loadstring")})]
    quoted: set[str] = set()
    for text in s.trigger_lua:
        quoted |= _string_literals(text)
    fate: dict[int, str] = {}
    for rounds in range(MAX_LOAD_ROUNDS + 1):
        reads = lore_reads(flows)
        _loaded_by_name(entries, code, fate, reads.patterns)
        every = rounds == MAX_LOAD_ROUNDS or bool(reads.unresolved) \
            or any(f.lore_loads and not f.lookups for _, f in flows)
        loaded = [i for i in sorted(set(code) - set(fate))
                  if every or _name(entries[i]) in quoted
                  or any(pattern_matches(p, _name(entries[i])) for p in reads.patterns)]
        for i in loaded:
            fate[i] = LOADED
            quoted |= _string_literals(code[i])
            where = f"lorebook[{i}]"
            if "load" in code[i] and calls_load(s, where, code[i]):
                flows.append((where, flow_of(s, where, code[i])))
        if not loaded:
            break
    for i in sorted(set(code) - set(fate)):
        fate[i] = _callback_or_unreached(s, i, _name(entries[i]), code[i])
    return fate


def _loaded_by_name(entries: list[Any], code: dict[int, str], fate: dict[int, str],
                    patterns: list[tuple[str, ...]]) -> None:
    """Entries the module's code loads by their exact name (a lookup's name resolved to
    one literal) are code by construction, whatever their text looks like: added to
    ``code`` (one pass over the entries, a set of the names)."""
    exact = {p[0] for p in patterns if len(p) == 1 and p[0] != WILD}
    if not exact:
        return
    for i, e in enumerate(entries):
        if i not in code and i not in fate and isinstance(e, dict) \
                and isinstance(e.get("content"), str) and e["content"].strip() \
                and _name(e) in exact:
            code[i] = e["content"]


def flow_of(s: Seen, where: str, code: str | None = None) -> LoreFlow:
    """:func:`lore_flow` of a script, made once (``sort_loads`` reads it again)."""
    got = s.flows.get(where)
    if got is None:
        got = s.flows[where] = lore_flow(code if code is not None else s.lua_sources[where])
    return got


def _string_literals(text: str) -> set[str]:
    """The short strings a Lua text writes (``"name"``, ``'name'``, ``[[name]]``, at most 200
    characters, no escape): the entry names it may load (one linear search, our own
    pattern)."""
    return {a or b or c for a, b, c in _LITERAL.findall(text)}


def _callback_or_unreached(s: Seen, i: int, name: str, code: str) -> str:
    known = _callback_loader(name)
    if known is not None:
        pattern, loader = known
        s.callbacks.append(Callback(i, name, loader, show_pattern(pattern)))
        return CALLBACK
    if _returns_function(code):
        s.callbacks.append(Callback(i, name))
        return CALLBACK
    return UNREACHED


def _callback_loader(name: str) -> tuple[tuple[str, ...], str] | None:
    """The loader of another module known to read entries of this name (see
    CALLBACK_LOADERS), or None."""
    for needle, pattern, loader in _CALLBACK_NEEDLES:
        if needle in name and pattern_matches(pattern, name):
            return pattern, loader
    return None


def _returns_function(code: str) -> bool:
    """Whether the chunk ends by returning a function (``return function`` or ``return f``
    with ``f`` a function it defines)."""
    m = _RETURNS.search(code, max(0, len(code) - 400))
    if m is None:
        return False
    name = m.group(1)
    return name == "function" or _defines_function(code, name)


def _defines_function(code: str, name: str) -> bool:
    """Whether ``code`` holds ``function name(`` or ``name = function`` (plain string
    searches: no pattern is made of module text)."""
    for i in name_positions(code, name):
        end = i + len(name)
        after = code[end:end + 40].lstrip()
        if after.startswith("(") and code[max(0, i - 40):i].rstrip().endswith("function"):
            return True
        if after.startswith("=") and after[1:].lstrip().startswith("function"):
            return True
    return False
