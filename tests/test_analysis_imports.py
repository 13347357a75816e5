"""The ``analyze`` path imports the light result module, not the contract loaders."""

from __future__ import annotations

import subprocess
import sys

from risutools.contract import result, validate
from risutools.contract.checks_load import mc001 as MC001
from risutools.findings import Finding


def test_validate_reexports_the_result_classes() -> None:
    assert validate.Result is result.Result
    assert validate.DocumentInfo is result.DocumentInfo
    assert validate.Verification is result.Verification


def test_mc001_is_read_from_the_rule_table() -> None:
    r = result.Result()
    assert not r.could_not_run() and r.unreadable() == []
    bad = Finding(rule=MC001.id, severity="error", file="x", line=None, pointer="",
                  message="cannot read")
    other = Finding(rule="MC000", severity="error", file="y", line=None, pointer="",
                    message="not a document")
    r.file_findings = [other, bad]
    assert r.could_not_run() and r.exit_code() == 2
    assert r.unreadable() == [bad]


def test_analysis_report_does_not_import_the_contract_loaders() -> None:
    code = ("import sys, risutools.commands.analyze; "
            "print(sorted(m for m in sys.modules if m.startswith('risutools.contract')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert "risutools.contract.result" in out
    for heavy in ("risutools.contract.validate", "risutools.contract.loaders",
                  "risutools.contract.schema"):
        assert heavy not in out


def test_analyzer_start_up_does_not_import_pyyaml() -> None:
    """PyYAML is not imported: the data tables are pre-read (see
    risutools.datatables)."""
    code = "import sys, risutools.analysis.analyzer; print('yaml' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"


def test_the_regex_and_js_scanners_are_used() -> None:
    from risutools.analysis import analyze
    from risutools.formats.model import Module

    a = analyze(Module({"name": "x", "cjs": "eval('1')",
                        "regex": [{"in": "(a+)+", "out": "", "type": "editdisplay"}]}))
    assert {f.rule for f in a.findings} >= {"RA201", "RA501", "RA502"}


def test_the_analyze_command_does_not_import_pyyaml() -> None:
    """The whole command (settings loaded, a module read and analysed, the report written):
    PyYAML is imported only when YAML is read (risutools.yamlsafe binds it then), and an
    analyze run with no configuration file reads none."""
    from harness import FIXTURES

    module = FIXTURES / "sources" / "174678332_context-cutter.risum"
    code = ("import sys, io, contextlib\n"
            "from risutools import cli\n"
            f"sys.argv = ['risutools', 'analyze', {str(module)!r}]\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        cli.main()\n    except SystemExit:\n        pass\n"
            "print('yaml' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd="/").stdout.strip()
    assert out == "False"


def test_validating_a_json_document_does_not_import_pyyaml(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``validate`` reads the capability vocabulary (MC401) from the same snapshot
    (risutools.datatables): a JSON document, with no configuration file, needs no YAML
    parser, and its capability names are still checked against the vocabulary."""
    import json
    import shutil
    from pathlib import Path

    doc = Path(__file__).resolve().parents[1] / "fixtures" / "documents" / \
        "seed-000-context-cutter.json"
    shutil.copy(doc, tmp_path / "a.json")
    bad = json.loads(doc.read_text("utf-8"))
    bad["capabilities"]["requires"].append("hook.not_in_the_vocabulary")
    (tmp_path / "b.json").write_text(json.dumps(bad), "utf-8")
    code = ("import sys\nfrom risutools.cli import main\n"
            "sys.argv = ['risutools', 'validate', '-f', 'concise', 'a.json', 'b.json']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('PYYAML', 'yaml' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=tmp_path).stdout
    assert "PYYAML False" in out
    assert [x for x in out.splitlines() if "MC401" in x and x.startswith("b.json")]
    assert not [x for x in out.splitlines() if "MC401" in x and x.startswith("a.json")]
