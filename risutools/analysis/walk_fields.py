"""The walk's steps over fields that name other places: a module's MCP server and
``namespace``, a preset's endpoints and ``moduleIntergration``; and the view of a ``.charx``'s
embedded module RisuAI imports.

* ``mcp.url`` (mcp/mcp.ts ``initializeMCPs``): ``stdio:{"command", "args", "env"}`` starts a
  local program (through the Tauri shell); ``internal:fs`` / ``internal:risuai`` /
  ``internal:aiaccess`` are RisuAI's built-in servers (file system, RisuAI's data, AI
  access); anything else is a remote server, named by its host.
* ``namespace`` (modules.ts ``getModuleByIds``): the module is turned on whenever an id equal
  to it is enabled (another module's, a character's, a preset's ``moduleIntergration``).
* a preset's URL fields (db.ts ``botPreset``, ``setPreset``) replace the user's endpoints:
  ``forceReplaceUrl`` (with ``aiModel`` ``reverse_proxy`` the whole prompt is sent there),
  ``forceReplaceUrl2``, ``koboldURL``, ``textgenWebUIStreamURL``,
  ``textgenWebUIBlockingURL``; its ``moduleIntergration`` (comma-separated ids, modules.ts
  ``getModules``) turns on modules.
* a ``.charx`` (characterCards.ts ``importCharacterProcess``): of the embedded module.risum
  RisuAI keeps only ``trigger``, ``regex`` and ``lorebook`` (the card's lowLevelAccess
  governs them); every other field is dropped and never runs.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import replace

from risutools.analysis.luaurls import url_host
from risutools.analysis.seen import Seen
from risutools.formats.model import Module
from risutools.jsonplaces import PARSE_INT
from risutools.printable import display, quoted

#: RisuAI's built-in MCP servers (mcp/mcp.ts): address -> what it gives access to
INTERNAL_MCP = {
    "internal:fs": "file-system access",
    "internal:risuai": "access to RisuAI's data",
    "internal:aiaccess": "AI access",
}
#: how much of a local MCP command line is shown (characters)
COMMAND_SHOWN = 120
#: how much of an ``mcp.url`` is read for a ``stdio:`` command (characters)
MAX_STDIO = 65536
#: a preset's fields RisuAI sends requests to (db.ts ``botPreset``)
PRESET_URL_FIELDS = ("forceReplaceUrl", "forceReplaceUrl2", "koboldURL",
                     "textgenWebUIStreamURL", "textgenWebUIBlockingURL")
#: the fields of an embedded module.risum a ``.charx`` import keeps (with what names it)
CHARX_KEPT = frozenset({"trigger", "regex", "lorebook", "name", "description", "id", "type",
                        "assets"})
#: fields RisuAI ignores on a .charx's module, never reported as ignored (no effect anyway)
CHARX_QUIET = frozenset({"displayOrder", "lowLevelAccess"})
#: at most this many module ids read from ``moduleIntergration``
MAX_MODULE_IDS = 64
_URL = re.compile(r"(?:https?|wss?):[/\\][^\s\"'<>]{1,300}", re.IGNORECASE)


def charx_view(module: Module) -> tuple[Module, list[str]]:
    """What RisuAI imports of ``module``: a ``.charx``'s embedded module keeps only
    ``trigger``, ``regex`` and ``lorebook`` (and its name and id, its assets as read); the
    fields it drops are returned (in key order, those that hold something).  Any other
    component is returned as it is."""
    if module.component_type != "module" or module.card is None:
        return module, []
    data = module.data
    dropped = sorted(k for k in data if isinstance(k, str) and k not in CHARX_KEPT
                     and k not in CHARX_QUIET and data[k] not in (None, "", [], {}, False))
    kept = {k: v for k, v in data.items() if k in CHARX_KEPT or k in CHARX_QUIET}
    return replace(module, data=kept), dropped


def ignored_fields(s: Seen, dropped: list[str]) -> None:
    """The embedded module's fields a ``.charx`` import drops (RA808)."""
    for key in dropped:
        s.fact(s.ignored_fields, key[:80], f"module.risum: /{key[:80]}")
    if dropped:
        s.ignored = (s.tick(), [k[:80] for k in dropped])


def mcp(s: Seen) -> None:
    """An MCP server: a local command (RA804), a built-in server or a remote one (RA802)."""
    address = s.module.mcp_url
    if not address.strip():
        return
    s.cap("mcp.server", "mcp.url")
    kind, shown = mcp_target(address)
    if kind == "remote":
        s.fact(s.net, shown, "mcp.url")
    else:
        for m in _URL.finditer(address[:MAX_STDIO]):
            host = url_host(m.group(0))
            if host:
                s.fact(s.urls, host, "mcp.url")
    s.fact(s.mcp_servers, shown, "mcp.url")
    s.mcp = (s.tick(), kind, shown)


def mcp_target(address: str) -> tuple[str, str]:
    """(kind, how it is shown) of an ``mcp.url``: ``local`` (a command, shown escaped and
    cut at COMMAND_SHOWN), ``internal`` (the address, cut at 60), or ``remote`` (its host)."""
    text = address.strip()
    if text.lower().startswith("stdio:"):
        return "local", "stdio: " + _command(text[len("stdio:"):])
    if text.lower().startswith("internal:"):
        return "internal", text[:60]
    return "remote", url_host(text) or "(unparsed address)"


def _command(spec: str) -> str:
    """The command line of a ``stdio:`` spec (its ``command`` and ``args``, as a shell would
    quote them), escaped by :func:`~risutools.printable.display` and cut at COMMAND_SHOWN;
    the raw spec, quoted, when it is not such JSON."""
    try:
        obj = json.loads(spec[:MAX_STDIO], parse_int=PARSE_INT) if len(spec) <= MAX_STDIO else None
    except (ValueError, RecursionError):
        obj = None
    if not isinstance(obj, dict) or not isinstance(obj.get("command"), str):
        return "(unreadable command) " + quoted(spec[:COMMAND_SHOWN])
    args = obj.get("args")
    parts = [obj["command"]] + ([a if isinstance(a, str) else json.dumps(a)[:40]
                                 for a in args[:32]] if isinstance(args, list) else [])
    line = shlex.join(parts)
    cut = "..." if len(line) > COMMAND_SHOWN else ""
    env = obj.get("env")
    extra = f" (env: {len(env)} variable(s))" if isinstance(env, dict) and env else ""
    return display(line[:COMMAND_SHOWN]) + cut + extra


def namespace(s: Seen) -> None:
    """The module's ``namespace``: enabling that id turns this module on too."""
    ns = s.module.namespace
    if ns.strip():
        s.fact(s.namespaces, ns.strip()[:200], "namespace")


def preset_fields(s: Seen) -> None:
    """A preset's endpoints (RA805, network hosts) and the modules it turns on."""
    d = s.module.data
    raw_model = d.get("aiModel")
    model = raw_model if isinstance(raw_model, str) else ""
    for key in PRESET_URL_FIELDS:
        value = d.get(key)
        if not isinstance(value, str) or not value.strip():
            continue
        host = url_host(value.strip()) or "(unparsed address)"
        s.fact(s.net, host, key)
        s.endpoints.append((s.tick(), key, host, model[:40]))
    ids = d.get("moduleIntergration")
    if isinstance(ids, str) and ids.strip():
        pieces = ids.split(",", MAX_MODULE_IDS)[:MAX_MODULE_IDS]  # (never the whole list)
        for mid in [i.strip() for i in pieces if i.strip()]:
            s.fact(s.enabled_modules, mid[:200], "moduleIntergration")
        if s.enabled_modules:
            s.enables = (s.tick(), sorted(s.enabled_modules))

