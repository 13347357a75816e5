"""RA8xx and RA900: the module's fields: a field of the wrong type, an MCP server (a local
command), a field RisuAI never reads that holds code, a preset's endpoints and the modules
it turns on, a .charx's module.risum fields its import drops; and the reader's other
notes."""

from __future__ import annotations

from collections.abc import Iterator

from risutools.analysis.seen import Hit, Seen, reads
from risutools.analysis.walk_fields import INTERNAL_MCP
from risutools.checks.registry import check
from risutools.printable import quoted


@check("RA801", "warning", "module", "wrong-type")
@reads("wrong_types")
def ra801(seen: Seen) -> Iterator[Hit]:
    """A field has the wrong type (JSON pointer given); it is read as empty (a flag RisuAI
    tests as JavaScript does: as it does, the message says which way).

    Why: What RisuAI does with such a field is undefined; the analysis ignores it.

    Fix: Fix the field's type in the module.
    """
    for at, pointer, expected, got, read_as in seen.wrong_types:
        yield Hit(at, f"{pointer} should be {expected} but is {got}; it was read as {read_as}",
                  pointer, pointer)


@check("RA802", "warning", "module", "mcp-server")
@reads("mcp")
def ra802(seen: Seen) -> Iterator[Hit]:
    """The module connects to an MCP server: a remote one (host named) or one of RisuAI's
    built-in servers (`internal:fs`: file-system access, `internal:risuai`: RisuAI's data,
    `internal:aiaccess`: AI access).

    Why: An MCP server is a service the model's tool calls reach: a remote one is handed
    conversation data; a built-in one lets the model read or change what it gives access to.

    Fix: Check that the server is expected and say why in the curator notes.
    """
    if seen.mcp is not None:
        at, kind, shown = seen.mcp
        if kind == "internal":
            what = INTERNAL_MCP.get(shown.lower(), "an unknown kind of access")
            yield Hit(at, f"connects to RisuAI's built-in MCP server {quoted(shown)} ({what})",
                      "mcp.url")
        elif kind == "remote":
            yield Hit(at, f"connects to an MCP server at {shown}", "mcp.url")


@check("RA804", "error", "module", "mcp-local-command")
@reads("mcp")
def ra804(seen: Seen) -> Iterator[Hit]:
    """The module's MCP server is a local command (`mcp.url` `stdio:{...}`): RisuAI starts
    that program on the user's computer (command and arguments shown, cut short).

    Why: The program runs outside RisuAI with the user's rights: it can do anything.

    Fix: Remove the `stdio:` server, or say in the curator notes what the program is and why
    it is needed.
    """
    if seen.mcp is not None and seen.mcp[1] == "local":
        at, _, shown = seen.mcp
        yield Hit(at, f"starts a local program as its MCP server: {shown}", "mcp.url")


@check("RA805", "warning", "module", "preset-endpoint")
@reads("endpoints")
def ra805(seen: Seen) -> Iterator[Hit]:
    """A preset sets an address RisuAI sends requests to (`forceReplaceUrl`,
    `forceReplaceUrl2`, `koboldURL`, `textgenWebUIStreamURL`, `textgenWebUIBlockingURL`;
    host named): applying the preset replaces the user's own.

    Why: With the matching model (`forceReplaceUrl` with `aiModel` `reverse_proxy`, ...) the
    whole prompt, the chat included, goes to that host.

    Fix: Check that the host is expected, or clear the field before sharing the preset.
    """
    for at, key, host, model in seen.endpoints:
        if key == "forceReplaceUrl" and model == "reverse_proxy":
            used = " (aiModel is 'reverse_proxy': every chat request, the whole prompt, goes there)"
        else:
            used = " (when the model that uses it is chosen)"
        yield Hit(at, f"{key} sends requests to {host}{used}", key, f"/{key}")


@check("RA806", "info", "module", "preset-enables-modules")
@reads("enables")
def ra806(seen: Seen) -> Iterator[Hit]:
    """A preset turns modules on (`moduleIntergration`: ids, the first shown): they run with
    every chat that uses the preset, and so does any module whose `namespace` is one of them.

    Why: The modules that run are not only those the user enabled.

    Fix: Name the modules the preset needs in the curator notes.
    """
    if seen.enables is not None:
        at, ids = seen.enables
        shown = ", ".join(quoted(i[:60]) for i in ids[:5]) + (", ..." if len(ids) > 5 else "")
        yield Hit(at, f"turns on {len(ids)} module id(s): {shown}", "moduleIntergration",
                  "/moduleIntergration")


@check("RA807", "info", "module", "charx-ignored-fields")
@reads("ignored")
def ra807(seen: Seen) -> Iterator[Hit]:
    """A `.charx`'s module.risum has fields RisuAI's import drops (it keeps `trigger`,
    `regex` and `lorebook`): they never run and were not analysed.

    Why: Readers of the file may take them (an MCP server, legacy JavaScript, a background,
    toggles) for the card's behaviour.

    Fix: Nothing, if they are not needed; otherwise ship them as a separate module.
    """
    if seen.ignored is not None:
        at, keys = seen.ignored
        shown = ", ".join(quoted(k[:40]) for k in keys[:10]) + (", ..." if len(keys) > 10
                                                                  else "")
        yield Hit(at, f"module.risum fields RisuAI's .charx import drops (never run, not "
                  f"analysed): {shown}", "module.risum")


@check("RA803", "info", "module", "dead-code-field")
@reads("unused")
def ra803(seen: Seen) -> Iterator[Hit]:
    """A field RisuAI never reads holds code (e.g. a module's `lua` text, the code of a
    `triggercode` effect, which RisuAI's trigger runner has no case for, or of a `triggerlua`
    effect after the first of a `display` or `request` trigger, which those runs skip): it
    never runs, and it is not analysed as code that runs.

    Why: Readers of the module may take the text for its behaviour; RisuAI ignores it.

    Fix: Remove the field, or move the code into a trigger (`triggerlua`) if it should run.
    """
    for at, key, size in seen.unused:
        yield Hit(at, f"the field {quoted(key[:40])} holds code ({size} characters) but "
                  "RisuAI never reads this field, so it never runs; it was not analysed as "
                  "running code", f"/{key}", f"/{key}")


@check("RA900", "info", "module", "reader-note")
@reads("anomalies")
def ra900(seen: Seen) -> Iterator[Hit]:
    """Another reader anomaly, passed through.

    Why: The container had something unusual the reader worked around.

    Fix: See the reader note; re-export the module if it looks broken.
    """
    for at, code, message, where in seen.anomalies:
        if not code.startswith("asset"):
            yield Hit(at, f"reader note ({code}): {message}", where)
