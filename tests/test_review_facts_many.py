"""The review's first pass finds a chunk's facts together (``facts_found_many``: the files
read, then their texts parsed at once by ``fast_json_many``): what it finds of each document
is what ``facts_found`` finds of it alone, byte for byte, whatever the facts files hold."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from risutools.catalog import interactions
from risutools.catalog.interactions import MAX_FACTS_BYTES, facts_found, facts_found_many
from risutools.rowspool import unpack
from risutools.safeio import FolderFiles
from risutools.settings.catalog import FACTS_DIR, FACTS_FORMAT


def _facts(i: int, **more: Any) -> dict[str, Any]:
    return {"facts": FACTS_FORMAT, "component_id": f"c{i}", "source_sha256": f"sha256:{i}",
            "title": f"T{i} 제목", "lorebook_entries": ["a", 1, "b"], "toggles_read": [],
            "module_id": "m", "button_names": ["x", "y"], "hosts": [], "risu_buttons": 0,
            "low_level_access": False, "findings": [{"rule": "R", "n": i}], "coverage": {},
            "state": [{"scope": "chat", "key": "k", "read": True}], "note": "", **more}


def _text(i: int, **more: Any) -> bytes:
    return json.dumps(_facts(i, **more), ensure_ascii=False).encode()


#: facts texts of every kind the fast path takes or leaves: (what, bytes); None: no file
KINDS: list[tuple[str, bytes | None]] = [
    ("current", b""),  # (filled in per id: _body)
    ("current, escaped", b""),
    ("none", None),
    ("another component", b""),
    ("another source", b""),
    ("no source refs", b""),
    ("not JSON", b"{not json"),
    ("empty", b""),
    ("blank", b"  \n"),
    ("a list", b"[1, 2]"),
    ("a scalar", b"7"),
    ("null", b"null"),
    ("byte-order mark", b""),
    ("not UTF-8", b'{"facts": "\xff"}'),
    ("UTF-16", '{"facts": 1}'.encode("utf-16")),
    ("duplicate key", b""),
    ("duplicate key, escaped", b""),
    ("colon escaped", b""),
    ("float", b""),
    ("float in a list", b""),
    ("integer past 64 bits", b""),
    ("negative zero", b""),
    ("NaN", b""),
    ("deep", b""),
    ("deep, past the bound", b""),
    ("lone surrogate", b""),
    ("another format", b""),
    ("every member empty", b""),
]


def _body(kind: str, i: int) -> bytes | None:
    text = dict(KINDS)[kind]
    if text is None or text or kind == "empty":
        return text
    if kind == "current":
        return _text(i)
    if kind == "current, escaped":
        return json.dumps(_facts(i, title="\u2028\t\"é\"")).encode()
    if kind == "another component":
        return _text(i, component_id="other")
    if kind == "another source":
        return _text(i, source_sha256="sha256:old")
    if kind == "no source refs":
        return _text(i, source_sha256=None)
    if kind == "byte-order mark":
        return b"\xef\xbb\xbf" + _text(i)
    if kind == "duplicate key":
        return _text(i)[:-1] + b', "module_id": "again"}'
    if kind == "duplicate key, escaped":
        return _text(i)[:-1] + b', "\\u006dodule_id": "again"}'
    if kind == "colon escaped":
        return _text(i, module_id="a\\u003ab").replace(b"a\\\\u003ab", b"a\\u003ab")
    if kind == "float":
        return _text(i, weight=1.5)
    if kind == "float in a list":
        return _text(i, hosts=[1, 2.0])
    if kind == "integer past 64 bits":
        return _text(i, risu_buttons=2 ** 70)
    if kind == "negative zero":
        return _text(i)[:-1] + b', "lorebook_loads_unresolved": -0.0}'
    if kind == "NaN":
        return _text(i)[:-1] + b', "weight": NaN}'
    if kind == "deep":
        return _text(i)[:-1] + b', "x": ' + b"[" * 60 + b"]" * 60 + b"}"
    if kind == "deep, past the bound":
        return _text(i)[:-1] + b', "x": ' + b"[" * 70 + b"]" * 70 + b"}"
    if kind == "lone surrogate":
        return _text(i)[:-1] + b', "x": "\\ud800"}'
    if kind == "another format":
        return _text(i, facts="component-facts-v0")
    if kind == "every member empty":
        return json.dumps({"facts": FACTS_FORMAT, "component_id": f"c{i}",
                           "source_sha256": f"sha256:{i}", "a": [], "b": {}, "c": "",
                           "d": 0, "e": False, "f": None}).encode()
    raise AssertionError(kind)


def _catalog(root: Path, outside: Path, kinds: list[str]) -> list[tuple[str, Any]]:
    """``facts/`` with one file of each kind in ``kinds`` (in order), plus a link inside,
    a link leading outside, a folder, a FIFO and a file past the bound; what each
    document's facts are found by (component id, source references)."""
    folder = root / FACTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    wanted: list[tuple[str, Any]] = []
    for i, kind in enumerate(kinds):
        body = _body(kind, i)
        if body is not None:
            (folder / f"c{i}.json").write_bytes(body)
        refs: Any = [{"sha256": f"sha256:{i}"}]
        if kind == "no source refs":
            refs = [] if i % 2 else "not a list"
        wanted.append((f"c{i}", refs))
    n = len(kinds)
    (outside / f"c{n}.json").write_bytes(_text(n))
    (folder / f"c{n}.json").symlink_to(outside / f"c{n}.json")  # leads outside
    (folder / f"c{n + 1}-target.json").write_bytes(_text(n + 1))
    (folder / f"c{n + 1}.json").symlink_to(folder / f"c{n + 1}-target.json")  # inside
    (folder / f"c{n + 2}.json").mkdir()
    if hasattr(os, "mkfifo"):
        os.mkfifo(folder / f"c{n + 3}.json")
    (folder / f"c{n + 4}.json").write_bytes(
        _text(n + 4)[:-1] + b', "pad": "' + b"x" * MAX_FACTS_BYTES + b'"}')
    wanted += [(f"c{n + k}", [{"sha256": f"sha256:{n + k}"}]) for k in range(5)]
    wanted.append(("../c0", [{"sha256": "sha256:0"}]))  # (a name safe_name makes safe)
    return wanted


def _alone(root: Path, wanted: list[tuple[str, Any]]) -> list[Any]:
    files = FolderFiles(root, FACTS_DIR)
    return _seen([facts_found(str(root), cid, refs, files) for cid, refs in wanted])


def _seen(found: list[Any]) -> list[Any]:
    """What was found as compared: orjson's packed facts as bytes, ``marshal``'s by what they
    read back as (its bytes mark a string held elsewhere too: they vary with who holds it)."""
    return [(blob if blob is None or blob[:1] == b"j" else ("m", repr(unpack(blob))), *rest)
            for blob, *rest in found]


def test_each_kind_alone_and_together(tmp_path: Path) -> None:
    """Every kind of facts file, found together, as found alone: the same packed facts
    (bytes), note, members at hand (and their types) and empty members."""
    root, outside = tmp_path / "cat", tmp_path / "outside"
    outside.mkdir()
    wanted = _catalog(root, outside, [k for k, _ in KINDS])
    ref = _alone(root, wanted)
    got = _seen(facts_found_many(str(root), wanted, FolderFiles(root, FACTS_DIR)))
    assert got == ref
    for a, b in zip(got, ref, strict=True):
        assert [type(v) for v in a[3]] == [type(v) for v in b[3]]
    notes = {f[1] for f in ref}
    assert len(notes) >= 5, notes  # current, none, another's, another source, unreadable
    assert sum(f[0] is not None for f in ref) >= 8  # (facts found, on both paths)
    assert any(f[0] is not None and f[0][0] == "m" for f in ref)  # (json's: marshal)
    assert any(f[0] is not None and f[0][:1] == b"j" for f in ref)  # (orjson's)


@pytest.mark.parametrize("seed", range(6))
def test_mixed_groups_in_any_order(tmp_path: Path, seed: int,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Kinds mixed at random in groups of any size (the groups the fast path refuses taken
    again in smaller groups, then alone): each document's facts as found alone."""
    rng = random.Random(seed)
    monkeypatch.setattr(interactions, "_MANY", rng.choice([4, 7, 256]))
    monkeypatch.setattr(interactions, "_FEW", rng.choice([1, 2, 3]))
    monkeypatch.setattr(interactions, "GROUP_BYTES", rng.choice([1, 900, 4000, 4 << 20]))
    plain = ["current", "current, escaped", "another component", "another source", "none",
             "every member empty"]
    kinds = [rng.choice(plain) if rng.random() < 0.8 else rng.choice(KINDS)[0]
             for _ in range(rng.randint(1, 60))]
    root, outside = tmp_path / "cat", tmp_path / "outside"
    outside.mkdir()
    wanted = _catalog(root, outside, kinds)
    rng.shuffle(wanted)
    assert _seen(facts_found_many(str(root), wanted, FolderFiles(root, FACTS_DIR))) == \
        _alone(root, wanted)


def test_groups_are_bounded_by_bytes(tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Files are read and parsed a group at a time, a group ending once it holds
    ``GROUP_BYTES``: never more than that and one file's bytes held before a group is
    done (400 facts files at the 1 MiB bound were held at once: 1.7 GB), the facts found
    the same as alone."""
    root, outside = tmp_path / "cat", tmp_path / "outside"
    outside.mkdir()
    wanted = _catalog(root, outside, ["current"] * 40)
    sizes = [len((root / FACTS_DIR / f"c{i}.json").read_bytes()) for i in range(40)]
    monkeypatch.setattr(interactions, "GROUP_BYTES", 3 * max(sizes))
    groups: list[int] = []
    real = interactions._found_group

    def counted(root_: str, group: list[Any]) -> list[Any]:
        groups.append(sum(len(d) for *_, d in group if type(d) is bytes))
        return real(root_, group)

    monkeypatch.setattr(interactions, "_found_group", counted)
    got = _seen(facts_found_many(str(root), wanted, FolderFiles(root, FACTS_DIR)))
    assert got == _alone(root, wanted)
    # (the file past the 1 MiB bound is not read: never among a group's bytes)
    assert len(groups) >= 10 and max(groups) < 4 * max(sizes), groups


def test_nothing_wanted(tmp_path: Path) -> None:
    assert facts_found_many(str(tmp_path), [], FolderFiles(tmp_path, FACTS_DIR)) == []


class _Str(str):
    def __repr__(self) -> str:
        return "_Str(" + super().__repr__() + ")"


class _Int(int):
    pass


#: values of every kind a facts member may hold, empty and not, of exact types and not
MEMBERS: list[Any] = [[], {}, "", None, False, 0, 0.0, -0.0, True, 1, -1, 2 ** 70, 1.5, "x",
                      ["a"], ["a", 1], [_Str("a")], [_Str("")], {"a": []}, [[]], _Str(""),
                      _Int(0), _Int(1), (), ("a",), b"", frozenset()]


def test_pared_as_its_formula() -> None:
    """:func:`pared` (one walk, the empty values spelled by their type) keeps and spells
    what its formula does: the members that are not empty and the format's own, and the
    others as (name, ``repr``) pairs, in order."""
    rng = random.Random(5)
    for n in range(300):
        keys = rng.sample(["facts", "a", "b", "c", "d", "e", "f", "g"], rng.randint(0, 8))
        facts = {k: rng.choice(MEMBERS) for k in keys}
        kept, empty = interactions.pared(facts)
        assert list(kept.items()) == [(k, v) for k, v in facts.items() if v or k == "facts"]
        assert all(kept[k] is facts[k] for k in kept)
        assert empty == tuple((k, repr(v)) for k, v in facts.items()
                              if not v and k != "facts"), n


def test_shared_members_as_their_formula() -> None:
    """A member kept at hand (:func:`interactions._shared`): a string interned, a list of
    nothing but ``str`` (exactly) a tuple of them interned, anything else as it is."""
    for v in MEMBERS:
        got = interactions._shared(v)
        if type(v) is list and all(type(x) is str for x in v):
            assert type(got) is tuple and list(got) == v
        elif type(v) is str:
            assert got == v and type(got) is str
        else:
            assert got is v, v


#: heads with every kind of title and first source reference a summary reads
LABELS: list[dict[str, Any]] = [
    {"projection": {"title": "제목"}, "provenance": {"source_refs": [{"source_id": "risu:1"}]}},
    {"projection": {"title": ""}, "provenance": {"source_refs": [{"source_id": ""}, 1]}},
    {"projection": {"title": 3}, "provenance": {"source_refs": [{"source_id": 4}]}},
    {"projection": {"title": None}, "provenance": {"source_refs": []}},
    {"projection": {"title": ["t"]}, "provenance": {"source_refs": {"source_id": "x"}}},
    {"projection": "title", "provenance": {"source_refs": ["risu:1"]}},
    {"projection": ["title"], "provenance": "source_refs"},
    {"projection": {"title": _Str("t")}, "provenance": {"source_refs": [{"source_id": "s"}]}},
    {"projection": {"title": "t"}, "provenance": {"source_refs": [{"source_id": _Str("s")}]}},
    {"projection": {}, "provenance": {}},
    {},
]


@pytest.mark.parametrize("doc", LABELS)
def test_a_label_is_what_a_summary_reads_of_the_head(doc: dict[str, Any]) -> None:
    """An entry given its label (the title and first source id, :func:`head_label`) is
    summarized as one reading its head: the same title and source id, of the same type."""
    from risutools.catalog.catalog import Entry, head_label, head_of

    doc = {"component_id": "c", "component_version": "1", **doc}
    label = head_label(doc)
    held = Entry(Path("x.json"), None, "json", doc, "h")  # (the document held whole)
    b = interactions.summarize_entry(".", held, FolderFiles(".", FACTS_DIR))
    if "_Str" in repr(doc):  # (a subclass no packing keeps: no label, the document held)
        assert label is None
        return
    ref = Entry(Path("x.json"), None, "json", None, "h", head=head_of(doc), reload=lambda: doc)
    fast = Entry(Path("x.json"), None, "json", None, "h", head=head_of(doc), reload=lambda: doc,
                 label=label)
    a = interactions.summarize_entry(".", fast, FolderFiles(".", FACTS_DIR))
    assert a == b == interactions.summarize_entry(".", ref, FolderFiles(".", FACTS_DIR))
    assert (type(a.title), type(a.source_id)) == (type(b.title), type(b.source_id)) == \
        (str, str)
    assert (a.title, a.source_id) == label[:2]
