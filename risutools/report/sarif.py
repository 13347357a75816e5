"""SARIF 2.1.0 for code scanning (GitHub ``upload-sarif`` and other viewers).

One run; ``tool.driver.rules`` lists, from the check registry, every check of the
families the command reports (validate/verify: MC, analyze: RA; id, name, short
and full description, help, default level); each result has ``ruleId``,
``ruleIndex``, ``level``, ``message.text`` and, when the file is known, a
physical location whose ``artifactLocation.uri`` is relative to the working
directory (``uriBaseId: %SRCROOT%``; a file outside it gets an absolute
``file://`` URI and no base) with ``region.startLine`` when the line is known;
the JSON pointer is a logical location.  A message is plain text as SARIF reads it: a
``[`` or ``]`` is escaped with a backslash (§3.11.6), so no value makes an embedded link a
viewer would follow, and a ``{`` or ``}`` is doubled (§3.11.5), so none makes a placeholder;
the rules' descriptions and help are message strings too (their Markdown braces doubled).
``partialFingerprints`` carries a line-independent hash (rule, file, component, pointer,
message, and a counter for identical findings), so an edit elsewhere in the file does not
re-open the alert.  Input read from standard input (``-``) has no location.  There is no
``helpUri`` (no web page is promised): each rule's ``help`` names ``risutools rule ID``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from risutools import __version__
from risutools.checks.registry import for_command
from risutools.pathnames import name_uri
from risutools.printable import json_text, text_value

STDIN = "-"  # standard input: no location

if TYPE_CHECKING:
    from risutools.contract.validate import Result

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _artifact(file: str) -> dict[str, str]:
    # ``file`` is shown by risutools.pathnames.show_name; the URI percent-encodes the
    # name's own bytes (a CP949 name gives %C7%D1..., not its escaped text)
    p = PurePosixPath(file)
    if p.is_absolute():
        return {"uri": "file://" + name_uri(p.as_posix())}
    return {"uri": name_uri(p.as_posix()), "uriBaseId": "%SRCROOT%"}


def _fingerprint(parts: tuple[str, ...], seen: dict[str, int]) -> str:
    base = hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
    n = seen.get(base, 0) + 1
    seen[base] = n
    return f"{base[:32]}:{n}"


_LEVEL = {"error": "error", "warning": "warning"}  # anything else (info) is "note"

#: what a SARIF message string cannot hold as it is: ``[`` and ``]`` (and a backslash
#: before one), which a viewer reads as an embedded link (§3.11.6: a module's
#: ``[click](https://h)`` in a finding's message would be one), and ``{`` and ``}``, which
#: start a placeholder (§3.11.5: "the characters '{' and '}' SHALL be represented by the
#: character sequences '{{' and '}}'", in plain text and formatted messages alike; a
#: ``{0}`` a module wrote would be replaced by an argument, ``{{user}}`` shown as ``{user}``)
_MARKS = re.compile(r"\\(?=[\[\]])|[\[\]{}]")
_BRACES = re.compile(r"[{}]")


def _escape_mark(m: re.Match[str]) -> str:
    c = m.group()
    return c + c if c in "{}" else "\\" + c


def message_text(text: str) -> str:
    """A plain-text SARIF message string (a result's message, a rule's descriptions and
    help) showing ``text`` as it is: no embedded link (``[``, ``]`` escaped with a
    backslash, as is a backslash before one) and no placeholder (``{``, ``}`` doubled)."""
    if not any(c in text for c in "[]{}"):
        return text
    return _MARKS.sub(_escape_mark, text)


def message_markdown(text: str) -> str:
    """A formatted (Markdown) SARIF message string: ``{`` and ``}`` doubled (§3.11.5); its
    links are Markdown's, written by us."""
    return _BRACES.sub(lambda m: m.group() * 2, text)


def _rules(result: Result) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """``tool.driver.rules`` (every check of the command's families, by id) and each
    one's index."""
    checks = sorted((result.checks or for_command(result.command)).values(), key=lambda c: c.id)
    index = {c.id: i for i, c in enumerate(checks)}
    rules = []
    for r in checks:
        rid = r.id
        rules.append({
            "id": rid,
            "name": r.title,
            "shortDescription": {"text": message_text(r.summary)},
            "fullDescription": {"text": message_text(f"{r.summary} Fix: {r.fix}")},
            # no helpUri: the package has no web address; its page is `risutools rule ID`
            "help": {"text": message_text(f"{r.fix} (`risutools rule {rid}` explains it)"),
                     "markdown": message_markdown(
                         f"**{rid}** {r.summary}\n\nFix: {r.fix}\n\n"
                         f"`risutools rule {rid}` explains it.")},
            "defaultConfiguration": {"level": _LEVEL.get(r.severity, "note")},
        })
    return rules, index


def _results(result: Result, index: dict[str, int]) -> Iterator[dict[str, Any]]:
    """Each finding's result, in order, made as it is asked for."""
    seen: dict[str, int] = {}
    component_of = {(d.file, d.line): d.component_id or "" for d in result.documents}
    for f in result.findings:
        res: dict[str, Any] = {
            "ruleId": f.rule,
            "level": _LEVEL.get(f.severity, "note"),
            "message": {"text": message_text(text_value(f.message))},  # (one line, shown)
        }
        if f.rule in index:
            res["ruleIndex"] = index[f.rule]
        component = component_of.get((f.file or "", f.line), "")
        res["partialFingerprints"] = {"risutoolsFinding/v1": _fingerprint(
            (f.rule, f.file or "", component, f.pointer, f.message), seen)}
        if f.file and f.file != STDIN:
            phys: dict[str, Any] = {
                "artifactLocation": _artifact(f.file),
            }
            if f.line:
                phys["region"] = {"startLine": f.line}
            loc: dict[str, Any] = {"physicalLocation": phys}
            where = f.pointer or f.evidence  # the analyser's findings carry evidence instead
            if where:
                loc["logicalLocations"] = [{"fullyQualifiedName": where, "kind": "member"}]
            res["locations"] = [loc]
        yield res


def _log(rules: list[dict[str, Any]], results: Any) -> dict[str, Any]:
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "risutools",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def sarif_dict(result: Result) -> dict[str, Any]:
    rules, index = _rules(result)
    return _log(rules, list(_results(result, index)))


def render_sarif(result: Result) -> str:
    return "".join(sarif_pieces(result))


#: what stands for the results in the log's text, to be cut out (no rule's text holds it)
_HOLE = "\u0000risutools-sarif-results\u0000"
#: the indentation of a result in the log (``runs[0].results[i]``: four levels deep)
_AT = " " * 8
#: characters of results gathered into one piece
_PIECE = 1 << 20


def sarif_pieces(result: Result) -> Iterator[str]:
    """The log in pieces, written as they are made: the text ``json.dumps(sarif_dict(...),
    ensure_ascii=False, sort_keys=True, indent=2)`` writes (then :func:`json_text`, which
    reads a character at a time), its results one by one where the whole list was."""
    rules, index = _rules(result)
    text = json.dumps(_log(rules, _HOLE), ensure_ascii=False, sort_keys=True, indent=2)
    before, _, after = text.partition(json.dumps(_HOLE))
    results = _results(result, index)
    first = next(results, None)
    if first is None:
        yield json_text(before + "[]" + after) + "\n"
        return
    batch = [before, "[\n", _indented(first)]
    size = sum(map(len, batch))
    for res in results:
        item = _indented(res)
        batch += [",\n", item]
        size += len(item) + 2
        if size >= _PIECE:
            yield json_text("".join(batch))
            batch, size = [], 0
    yield json_text("".join([*batch, "\n", _AT[:-2], "]", after])) + "\n"


def _indented(res: dict[str, Any]) -> str:
    """One result as the whole log's text writes it, where it stands."""
    return _AT + json.dumps(res, ensure_ascii=False, sort_keys=True, indent=2).replace(
        "\n", "\n" + _AT)
