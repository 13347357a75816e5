"""Which lorebook entries hold Lua (code a module loads from its lorebook at run time).

RisuAI modules such as LightBoard keep Lua files in lorebook entries and run them
with ``load(entry.content)``; builders of cards pack ``<file>.lua`` entries the same
way.  An entry is taken for code when its text reads as Lua (line by line, without
running anything) and the module can run it: the module's own Lua calls a loader
(``load``/``loadstring``/``require``/``dofile``), or the entry is named like a Lua
file (``*.lua``).
"""

from __future__ import annotations

import re

#: a line that starts like a Lua statement (or a comment, or the end of a block)
_LUA_LINE = re.compile(
    r"(?:--|local\s+(?:function\b|[A-Za-z_]\w*\s*(?:[,=<]|$))|function\b[\w\s.:]*\(|end\b[\s)\],;]*$"
    r"|return\b|if\b.*\bthen\b|elseif\b|else$|for\b.*\bdo\b|while\b.*\bdo\b|repeat$|until\b"
    r"|do$|goto\s|break$|[})\]]|[A-Za-z_][\w.:]*(?:\[[^\]\n]{0,80}\])?\s*(?:=[^=]|\(|,)"
    r"|[A-Za-z_][\w.]*\s*\{)")
_STRONG = re.compile(r"^\s*(?:local\s+function\s+\w+\s*\(|local\s+[A-Za-z_]\w*\s*=|"
                     r"function\s+[\w.:]+\s*\(|end\s*[),]*\s*$)", re.MULTILINE)

MIN_LINES = 3
MIN_SHARE = 0.7
MAX_LINES_READ = 20000


def looks_like_lua(text: str) -> bool:
    """True when most non-blank lines of ``text`` start like Lua statements and some
    line is unmistakably Lua (``local x =``, ``function f(``, ``end``)."""
    if not text or "\n" not in text.strip():
        return False
    total = 0
    code = 0
    in_long = False
    for raw in text.splitlines()[:MAX_LINES_READ]:
        line = raw.strip()
        if not line:
            continue
        total += 1
        if in_long:  # inside a long string or comment: counts as code
            code += 1
            if "]]" in line or "]=" in line:
                in_long = False
            continue
        if _LUA_LINE.match(line):
            code += 1
            if ("[[" in line or "[=" in line) and "]]" not in line and "]=]" not in line:
                in_long = True
    if total < MIN_LINES or code < MIN_SHARE * total:
        return False
    return _STRONG.search(text) is not None


def is_lua_file_name(comment: str) -> bool:
    return comment.strip().lower().endswith(".lua")
