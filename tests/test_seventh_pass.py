"""Findings of the seventh pass (stop 62), each a test that fails before its fix:

* an empty list a command grows (``[]``, ``[ ]``, ``[`` and ``]`` on their own lines) made
  the whole document be written again, in JSON (``patch_values``) and in YAML
  (``patch_yaml_values``): its layout, comments and spellings gone for one appended item.
  Now the items are written inside the brackets in the file's own layout.
"""

from __future__ import annotations

import json

import pytest

from risutools.replay.component import _yaml_value
from risutools.yamlpatch import patch_yaml_values

# ---- an empty list grown where it stands -------------------------------------------------

YAML_EMPTY = """\
# 메모
a: 1   # 하나
refs: []   # 비어 있음
spaced: [ ]
b: 'two'
"""


@pytest.mark.parametrize("where, want", [
    ("refs", 'refs: [{"source_id": "replay:x", "n": [1]}]   # 비어 있음'),
    ("spaced", 'spaced: [{"source_id": "replay:x", "n": [1]} ]'),
])
def test_an_empty_yaml_list_grown_keeps_every_other_byte(where: str, want: str) -> None:
    old = _yaml_value(YAML_EMPTY)
    new = json.loads(json.dumps(old))
    new[where] = [{"source_id": "replay:x", "n": [1]}]
    got = patch_yaml_values(YAML_EMPTY, old, new, _yaml_value)
    assert got is not None
    assert _yaml_value(got) == new
    before, after = YAML_EMPTY.splitlines(), got.splitlines()
    assert [ln for ln in after if ln not in before] == [want]
    assert len(before) == len(after)
