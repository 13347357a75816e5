"""``conversation-v1`` fixtures: a readable conversation replayed request by request.

Three spellings of the same data (schema: ``schemas/conversation-v1.schema.json``):

* YAML or JSON: one mapping ``{fixture, name, config?, messages?, turns}``;
* NDJSON (for very long fixtures): the first non-blank line is the header
  ``{"fixture": "conversation-v1", "name": ..., "config"?: ..., "messages"?: [...]}``
  and every further non-blank line is one turn object.

Each turn may carry ``append`` (list of messages), ``edit`` (``{id, content}`` or
a list of them), ``delete`` (``{id}`` or a list), ``toggle`` (bool) and
``metrics`` (mapping, or ``null`` = no metrics this turn); they apply in that
order, then the request happens.  A message without ``id`` gets ``m<n>``, n
counting every message in order of appearance from 0.  The loader replays the
id bookkeeping once, so an edit or delete of an unknown id is reported with its
turn number before anything runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from io import BytesIO
from itertools import accumulate, chain, compress, repeat
from operator import itemgetter, ne
from pathlib import Path
from typing import Any, NamedTuple

from risutools.canonical import plain_canonical, plain_levels, sha256_prefixed
from risutools.errors import Code, ConfigError, DocumentError, RisuError
from risutools.pathnames import show_name
from risutools.replay.fixture_metrics import Metrics as Metrics  # (re-exported: its home)
from risutools.replay.fixture_metrics import parse_metrics
from risutools.safeio import read_or_raise
from risutools.settings.replay import KNOWN_ROLES, check_layer
from risutools.values import (
    MAX_DEPTH,
    colons_written_in,
    decode_text,
    fast_json,
    fast_json_many_of,
    json_values_fit,
    loads_many,
    parse_json_exact,
    parse_value,
)
from risutools.yamlsafe import TOO_MANY

FIXTURE_TAG = "conversation-v1"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}\Z")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}\Z")
_TURN_KEYS = ("append", "edit", "delete", "toggle", "metrics")
_MESSAGE_KEYS = frozenset(("id", "role", "content"))
_TURN_KEY_SET = frozenset(_TURN_KEYS)
#: the roles a message may have (a set: one look-up)
_ROLES = frozenset(KNOWN_ROLES)


class Message(NamedTuple):
    """One message (immutable; a named tuple: two are made a request, and a frozen
    dataclass's fields cost a call each)."""

    id: str
    role: str
    content: str


@dataclass(slots=True)
class Turn:
    number: int  # 1-based
    append: list[Message] = field(default_factory=list)
    edit: list[tuple[str, str]] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)
    toggle: bool | None = None
    metrics: Metrics | None = None  # None = the turn says nothing about metrics


@dataclass
class Fixture:
    name: str
    messages: list[Message]
    turns: list[Turn]
    config: dict[str, Any] | None
    sha256: str  # "sha256:<hex>" of the file bytes ("" when built in memory)
    file: str = ""  # base name of the file
    #: an NDJSON fixture read as it is replayed (:func:`stream_fixture`): its turns, parsed
    #: one line at a time, once (``turns`` is then empty)
    stream: TurnStream | None = None

    def turn_count(self) -> int:
        return len(self.stream) if self.stream is not None else len(self.turns)

    def iter_turns(self) -> Iterator[Turn]:
        """The turns in order (a streamed fixture's: once)."""
        return iter(self.stream) if self.stream is not None else iter(self.turns)

    def notes(self) -> list[str]:
        """The bridge records' notes, one a turn whose two percentages disagree (a streamed
        fixture's: of the turns read so far)."""
        turns = self.stream.read if self.stream is not None else self.turns
        return [t.metrics.note for t in turns if t.metrics is not None and t.metrics.note]


class _Ids:
    def __init__(self) -> None:
        self.counter = 0
        self.ever: set[str] = set()
        #: the ids deleted (each once taken: a live id is taken and not deleted)
        self.dead: set[str] = set()

    @property
    def live(self) -> set[str]:
        """The ids taken and not deleted (a new set: what the tests compare)."""
        return self.ever - self.dead

    def is_live(self, mid: str) -> bool:
        return mid in self.ever and mid not in self.dead

    def take(self, raw: Any, turn: int, i: int) -> Message:
        """Message ``i`` of turn ``turn``'s ``append``, or of the header's ``messages``
        (``turn`` 0); its place is spelled only in an error (:func:`_place`)."""
        if not isinstance(raw, dict):
            raise _at(turn, i, "a message must be a mapping {id?, role, content}")
        if not _MESSAGE_KEYS.issuperset(raw):
            for key in sorted(raw):
                if key not in _MESSAGE_KEYS:
                    raise _at(turn, i,
                              f"unknown message key {key!r} (accepted: id, role, content)")
        n = self.counter
        self.counter += 1
        mid = raw.get("id")
        if mid is None:
            mid = f"m{n}"
        elif not isinstance(mid, str) or not (
                # (letters and digits alone, the usual id: what _ID takes, without it)
                (mid.isascii() and mid.isalnum() and len(mid) <= 64) or _ID.match(mid)):
            raise _at(turn, i, f"bad message id {mid!r} (letters, digits, . _ : -; at most 64)")
        if mid in self.ever:  # (its own code: docs/errors.md's duplicate-id)
            raise _at(turn, i, f"duplicate message id {mid!r}", Code.DUPLICATE_ID)
        role = raw.get("role")
        if not isinstance(role, str) or role not in _ROLES:
            if role is None:
                raise _at(turn, i, f"message {mid}: missing role")
            raise _at(turn, i, f"message {mid}: unknown role {role!r} "
                      f"(accepted: {', '.join(KNOWN_ROLES)})")
        content = raw.get("content")
        if not isinstance(content, str):
            raise _at(turn, i, f"message {mid}: content must be a string")
        self.ever.add(mid)
        return Message(mid, role, content)

    def take_all(self, items: list[Any], turn: int) -> list[Message]:
        """:meth:`take` of each message of ``items`` (turn ``turn``'s ``append``), in order:
        a message of the usual shape -- exactly ``id``, ``role`` and ``content``, each a
        ``str``, the id letters and digits alone (at most 64) and new, the role known --
        taken in this loop as :meth:`take` would take it; any other asked of :meth:`take`
        itself (which takes it the same way or says why not, in the same words)."""
        out: list[Message] = []
        ever, roles, new = self.ever, _ROLES, tuple.__new__
        n = self.counter
        for i, raw in enumerate(items):
            if type(raw) is dict and len(raw) == 3:
                mid, role, content = raw.get("id"), raw.get("role"), raw.get("content")
                if (type(mid) is str and type(content) is str and type(role) is str
                        and role in roles and mid.isascii() and mid.isalnum()
                        and len(mid) <= 64 and mid not in ever):
                    n += 1
                    ever.add(mid)
                    out.append(new(Message, (mid, role, content)))
                    continue
            self.counter = n
            out.append(self.take(raw, turn, i))
            n = self.counter
        self.counter = n
        return out


MAX_FIXTURE_BYTES = 64 * 1024 * 1024  # a fixture is read whole
#: at most this many turns (requests) in a fixture: a report writes a row of ~330 bytes for
#: each, so a 64 MiB NDJSON file of ``{}`` lines (21 million requests) would write ~7 GB
#: and run for minutes; at this bound a report stays under ~350 MB (about 25 s on one
#: core), 20 times the 100,000-message workload (50,000 requests)
MAX_TURNS = 1_000_000


def _err(where: str, why: str, code: str = Code.BAD_FIXTURE) -> ConfigError:
    return ConfigError(code, why, where=where)


def _at(turn: int, i: int, why: str, code: str = Code.BAD_FIXTURE) -> ConfigError:
    """:func:`_err` at message ``i`` of turn ``turn``'s ``append`` (of the header's
    ``messages`` for turn 0)."""
    return _err(f"turn {turn}: append[{i}]" if turn else f"messages[{i}]", why, code)


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _turn(raw: Any, number: int, ids: _Ids) -> Turn:
    if type(raw) is dict and len(raw) == 1:  # (append alone, a list: most turns)
        items = raw.get("append")
        if type(items) is list:
            return Turn(number, ids.take_all(items, number), [], [])
    if not isinstance(raw, dict):
        raise _err(f"turn {number}", "a turn must be a mapping of operations")
    if not _TURN_KEY_SET.issuperset(raw):
        for key in sorted(raw):
            if key not in _TURN_KEYS:
                raise _err(f"turn {number}",
                           f"unknown operation {key!r} (accepted: {', '.join(_TURN_KEYS)})")
    append: list[Message] = []
    items = raw.get("append", append)
    if items is not append:
        if not isinstance(items, list):
            raise _err(f"turn {number}: append", "must be a list of messages")
        append = ids.take_all(items, number)
    turn = Turn(number, append, [], [])
    if len(raw) == 1 and items is not append:
        return turn  # (append alone: most turns)
    _turn_rest(raw, turn, ids)
    return turn


def _turn_rest(raw: dict[str, Any], turn: Turn, ids: _Ids) -> None:
    """A turn's operations but its ``append`` (taken: ``turn.append``), checked and set on
    ``turn``: ``edit``, ``delete``, ``toggle`` and ``metrics``, in that order."""
    where = f"turn {turn.number}"
    if "edit" in raw:
        turn.edit = _edits(raw["edit"], where, ids)
    if "delete" in raw:
        turn.delete = _deletes(raw["delete"], where, ids)
    if "toggle" in raw:
        if not isinstance(raw["toggle"], bool):
            raise _err(f"{where}: toggle", f"must be true or false, got {raw['toggle']!r}")
        turn.toggle = raw["toggle"]
    if "metrics" in raw:
        turn.metrics = parse_metrics(raw["metrics"], f"{where}: metrics")


def _edits(raw: Any, where: str, ids: _Ids) -> list[tuple[str, str]]:
    """A turn's ``edit``: ``{id, content}`` or a list of them, each of a live message."""
    out = []
    for i, e in enumerate(_as_list(raw)):
        w = f"{where}: edit" + (f"[{i}]" if isinstance(raw, list) else "")
        if not isinstance(e, dict) or sorted(e) != ["content", "id"]:
            raise _err(w, "an edit is {id, content}")
        if not isinstance(e["id"], str) or not isinstance(e["content"], str):
            raise _err(w, "id and content must be strings")
        if not ids.is_live(e["id"]):
            raise _err(w, f"no message with id {e['id']}", Code.UNKNOWN_ID)
        out.append((e["id"], e["content"]))
    return out


def _deletes(raw: Any, where: str, ids: _Ids) -> list[str]:
    """A turn's ``delete``: ``{id}`` or a list of them, each of a live message (then gone)."""
    out = []
    for i, d in enumerate(_as_list(raw)):
        w = f"{where}: delete" + (f"[{i}]" if isinstance(raw, list) else "")
        if not isinstance(d, dict) or sorted(d) != ["id"] or not isinstance(d["id"], str):
            raise _err(w, "a delete is {id}")
        if not ids.is_live(d["id"]):
            raise _err(w, f"no message with id {d['id']}", Code.UNKNOWN_ID)
        ids.dead.add(d["id"])
        out.append(d["id"])
    return out


def build_fixture(data: Any, *, sha256: str = "", file: str = "") -> Fixture:
    """Validate a parsed fixture mapping and assign ids."""
    name, config, messages, ids = _header(data)
    raw_turns = data.get("turns")
    if not isinstance(raw_turns, list):
        raise _err("turns", "must be a list of turns")
    if not raw_turns:
        raise _err("turns", NO_TURNS)
    _check_turn_count(len(raw_turns))
    turns = [_turn(t, i + 1, ids) for i, t in enumerate(raw_turns)]
    return Fixture(name, messages, turns, config, sha256, file)


NO_TURNS = "the fixture has no turns: a replay needs at least one request"


def _check_turn_count(count: int) -> None:
    """Refuse a fixture of more than :data:`MAX_TURNS` turns (``bad-fixture``)."""
    if count > MAX_TURNS:
        raise _err("turns", f"{count:,} turns, more than the {MAX_TURNS:,} a replay takes "
                   "(each is a request and a row of the report); split the conversation")

#: a file with nothing but blanks (a byte-order mark, spaces, line breaks), whatever its
#: spelling: one line for the one defect
EMPTY_FILE = "empty file: no fixture in it"
#: a YAML file whose one value is null (nothing but comments, ``---`` or ``null``)
NO_FIXTURE = "no fixture in the file: its value is null (nothing but comments?)"


def _header(data: Any) -> tuple[str, dict[str, Any] | None, list[Message], _Ids]:
    """A fixture's mapping but its turns, checked: (name, config, messages, the ids)."""
    if data is None:
        raise _err("", NO_FIXTURE)
    if not isinstance(data, dict):
        raise _err("", "a fixture must be a mapping")
    for key in sorted(data):
        if key not in ("fixture", "name", "config", "messages", "turns"):
            raise _err("", f"unknown top-level key {key!r}")
    if data.get("fixture") != FIXTURE_TAG:
        raise _err("fixture", f"must be {FIXTURE_TAG!r}, got {data.get('fixture')!r}")
    name = data.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise _err("name", f"must be a short name (letters, digits, . _ -), got {name!r}")
    config = data.get("config")
    if config is not None and not isinstance(config, dict):
        raise _err("config", "must be a mapping")
    if config is not None:
        check_layer(config)  # a bad key or value is reported against the fixture file
    ids = _Ids()
    raw_msgs = data.get("messages")
    if raw_msgs is None:  # (absent, or null: no history before the first turn)
        raw_msgs = []
    elif not isinstance(raw_msgs, list):  # (false, 0, "" and {} too: not an empty history)
        raise _err("messages", "must be a list")
    messages = [ids.take(m, 0, i) for i, m in enumerate(raw_msgs)]
    return name, config, messages, ids


def parse_fixture_bytes(data: bytes, file: str = "fixture") -> Fixture:
    """Parse fixture bytes; the format follows the extension of ``file`` (.ndjson/.json/.yaml)."""
    digest = sha256_prefixed(data)
    try:
        text = decode_text(data, file)
    except DocumentError as exc:
        raise ConfigError(Code.BAD_FIXTURE, exc.why, path=file) from None
    suffix = Path(file).suffix.lower()
    try:
        if not text.strip():
            raise _err("", EMPTY_FILE)
        if suffix in (".ndjson", ".jsonl"):
            parsed = _parse_ndjson(text)
        else:
            try:
                parsed = parse_value(text, Path(file).name, "json" if suffix == ".json" else "yaml")
            except DocumentError as exc:
                raise _err(exc.where, exc.why) from None
        return build_fixture(parsed, sha256=digest, file=show_name(Path(file).name))
    except ConfigError as exc:
        raise exc.with_path(file) from None


def _parse_ndjson(text: str) -> dict[str, Any]:
    """An NDJSON fixture read whole (every turn's value kept, as YAML's and JSON's are: under
    their bound of the values' memory)."""
    if not json_values_fit(text):
        raise _err("", TOO_MANY)
    header: dict[str, Any] | None = None
    turns: list[Any] = []
    for lineno, line in enumerate(_LINE_BREAK.split(text), 1):
        if not line.strip():
            continue
        obj = _json_line(line.encode("utf-8"), lineno)  # (decoded: no lone surrogate)
        if header is None:
            header = _header_line(obj, lineno)
        else:
            turns.append(obj)
    if header is None:
        raise _err("", EMPTY_FILE)
    return {**header, "turns": turns}


def _json_line(line: bytes, lineno: int) -> Any:
    """One NDJSON line's value: parse_json_text without its hash (orjson when it cannot
    differ from json, else json with the catalog loader's guards (duplicate keys, NaN,
    depth) says why not)."""
    fast = fast_json(line)
    if fast is not None:
        return fast[0]
    obj, problem = parse_json_exact(line.decode("utf-8"), line=lineno)
    if problem is not None:
        raise _err(f"line {lineno}", problem.message)
    return obj


def _header_line(obj: Any, lineno: int) -> dict[str, Any]:
    if not isinstance(obj, dict) or "fixture" not in obj:
        raise _err(f"line {lineno}", "the first line must be the fixture header")
    if "turns" in obj:
        raise _err(f"line {lineno}", "an NDJSON header carries no turns (one per line)")
    return obj


# ---- an NDJSON fixture streamed ---------------------------------------------------

#: where an NDJSON fixture's lines end: ``\n``, ``\r\n`` and a lone ``\r`` (none of which a
#: JSON string holds raw), never inside a value: not at U+2028, U+2029 or U+0085, which a
#: JSON string may hold as they are (``str.splitlines`` broke there: a message holding one
#: was "not valid JSON: Unterminated string"), nor at the other characters
#: ``str.splitlines`` knows (\x0b, \x0c, \x1c-\x1e: a JSON text holds them nowhere raw)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"
#: bytes a streamed file's lines are read from at a time (:func:`_line_groups`; counted, when
#: they do not all open with ``{``: :func:`_byte_blocks`), and decoded at a time to check it
#: is UTF-8: small, so that a block and its values fit in the allocator's reused memory (a
#: 1 MiB block was mapped afresh: ~500 more page faults at 10,000 messages, ~1 ms) and in
#: the cache while they are parsed
_CHECK_CHUNK = 1 << 16


class TurnStream:
    """An NDJSON fixture's turns, each line parsed and checked (:func:`_turn`) as the replay
    reaches it, once: what is kept is the file's bytes, not its text, values and turns.
    Its length (the turns the file holds) is counted ahead, without parsing."""

    def __init__(self, data: bytes, start: int, count: int, first: int, ids: _Ids,
                 file: str) -> None:
        self._data, self._start, self._count = data, start, count
        self._first = first  # the line number of the line at ``start``
        self._ids, self._file = ids, file
        self._used = False
        #: the turns read so far that carry a note (what the report lists)
        self.read: list[Turn] = []

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Turn]:
        """The turns, a group's handed over by ``chain`` (in C, none a resumption of the
        reading generator, :meth:`_read`): read as before, in the same order."""
        return chain.from_iterable(self._read())

    def _read(self) -> Iterator[Sequence[Turn]]:
        """The turns in order, those of a group taken together at once (the group's, then
        its error if it has one), any other one alone."""
        if self._used:
            raise RuntimeError("a streamed fixture's turns are read once")
        self._used = True
        number = 0
        ids, read = self._ids, self.read
        try:
            for lineno, chunk, at, end in _line_groups(self._data, self._start, self._first):
                values = loads_many(chunk)  # (None when a line is blank: orjson refuses it)
                group = _group(values, self._data, at, end, ids) if values is not None else None
                if group is not None:  # (the usual shape: taken a column at a time)
                    turns, error = _group_turns(group, values or [], number, ids)
                    number += len(turns)
                    if group.special:  # (a turn of an append alone has no metrics)
                        read += [t for t in turns if t.metrics is not None and t.metrics.note]
                    yield turns
                    if error is not None:
                        raise error
                    continue
                for value in _group_values(chunk, lineno, values):
                    number += 1
                    turn = _turn(value, number, ids)
                    if turn.metrics is not None and turn.metrics.note:
                        read.append(turn)
                    yield (turn,)
        except (ConfigError, UnicodeDecodeError) as exc:
            raise _refusal(exc, self._data, self._file) from None


#: lines whose values are parsed, checked and (:func:`_group`) taken together
_PARSED_TOGETHER = 256


def _line_groups(data: bytes, start: int, lineno: int
                 ) -> Iterator[tuple[int, list[bytes], int, int]]:
    """The lines from ``start`` :data:`_PARSED_TOGETHER` at a time (fewer when they hold more
    than :data:`_CHECK_CHUNK` bytes), each with its line break (``\\n`` or ``\\r\\n``; the
    last line may have none): (the first's number, the lines, where they begin and end in
    ``data``).  They are read as a file's, its buffer the bytes' own (``BytesIO``): each
    line break found by ``memchr``, in C (a block split at its newlines compared every byte:
    ~6 % of the parse)."""
    lines = BytesIO(data)
    lines.seek(start)
    while block := lines.readlines(_CHECK_CHUNK):  # (whole lines, until they hold as many)
        for at in range(0, len(block), _PARSED_TOGETHER):
            group = block[at:at + _PARSED_TOGETHER]
            last = at + _PARSED_TOGETHER >= len(block)  # (the usual block: one group)
            end = lines.tell() if last else start + sum(map(len, group))
            yield lineno, group, start, end
            lineno, start = lineno + len(group), end


def _group_values(lines: list[bytes], lineno: int, values: list[Any] | None) -> Iterator[Any]:
    """The value of each non-blank line of a group whose first is line ``lineno``
    (:func:`_json_line`'s, its line break cut off), ``values`` orjson's of them all
    (:func:`loads_many`) or None: the guards of the fast path run over them all at once; a
    group any line of which the fast path would not take goes one line at a time, in
    order, so a bad line raises what it would alone when it is reached."""
    taken = fast_json_many_of(values, lines) if values is not None else None
    if taken is not None:
        yield from taken
        return
    for i, line in enumerate(lines):
        line = line.rstrip(b"\r\n")  # (its break: a lone "\r" is in no streamed file)
        if line[:1] == b"{" or not _blank(line):
            yield _json_line(line, lineno + i)


# ---- a group of turns taken a column at a time ------------------------------------

#: a message's members (KeyError when one is missing)
_ID_OF, _ROLE_OF, _CONTENT_OF = itemgetter("id"), itemgetter("role"), itemgetter("content")
#: the roles a message taken a column at a time may have: those without a ``:`` (the
#: duplicate-key guard counts none in them)
_PLAIN_ROLES = frozenset(r for r in KNOWN_ROLES if ":" not in r)
#: what :func:`_group` reads as a turn's ``append`` when it has none
_NO_APPEND: tuple[()] = ()
_APPENDS = frozenset((list, tuple))


class _Group(NamedTuple):
    """A group of turns checked a column at a time (:func:`_group`), not yet taken."""

    messages: list[Message]  # every message the turns append, in order
    mids: list[str]  # their ids
    counts: list[int]  # each turn's messages
    special: list[int]  # the turns (0-based) with an operation besides ``append``


def _group(values: list[Any], data: bytes, start: int, end: int, ids: _Ids) -> _Group | None:
    """The turns ``values`` (orjson's of the lines ``data[start:end]``, no guard run) when
    each is a mapping of known operations whose ``append``, if any, lists messages of the
    usual shape (:func:`_columns`) and the fast path's guards hold (no float, no key
    repeated: :func:`~risutools.values.colons_written_in`); else None (then one at a time:
    :func:`_turn`).
    Each check runs over a column (every turn, every message's id...) in C; nothing is
    taken yet (:func:`_group_turns`)."""
    try:  # (dict.get of a value that is no mapping: a TypeError)
        appends = list(map(dict.get, values, repeat("append"), repeat(_NO_APPEND)))
    except TypeError:
        return None
    kinds = set(map(type, appends))
    if not _APPENDS.issuperset(kinds):
        return None
    n = len(values)
    lens = list(map(len, values))
    special: list[int] = []
    if tuple in kinds or lens.count(1) != n:
        special = [i for i in range(n) if lens[i] != 1 or appends[i] is _NO_APPEND]
    taken = _columns(list(chain.from_iterable(appends)), ids.ever)
    rest = _rest_colons([values[i] for i in special]) if special else 0
    if taken is None or rest is None:
        return None
    mids, roles, contents, colons = taken
    colons += (n - sum(1 for i in special if appends[i] is _NO_APPEND)  # each "append":
               + 3 * len(mids) + rest)
    if not colons_written_in(data, start, end, colons):
        return None
    messages = list(map(tuple.__new__, repeat(Message), zip(mids, roles, contents, strict=True)))
    return _Group(messages, mids, list(map(len, appends)), special)


def _columns(raw: list[Any], ever: set[str]
             ) -> tuple[list[str], list[str], list[str], int] | None:
    """The messages ``raw`` (orjson's values: exact JSON types) when each is of the usual
    shape (:meth:`_Ids.take_all`'s; the role also without a ``:``) and no id is in ``ever``
    or repeated: (their ids, roles, contents, the contents' ``:``); else None.
    Types are checked by use: only a mapping is indexed by a key, only strings are joined,
    an unhashable role is in no set (TypeError), a role that is no string is no known one;
    a fourth member is one more ``:`` than :func:`_group` counts (refused there)."""
    if not raw:
        return [], [], [], 0
    try:
        mids = list(map(_ID_OF, raw))
        roles = list(map(_ROLE_OF, raw))
        contents = list(map(_CONTENT_OF, raw))
        joined = "".join(mids)  # (each letters and digits alone, none empty: below)
        if (not _PLAIN_ROLES.issuperset(roles)  # (ASCII: its bytes' isalnum, a table's)
                or not (joined.isascii() and joined.encode().isalnum())
                or max(map(len, mids)) > 64):
            return None
        text = "".join(contents)
        colons = text.count(":") if ":" in text else 0  # ("in": memchr, a count: no)
    except (KeyError, TypeError):
        return None
    new = set(mids)
    if len(new) != len(mids) or "" in new or not new.isdisjoint(ever):
        return None
    return mids, roles, contents, colons


def _rest_colons(raw: list[dict[str, Any]]) -> int | None:
    """The ``:`` of the canonical form of the turns ``raw``'s operations but ``append``,
    when each is known, plain (:func:`~risutools.canonical.plain_levels`: no float) and
    at most :data:`~risutools.values.MAX_DEPTH` levels deep; else None."""
    rests = list(map(dict.copy, raw))  # (then each one's append taken out: in C)
    list(map(dict.pop, rests, repeat("append"), repeat(None)))
    if not all(map(_TURN_KEY_SET.issuperset, rests)):
        return None
    levels = plain_levels(rests)  # (one more than the deepest turn's)
    canon = plain_canonical(rests) if levels is not None and levels - 1 <= MAX_DEPTH else None
    return None if canon is None else canon.count(b":")


def _group_turns(group: _Group, values: list[Any], number: int, ids: _Ids
                 ) -> tuple[list[Turn], ConfigError | None]:
    """The turns of a group :func:`_group` checked, numbered from ``number + 1``, their ids
    taken as :func:`_turn` takes them (up to each turn with more than an append, whose rest
    is then taken: :func:`_turn_rest`): (the turns, None) or (those before a bad one, why)."""
    messages, mids, counts, special = group
    ends = list(accumulate(counts))
    slices = zip(range(number + 1, number + len(ends) + 1), chain((0,), ends), ends, strict=False)
    # (a comprehension: each Turn called from bytecode, which costs less than map's call)
    turns = [Turn(k, messages[i:j], [], []) for k, i, j in slices]
    ids.counter += len(mids)
    ever = ids.ever
    done = 0
    for i in special:
        upto = ends[i]
        ever.update(mids[done:upto])
        done = upto
        try:
            _turn_rest(values[i], turns[i], ids)
        except ConfigError as exc:
            return turns[:i], exc
    ever.update(mids[done:])
    return turns, None


def _lines(data: bytes, start: int, lineno: int) -> Iterator[tuple[int, bytes, int]]:
    """(line number, line, where the next begins) from ``start``, a line's ``\r\n`` or
    ``\n`` cut off: :data:`_LINE_BREAK`'s lines, for a file with no lone ``\r``
    (:func:`_streamable`)."""
    find = data.find
    end = len(data)
    while start < end:
        stop = find(b"\n", start)
        if stop < 0:
            stop = end
        line = data[start:stop]
        if line.endswith(b"\r"):
            line = line[:-1]
        start = stop + 1
        yield lineno, line, start
        lineno += 1


def _byte_blocks(data: bytes, start: int) -> Iterator[bytes]:
    """The bytes from ``start`` a block of about :data:`_CHECK_CHUNK` at a time, each cut
    at a newline (dropped; a newline at the very end ends the last line)."""
    end = len(data)
    while start < end:
        stop = data.find(b"\n", start + _CHECK_CHUNK)
        if stop < 0:  # the last block
            stop = end - 1 if data.endswith(b"\n") else end
        yield data[start:stop]
        start = stop + 1


#: a line's first byte (an int; a line read from a file is never empty)
_FIRST_BYTE = itemgetter(0)


def _count_turns(data: bytes, start: int) -> int:
    """The non-blank lines from ``start``: when every line opens with ``{``, the lines (read
    as a file's, its buffer the bytes' own: each line break found by ``memchr`` and the
    lines' first bytes made a ``bytes`` whose ``{`` are counted, all in C); else
    :func:`_count_lines`."""
    if start < len(data):
        lines = BytesIO(data)
        lines.seek(start)
        firsts = bytes(map(_FIRST_BYTE, lines))  # (a Counter of them: 50 % more instructions)
        if firsts.count(b"{") == len(firsts):
            return len(firsts)
    return _count_lines(data, start)


def _count_lines(data: bytes, start: int) -> int:
    """The non-blank lines from ``start``: in a block whose every line opens with ``{``
    (its first does, and no newline is left once each ``}\\n{`` is taken out), its
    pieces between them; in any other, its lines less the blank ones (:func:`_blanks`)."""
    count = 0
    for block in _byte_blocks(data, start):
        pieces = block.split(b"}\n{")  # (searched in C past the bytes that are no "{")
        if block[:1] == b"{" and b"\n" not in b"".join(pieces):
            count += len(pieces)
            continue
        lines = block.split(b"\n")  # (a "\r" left at a line's end: no blank line's less)
        count += len(lines) - _blanks(lines)
    return count


def _blank(line: bytes) -> bool:
    """``not line.strip()`` of the decoded line (which strips Unicode spaces too)."""
    rest = line.lstrip()
    if rest[:1] == b"{":
        return False
    return not rest or not line.decode("utf-8").strip()


#: a line's first byte (a cached one-byte ``bytes``; ``b""`` for an empty line)
_FIRST = itemgetter(slice(0, 1))


def _blanks(lines: list[bytes]) -> int:
    """How many of ``lines`` are blank (:func:`_blank`; one that opens with ``{`` is not)."""
    firsts = list(map(_FIRST, lines))
    if firsts.count(b"{") == len(lines):
        return 0
    return sum(map(_blank, compress(lines, map(ne, firsts, repeat(b"{")))))


def _streamable(data: bytes) -> bool:
    """The file's lines are the bytes' lines (no lone ``\r``) and it is not UTF-16.  That it
    is UTF-8 is not checked here: each of its lines is, as it is read (:func:`_refusal`)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False  # refused as UTF-16 by the whole path
    return b"\r" not in data or data.count(b"\r") == data.count(b"\r\n")  # (no CR: no count)


def _utf8(data: bytes) -> bool:
    """The file is UTF-8 (decoded a piece at a time, cut at newlines: none cuts a sequence)."""
    view = memoryview(data)
    at, end = 0, len(data)
    while at < end:
        stop = data.find(b"\n", at + _CHECK_CHUNK)
        stop = end if stop < 0 else stop + 1
        try:
            str(view[at:stop], "utf-8")  # (decoded to be checked, then dropped)
        except UnicodeDecodeError:
            return False
        at = stop
    return True


def _refusal(exc: ConfigError | UnicodeDecodeError, data: bytes, file: str) -> RisuError:
    """What reading a streamed fixture's lines raises for ``exc``: the whole path's refusal
    when the file is not UTF-8 (it comes first: the whole path decodes first), else ``exc``.
    The file is not decoded ahead: each line is, as it is read (parsed by orjson, which
    refuses what ``bytes.decode`` refuses, or decoded: :func:`_json_line`, :func:`_blank`;
    no UTF-8 sequence holds a newline), so one that is not UTF-8 raises by its last line."""
    if not _utf8(data):
        try:
            decode_text(data, file)
        except DocumentError as bad:
            return ConfigError(Code.BAD_FIXTURE, bad.why, path=file)
    if isinstance(exc, UnicodeDecodeError):  # (cannot be: a line of a UTF-8 file is UTF-8)
        return _err("", f"not UTF-8: {exc}").with_path(file)
    return exc.with_path(file)


def stream_fixture(path: str | Path) -> Fixture:
    """:func:`load_fixture`, an NDJSON fixture's turns left in its bytes and read as the
    replay goes (:class:`TurnStream`): the same fixture, the same errors for a file with
    one problem; a file with several may name a later line's first (a turn is checked when
    it is reached, and every line was parsed before any was checked), but one that is not
    UTF-8 is refused as the whole read refuses it, whatever else it holds, when the replay
    reaches a line that shows it (:func:`_refusal`: the file is not decoded ahead)."""
    p = Path(path)
    return stream_fixture_bytes(read_or_raise(p, MAX_FIXTURE_BYTES, ConfigError), str(p))


def stream_fixture_bytes(data: bytes, file: str) -> Fixture:
    """:func:`stream_fixture` of bytes already read (the format follows ``file``'s
    extension): what ``replay run`` makes of them, or the error it gives."""
    if Path(file).suffix.lower() not in (".ndjson", ".jsonl") or not _streamable(data):
        return parse_fixture_bytes(data, file)
    try:
        return _streamed(data, file)
    except (ConfigError, UnicodeDecodeError) as exc:
        raise _refusal(exc, data, file) from None


def _streamed(data: bytes, file: str) -> Fixture:
    header: dict[str, Any] | None = None
    first = begin = 1
    for lineno, line, after in _lines(data, 3 if data.startswith(_BOM) else 0, 1):
        if not _blank(line):
            header = _header_line(_json_line(line, lineno), lineno)
            first, begin = lineno + 1, after
            break
    if header is None:
        raise _err("", EMPTY_FILE)
    name, config, messages, ids = _header({**header, "turns": None})
    count = _count_turns(data, begin)
    if not count:
        raise _err("turns", NO_TURNS)
    _check_turn_count(count)
    stream = TurnStream(data, begin, count, first, ids, file)
    return Fixture(name, messages, [], config, sha256_prefixed(data),
                   show_name(Path(file).name), stream)


def load_fixture(path: str | Path) -> Fixture:
    p = Path(path)
    return parse_fixture_bytes(read_or_raise(p, MAX_FIXTURE_BYTES, ConfigError), str(p))
