"""RA8xx and RA900: the module's fields: a field of the wrong type, an MCP server, a field
RisuAI never reads that holds code; and the reader's other notes."""

from __future__ import annotations

from collections.abc import Iterator

from risutools.analysis.seen import Hit, Seen, reads
from risutools.checks.registry import check
from risutools.printable import quoted


@check("RA801", "warning", "module", "wrong-type")
@reads("wrong_types")
def ra801(seen: Seen) -> Iterator[Hit]:
    """A field has the wrong type (JSON pointer given); it is read as empty.

    Why: What RisuAI does with such a field is undefined; the analysis ignores it.

    Fix: Fix the field's type in the module.
    """
    for at, pointer, expected, got in seen.wrong_types:
        yield Hit(at, f"{pointer} should be {expected} but is {got}; it was read as empty",
                  pointer, pointer)


@check("RA802", "warning", "module", "mcp-server")
@reads("mcp")
def ra802(seen: Seen) -> Iterator[Hit]:
    """The module connects to an MCP server (host named).

    Why: An MCP server is a remote service the module hands conversation data to.

    Fix: Check that the host is expected and say why in the curator notes.
    """
    if seen.mcp is not None:
        at, host = seen.mcp
        yield Hit(at, f"connects to an MCP server at {host}", "mcp.url")


@check("RA803", "info", "module", "dead-code-field")
@reads("unused")
def ra803(seen: Seen) -> Iterator[Hit]:
    """A field RisuAI never reads holds code (e.g. a module's `lua` text, or the code of a
    `triggercode` effect, which RisuAI's trigger runner has no case for): it never runs, and
    it is not analysed as code that runs.

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
