"""The Lua host API table (``risutools/data/lua_api.yaml``), read once.

One data file says which host functions RisuAI gives Lua, which of them need
``lowLevelAccess`` (RisuAI refuses them silently without it), the capability
each one implies and the chat/global variable it reads or writes.  The analyser
and ``docs/analysis.md`` (the generated table) both read it; nothing else lists
these names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from risutools.datatables import data_table


@dataclass(frozen=True)
class HostFunction:
    """One host function RisuAI gives Lua (a row of lua_api.yaml)."""

    name: str
    privileged: bool
    capability: str | None
    does: str
    state: tuple[str, str] | None  # (chat|global, read|write)
    #: RisuAI refuses it in an editDisplay listener (it checks ScriptingSafeIds)
    needs_safe_id: bool = False


@dataclass(frozen=True)
class LuaApi:
    """The host API table: functions and the entry points RisuAI calls."""

    functions: dict[str, HostFunction]
    entry_points: dict[str, tuple[str, ...]]  # global function RisuAI calls -> its hooks


@cache
def lua_api() -> LuaApi:
    data = data_table("lua_api.yaml")
    funcs: dict[str, HostFunction] = {}
    for name, spec in (data.get("functions") or {}).items():
        state = None
        raw = spec.get("state")
        if isinstance(raw, str):
            scope, mode = raw.split()
            state = (scope, mode)
        cap = spec.get("capability")
        funcs[str(name)] = HostFunction(str(name), spec.get("privileged") is True,
                                        cap if isinstance(cap, str) else None,
                                        str(spec.get("does", "")), state,
                                        spec.get("safe_id") is True)
    entries = {str(k): tuple(map(str, v)) if isinstance(v, list) else (str(v),)
               for k, v in (data.get("entry_points") or {}).items()}
    return LuaApi(funcs, entries)


def markdown_table() -> str:
    """The table docs/analysis.md shows (generated; a test keeps the docs in step)."""
    rows = ["| function | needs lowLevelAccess | capability | what it does |",
            "| --- | --- | --- | --- |"]
    api = lua_api()
    for f in sorted(api.functions.values(), key=lambda f: (not f.privileged, f.name.lower())):
        rows.append(f"| `{f.name}` | {'**yes**' if f.privileged else 'no'} | "
                    f"{f.capability or '-'} | {f.does} |")
    return "\n".join(rows) + "\n"


_MARKERS = re.compile(r"(<!-- lua-api begin[^\n]*-->\n)(.*?)(<!-- lua-api end -->)", re.S)


def render_docs(text: str) -> str:
    """``text`` with the generated table between its lua-api markers."""
    return _MARKERS.sub(lambda m: m.group(1) + markdown_table() + m.group(3), text)


def main() -> int:
    page = Path(__file__).resolve().parents[2] / "docs" / "analysis.md"
    text = page.read_text(encoding="utf-8")
    new = render_docs(text)
    if new != text:
        page.write_text(new, encoding="utf-8")
        print(f"{page}: table rewritten")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
