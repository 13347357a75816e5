"""Walks over a document never write a JSON pointer a value (``jsonplaces.Place``): a
pointer is as long as every key above it, so one a value under a long key is quadratic.

Before: a 160 KB file holding ``NaN`` and a key of 100,000 characters over 20,000 values
made ``validate`` hold 2 GB (the full scan's pointer -> line table); 100,000 nested ``[``
made 9.8 GB (the scan's pointers, one a level, each as long as the levels above); MC500's
walk, the unpaired-surrogate walk, YAML's lines, a preset's non-finite floats, a packet's
changed fields and a patch's changed values each did the same.  Each case below is sized
so that the old walk needed about 100 MB or more; each now stays within a few MB.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from harness import SEED, run_cli, traced_peak

from risutools.catalog import binding, evidence
from risutools.contract.rules import active_code
from risutools.findings import MAX_POINTER_SHOWN, shown_pointer
from risutools.formats import risup
from risutools.jsonlines import patch_values, unpaired_surrogate
from risutools.jsonplaces import SCAN_DEPTH, pointer_at, scan
from risutools.values import TOO_DEEP, parse_json_exact
from risutools.yamlsafe import YamlRefused, load_yaml_documents

KEY = "k" * 20_000  # (its pointer's length, a value below it: 20,000 x 5,000 = 100 MB)
MANY = 5_000
BOUND = 16 * 1024 * 1024  # bytes traced at most, where the old walks took 100 MB or more


def _under_long_key(leaf: Any) -> dict[str, Any]:
    return {"x": 1, KEY: [leaf] * MANY}


def test_the_scan_of_a_long_key_over_many_values_is_linear() -> None:
    text = json.dumps({"n": 1, KEY: list(range(MANY))}).replace('"n": 1', '"n": NaN')
    res = None

    def run() -> None:
        nonlocal res
        res = scan(text)

    assert traced_peak(run) < BOUND
    assert res is not None and res.nonfinite == ("/n", 1, "NaN")
    assert res.lines[f"/{KEY}/{MANY - 1}"] == 1 and f"/{KEY}/{MANY}" not in res.lines
    doc, problem = parse_json_exact(text, line=None)
    assert doc is None and problem is not None and problem.pointer == "/n"


@pytest.mark.parametrize("inner", ["NaN", '{"a": 1, "a": 2}'])
def test_a_scan_past_its_depth_records_nothing_there(inner: str) -> None:
    """Deeper than SCAN_DEPTH a scan keeps a byte a level: 200,000 levels (9.8 GB before)
    in a few MB, and what is wrong down there is the depth (the document nests past the
    readers' bound in any case)."""
    levels = 200_000
    text = '{"y": ' + "[" * levels + inner + "]" * levels + "}"
    res = None

    def run() -> None:
        nonlocal res
        res = scan(text)

    assert traced_peak(run) < BOUND
    assert res is not None and res.deeper and res.nonfinite is None and res.duplicate is None
    # (SCAN_DEPTH containers open at most: the root object, then SCAN_DEPTH - 1 arrays)
    assert "/y" + "/0" * (SCAN_DEPTH - 2) in res.lines
    assert "/y" + "/0" * (SCAN_DEPTH - 1) not in res.lines
    for depth in (300, levels):  # (json's own recursion refuses the deeper one)
        shallow = '{"y": ' + "[" * depth + inner + "]" * depth + "}"
        assert parse_json_exact(shallow, line=None)[1].message == TOO_DEEP  # type: ignore[union-attr]
    # within the depth, the place of what is wrong is found as before
    near = '{"y": ' + "[" * 10 + inner + "]" * 10 + "}"
    problem = parse_json_exact(near, line=None)[1]
    assert problem is not None and problem.pointer.startswith("/y" + "/0" * 10)


def test_the_unpaired_surrogate_walk_writes_one_pointer() -> None:
    doc = {**_under_long_key("text"), "z": "bad \ud800"}
    found = None

    def run() -> None:
        nonlocal found
        found = unpaired_surrogate(doc)

    assert traced_peak(run) < BOUND
    assert found is not None and found[0] == "/z"


def test_mc500_under_a_long_key_lists_short_pointers() -> None:
    doc = {"payload": {KEY: ["local x = 1; os.execute(y)"] * 300}}
    issues: list[tuple[str, str]] = []

    def run() -> None:
        issues.extend(active_code(doc, None))

    assert traced_peak(run) < BOUND
    assert len(issues) == 300
    assert {p for p, _ in issues} == {"/payload"}  # (the key's container: within the bound)
    short = {"payload": {"lua": ["local x = 1; os.execute(y)"]}}
    assert [p for p, _ in active_code(short, None)] == ["/payload/lua/0"]


def test_validate_shows_a_long_pointer_as_its_container(tmp_path: Any) -> None:
    seed = json.loads(SEED.read_text("utf-8"))
    seed["payload"][KEY] = ["local x = 1; os.execute(y)"] * 3
    (tmp_path / "doc.json").write_text(json.dumps(seed), "utf-8")
    r = run_cli("validate", "-f", "json", "doc.json", cwd=tmp_path)
    found = [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "MC500"]
    assert [f["pointer"] for f in found] == ["/payload"] * 3


def test_shown_pointer() -> None:
    assert shown_pointer("/a/b") == "/a/b"
    long = "/a/" + "k" * MAX_POINTER_SHOWN + "/0"
    assert shown_pointer(long) == "/a"
    assert shown_pointer("/" + "k" * MAX_POINTER_SHOWN) == ""
    exact = "/" + "k" * (MAX_POINTER_SHOWN - 1)
    assert shown_pointer(exact) == exact and shown_pointer(exact + "/1") == exact
    place = None
    for token in ("a", "b/c", "~", KEY, 0):
        place = (place, token)
    assert pointer_at(place) == f"/a/b~1c/~0/{KEY}/0"
    assert pointer_at(place, MAX_POINTER_SHOWN) == "/a/b~1c/~0"


def test_yaml_lines_under_a_long_key_count_against_the_bound() -> None:
    """YAML keeps each line's pointer: their characters count against the values' bound
    (160 MiB), so a long key over many lines is refused within it, not 2 GB later."""
    text = f"x: 1\n? {'k' * 100_000}\n:\n" + "  - a\n" * 3_000

    def run() -> None:
        with pytest.raises(YamlRefused) as ei:
            list(load_yaml_documents(text, max_depth=64))
        assert ei.value.why.startswith("too many values")

    assert traced_peak(run) < 200 * 1024 * 1024  # (the bound, 160 MiB, and its last line)
    fine = "x: 1\nk:\n" + "  - a\n" * 3_000
    (doc,) = load_yaml_documents(fine, max_depth=64)
    assert doc.value == {"x": 1, "k": ["a"] * 3_000}


def test_a_presets_nonfinite_floats_under_a_long_key() -> None:
    raw = {"a": [[] for _ in range(MANY)], KEY: [{}] * MANY + [float("nan")]}
    found: list[str] = []

    def run() -> None:
        found.extend(risup._nonfinite_pointers(raw))

    assert traced_peak(run) < BOUND
    assert found == ["/"]  # (its place within the bound: the root's)
    assert risup._nonfinite_pointers({"a": [1.0, float("inf")]}) == ["/a/1"]


def test_a_packets_changed_fields_under_a_long_key() -> None:
    old = _under_long_key(1)
    new = _under_long_key(2)
    places: list[Any] = []

    def run() -> None:
        binding._changed(old, new, None, places)

    assert traced_peak(run) < BOUND
    assert len(places) == MANY and pointer_at(places[0]) == f"/{KEY}/0"


def test_evidence_changes_under_a_long_key() -> None:
    a = {"payload": {KEY: list(range(MANY)), "b": 1}}
    b = {"payload": {KEY: list(range(MANY)), "b": 2}}
    out: list[dict[str, Any]] = []

    def run() -> None:
        evidence._diff("/payload", None, a["payload"], b["payload"], out)

    assert traced_peak(run) < BOUND
    assert [c["pointer"] for c in out] == ["/payload/b"]


def test_a_patch_under_a_long_key() -> None:
    old = {"status": "a", KEY: list(range(MANY))}
    new = {"status": "b", KEY: list(range(MANY))}
    text = json.dumps(old, indent=2)
    got = None

    def run() -> None:
        nonlocal got
        got = patch_values(text, old, new)

    assert traced_peak(run) < BOUND + 2 * len(text) * 4
    assert got == text.replace('"status": "a"', '"status": "b"')


def test_a_long_escaped_string_is_passed_not_decoded() -> None:
    """A value's string is passed over (runs of plain characters in one match, an escape a
    step), not decoded a character at a time into a list: 500,000 ``\\ud800`` escapes in a
    3 MB text (an object a character: 1.2 GB at a fixture's 64 MiB bound); a key is still
    decoded, escapes and all."""
    text = '{"k\\u00e9\\n\\"": 1, "a": "' + "\\ud800" * 500_000 + '", "b": NaN}'
    res = None

    def run() -> None:
        nonlocal res
        res = scan(text)

    assert traced_peak(run) < 2 * len(text)
    assert res is not None and res.nonfinite == ("/b", 1, "NaN")
    assert res.lines["/k\u00e9\n\""] == 1 and "/a" in res.lines
