"""A YAML value a command rewrites keeps what the user wrote before it: its tag (``!!str``,
a verbatim ``!<tag:yaml.org,2002:str>``), its anchor, a comment between them and the value.

Before, ``validate --fix`` replaced a tagged value's whole span (the tag with it: ``!!str
sha256:...`` became ``sha256:...``), and a status change (``promote``, ``activate``,
``publish``, ``replay run --update``) refused to patch a tagged or anchored value and wrote
the whole document again (every comment and quoting of the file gone).  Now only the
scalar's own text changes; the read-back check still refuses a result that reads back as
anything but the new document (a ``!!str`` tag before a new value that is not a string).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness import FIXTURES, run_cli

from risutools.replay.component import _yaml_value
from risutools.yamlpatch import patch_yaml_values, scalar_text_start

DOC = """\
# 큐레이터 메모
provenance:
  review_status: {status}   # 상태
count: 7
"""


@pytest.mark.parametrize("written", [
    "!!str candidate",
    "!!str 'candidate'",
    '!!str   "candidate"',
    "&s candidate",
    "&s !!str candidate",
    "!!str &s candidate",
    "!<tag:yaml.org,2002:str> candidate",
    "!!str # 태그 뒤의 메모\n    candidate",
])
def test_a_status_change_keeps_the_tag_and_the_anchor(written: str) -> None:
    text = DOC.format(status=written)
    old = _yaml_value(text)
    new = json.loads(json.dumps(old))
    new["provenance"]["review_status"] = "approved"
    got = patch_yaml_values(text, old, new, _yaml_value)
    assert got is not None
    value = written.replace("candidate", "approved")
    assert got == DOC.format(status=value)
    assert _yaml_value(got) == new


@pytest.mark.parametrize("written, value", [
    ("!!str candidate", True),  # ("!!str true" reads back as a string)
    ("!!str candidate", 5),
])
def test_a_tag_the_new_value_contradicts_is_not_patched(written: str, value: object) -> None:
    text = DOC.format(status=written)
    old = _yaml_value(text)
    new = json.loads(json.dumps(old))
    new["provenance"]["review_status"] = value
    assert patch_yaml_values(text, old, new, _yaml_value) is None


@pytest.mark.parametrize("text, start, want", [
    ("a: !!str x", 3, 9),
    ("a: &b x", 3, 6),
    ("a: x", 3, 3),
    ("a: !!str", 3, 8),  # (nothing after the tag: the span's end)
    ("a: !t # c\r\n  x", 3, 13),
])
def test_scalar_text_start(text: str, start: int, want: int) -> None:
    assert scalar_text_start(text, start, len(text)) == want


def test_validate_fix_keeps_the_tags(tmp_path: Path) -> None:
    good = (FIXTURES / "contract" / "good" / "context-cutter.yaml").read_text("utf-8")
    digest = next(ln for ln in good.splitlines() if ln.strip().startswith("prompt_sha256:"))
    stale = digest.replace("sha256:0", "sha256:1").replace(": sha256", ": !!str sha256")
    status = "      promotion_status: candidate"
    assert digest in good and status in good
    text = good.replace(digest, stale).replace(
        status, '      promotion_status: &p !!str  "approved"   # 메모')
    doc = tmp_path / "d.yaml"
    doc.write_text(text, "utf-8")
    done = run_cli("validate", "--fix", doc)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fixed 2 finding(s)" in done.stderr
    got = doc.read_text("utf-8")
    assert got == text.replace(stale, digest.replace(": sha256", ": !!str sha256")).replace(
        '"approved"', '"candidate"')
