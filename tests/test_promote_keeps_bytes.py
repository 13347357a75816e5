"""A transition rewrites only the values it changes (found by a fuzzing pass, stop 42):
a document indented with tabs, with CRLF line ends, a byte-order mark, ``\\uXXXX`` escapes
and numbers spelled ``1.50`` / ``1e2`` kept all of it through `promote` -- before, the file
was written whole (one space of indent, LF, no mark, escapes decoded, numbers respelled),
a whole-file diff that also hides other edits in a pull request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness import run_cli
from test_catalog_support import MOOD, doc_path, fresh_catalog, load

from risutools.jsonlines import patch_values

BOM = b"\xef\xbb\xbf"


def _odd_spelling(doc: dict[str, object]) -> bytes:
    """``doc`` as a person might have written it: tabs, CRLF, a BOM, every non-ASCII
    character escaped, and an extra field with numbers spelled their own way."""
    text = json.dumps(doc, indent="\t", ensure_ascii=True)
    text = text.replace('"x-spelled": 0', '"x-spelled": [1.50, 1e2, -0.0, 10E-1]')
    return BOM + text.replace("\n", "\r\n").encode("ascii") + b"\r\n"


def test_promote_changes_only_the_status_values(tmp_path_factory: pytest.TempPathFactory,
                                                 tmp_path: Path) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path / "cat")
    p = doc_path(cat, MOOD)
    doc = load(p)
    doc["x-spelled"] = 0
    before = _odd_spelling(doc)
    p.write_bytes(before)
    r = run_cli("approve", MOOD, "--action", "request_review", "--reviewer", "kim",
                "--catalog", cat)
    assert r.returncode == 0, r.stderr
    r = run_cli("promote", MOOD, "--to", "pending_human_review", "--catalog", cat)
    assert r.returncode == 0, r.stdout + r.stderr
    after = p.read_bytes()
    old_lines, new_lines = before.split(b"\r\n"), after.split(b"\r\n")
    assert len(old_lines) == len(new_lines)
    changed = [(a, b) for a, b in zip(old_lines, new_lines, strict=True) if a != b]
    assert changed and len(changed) <= 2, changed
    for a, b in changed:
        assert a.replace(b'"candidate"', b'"pending_human_review"') == b
    assert after.startswith(BOM) and b"[1.50, 1e2, -0.0, 10E-1]" in after
    now = json.loads(after.decode("utf-8-sig"))
    assert now["provenance"]["review_status"] == "pending_human_review"
    assert run_cli("validate", cat).returncode == 0


CASES = {
    "a value changed": ('{\n\t"a": 1,\n\t"b": "x"\n}', {"a": 2, "b": "x"},
                        '{\n\t"a": 2,\n\t"b": "x"\n}'),
    "true for 1": ('{"a": 1}', {"a": True}, '{"a": true}'),
    "an escaped key": ('{"\\u0061b": "x"}', {"ab": "y"}, '{"\\u0061b": "y"}'),
    "in a list": ('[1, {"k": [null, 2.50]}]', [1, {"k": [None, 3.5]}],
                  '[1, {"k": [null, 3.5]}]'),
    "non-ASCII in an ASCII file": ('{"a": "x"}', {"a": "가"}, '{"a": "\\uac00"}'),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_patched_in_place(case: str) -> None:
    text, new, want = CASES[case]
    assert patch_values(text, json.loads(text), new) == want


SHAPES = {
    "a key added": ('{"a": 1}', {"a": 1, "b": 2}),
    "a key gone": ('{"a": 1, "b": 2}', {"a": 1}),
    "a list shortened": ('{"a": [1, 2]}', {"a": [1]}),
    "a scalar made a list": ('{"a": 1}', {"a": [1]}),
}

#: items appended to a list are written after its last one, as its items are laid out
#: (stop 60: a replay's report added to ``source_refs`` rewrote the whole document)
GROWN = {
    "one line": ('{"a": [1, 2]}', {"a": [1, 2, 3]}, '{"a": [1, 2, 3]}'),
    "compact": ('{"a": [1]}', {"a": [1, 2]}, '{"a": [1,2]}'),
    "indented": ('{\n  "a": [\n    1\n  ]\n}\n', {"a": [1, {"k": "v"}]},
                 '{\n  "a": [\n    1,\n    {\n      "k": "v"\n    }\n  ]\n}\n'),
    # (an empty list: its items an indentation step past the "[" line, or on one line
    # when the file is one line; stop 62: it was written whole)
    "empty, one line": ('{"a": [], "b": 1}', {"a": [1, "x"], "b": 1},
                        '{"a": [1, "x"], "b": 1}'),
    "empty, compact": ('{"a":[ ]}', {"a": [{"k": 1}]}, '{"a":[{"k":1}]}'),
    "empty, indented": ('{\n  "x": 0,\n  "a": [],\n  "b": 1\n}\n', {"x": 0, "a": [{"k": [1]}],
                                                                     "b": 1},
                        '{\n  "x": 0,\n  "a": [\n    {\n      "k": [\n        1\n      ]\n'
                        '    }\n  ],\n  "b": 1\n}\n'),
    "empty over lines, tabs and crlf": ('{\r\n\t"o": {\r\n\t\t"a": [\r\n\t\t]\r\n\t}\r\n}',
                                        {"o": {"a": [1, 2]}},
                                        '{\r\n\t"o": {\r\n\t\t"a": [\r\n\t\t\t1,\r\n\t\t\t2'
                                        '\r\n\t\t]\r\n\t}\r\n}'),
    "tabs and crlf": ('{\r\n\t"a": [\r\n\t\t1,\r\n\t\t2\r\n\t]\r\n}', {"a": [1, 2, [3]]},
                      '{\r\n\t"a": [\r\n\t\t1,\r\n\t\t2,\r\n\t\t[\r\n\t\t\t3\r\n\t\t]\r\n\t]'
                      '\r\n}'),
}


@pytest.mark.parametrize("case", sorted(GROWN))
def test_a_list_grown_is_appended_in_place(case: str) -> None:
    text, new, want = GROWN[case]
    assert patch_values(text, json.loads(text), new) == want


@pytest.mark.parametrize("case", sorted(SHAPES))
def test_a_change_of_shape_is_written_whole(case: str) -> None:
    text, new = SHAPES[case]
    assert patch_values(text, json.loads(text), new) is None


def test_text_that_is_not_the_old_value_is_not_patched() -> None:
    """The patched text must read back as the new value: a text that is not the JSON of
    ``old`` (here its key is missing) gives None, never a wrong file."""
    assert patch_values('{"b": 1}', {"a": 1}, {"a": 2}) is None
