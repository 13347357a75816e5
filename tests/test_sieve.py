"""Issue 23: ``promote ID`` and ``approve ID`` on a catalog of thousands of documents parse
only the files whose bytes may hold what they look for (:mod:`risutools.contract.sieve`),
and answer as a reading of every document does.

Each spelling a parser turns into the string is checked to be one (the loaders read it back
as the id) and to be kept by the sieve; every answer of the sieved catalog (the entries
found, the refusals, the conflict gates' graph, the used-record check) is compared with the
same question put to the whole catalog, read as before."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from harness import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from risutools.canonical import canonical
from risutools.catalog import approvals as approvals_mod
from risutools.catalog.approvals import load_approvals, named_for
from risutools.catalog.catalog import Catalog, Entry
from risutools.catalog.graph import LIVE_WORDS, Graph, neighbours
from risutools.catalog.promote import plan
from risutools.contract import loaders
from risutools.contract.loaders import load_bytes
from risutools.contract.records import Places, _approval_path, record_key
from risutools.contract.sieve import needles, plain
from risutools.contract.sourcestore import SourceStore
from risutools.contract.transitions import (
    read_log,
    record_used,
    used_records,
)
from risutools.errors import DocumentError
from risutools.values import MAX_DOCUMENT_BYTES

ID = "module.risu.300005.mood-tracker-5"
PLAIN_CHARS = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in "\"'/\\")


_STATUS = {"review_status": "candidate", "runtime_status": "inactive"}


def _json_doc(spelled: str, **more: Any) -> bytes:
    rest = "".join(f', {json.dumps(k)}: {json.dumps(v)}' for k, v in
                   {"provenance": _STATUS, **more}.items())
    return f'{{"contract": "matrix-component-v1", "component_id": {spelled}{rest}}}'.encode()


def _yaml_doc(spelled: str) -> bytes:
    return (f"contract: matrix-component-v1\ncomponent_id: {spelled}\n"
            "provenance: {review_status: candidate, runtime_status: inactive}\n").encode()


def _u(c: str, upper: bool = False) -> str:
    return f"\\u{ord(c):04X}" if upper else f"\\u{ord(c):04x}"


def json_spellings(text: str) -> list[str]:
    """JSON string tokens that read as ``text``: as itself, every character escaped, one
    character escaped at each place."""
    out = [json.dumps(text), '"' + "".join(map(_u, text)) + '"',
           '"' + "".join(_u(c, True) for c in text) + '"']
    out += ['"' + text[:i] + _u(text[i]) + text[i + 1:] + '"' for i in range(len(text))]
    return out


def yaml_spellings(text: str) -> list[str]:
    """YAML scalars that read as ``text`` (after ``component_id: ``)."""
    esc = [f"\\x{ord(c):02x}" for c in text]
    out = [text, f"'{text}'", f'"{text}"', f"!!str {text}", f"{text}  # a comment",
           '"' + "".join(esc) + '"', '"' + "".join(f"\\u{ord(c):04x}" for c in text) + '"',
           '"' + "".join(f"\\U{ord(c):08x}" for c in text) + '"',
           f"|-\n  {text}", f">-\n  {text}", f"&a {text}"]
    # an escaped line break in double quotes joins the lines (no space): split anywhere
    out += [f'"{text[:i]}\\\n    {text[i:]}"' for i in range(1, len(text))]
    out += ['"' + text[:i] + esc[i] + text[i + 1:] + '"' for i in range(len(text))]
    return out


def _read_back(data: bytes, fmt: str) -> list[Any]:
    out = load_bytes(data, "x", fmt=fmt)
    assert not out.problems, out.problems
    return [d.doc.get("component_id") for d in out.documents]


@pytest.mark.parametrize("spelled", json_spellings(ID))
def test_every_json_spelling_of_an_id_is_kept(spelled: str) -> None:
    data = _json_doc(spelled)
    assert _read_back(data, "json") == [ID]  # (a real spelling of the id)
    found = needles([ID])
    assert found is not None
    assert found.may_hold(data, "json")
    assert found.may_hold(data.replace(b"\n", b" "), "ndjson")


@pytest.mark.parametrize("spelled", yaml_spellings(ID))
def test_every_yaml_spelling_of_an_id_is_kept(spelled: str) -> None:
    data = _yaml_doc(spelled)
    for raw in (data, b"\xef\xbb\xbf" + data, data.replace(b"\n", b"\r\n")):
        assert _read_back(raw, "yaml") == [ID]
        found = needles([ID])
        assert found is not None and found.may_hold(raw, "yaml")


_PLAIN_IDS = st.text(alphabet=PLAIN_CHARS, min_size=1, max_size=30)


@settings(max_examples=300, deadline=None)
@given(text=_PLAIN_IDS, escape=st.lists(st.integers(0, 2), min_size=30, max_size=30))
def test_any_json_escapes_of_a_plain_string_are_kept(text: str, escape: list[int]) -> None:
    spelled = '"' + "".join(c if e == 0 else _u(c, e == 2) for c, e in zip(text, escape,
                                                                           strict=False)) + '"'
    data = _json_doc(spelled)
    if _read_back(data, "json") != [text]:  # (a character JSON must escape: not plain)
        pytest.fail(f"{spelled} did not read back as {text!r}")
    found = needles([text])
    assert found is not None and found.may_hold(data, "json")


@settings(max_examples=300, deadline=None)
@given(text=_PLAIN_IDS, way=st.lists(st.integers(0, 4), min_size=30, max_size=30))
def test_any_yaml_double_quoted_escapes_of_a_plain_string_are_kept(text: str,
                                                                   way: list[int]) -> None:
    parts = []
    for c, w in zip(text, way, strict=False):
        parts.append([c if c != '"' else '\\"', f"\\x{ord(c):02x}", f"\\u{ord(c):04X}",
                      f"\\U{ord(c):08x}", "\\\n  " + c][w])
    data = _yaml_doc('"' + "".join(parts) + '"')
    assert _read_back(data, "yaml") == [text]
    found = needles([text])
    assert found is not None and found.may_hold(data, "yaml")


def test_what_the_sieve_leaves_out() -> None:
    found = needles([ID])
    assert found is not None
    # another id that holds this one, an id in a key, the words in prose: none is the string
    assert not found.may_hold(_json_doc(json.dumps(ID + "0")), "json")
    assert not found.may_hold(f'{{"{ID}x": 1, "note": "see {ID} there"}}'.encode(), "json")
    assert found.may_hold(b'{"a": "\\n"}', "yaml")  # (YAML: any backslash may spell it)
    assert not found.may_hold(b'{"a": "\\n"}', "json")  # (JSON: \u alone could)
    assert found.may_hold(b'{"a": "\\u0041"}', "json")
    assert needles([]) is not None and not needles([]).may_hold(b"anything \\u", "json")


@pytest.mark.parametrize("text", [ID, "a", "x:y#z", "A.b_c-1~!"])
def test_plain_strings(text: str) -> None:
    assert plain(text)


@pytest.mark.parametrize("text", ["", "a b", 'a"b', "a'b", "a/b", "a\\b", "a\tb", "a\nb",
                                  "módulo", "\udcff", "a\x00", "a\x7f", "\u2028"])
def test_strings_that_are_not_plain_are_not_sieved(text: str) -> None:
    assert not plain(text)
    assert needles([ID, text]) is None


# --------------------------------------------------------------------------- a catalog


def _catalog(root: Path, elsewhere: Path) -> Path:
    """Every way a document may hold ``ID`` (or seem to), and what a folder walk refuses."""
    root.mkdir()
    (root / "a.json").write_bytes(_json_doc(json.dumps(ID)))
    (root / "b.json").write_bytes(_json_doc(json_spellings(ID)[1]))  # escaped throughout
    (root / "c.yaml").write_bytes(_yaml_doc(yaml_spellings(ID)[5]))  # \x escapes
    (root / "d.ndjson").write_bytes(b"\n".join([
        _json_doc(json.dumps("module.risu.1.other")), b"{broken " + ID.encode(),
        _json_doc(json_spellings(ID)[3]), b"", _json_doc(json.dumps(ID + "-0"))]) + b"\n")
    (root / "e.yaml").write_bytes(_yaml_doc("module.risu.2.other") + b"---\n"
                                  + _yaml_doc(f"'{ID}'"))
    (root / "f.json").write_bytes(_json_doc(json.dumps(ID + "0")))
    (root / "g.json").write_bytes(b'{"component_id": "' + ID.encode() + b'", oops}')
    (root / "h.json").write_bytes(_json_doc(json.dumps(ID), n=float("nan")))  # unhashable
    (root / "i.json").write_bytes(b'["' + ID.encode() + b'"]')  # no object
    (root / "j.json").write_bytes(b'{"note": "' + ID.encode() + b'"}')  # no component
    (root / "k.yaml").write_bytes(b"\xff\xfe" + _yaml_doc(ID).decode().encode("utf-16-le"))
    for sub in ("sub", "drafts", "approvals", ".hidden"):
        (root / sub).mkdir()
        (root / sub / "x.json").write_bytes(_json_doc(json.dumps(ID)))
    (root / ".risutools.yaml").write_text('exclude: ["drafts/*"]\n')
    os.symlink(root / "a.json", root / "link.json")
    outside = elsewhere / "out.json"
    outside.write_bytes(_json_doc(json.dumps(ID)))
    os.symlink(outside, root / "out.json")
    os.mkfifo(root / "fifo.json")
    with open(root / "big.json", "wb") as f:
        f.truncate(MAX_DOCUMENT_BYTES + 1)
    return root


@pytest.fixture
def escaped_catalog(tmp_path: Path) -> Path:
    (tmp_path / "elsewhere").mkdir()
    return _catalog(tmp_path / "cat", tmp_path / "elsewhere")


def _shown(e: Entry) -> tuple[Any, ...]:
    return (e.path, e.line, e.fmt, e.doc_sha256, e.key, e.where(), e.component_id)


def _answer(cat: Catalog, component: str) -> tuple[Any, ...]:
    try:
        return ("found", _shown(cat.resolve(component)))
    except DocumentError as exc:
        return ("refused", exc.code, exc.one_line())


IDS = [ID, ID + "0", ID + "-0", "module.risu.1.other", "module.risu.2.other",
       "module.risu.9.none", "contract", "matrix-component-v1", "a b", "x\"y", "módulo", ""]


@pytest.mark.parametrize("component", IDS)
def test_a_component_by_id_is_what_the_whole_catalog_says(escaped_catalog: Path,
                                                          component: str) -> None:
    whole = Catalog.open(escaped_catalog)
    whole.entries()  # (read whole first: by_id then picks from every entry, as before)
    sieved = Catalog.open(escaped_catalog)
    assert [_shown(e) for e in sieved.by_id(component)] == \
        [_shown(e) for e in whole.by_id(component)]
    assert _answer(Catalog.open(escaped_catalog), component) == _answer(whole, component)


def test_an_id_written_with_escapes_is_refused_as_ambiguous(escaped_catalog: Path) -> None:
    c = Catalog.open(escaped_catalog)
    with pytest.raises(DocumentError) as e:
        c.resolve(ID)
    assert e.value.code == "ambiguous-component"
    assert e.value.why.startswith("6 documents have this component_id")
    for name in ("a.json", "b.json", "c.yaml", "d.ndjson:3", "e.yaml", "sub/x.json"):
        assert f"/{name}" in e.value.why, name
    assert e.value.why.count("/a.json") == 1  # (link.json leads to it: one file, read once)
    assert "drafts" not in e.value.why and "approvals" not in e.value.why
    r = run_cli("promote", ID, "--to", "pending_human_review", "--catalog", escaped_catalog)
    assert r.returncode == 2 and "ambiguous-component" in r.stderr
    assert "b.json" in r.stderr and "c.yaml" in r.stderr


@pytest.mark.parametrize("holder", ["b.json", "c.yaml", "d.ndjson"])
def test_an_id_written_only_with_escapes_is_found(tmp_path: Path, holder: str) -> None:
    (tmp_path / "elsewhere").mkdir()
    root = _catalog(tmp_path / "cat", tmp_path / "elsewhere")
    for name in ("a.json", "b.json", "c.yaml", "d.ndjson", "e.yaml", "link.json", "out.json",
                 "sub/x.json"):
        if name != holder:
            (root / name).unlink()
    found = Catalog.open(root).resolve(ID)
    assert found.path.name == holder and found.component_id == ID
    r = run_cli("approve", ID, "--action", "request_review", "--reviewer", "kim",
                "--catalog", root)
    assert r.returncode == 0, r.stderr
    assert f"of {ID}" in r.stdout


def test_a_document_link_out_of_the_catalog_is_named_when_the_id_is_not_found(
        tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    root = _catalog(tmp_path / "cat", tmp_path / "elsewhere")
    whole = Catalog.open(root)
    whole.entries()
    for cid in ("module.risu.9.none", ID + "-9"):
        got = _answer(Catalog.open(root), cid)
        assert got == _answer(whole, cid)
        assert got[1] == "outside-catalog" and "out.json" in got[2]


def test_by_id_parses_only_the_files_that_may_hold_the_id(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    root = tmp_path / "cat"
    root.mkdir()
    for n in range(40):
        (root / f"d{n}.json").write_bytes(_json_doc(json.dumps(f"module.risu.{n}.x")))
    parsed = _parsed_names(monkeypatch)
    (e,) = Catalog.open(root).by_id("module.risu.7.x")
    assert e.path.name == "d7.json" and parsed == ["d7.json"]


# --------------------------------------------------------------------------- the graph

CAPS = {"provides": ["context.token_budget"], "conflicts": ["regex.transform"]}


def _component(cid: str, review: str = "candidate", runtime: str = "inactive",
               **caps: list[str]) -> dict[str, Any]:
    return {"contract": "matrix-component-v1", "component_id": cid,
            "provenance": {"review_status": review, "runtime_status": runtime},
            "capabilities": {"provides": [], "requires": [], "conflicts": [], **caps}}


def _escaped(doc: dict[str, Any]) -> bytes:
    """``doc`` as JSON with every non-ASCII-free string's characters escaped."""
    return json.dumps(doc, ensure_ascii=True).encode().replace(
        b'"active"', b'"\\u0061ctive"').replace(b'"regex.transform"', b'"regex\\u002etransform"')


def _graph_catalog(root: Path) -> Path:
    root.mkdir()
    me = _component("module.risu.1.me", "approved", **CAPS)
    (root / "me.json").write_bytes(json.dumps(me).encode())
    rivals = [
        ("live.json", _component("module.risu.2.live", "promoted",
                                 conflicts=["context.token_budget"])),
        ("active.json", _component("module.risu.3.active", "approved", "active",
                                   provides=["regex.transform", "context.token_budget"])),
        ("idle.json", _component("module.risu.4.idle", "approved",
                                 provides=["regex.transform"])),
        ("other.json", _component("module.risu.5.other", "promoted", "active",
                                  provides=["lorebook.entries"])),
    ]
    for name, doc in rivals:
        (root / name).write_bytes(json.dumps(doc).encode())
        (root / ("esc-" + name)).write_bytes(_escaped(dict(doc, component_id=doc[
            "component_id"] + "-esc")))
    (root / "y.yaml").write_text(
        'contract: matrix-component-v1\ncomponent_id: module.risu.6.yaml\n'
        'provenance: {review_status: approved, runtime_status: "\\x61ctive"}\n'
        'capabilities:\n  provides: ["context.\\x74oken_budget"]\n')
    (root / "n.ndjson").write_bytes(b"\n".join(
        canonical(_component(f"module.risu.{n}.nd", "promoted",
                             provides=["regex.transform"] if n % 2 else []))
        for n in range(10, 14)) + b"\n")
    return root


def _hits(g: Graph, e: Entry) -> tuple[Any, ...]:
    return tuple(tuple((o.component_id, o.where(), c) for o, c in hits) for hits in (
        g.conflicts_with(e, "live"), g.conflicts_with(e, "active"), g.exclusive_rivals(e)))


@pytest.mark.parametrize("how", ["path", "id", "id-aside", "own"])
def test_the_conflict_gates_see_what_the_whole_catalog_shows(tmp_path: Path, how: str) -> None:
    root = _graph_catalog(tmp_path / "cat")
    whole = Catalog.open(root)
    e = whole.resolve(str(root / "me.json"))
    expected = _hits(Graph(whole.entries()), e)
    assert all(expected), expected  # (each question has answers, escaped ones among them)
    assert any("-esc" in h[0] for hits in expected for h in hits)
    assert any(h[0] == "module.risu.6.yaml" for hits in expected for h in hits)
    c = Catalog.open(root)
    if how == "path":
        mine = c.resolve(str(root / "me.json"))
    else:
        mine = c.resolve("module.risu.1.me", LIVE_WORDS if how == "id-aside" else ())
    got = neighbours(c, mine, own=how == "own")
    assert _hits(Graph(got), mine) == expected
    if how == "id-aside":
        assert got is c.aside[1]  # type: ignore[index]  # (read in the same pass)
    if how == "own":
        assert [x for x in got if x.path == mine.path] != []


# --------------------------------------------------------------------------- approvals


def _record(cid: str = ID, base: str = "sha256:" + "ab" * 32, **more: str) -> dict[str, Any]:
    return {"component_id": cid, "component_version": "1.0.0", "action": "approve",
            "reviewer": "kim", "at": "2026-01-01T00:00:00+00:00", "base_sha256": base,
            "note": "", **more}


def _records_catalog(root: Path, elsewhere: Path) -> list[dict[str, Any]]:
    """A log whose lines name records every way a line can; the records to ask about."""
    (root / "approvals" / "deep").mkdir(parents=True)
    asked = [_record(), _record(note="copy"), _record(note="escaped"), _record(note="link"),
             _record(note="outside"), _record(note="deep"), _record(note="unused"),
             _record(cid="module.risu.1.other")]
    a = root / "approvals"
    (a / "one.yaml").write_text(json.dumps(asked[0]))
    (a / "copy-under-another-name.yaml").write_text(json.dumps(asked[1]))
    (a / "esc.json").write_bytes(json.dumps(asked[2], ensure_ascii=True).encode().replace(
        b"sha256:ab", b"sha256:\\u0061b"))
    (a / "target.yaml").write_text(json.dumps(asked[3]))
    os.symlink(a / "target.yaml", a / "link.yaml")
    (elsewhere / "out.yaml").write_text(json.dumps(asked[4]))
    os.symlink(elsewhere / "out.yaml", a / "out.yaml")
    (a / "deep" / "r.yaml").write_text(json.dumps(asked[5]))
    (a / "unused.yaml").write_text(json.dumps(asked[6]))
    (a / "dir.yaml").mkdir()
    os.mkfifo(a / "fifo.yaml")
    (root / "top.yaml").write_text(json.dumps(asked[7]))
    names = ["approvals/one.yaml", "copy-under-another-name.yaml", "approvals/esc.json",
             "link.yaml", "approvals/out.yaml", "approvals/deep/r.yaml", "deep/../one.yaml",
             "dir.yaml", "fifo.yaml", "missing.yaml", "/etc/hostname", "top.yaml", "..",
             "approvals/deep/./r.yaml", record_key(_record(note="by name"))]
    lines = [{"component_id": ID, "from_status": "candidate", "to_status": "pending_human_review",
              "approval": {"file": n, "sha256": "sha256:0"}} for n in names]
    (root / "transitions.ndjson").write_bytes(b"".join(canonical(x) + b"\n" for x in lines))
    return [*asked, _record(note="by name"), _record(base="sha256:" + "cd" * 32)]


def test_the_used_record_check_is_what_every_record_says(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    root = tmp_path / "cat"
    asked = _records_catalog(root, tmp_path / "elsewhere")
    log = read_log(root)
    assert not log.problems, log.problems
    every = used_records(read_log(root))
    answers = [record_used(log, r) for r in asked]
    assert answers == [record_key(r) in every for r in asked]
    assert answers == [True, True, True, True, False, True, False, True, True, False]
    places = Places(root)
    for line in log.by_component[ID]:
        name = line[1]["approval"]["file"]
        want = _approval_path(root, name)
        got = places.find(name)
        assert (None if got is None else Path(got[0])) == want, name


def test_a_promotion_lists_only_its_components_records(tmp_path: Path) -> None:
    root = tmp_path / "cat"
    (tmp_path / "elsewhere").mkdir()
    _records_catalog(root, tmp_path / "elsewhere")
    a = root / "approvals"
    for name in (f"{ID}--approve--{'0' * 12}.yaml", f"{ID}--retire--{'0' * 12}.yaml",
                 f"module.risu.1.x--approve--{'1' * 12}.yaml", ".hidden.yaml", "x.yml",
                 "x.txt", f"{ID}--approve--{'0' * 12}-2.json"):
        (a / name).write_text(json.dumps(_record()))
    c = Catalog.open(root)
    every = load_approvals(c)
    for cid, action in ((ID, "approve"), (ID, None), ("module.risu.1.x", "approve")):
        mine = load_approvals(c, component=cid, action=action)
        assert [x.file for x in mine] == \
            [x.file for x in every if named_for(x.path.name, cid, action)]
    assert approvals_mod._record_files(a, lambda n: False) == []


# --------------------------------------------------------------------------- the source store


def _store(root: Path, elsewhere: Path) -> Path:
    (root / "300001").mkdir(parents=True)
    (root / "b" / "c").mkdir(parents=True)
    for name in ("300001_x.json", "300001.risum", "3000011.json", "300001-y.charx", "z.charx",
                 "b/300001 a.json", "b/c/300002_q.json", "300001/module.json",
                 "300001/other.json", "ab12cd.bin"):
        (root / name).write_text(name)
    (elsewhere / "300001_out.json").write_text("out")
    os.symlink(elsewhere / "300001_out.json", root / "300001_link-out.json")
    os.symlink(root / "z.charx", root / "b" / "300001_link-in.json")
    os.mkfifo(root / "300001_fifo.json")
    os.symlink(root / "b", root / "300001_folder-link")
    return root


@pytest.mark.parametrize("ask", [("300001", "module.json"), ("300001", "z.charx!card.json"),
                                 ("300002", "x"), ("", "z.charx"), (None, "module.json"),
                                 ("3", "y")])
def test_a_store_is_asked_for_one_sources_files_as_its_whole_listing_answers(
        tmp_path: Path, ask: tuple[str | None, str]) -> None:
    (tmp_path / "elsewhere").mkdir()
    root = _store(tmp_path / "store", tmp_path / "elsewhere")
    whole = SourceStore(root)
    every = whole.files()  # (listed and looked at whole first: the answer before)
    assert root / "300001_link-out.json" not in every and root / "300001_fifo.json" not in every
    assert root / "b" / "300001_link-in.json" in every
    assert SourceStore(root).by_name(*ask) == whole.by_name(*ask)
    for digest in ("ab12cd", "300001", "nothing"):
        listed = SourceStore(root, content_scan=False)
        listed.files()
        assert SourceStore(root, content_scan=False).by_content(digest) == \
            listed.by_content(digest)
        lazy = SourceStore(root)
        assert lazy.matching(lambda name, _, d=digest: d in name) == \
            [p for p in every if digest in p.name]


def _parsed_names(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the JSON and YAML files parsed from now on, and ``line`` for each
    NDJSON line."""
    parsed: list[str] = []
    real, real_line = loaders.load_bytes, loaders.fast_json

    def counted(data: bytes, name: str, **kw: Any) -> Any:
        parsed.append(Path(name).name)
        return real(data, name, **kw)

    def line(data: bytes) -> Any:
        parsed.append("line")
        return real_line(data)

    monkeypatch.setattr(loaders, "load_bytes", counted)
    monkeypatch.setattr(loaders, "fast_json", line)
    return parsed


#: the files of :func:`_graph_catalog` with an escape (each parsed whatever is looked for)
_ESCAPED = ["esc-active.json", "esc-idle.json", "esc-other.json", "y.yaml"]


@pytest.mark.parametrize(("named", "to", "also", "expected"), [
    # named by its path: the file, then (gate G2: no other document holds its id) what may
    # hold the id, as when it is named by id
    ("path", "pending_human_review", (), ["me.json", "me.json", *_ESCAPED]),
    ("id", "pending_human_review", (), ["me.json", *_ESCAPED]),
    # live, sharing a capability: two of the four NDJSON lines
    ("path", "approved", (), ["me.json", "me.json", *_ESCAPED, "live.json", "active.json",
                              "esc-live.json", *_ESCAPED, "line", "line"]),
    # named by id, read with it: every live one (other.json shares none)
    ("id", "approved", LIVE_WORDS, ["me.json", "live.json", "active.json", "other.json",
                                    "esc-live.json", *_ESCAPED, *["line"] * 4]),
])
def test_a_promotion_parses_the_component_and_the_live_components_it_may_meet(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named: str, to: str,
        also: tuple[str, ...], expected: list[str]) -> None:
    root = _graph_catalog(tmp_path / "cat")
    parsed = _parsed_names(monkeypatch)
    c = Catalog.open(root)
    e = c.resolve(str(root / "me.json") if named == "path" else "module.risu.1.me", also)
    p = plan(c, e, to)
    assert ("conflict" in {v.gate for v in p.verdicts}) == (to == "approved")
    assert sorted(parsed) == sorted(expected)
