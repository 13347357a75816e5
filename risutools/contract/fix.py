"""``validate --fix``: apply the fixes whose result is exact, surgically, through the write path.

A check is fixable when the registry declares a ``fixer`` for it
(:attr:`risutools.checks.registry.Check.fixable`): a function ``fixer(doc)`` that
yields ``(pointer, new string value)`` for a document the check fires on.  Today:
MC201 (``projection.prompt_sha256`` set to the digest of the prompt) and MC103
(``lineage.promotion_status`` set to ``candidate`` for a candidate).

What ``--fix`` guarantees:

* **Only candidates.**  A document whose ``provenance.review_status`` is not
  ``candidate`` is never changed: what a person reviewed changes only through
  review.  Review state itself (``review_status``) is never written.
* **Only what was reported.**  A fix runs for a finding the run reported (after
  ``--select``/``--ignore`` and the configuration's severities).
* **Surgical.**  Only the bytes of the fixed string values change: JSON keeps its
  indentation and key order, an NDJSON catalog keeps every other line byte for byte,
  YAML keeps its comments, quoting style and layout (the scalar is rewritten in the
  style it had; a block scalar is not fixed).  The edited text is parsed again and
  must give exactly the expected documents, else the file is left as it was.
* **One write path.**  The file is written with
  :func:`risutools.fsio.atomic_write` and ``expect_sha256`` = the hash of the bytes
  read: a file changed meanwhile is not overwritten ("changed since you read it").
* **Bounded.**  A file is read whole: at most :data:`MAX_FIX_BYTES` (a larger file
  is not fixed, with one line saying so).  Standard input is never fixed.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from risutools.checks.registry import Check, registered_checks
from risutools.contract.loaders import STDIN_NAME, _fmt_of
from risutools.contract.rules import _get
from risutools.errors import RisuError, WriteConflict
from risutools.fsio import atomic_write
from risutools.safeio import read_regular
from risutools.values import MAX_DEPTH, parse_json_text
from risutools.yamlpatch import scalar_text_start
from risutools.yamlsafe import YamlRefused, load_yaml_documents

MAX_FIX_BYTES = 256 * 1024 * 1024
_BOM = "\ufeff"

Edit = tuple[int, int, str]  # (start, end, replacement) in the text


@dataclass
class FixOutcome:
    """What ``--fix`` did: fixes applied per rule, files written, and why others were not."""

    fixed: Counter[str] = field(default_factory=Counter)
    files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # one line each: what was not fixed, why

    @property
    def total(self) -> int:
        return sum(self.fixed.values())


def fixable_checks() -> dict[str, Check]:
    return {k: c for k, c in registered_checks().items() if c.fixable}


#: a file's fixable findings: document line -> (their rules, {pointer: the finding's line})
Wanted = dict[int | None, tuple[set[str], dict[str, int]]]


def fix_result(result: Any) -> FixOutcome:
    """Fix, file by file, the fixable findings of a validate ``Result``."""
    fixable = fixable_checks()
    # by the real file (two files may show as one display name); the display name is what
    # a message says, never a path that is opened
    wanted: dict[tuple[str, str], Wanted] = {}
    paths: dict[tuple[str, str], Path | None] = {}
    for info in result.documents:
        found = [f for f in info.findings if f.rule in fixable]
        if found:
            key = (info.file, os.fsdecode(info.path) if info.path is not None else "")
            paths[key] = None if info.path is None else Path(info.path)
            rules, lines = wanted.setdefault(key, {}).setdefault(info.line, (set(), {}))
            rules.update(f.rule for f in found)
            lines.update((f.pointer, f.line) for f in found if f.line is not None)
    out = FixOutcome()
    for key in sorted(wanted):
        file, path = key[0], paths[key]
        if path is None:
            n = sum(len(r) for r, _ in wanted[key].values())
            why = "standard input cannot be written back; fix the file itself" \
                if file == STDIN_NAME else "its file is not known"
            out.notes.append(f"{file}: {n} fixable finding(s) not fixed: {why}")
            continue
        _fix_file(path, file, wanted[key], fixable, out)
    return out


# --------------------------------------------------------------------------- one file


@dataclass
class _Doc:
    line: int
    value: Any
    locate: Callable[[str], tuple[int, int, str] | None]  # pointer -> (start, end, style)
    span: tuple[int, int] = (0, 0)  # where the document's text is (NDJSON: its line)


def _fix_file(path: Path, name: str, wanted: Wanted,
              fixable: dict[str, Check], out: FixOutcome) -> None:
    """Read ``path``, edit the fixable values in place, check the edit reads back, write."""
    got = _read_text(path, name, out, ndjson=_fmt_of(os.fsdecode(path.name)) == "ndjson")
    if got is None:
        return
    base, bom, body = got
    fmt = _fmt_of(os.fsdecode(path.name))
    lines = {ln for ln in wanted if ln is not None}
    try:
        docs = _parse(body, name, fmt, only=lines if fmt == "ndjson" else None)
    except ValueError as exc:
        out.notes.append(f"{name}: not fixed: {exc}")
        return
    edits, changed, applied = _plan(docs, name, wanted, fixable, out)
    if not edits:
        return
    new_body = _apply(body, edits)
    if not _reads_back(new_body, body, name, fmt, docs, changed, edits):
        out.notes.append(f"{name}: not fixed: the edited text would not read back as the "
                         "fixed documents; the file is left as it was")
        return
    del body, docs, changed
    data = ((_BOM if bom else "") + new_body).encode("utf-8", "surrogateescape")
    del new_body
    if _write(path, name, data, base, out):
        out.fixed.update(applied)
        out.files.append(name)


def _read_text(path: Path, name: str, out: FixOutcome, *, ndjson: bool = False,
               ) -> tuple[str, bool, str] | None:
    """(SHA-256 of the bytes read, whether a BOM leads, the text after it), or None with
    the reason noted.  An NDJSON catalog may hold lines that are not UTF-8 (validate
    reported them): their bytes are carried as ``surrogateescape`` characters, never
    parsed, and written back byte for byte while the other lines are fixed."""
    try:
        raw = read_regular(path, MAX_FIX_BYTES)  # regular files only, never past the bound
    except RisuError as exc:
        out.notes.append(f"{name}: not fixed: {exc.why}")
        return None
    except OSError as exc:
        out.notes.append(f"{name}: not fixed: cannot read: {exc.strerror or exc}")
        return None
    base = hashlib.sha256(raw).hexdigest()
    try:
        text = raw.decode("utf-8", "surrogateescape" if ndjson else "strict")
    except UnicodeDecodeError:
        out.notes.append(f"{name}: not fixed: not UTF-8")
        return None
    del raw  # a catalog may be large: one copy of its text at a time
    bom = text.startswith(_BOM)
    return base, bom, text[1:] if bom else text


def _plan(docs: list[_Doc], name: str, wanted: Wanted,
          fixable: dict[str, Check], out: FixOutcome
          ) -> tuple[list[Edit], list[tuple[_Doc, Any]], Counter[str]]:
    """The edits for the wanted rules of the candidate documents, each changed document
    with what it must read back as, and the fixes per rule."""
    edits: list[Edit] = []
    changed: list[tuple[_Doc, Any]] = []  # (document, what it must read back as)
    applied: Counter[str] = Counter()
    for d in docs:
        rules, lines = wanted.get(d.line, (set(), {}))
        if not rules:
            continue
        review = _get(d.value, "provenance", "review_status")
        if review != "candidate":
            out.notes.append(
                f"{name}:{d.line}: {', '.join(sorted(rules))} not fixed: review_status is "
                f"{review!r}; a reviewed document changes only through review")
            continue
        expected = None
        for rule in sorted(rules):
            fixer = fixable[rule].fixer
            assert fixer is not None
            for pointer, new in fixer(d.value):
                spot = d.locate(pointer)
                if spot is None:  # (the line of the value, where the finding said it is)
                    out.notes.append(f"{name}:{lines.get(pointer, d.line)}: {rule} not fixed: "
                                     f"{pointer} is not a plain string value that can be "
                                     "rewritten in place")
                    continue
                start, end, style = spot
                edits.append((start, end, _literal(new, style)))
                expected = copy.deepcopy(d.value) if expected is None else expected
                _set(expected, pointer, new)
                applied[rule] += 1
        if expected is not None:
            changed.append((d, expected))
    return edits, changed, applied


def _apply(body: str, edits: list[Edit]) -> str:
    """``body`` with the (non-overlapping) edits made, in one linear pass."""
    pieces: list[str] = []
    pos = 0
    for start, end, repl in sorted(edits, key=lambda e: e[0]):
        pieces += [body[pos:start], repl]
        pos = end
    pieces.append(body[pos:])
    return "".join(pieces)


def _write(path: Path, name: str, data: bytes, base: str, out: FixOutcome) -> bool:
    """Through the one write path, unless the file changed since it was read."""
    try:
        atomic_write(path, data, expect_sha256=base)
    except WriteConflict as exc:
        out.notes.append(f"{name}: not fixed: {exc.why}")
        return False
    except OSError as exc:
        out.notes.append(f"{name}: not fixed: cannot write: {exc.strerror or exc}")
        return False
    return True


def _reads_back(new_body: str, body: str, name: str, fmt: str | None, docs: list[_Doc],
                changed: list[tuple[_Doc, Any]], edits: list[Edit]) -> bool:
    """Whether the edited text gives exactly the fixed documents (and the others unchanged).

    NDJSON: each edited line is parsed again (the edits stay inside their lines, so every
    other line is the same bytes); JSON and YAML: the whole text is parsed again."""
    if fmt != "ndjson":
        try:
            again = [d.value for d in _parse(new_body, name, fmt)]
        except ValueError:
            return False
        want = {id(d): v for d, v in changed}
        return again == [want.get(id(d), d.value) for d in docs]
    shift = 0
    starts = sorted(edits, key=lambda e: e[0])
    k = 0
    for d, expected in sorted(changed, key=lambda c: c[0].span[0]):
        a, b = d.span
        while k < len(starts) and starts[k][1] <= a:  # edits before this line
            shift += len(starts[k][2]) - (starts[k][1] - starts[k][0])
            k += 1
        grow = 0
        j = k
        while j < len(starts) and starts[j][0] < b:  # this line's edits
            if starts[j][0] < a or starts[j][1] > b:
                return False
            grow += len(starts[j][2]) - (starts[j][1] - starts[j][0])
            j += 1
        line = new_body[a + shift:b + shift + grow]
        if "\n" in line:
            return False
        value, problem = parse_json_text(line, line=d.line)
        if problem is not None or value != expected:
            return False
    return True


def _parse(body: str, name: str, fmt: str | None, only: set[int] | None = None
           ) -> list[_Doc]:
    """The documents of a file with a locator each (NDJSON: only the lines in ``only``,
    when given); ValueError when it cannot be read."""
    if fmt == "yaml":
        return _parse_yaml(body)
    if fmt == "ndjson":
        docs: list[_Doc] = []
        pos = 0
        for lineno, line in enumerate(body.split("\n"), 1):
            start = pos
            pos += len(line) + 1
            if only is not None and lineno not in only:
                continue
            stripped = line.strip()
            if not stripped:
                continue
            value, problem = parse_json_text(stripped, line=lineno)
            if problem is not None:
                raise ValueError(f"line {lineno}: {problem.message}")
            offset = start + (len(line) - len(line.lstrip()))
            docs.append(_Doc(lineno, value, _json_locator(stripped, offset),
                             (offset, offset + len(stripped))))
        return docs
    value, problem = parse_json_text(body, line=None)
    if problem is not None:
        raise ValueError(problem.message)
    return [_Doc(1, value, _json_locator(body, 0), (0, len(body)))]


def _parse_yaml(body: str) -> list[_Doc]:
    import yaml
    from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode


    def locator(root: Node) -> Callable[[str], tuple[int, int, str] | None]:
        def locate(pointer: str) -> tuple[int, int, str] | None:
            node: Node | None = root
            for tok in _tokens(pointer):
                if isinstance(node, MappingNode):
                    node = next((v for k, v in node.value
                                 if isinstance(k, ScalarNode) and k.value == tok), None)
                elif isinstance(node, SequenceNode) and tok.isdigit() and int(tok) < len(
                        node.value):
                    node = node.value[int(tok)]
                else:
                    return None
            # plain (None in PyYAML, "" in its libyaml binding), single or double quoted
            if not isinstance(node, ScalarNode) or node.style not in (None, "", "'", '"'):
                return None
            start, end = node.start_mark.index, node.end_mark.index
            return scalar_text_start(body, start, end), end, node.style or ""
        return locate

    # The safe loader first (every refusal: aliases, tags, duplicate keys, depth, size),
    # then PyYAML's composer only for the scalars' positions in text that passed it.
    try:
        safe = list(load_yaml_documents(body, max_depth=MAX_DEPTH))
        loader_cls = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        roots = [n for n in yaml.compose_all(body, Loader=loader_cls) if n is not None]
    except (YamlRefused, yaml.YAMLError, RecursionError) as exc:
        raise ValueError(f"not readable as YAML: {exc}") from None
    values = [d for d in safe if d.value is not None]
    if len(values) != len(roots):
        raise ValueError("not readable as YAML: its documents could not be located")
    return [_Doc(y.line, y.value, locator(root)) for y, root in zip(values, roots, strict=True)]


def _json_locator(text: str, offset: int) -> Callable[[str], tuple[int, int, str] | None]:
    def locate(pointer: str) -> tuple[int, int, str] | None:
        span = json_string_span(text, pointer)
        return None if span is None else (span[0] + offset, span[1] + offset, "json")
    return locate


# --------------------------------------------------------------------------- JSON text


_WS = " \t\r\n"
#: the json module's string scanner: (text, index after the opening quote) -> (value, end)
scanstring: Callable[[str, int], tuple[str, int]] = getattr(json.decoder, "scanstring")  # noqa: B009


def _ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _skip_value(text: str, i: int) -> int:
    """The index just after the JSON value starting at ``i`` (iterative, strings skipped)."""
    depth = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i = scanstring(text, i + 1)[1]
            if depth == 0:
                return i
            continue
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
            if depth < 0:
                return i
        elif depth == 0 and c in ",":
            return i
        i += 1
    return i


def json_string_span(text: str, pointer: str) -> tuple[int, int] | None:
    """Where the string value at ``pointer`` is written in JSON ``text`` (quotes included),
    or None (no such value, or not a string).  ``text`` is valid JSON without duplicate keys
    (the loader refused the others)."""
    at: int | None = _ws(text, 0)
    for tok in _tokens(pointer):
        i = at
        if i is None or i >= len(text):
            return None
        if text[i] == "{":
            at = _member(text, i, tok)
        elif text[i] == "[" and tok.isdigit():
            at = _item(text, i, int(tok))
        else:
            return None
    if at is None or at >= len(text) or text[at] != '"':
        return None
    return at, scanstring(text, at + 1)[1]


def _member(text: str, i: int, key: str) -> int | None:
    """Where the value of ``key`` starts in the object that starts at ``i``, or None."""
    i = _ws(text, i + 1)
    while True:
        if i >= len(text) or text[i] != '"':
            return None
        name, i = scanstring(text, i + 1)
        i = _ws(text, i)
        i = _ws(text, i + 1)  # past ':'
        if name == key:
            return i
        i = _ws(text, _skip_value(text, i))
        if i >= len(text) or text[i] != ",":
            return None
        i = _ws(text, i + 1)


def _item(text: str, i: int, n: int) -> int | None:
    """Where item ``n`` starts in the array that starts at ``i``, or None."""
    i = _ws(text, i + 1)
    for _ in range(n):
        if i >= len(text) or text[i] == "]":
            return None
        i = _ws(text, _skip_value(text, i))
        if i >= len(text) or text[i] != ",":
            return None
        i = _ws(text, i + 1)
    if i >= len(text) or text[i] == "]":
        return None
    return i


# --------------------------------------------------------------------------- helpers


def _tokens(pointer: str) -> list[str]:
    if not pointer:
        return []
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]


def _literal(value: str, style: str) -> str:
    if style == "'":
        return "'" + value.replace("'", "''") + "'"
    if style == "":  # a YAML plain scalar stays plain (the read-back check guards it)
        return value
    return json.dumps(value, ensure_ascii=False)  # JSON, and YAML double-quoted


def _set(doc: Any, pointer: str, value: str) -> None:
    toks = _tokens(pointer)
    cur = doc
    for tok in toks[:-1]:
        cur = cur[int(tok)] if isinstance(cur, list) else cur[tok]
    if isinstance(cur, list):
        cur[int(toks[-1])] = value
    else:
        cur[toks[-1]] = value
