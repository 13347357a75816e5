"""A batch of rows written from its shape's templates (``replay/row_form.py``) is what
``json`` writes, or is left to the reference writers.

The reference is ``json`` itself: the rows' canonical form (``sort_keys``, separators
``,``/``:``, NaN refused) and the report file's indented form (``indent=1``, the rows two
levels deep).  Every batch the templates write must be those bytes; a batch they decline
must be one the reference writes otherwise or refuses (and the rows of real replays must
never be declined: the shapes named in ``run.py`` are the rows ``run.py`` makes)."""

from __future__ import annotations

import copy
import enum
import random
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest
from replay_cases import FloatSub, IntSub, StrSub, json_row_forms, toggled

from risutools.replay import row_form as row_form_mod
from risutools.replay import spool as spool_mod
from risutools.replay.fixture import build_fixture, load_fixture
from risutools.replay.row_form import Nullable, RowShape
from risutools.replay.run import CUTTER_ROW, MONITOR_ROW, replay_cutter, replay_monitor
from risutools.replay.spool import Spool, _serialised
from risutools.replay.synth import synthesize
from risutools.settings.replay import load_replay_config

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "replay"


def _rows(name: str, monitor: bool = False) -> list[dict[str, Any]]:
    fx = load_fixture(FIX / name)
    cfg = load_replay_config(None, fx.config)
    run = (replay_monitor if monitor else replay_cutter)(fx, cfg)
    assert isinstance(run.rows, list)
    return run.rows


def _synth_rows() -> list[dict[str, Any]]:
    data = synthesize(5, 400, edit_rate=0.3, delete_rate=0.2, edit_window=6,
                      config={"max_context": 1200, "preserve_latest": 4})
    toggled(data, 37, 20, 24)  # the module off now and then
    fx = build_fixture(data)
    cfg = load_replay_config(None, fx.config)
    run = replay_cutter(fx, cfg)
    assert isinstance(run.rows, list)
    return run.rows


@pytest.mark.parametrize("name", sorted(p.name for p in FIX.glob("*.yaml")))
def test_the_rows_of_real_replays_are_written_from_their_shape(name: str) -> None:
    """Every fixture's rows, cutter and monitor alone: written from the templates (never
    declined), the bytes json writes and the bytes of the orjson writer."""
    for monitor, shape in ((False, CUTTER_ROW), (True, MONITOR_ROW)):
        try:
            rows = _rows(name, monitor)
        except Exception:  # a fixture meant to be refused
            continue
        for size in (1, 3, len(rows)):
            for i in range(0, len(rows), size):
                batch = rows[i:i + size]
                forms = shape.forms(batch)
                assert forms is not None, (name, monitor, i)
                assert forms == json_row_forms(batch) == _serialised(batch)


def test_the_rows_of_a_long_synthetic_replay() -> None:
    """Cuts, alerts, the module off, edits and deletes: written, json's bytes."""
    rows = _synth_rows()
    assert any(r["budget_dropped"] for r in rows) and any(not r["enabled"] for r in rows)
    assert any(r["monitor"]["alert"] for r in rows)
    forms = CUTTER_ROW.forms(rows)
    assert forms is not None and forms == json_row_forms(rows)


class _Color(enum.Enum):
    RED = 1


class _Mapping:
    """Reads as a dict of ``data`` (``[]``, ``len``), is not one (json refuses it); the
    collector lists four objects of it (its three slots, its class), as many as the
    values of the ``ops`` it stands for."""

    __slots__ = ("b", "c", "data")

    def __init__(self, data: dict[str, Any]) -> None:
        self.data, self.b, self.c = data, None, None

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def __len__(self) -> int:
        return len(self.data)


class _KeyLike:
    """Hashes and compares as a string key, is not one (json refuses it as a key)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __hash__(self) -> int:
        return hash(self.text)

    def __eq__(self, other: object) -> bool:
        return other == self.text if isinstance(other, str) else NotImplemented

    def __lt__(self, other: object) -> bool:
        raise TypeError("not comparable")


#: scalars the templates must write as json does (the fast path taken)
PLAIN_VALUES: list[Any] = [
    0, -1, 2**63 - 1, -(2**63), 2**64 - 1, True, False, None, 0.0, -0.0, 0.1, 1.25, 98.75,
    1e-4, 123456789.125, 9999999999999998.0, "", "값", "é", "\U0001f600", "\x00\x1f\x7f",
    'q"u', "back\\slash", "%s", "%%", "%", "\n", "\t\r", "\u2028", "a  b", "{}", "[]", ":",
    "NORMAL", "null", ",", "a, b", ",%s,", '","',
]
#: values the templates must leave to the reference writers (json's spelling is not
#: orjson's, json refuses them, or the value is not a scalar)
OTHER_VALUES: list[Any] = [
    1e-05, 1e16, 1e300, float("nan"), float("inf"), -float("inf"), 2**64, -(2**63) - 1,
    10**30, "\ud800", {}, [], [1], {"a": 1}, (1,), _Color.RED, IntSub(3),
    StrSub("s"), FloatSub(0.5), b"x",
]


def _positions(row: dict[str, Any]) -> list[tuple[str, ...]]:
    """The paths of a row's scalars (and of its objects)."""
    out: list[tuple[str, ...]] = []
    for k, v in row.items():
        out.append((k,))
        if isinstance(v, dict):
            out += [(k, *p) for p in _positions(v)]
    return out


def _set(row: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for k in path[:-1]:
        row = row[k]
    row[path[-1]] = value


def _check(shape: RowShape, batch: list[Any], must: bool | None) -> None:
    """The templates write json's bytes or decline; ``must``: they must write (True) or
    decline (False)."""
    forms = shape.forms(batch)
    ref = json_row_forms(batch)
    if forms is not None:
        assert forms == ref
    if must is True:
        assert forms is not None
    if must is False:
        assert forms is None


def test_every_position_with_every_kind_of_value() -> None:
    """Each scalar or object of a real row (anchor found, and anchor null) replaced by each
    value, in a batch of three rows: json's bytes whenever the templates write; plain
    scalars at a scalar's place are written, the others never."""
    rows = _rows("anchor-edit.yaml")
    base = [r for r in rows if r["state"]["anchor"] is not None][:2]
    null = [r for r in rows if r["state"]["anchor"] is None][:1] or [copy.deepcopy(base[0])]
    null[0]["state"]["anchor"] = None
    for template in (base[0], null[0]):
        scalars = {p for p in _positions(template)
                   if not isinstance(_get(template, p), dict) and p != ("state", "anchor")}
        for path in _positions(template):
            for plain, values in ((True, PLAIN_VALUES), (False, OTHER_VALUES)):
                for value in values:
                    row = copy.deepcopy(template)
                    _set(row, path, value)
                    batch = [copy.deepcopy(base[1]), row, copy.deepcopy(null[0])]
                    scalar = path in scalars
                    must = (plain if scalar
                            else None if path == ("state", "anchor") else False)
                    _check(CUTTER_ROW, batch, must)


def _get(row: dict[str, Any], path: tuple[str, ...]) -> Any:
    for k in path:
        row = row[k]
    return row


def test_keys_missing_extra_or_not_strings() -> None:
    rows = _rows("toggle.yaml")[:3]
    cases: list[list[dict[str, Any]]] = []
    for path in _positions(rows[0]):
        gone = copy.deepcopy(rows)
        parent = gone[1]
        for k in path[:-1]:
            parent = parent[k]
        del parent[path[-1]]
        cases.append(gone)
        extra = copy.deepcopy(rows)
        parent = extra[1]
        for k in path[:-1]:
            parent = parent[k]
        parent["zz"] = 1
        cases.append(extra)
    swapped = copy.deepcopy(rows)  # "request" replaced by a key that only looks like it
    swapped[1] = {(_KeyLike(k) if k == "request" else k): v for k, v in swapped[1].items()}
    cases.append(swapped)
    subclass = copy.deepcopy(rows)  # a dict subclass, a mapping json writes as a dict
    subclass[2]["ops"] = OrderedDict(subclass[2]["ops"])
    cases.append(subclass)
    mapping = copy.deepcopy(rows)
    mapping[1]["ops"] = _Mapping(mapping[1]["ops"])
    cases.append(mapping)
    inner = copy.deepcopy(rows)  # the anchor's keys as another kind of dict sees them
    inner[0]["state"]["anchor"] = {"role": "user", "length": 1, 5: "x"}
    cases.append(inner)
    for batch in cases:
        _check(CUTTER_ROW, batch, False)


def test_random_batches_against_json() -> None:
    """Rows of the cutter's shape with random scalars (mostly plain, now and then one of
    another kind), in random batches: json's bytes, or declined only for a batch holding
    a value other than a plain scalar."""
    rng = random.Random(11)
    template = _rows("anchor-edit.yaml")[0]
    paths = [p for p in _positions(template) if not isinstance(_get(template, p), dict)]
    for _ in range(300):
        batch = []
        odd = False
        for _ in range(rng.randint(1, 6)):
            row = copy.deepcopy(template)
            if rng.random() < 0.3:
                row["state"]["anchor"] = None
            for path in paths:
                if path[:2] == ("state", "anchor") and row["state"]["anchor"] is None:
                    continue
                if rng.random() < 0.02:
                    _set(row, path, rng.choice(OTHER_VALUES))
                    odd = True
                elif rng.random() < 0.5:
                    _set(row, path, rng.choice(PLAIN_VALUES))
            batch.append(row)
        _check(CUTTER_ROW, batch, None if odd else True)


def test_a_shape_of_nested_and_nullable_objects() -> None:
    """A shape of one key, of a nullable object alone, keys that sort before and after
    the objects, and characters json escapes in its keys."""
    shape = RowShape({"a": None, "m": {"x": None}, "n": Nullable({"q": None, "%s": None}),
                      'z"\\': None})
    rows: list[Any] = [
        {"a": 1, "m": {"x": "값"}, "n": None, 'z"\\': None},
        {"a": 2.5, "m": {"x": True}, "n": {"q": "%", "%s": 0}, 'z"\\': "\x01"},
    ]
    _check(shape, rows, True)
    _check(RowShape({"only": None}), [{"only": 1}, {"only": "b"}], True)
    with pytest.raises(ValueError):
        RowShape({"n": Nullable({"q": {"deeper": None}})})  # type: ignore[dict-item]


@pytest.mark.parametrize("batch", [1, 2, 512])
def test_a_spool_with_a_shape_is_a_spool_without(batch: int,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows of the shape, with batches of other rows among them (a float spelled with an
    exponent, a comma in a string): both files byte for byte those of a spool without a
    shape, and the rows read back alike."""
    monkeypatch.setattr(spool_mod, "BATCH", batch)
    rows = copy.deepcopy(_rows("anchor-edit.yaml") * 40)
    rows[7]["monitor"]["used_pct"] = 1e-05
    rows[len(rows) - 5]["anchor"] = "lost, then found"
    shaped, plain = Spool(shape=CUTTER_ROW), Spool()
    for r in rows:
        shaped.append(r)
        plain.append(r)
    assert b"".join(shaped.canonical_body()) == b"".join(plain.canonical_body())
    assert b"".join(shaped.indented_body()) == b"".join(plain.indented_body())
    assert b"".join(shaped.canonical_body()) == json_row_forms(rows)[0]  # type: ignore[index]
    assert list(shaped) == rows


def test_values_with_commas_are_spelled_in_one_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch whose strings hold commas (an alert's text), line breaks and the indented
    list's own separator written inside a string: each value's spelling is orjson's own,
    found by at most two calls for the whole batch, never one a value (each of which kept
    its bytes in a buffer of 4 KiB: 10 MB for a batch of 512 alerts)."""
    rng = random.Random(5)
    pool = [v for v in PLAIN_VALUES if not isinstance(v, float) or v == v] + [
        "a,\n  b", ",\n  ", "Context 65.0% used, 35.0% left: finish the task", "]", "[\n"]
    calls: list[int] = []
    real = row_form_mod.orjson.dumps

    def counted(value: Any, *args: Any, **kwargs: Any) -> bytes:
        calls.append(1)
        return real(value, *args, **kwargs)

    monkeypatch.setattr(row_form_mod.orjson, "dumps", counted)
    for size in (1, 2, 7, 600):
        flat = [rng.choice(pool) for _ in range(size)]
        flat[0] = "x, y"  # (at least one comma: the second call's case)
        calls.clear()
        parts = row_form_mod._spelled(flat)
        assert parts == [real(v) for v in flat]
        assert len(calls) <= 2
    assert row_form_mod._spelled([]) == []
    assert row_form_mod._spelled([2**64]) is None  # orjson refuses it: the reference writes
