"""The wheel a user installs carries what the code reads at run time.

``pip install .`` / ``pipx install .`` install the wheel, not the work tree: the JSON
Schemas (force-included from ``schemas/``) and the capability vocabulary must be inside
it, and the console script must point at the CLI.  Built without isolation (hatchling is a
dev dependency), so no network is needed.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import zipfile

import pytest
from harness import ROOT

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("build") is None or importlib.util.find_spec("hatchling") is None,
    reason="dev extras not installed (pip install -e '.[dev]')",
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--wheel",
         "--outdir", str(out), str(ROOT)],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (whl,) = out.glob("risutools-*.whl")
    return zipfile.ZipFile(whl)


def test_wheel_carries_every_schema_and_data_file(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    for schema in sorted((ROOT / "schemas").glob("*.json")):
        assert f"risutools/schemas/{schema.name}" in names, schema.name
    for data in sorted((ROOT / "risutools" / "data").iterdir()):
        if data.is_file():
            assert f"risutools/data/{data.name}" in names, data.name


def test_wheel_has_no_tests_fixtures_or_caches(wheel: zipfile.ZipFile) -> None:
    bad = [n for n in wheel.namelist()
           if n.startswith(("tests/", "fixtures/", "bench/")) or "__pycache__" in n]
    assert bad == []


def test_wheel_console_script_points_at_the_cli(wheel: zipfile.ZipFile) -> None:
    (ep,) = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    text = wheel.read(ep).decode()
    assert "risutools = risutools.__main__:run" in text


def test_documented_local_pre_commit_hook_matches_the_published_hook() -> None:
    """docs/contract.md's `repo: local` example must run what .pre-commit-hooks.yaml runs."""
    import re

    import yaml

    text = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    section = text[text.index("## pre-commit"):]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None
    local = yaml.safe_load(block.group(1))["repos"][0]
    assert local["repo"] == "local"
    published = {h["id"]: h for h in yaml.safe_load(
        (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
    for hook in local["hooks"]:
        want = published[hook["id"]]
        for key in ("entry", "files", "exclude", "require_serial"):
            assert hook[key] == want[key], key
