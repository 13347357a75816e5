"""Fuzzing pass 45 over the format readers and the read path of ``inspect``, ``analyze``,
``project`` and ``ingest``: each defect it found, as a class."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import struct
import zipfile
from pathlib import Path
from typing import Any

import msgpack
import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from harness import run_cli

from risutools.analysis import analyze
from risutools.errors import FormatError
from risutools.formats import detect, read_path, rpack
from risutools.formats.card import card_module_data
from risutools.formats.model import Module
from risutools.formats.summary import summarize
from risutools.formats.unpack import sanitise
from risutools.projection.run import project_path

# --------------------------------------------- a lone surrogate in a key (not only in a value)

LONE = "\ud800"


def _risum(module: dict[str, Any]) -> bytes:
    main = json.dumps({"module": module, "type": "risuModule"}).encode()  # (\ud800 escaped)
    return bytes([0x6F, 0]) + struct.pack("<I", len(main)) + rpack.encode(main) + b"\x00"


def _charx(card: dict[str, Any], module: dict[str, Any] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("card.json", json.dumps(card))
        if module is not None:
            zf.writestr("module.risum", _risum(module))
    return buf.getvalue()


_MODULE = {"name": "n", "id": "i", LONE: 1,
           "lorebook": [{"content": "{{getvar::a}}", LONE: {LONE: LONE}}]}
_CARD = {"spec": "chara_card_v3", "data": {"name": "c", "first_mes": "{{getvar::x}}", LONE: 1,
                                           "character_book": {"entries": [
                                               {LONE: 1, "content": "{{getvar::y}}"}]}}}


def _surrogate_key_sources() -> dict[str, bytes]:
    return {
        "m.json": json.dumps({**_MODULE, "type": "risuModule"}).encode(),
        "m.risum": _risum(_MODULE),
        "card.json": json.dumps(_CARD).encode(),
        "c.charx": _charx(_CARD, _MODULE),
        "lore.json": json.dumps({"type": "risu", "data": [{LONE: 1, "content": "{{a}}"}]}).encode(),
    }


@pytest.mark.parametrize("name", ["m.json", "m.risum", "c.charx"])  # (a card's and a
# lorebook's identity hash never held the key: they are in the ingest test below)
def test_a_lone_surrogate_in_a_key_projects(tmp_path: Path, name: str) -> None:
    """A key holding an unpaired surrogate (``"\\ud800": 1``, valid JSON text) reached the
    content identity's hash unreplaced: ``project`` and a whole ``ingest`` run stopped with
    ``internal error: UnicodeEncodeError``.  Keys are text and are replaced like values."""
    p = tmp_path / name
    p.write_bytes(_surrogate_key_sources()[name])
    docs = project_path(str(p))
    assert docs
    for doc in docs:  # the identity names a component; it is the same on every run
        assert doc["component_id"] == project_path(str(p))[docs.index(doc)]["component_id"]
    r = run_cli("project", p, "-o", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert "internal error" not in r.stderr


def test_ingest_goes_on_past_a_lone_surrogate_key(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name, data in _surrogate_key_sources().items():
        (src / name).write_bytes(data)
    r = run_cli("ingest", src, "-o", tmp_path / "cat", "-j", "1", "-q")
    assert "internal error" not in r.stderr
    assert r.returncode in (0, 1), r.stderr  # (1: the id collisions of one module's copies)
    assert len(list((tmp_path / "cat").glob("*.json"))) >= 3


# ------------------------------------ JSON exports: RisuAI's importModule order and mapping


def _read_json(tmp_path: Path, obj: Any, name: str = "x.json") -> Any:
    p = tmp_path / name
    p.write_text(json.dumps(obj), encoding="utf-8")
    return p


@pytest.mark.parametrize("obj", [
    {"type": "risu", "entries": {"0": {"keys": ["k"], "content": "{{getvar::a}}"}}},
    {"type": "risu", "data": None, "entries": [{"keys": ["k"], "content": "{{getvar::a}}"}]},
    {"type": "regex", "entries": {"0": {"keys": ["k"], "content": "{{getvar::a}}"}}},
    {"type": "regex", "data": [{"in": "a", "out": "b"}],
     "entries": {"0": {"content": "{{getvar::a}}"}}},
    {"type": "worldinfo", "entries": {"0": {"keys": ["k"], "content": "{{getvar::a}}"}}},
], ids=["risu-no-data", "risu-null-data", "regex-no-data", "regex-and-entries", "other-type"])
def test_an_entries_object_is_a_world_book_whatever_its_type(tmp_path: Path, obj: Any) -> None:
    """RisuAI's ``importModule`` tries ``type: "risu"`` with a truthy ``data``, then any
    truthy ``entries`` whatever the ``type`` is, then ``type: "regex"`` with ``data``; the
    reader refused these (``bad-field``, ``unsupported-export``) or read regex scripts
    RisuAI never imports."""
    p = _read_json(tmp_path, obj)
    for name in ("x.json", "x.txt"):  # (read as .json, and detected by content)
        q = tmp_path / name
        q.write_bytes(p.read_bytes())
        (m,) = read_path(q)
        assert m.source.format == "json-external-lorebook" and m.component_type == "lorebook"
        assert [e["content"] for e in m.lorebook] == ["{{getvar::a}}"]


def test_world_book_entries_map_as_risuai_maps_them(tmp_path: Path) -> None:
    """``convertExternalLorebook``: NovelAI's ``text``/``displayName``/``forceActivation``/
    ``contextConfig.budgetPriority`` and SillyTavern's ``entry``/``name``/``priority``/
    ``keywords`` are read (the content a reviewer must see was dropped: CBS in ``text``
    was invisible to the analysis); ``insertion_order`` and ``keysecondary`` are not
    RisuAI's and are not read; no order is 0; ``||`` skips empty strings, ``??`` only null."""
    entries = {
        "10": {"keys": ["ten"], "content": "c10"},
        "2": {"keys": ["n"], "text": "{{getvar::secret}}", "displayName": "D",
              "forceActivation": True, "contextConfig": {"budgetPriority": 400}},
        "b": {"key": "", "keywords": ["k1", 2, None, True], "entry": "e", "comment": "",
              "name": "nm", "priority": 5, "order": None, "constant": False,
              "forceActivation": True, "secondary_keys": ["s1", "s2"], "keysecondary": ["no"],
              "insertion_order": 9, "selective": True},
        "a": "not an object",
        "c": {"key": [], "keys": ["unused"], "content": "c"},  # ([] is truthy: joined, "")
        "9" * 5000: {"content": "long"},  # (no array index: a key of the others, in order)
    }
    (m,) = read_path(_read_json(tmp_path, {"entries": entries}))
    two, ten, b, a, c, long = m.lorebook
    assert long["content"] == "long"  # for ... in order: index keys ascending, then the others
    assert two == {"key": "n", "insertorder": 400, "comment": "D",
                   "content": "{{getvar::secret}}", "mode": "normal", "alwaysActive": True,
                   "secondkey": "", "selective": False}
    assert ten["key"] == "ten" and ten["content"] == "c10" and ten["insertorder"] == 0
    assert b == {"key": "k1, 2, , true", "insertorder": 5, "comment": "nm", "content": "e",
                 "mode": "normal", "alwaysActive": False, "secondkey": "s1, s2",
                 "selective": True}
    assert a == {"key": "", "insertorder": 0, "comment": "", "content": "", "mode": "normal",
                 "alwaysActive": False, "secondkey": "", "selective": False}
    assert c["key"] == ""
    assert m.data["entries"] == entries  # the original kept untouched
    # a lorebook export with its data is a lorebook, entries or not (RisuAI tries it first)
    p = _read_json(tmp_path, {"type": "risu", "data": [{"content": "d"}], "entries": entries})
    (m,) = read_path(p)
    assert m.source.format == "json-lorebook" and m.lorebook == [{"content": "d"}]


# ------------------------------------ detection: a module's layout must not hide it from ingest

_ACTIVE = {"name": "n", "id": "i", "lowLevelAccess": True, "trigger": [
    {"comment": "", "type": "start", "conditions": [],
     "effect": [{"type": "triggerlua", "code": "request('http://x')"}]}]}


def _hidden_by_layout() -> dict[str, bytes]:
    """JSON modules RisuAI imports (``JSON.parse`` then ``type === 'risuModule'``) whose
    ``type`` the detection peek never saw: after 4,096 other top-level keys, past the first
    MiB and not the last member, or the whole object behind more blanks than the 4 KiB
    head (or the 1 MiB peek)."""
    many = {f"k{i}": i for i in range(70)}
    more = {f"k{i}": i for i in range(5000)}
    big = {"pad": "a" * (1100 * 1024)}
    return {
        "many-keys.json": json.dumps({**many, "type": "risuModule", **_ACTIVE}).encode(),
        "more-keys.json": json.dumps({**more, "type": "risuModule", **_ACTIVE, "id": "i2",
                                      "name": "n2"}).encode(),
        "past-peek.json": json.dumps({**big, "type": "risuModule", **_ACTIVE}).encode(),
        "past-peek.lorebook": json.dumps({**big, "entries": {"0": {"content": "{{a}}"}},
                                          "name": "w"}).encode(),
        "blank-lead.txt": b" " * 5000 + json.dumps({"type": "risuModule", **_ACTIVE}).encode(),
        "blank-past-peek.json": b"\xef\xbb\xbf" + b"\r\n" * (600 * 1024)
        + json.dumps({**_ACTIVE, "type": "risuModule"}).encode(),
    }


@pytest.mark.parametrize("name", sorted(_hidden_by_layout()))
def test_a_module_is_detected_whatever_its_layout(tmp_path: Path, name: str) -> None:
    p = tmp_path / name
    p.write_bytes(_hidden_by_layout()[name])
    assert detect(p) in ("json-module", "json-external-lorebook")
    (m,) = read_path(p)  # (a name RisuAI imports as JSON, not .json: detected by content)
    assert m.source.format == detect(p)


def test_a_json_lines_file_is_told_from_its_peek(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # a chat log past the 1 MiB peek whose first object has a hundred keys: the peek sees
    # that object whole and names no export, so its text is not read and parsed whole (once
    # the scan stopped at 64 keys, every ingest run parsed such a file)
    from risutools.formats import reader

    p = tmp_path / "chat.jsonl"
    head = json.dumps({f"meta{i}": i for i in range(100)})
    p.write_text(head + "\n" + (json.dumps({"mes": "hi " * 40}) + "\n") * 20_000, "utf-8")
    assert p.stat().st_size > reader.JSON_PEEK

    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("the whole text was parsed")

    monkeypatch.setattr(reader, "loads_object", refuse)
    assert detect(p) is None


def test_ingest_projects_a_module_its_layout_hid(tmp_path: Path) -> None:
    """Such a module was counted among "not Risu files" and the run exited 0: a module
    with lowLevelAccess and network Lua never reached the catalog."""
    src = tmp_path / "src"
    src.mkdir()
    for name, data in _hidden_by_layout().items():
        (src / name).write_bytes(data)
    (src / "other.json").write_bytes(json.dumps({"x": ["y" * 600] * 3000}).encode())
    r = run_cli("ingest", src, "-o", tmp_path / "cat", "-j", "1", "-q", "--json")
    assert r.returncode in (0, 1), r.stderr
    counts = json.loads(r.stdout)["counts"]
    assert (counts["files"], counts["ok"], counts["not_risu"]) == (6, 6, 1)
    # (the two blank-led files hold one module: one document)
    assert len(list((tmp_path / "cat").glob("*.json"))) == 5


def _preset_with_a_key_in_front(rpacked: bool) -> bytes:
    """A preset envelope whose first key is another one (RisuAI decodes the map: the order
    of its keys does not matter to it)."""
    key = hashlib.sha256(b"risupreset").digest()
    sealed = AESGCM(key).encrypt(bytes(12), msgpack.packb(
        {"name": "p", "mainPrompt": "{{getvar::x}}"}), None)
    envelope = {"note": "z" * 200, "presetVersion": 2, "type": "preset", "preset": sealed}
    blob = gzip.compress(msgpack.packb(envelope, use_bin_type=True), mtime=0)
    return rpack.encode(blob) if rpacked else blob


@pytest.mark.parametrize("rpacked", [True, False])
def test_a_preset_is_detected_whatever_the_order_of_its_keys(tmp_path: Path,
                                                              rpacked: bool) -> None:
    """The peek looks for ``pres`` in the first 96 inflated bytes only: a preset with a
    longer key in front was "not a Risu file" to ingest (read by its extension, it read)."""
    fmt = "risup" if rpacked else "risupreset"
    src = tmp_path / "src"
    src.mkdir()
    p = src / "preset.bin"
    p.write_bytes(_preset_with_a_key_in_front(rpacked))
    assert detect(p) == fmt
    (m,) = read_path(p)
    assert m.source.format == fmt and m.component_type == "preset"
    r = run_cli("ingest", src, "-o", tmp_path / "cat", "-j", "1", "-q", "--json")
    counts = json.loads(r.stdout)["counts"]
    assert (counts["ok"], counts["not_risu"]) == (1, 0), r.stderr
    # a compressed map that names no preset key is still no Risu file (read to its end)
    other = gzip.compress(msgpack.packb({"note": "z" * 200, "other": 1}), mtime=0)
    p.write_bytes(rpack.encode(other) if rpacked else other)
    assert detect(p) is None


# ---------------------- a name RisuAI imports by (.risum, .charx, .risup ...) is never passed over


def _named_sources() -> dict[str, bytes]:
    card = {"spec": "chara_card_v3", "data": {"name": "c", "first_mes": "{{getvar::x}}"}}
    honest = _charx(card, {"name": "m", "id": "i", "lowLevelAccess": True})
    listed = honest.index(b"PK\x01\x02")
    return {
        # the directory names other members than the local headers RisuAI walks
        "renamed.charx": honest[:listed] + honest[listed:].replace(b"card.json", b"card.jsoX")
        .replace(b"module.risum", b"module.risuX"),
        "cut.charx": honest[:listed],  # no directory: RisuAI's streaming reader needs none
        "prefixed.charx": b"\x00not a zip\x00" * 50 + honest,  # RisuAI seeks PK\x03\x04
        "text.risum": b"hello",
        "other.bin": b"hello",
    }


def test_a_file_risuai_imports_by_its_name_is_read_or_failed(tmp_path: Path) -> None:
    """These were counted as "not Risu files" (exit 0): content detection did not know
    them, while RisuAI picks its reader by the name and loads the cards."""
    src = tmp_path / "src"
    src.mkdir()
    for name, data in _named_sources().items():
        (src / name).write_bytes(data)
    r = run_cli("ingest", src, "-o", tmp_path / "cat", "-j", "1", "-q", "--json")
    run = json.loads(r.stdout)
    status = {s["path"]: s["status"] for s in run["sources"]}
    assert status == {"renamed.charx": "failed", "cut.charx": "failed",
                      "prefixed.charx": "ok", "text.risum": "failed"}
    assert run["counts"]["not_risu"] == 1 and r.returncode == 1
    errors = " ".join(s.get("error") or "" for s in run["sources"])
    for code in ("zip-hidden-member", "zip-invalid", "bad-magic"):
        assert code in errors


# ------------------------------------------------------------ unpack: every Windows device name


@pytest.mark.parametrize("name", ["COM0", "lpt0.png", "COM\u00b9", "lpt\u00b3.x", "Com\u00b2.webp"])
def test_every_windows_device_name_is_prefixed(name: str) -> None:
    """Windows reserves COM0/LPT0 and COM/LPT with a superscript 1-3 as it reserves COM1;
    ``sanitise`` prefixed only COM1-9 and LPT1-9 (``isalnum`` keeps the superscripts)."""
    assert sanitise(name) == "_" + name


# ------------------------------------------ presets: every refusal says where, in JSON's words

_KEY = hashlib.sha256(b"risupreset").digest()


def _envelope_file(envelope: Any, *, raw: bytes | None = None) -> bytes:
    packed = raw if raw is not None else msgpack.packb(envelope, use_bin_type=True)
    return rpack.encode(gzip.compress(packed, mtime=0))


def _sealed(plain: bytes, key: bytes = _KEY) -> bytes:
    return AESGCM(key).encrypt(bytes(12), plain, None)


_GOOD = _sealed(msgpack.packb({"name": "p"}))
_PRESET_REFUSALS = {
    "not-map": ([1, 2], None, "risup-bad-structure", "envelope", "is an array, not a map"),
    "type": ({"presetVersion": 2, "type": "x\u202e", "preset": _GOOD}, None, "wrong-type",
             "envelope /type", '"type" is "x\u202e", expected'),
    "version-true": ({"presetVersion": True, "type": "preset", "preset": _GOOD}, None,
                     "bad-version", "envelope /presetVersion", "presetVersion true ("),
    "version-str": ({"presetVersion": "2", "type": "preset", "preset": _GOOD}, None,
                    "bad-version", "envelope /presetVersion", 'presetVersion "2" ('),
    "no-sealed": ({"presetVersion": 2, "type": "preset", "pres": [1]}, None,
                  "risup-bad-structure", "envelope /pres", "(found an array)"),
    "wrong-key": ({"presetVersion": 0, "type": "preset",
                   "preset": _sealed(b"\x80", bytes(32))}, None, "risup-decrypt-failed",
                  "envelope /preset", "AES-GCM"),
    "short": ({"presetVersion": 2, "type": "preset", "preset": b"abc"}, None,
              "risup-decrypt-failed", "envelope /preset", "shorter than its tag"),
    "inner-list": ({"presetVersion": 2, "type": "preset", "preset": _sealed(b"\x92\x01\x02")},
                   None, "risup-bad-structure", "preset", "is an array, not a map"),
    "inner-key": ({"presetVersion": 2, "type": "preset", "preset": _sealed(b"\x81\x90\x01")},
                  None, "risup-not-msgpack", "preset", "whose key is a map or an array"),
    "envelope-bytes": (None, b"\xc1", "risup-not-msgpack", "envelope", "byte 0xc1"),
}


@pytest.mark.parametrize("case", sorted(_PRESET_REFUSALS))
def test_a_preset_refusal_names_where_and_spells_values_as_json(tmp_path: Path,
                                                                 case: str) -> None:
    """A preset refusal named no place (``risutools: x.risup: wrong-type: ...``) and showed
    values as Python writes them (``True``, ``'2'``, ``unhashable type: 'list'``)."""
    envelope, raw, code, where, said = _PRESET_REFUSALS[case]
    p = tmp_path / "x.risup"
    p.write_bytes(_envelope_file(envelope, raw=raw))
    with pytest.raises(FormatError) as info:
        read_path(p)
    assert (info.value.code, info.value.where) == (code, where)
    assert said in info.value.why


def test_a_preset_cut_in_its_stream_names_the_stream(tmp_path: Path) -> None:
    p = tmp_path / "x.risup"
    whole = gzip.compress(msgpack.packb({"presetVersion": 2}), mtime=0)
    p.write_bytes(rpack.encode(whole[: len(whole) // 2]))
    with pytest.raises(FormatError) as info:
        read_path(p)
    assert info.value.where == "offset 0 (compressed stream)"


def test_an_export_data_of_the_wrong_type_is_named_in_json_words(tmp_path: Path) -> None:
    p = _read_json(tmp_path, {"type": "regex", "data": "x"})
    with pytest.raises(FormatError) as info:
        read_path(p)
    assert info.value.why.endswith('needs a "data" list, found a string')
    # an "entries" that is neither an object nor a list: said so, where (was "not an export")
    p = _read_json(tmp_path, {"entries": "abc"})
    with pytest.raises(FormatError) as info:
        read_path(p)
    assert (info.value.code, info.value.where) == ("bad-field", "/entries")
    assert info.value.why.endswith("found a string")


# ------------------------------------------------- pack never writes what the reader refuses


def test_pack_refuses_a_module_its_reader_would_refuse_once_wrapped(tmp_path: Path) -> None:
    """A module export at the 200-level bound reads; wrapped in ``{"module": ...}`` it is one
    level deeper: ``pack`` wrote a .risum that ``inspect`` then refused (``json-too-deep``)."""
    deep: Any = []
    for _ in range(198):
        deep = [deep]
    src = _read_json(tmp_path, {"type": "risuModule", "name": "n", "id": "i", "a": deep},
                     "m.json")
    assert read_path(src)  # the export itself is within the bound
    out = tmp_path / "m.risum"
    r = run_cli("pack", src, "-o", out)
    assert r.returncode == 2 and "json-too-deep" in r.stderr and "refused when read" in r.stderr
    assert not out.exists()


# ----------------------------------- flags as RisuAI tests them: any truthy value, not only true

_LUA = [{"comment": "", "type": "start", "conditions": [],
         "effect": [{"type": "triggerlua", "code": "request('http://x')"}]}]


@pytest.mark.parametrize("flag", [1, "yes", "false", {}, []],
                         ids=["one", "yes", "false-text", "object", "array"])
def test_a_truthy_low_level_access_is_granted(tmp_path: Path, flag: Any) -> None:
    """RisuAI grants lowLevelAccess with ``if(lowLevelAccess)`` (a module's flag is copied
    onto its triggers: ``t.lowLevelAccess = module.lowLevelAccess``); a card's with
    ``risuext?.lowLevelAccess ?? false``.  Only ``true`` was read as granted: a module with
    ``"lowLevelAccess": 1`` was shown as one that cannot call ``request``."""
    module = {"name": "m", "id": "i", "lowLevelAccess": flag, "trigger": _LUA}
    p = _read_json(tmp_path, {**module, "type": "risuModule"}, "m.json")
    (m,) = read_path(p)
    assert m.low_level_access and summarize(m)["low_level_access"] is True
    assert analyze(m).low_level_access
    card = {"spec": "chara_card_v3", "data": {"name": "c", "extensions": {"risuai": {
        "lowLevelAccess": flag, "triggerscript": _LUA}}}}
    c = tmp_path / "c.charx"
    c.write_bytes(_charx(card, {"name": "m", "id": "i", "trigger": _LUA}))
    own, carried = read_path(c)
    assert own.card and own.card["low_level_access"] is True
    assert analyze(own).low_level_access and analyze(carried).low_level_access
    for falsy in (0, "", None, False):  # (JavaScript's false values still grant nothing)
        p.write_text(json.dumps({**module, "lowLevelAccess": falsy, "type": "risuModule"}))
        (m,) = read_path(p)
        assert not m.low_level_access and not analyze(m).low_level_access


@pytest.mark.parametrize("flag", ["yes", 1, {}])
def test_a_truthy_use_regex_reads_the_keys_as_patterns(flag: Any) -> None:
    """RisuAI's lorebook search runs ``if(arg.regex)`` with ``regex: useRegex``: an entry
    with ``"useRegex": "yes"`` has its key compiled as a regex (RA201 was never checked);
    a falsy one does not."""
    def rules(use_regex: Any) -> list[str]:
        entry = {"key": "/(a+)+$/", "content": "c", "useRegex": use_regex}
        return [f.rule for f in analyze(Module({"name": "m", "id": "i",
                                                "lorebook": [entry]})).findings]

    assert rules(flag) == rules(True) == ["RA201"]
    assert rules(0) == rules("") == rules(None) == rules(False) == []


@pytest.mark.parametrize("container", ["json", "charx"])
def test_a_card_book_entry_with_use_regex_has_its_keys_checked(tmp_path: Path,
                                                                container: str) -> None:
    """``convertCharbook`` keeps ``use_regex`` when the first key starts with ``/``, and the
    lorebook search then compiles the keys: the card view dropped the flag, so a card's
    catastrophic key pattern was never checked (RA201), where a module's was."""
    def card(use_regex: Any, keys: list[str]) -> dict[str, Any]:
        return {"spec": "chara_card_v3", "data": {"name": "c", "character_book": {"entries": [
            {"keys": keys, "content": "{{getvar::x}}", "use_regex": use_regex,
             "secondary_keys": ["/(b+)+$/"]}]}}}

    def rules(use_regex: Any, keys: list[str]) -> list[str]:
        if container == "json":
            p = _read_json(tmp_path, card(use_regex, keys), "c.json")
        else:
            p = tmp_path / "c.charx"
            p.write_bytes(_charx(card(use_regex, keys)))
        (m,) = read_path(p)
        return sorted(f.rule for f in analyze(m).findings if f.rule == "RA201")

    assert rules(True, ["/(a+)+$/"]) == ["RA201", "RA201"]  # key and secondary key
    assert rules("yes", ["/(a+)+$/"]) == ["RA201", "RA201"]
    assert rules(True, ["plain", "/(a+)+$/"]) == []  # (RisuAI turns the flag off)
    assert rules(False, ["/(a+)+$/"]) == []


def test_a_card_book_entry_is_named_as_risuai_names_it() -> None:
    """``convertCharbook``: ``comment: book.name ?? book.comment ?? ""`` -- the name first
    (a loader's ``getLoreBooks(id, name)`` finds the entry by it); the card view took the
    comment first."""
    def named(**entry: Any) -> Any:
        card = {"spec": "chara_card_v3", "data": {"character_book": {"entries": [entry]}}}
        return card_module_data(card)["lorebook"][0]["comment"]

    assert named(name="lib.lua", comment="the library") == "lib.lua"
    assert named(name="", comment="x") == ""  # (?? keeps an empty name)
    assert named(comment="x") == "x" and named() == ""
    assert named(name=5, comment="x") == ""  # (no text: no name)
