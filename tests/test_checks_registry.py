"""The check registry and the reporter table: one declaration per id, generated docs,
ruff-style --select/--ignore, `risutools rule`, and every format for every command."""

from __future__ import annotations

import ast
import json
import subprocess
import tokenize
from pathlib import Path

import pytest
from harness import FIXTURES, ROOT, SEED, run_cli
from harness import PACKAGE as PKG

from risutools.checks.ids import SCOPE_OF
from risutools.checks.registry import (
    ID_RE,
    REGISTRY,
    SCOPES,
    Check,
    RuleFilter,
    check,
)
from risutools.commands.checks import UNITS
from risutools.commands.checks import every_check as all_checks
from risutools.commands.docs import render_page, stale_pages, table
from risutools.errors import ConfigError
from risutools.report.reporters import FORMATS, REPORTER_BY_NAME

MODULE = FIXTURES / "analysis" / "context-cutter.module.json"


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd)


# --------------------------------------------------------------------------- the registry


def test_every_check_is_documented_and_well_formed() -> None:
    checks = all_checks()
    for scope in SCOPES:  # a title names one check where it is reported (SARIF, gate lists)
        titles = [c.title for c in checks.values() if c.scope == scope]
        assert len(set(titles)) == len(titles), scope
    for c in checks.values():
        assert ID_RE.fullmatch(c.id) and c.scope in SCOPES
        for text in (c.summary, c.why, c.fix):
            assert text.endswith(".") and "\n" not in text, c.id
    families = {c.family for c in checks.values()}
    assert families == {"MC", "RA", "R", "M", "G", "RV"}
    assert [c.id for c in checks.values() if c.family == "R"] == [f"R{i}" for i in range(1, 10)]
    assert [c.id for c in checks.values() if c.family == "M"] == ["M1", "M2", "M3"]


def test_the_index_names_every_check_and_its_scope() -> None:
    assert {c.id: c.scope for c in all_checks().values()} == SCOPE_OF
    assert list(SCOPE_OF) == list(all_checks())  # in id order


def test_every_gate_is_a_unit_that_names_its_targets() -> None:
    from risutools.catalog.gates import gates_for
    from risutools.settings import lifecycle

    targets = (*lifecycle.TARGETS, *lifecycle.RUNTIME_STATES, lifecycle.PUBLISHED)
    gates = {c.id for to in targets for c in gates_for(to)}
    promotion = [c for c in all_checks().values() if c.scope == "promotion"]
    assert gates == {c.id for c in promotion}
    assert all(c.run is not None and c.targets for c in promotion)


def test_replay_verdicts_are_keyed_by_the_registry() -> None:
    from risutools.replay.checker import InvariantChecker
    from risutools.replay.monitor_checker import MonitorChecker
    from risutools.settings.replay import build_config

    assert list(InvariantChecker(build_config()).verdicts) == [
        c.id for c in all_checks().values() if c.family == "R"]
    assert [d["id"] for d in MonitorChecker(build_config()).to_dicts()] == ["M1", "M2", "M3"]


def declare(id: str, severity: str, scope: str, title: str) -> Check:
    """A throwaway check unit (its body does nothing), as a decorator makes one."""

    def unit() -> None:
        """S.

        Why: W.

        Fix: F.
        """

    return check(id, severity, scope, title)(unit)  # type: ignore[arg-type]


def test_a_check_cannot_be_declared_twice_or_badly() -> None:
    with pytest.raises(ValueError, match="twice"):
        declare("MC201", "error", "document", "x")
    with pytest.raises(ValueError, match="bad check id"):
        declare("mc999", "error", "document", "x")
    with pytest.raises(ValueError, match="scope"):
        declare("ZZ999", "error", "nowhere", "x")


def test_every_check_is_a_unit_with_code_and_every_scope_has_cases() -> None:
    from test_checks_cases import RUNNABLE

    assert [c.id for c in all_checks().values() if c.run is None] == []
    assert set(RUNNABLE) == set(SCOPES)


def test_all_checks_follows_the_registry_after_caching_its_sort() -> None:
    before = all_checks()
    before.pop("MC201")  # the caller's copy: the registry's view is not touched
    assert "MC201" in all_checks()
    try:
        declare("ZZ998", "info", "document", "zz")
        declare("ZZ997", "info", "document", "zz")
        ids = list(all_checks())
        assert ids.index("ZZ997") == ids.index("ZZ998") - 1  # sorted again, new ones in
        del REGISTRY["ZZ998"]  # edited behind the registry's back: seen by its size
        assert "ZZ998" not in all_checks()
    finally:
        REGISTRY.pop("ZZ998", None)
        REGISTRY.pop("ZZ997", None)
    assert "ZZ997" not in all_checks() and list(all_checks()) == list(all_checks())


def _id_literals(path: Path) -> list[tuple[int, str]]:
    out = []
    with path.open("rb") as fh:
        for tok in tokenize.tokenize(fh.readline):
            if tok.type != tokenize.STRING:
                continue
            try:
                value = ast.literal_eval(tok.string)
            except (ValueError, SyntaxError):
                continue
            if isinstance(value, str) and ID_RE.fullmatch(value):
                out.append((tok.start[0], value))
    return out


def test_no_id_is_a_bare_literal_outside_its_declaration() -> None:
    declaring = {Path(str(m.__file__)).relative_to(ROOT).as_posix() for m in UNITS}
    declaring.add("risutools/checks/ids.py")  # the generated index
    found = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in declaring:
            continue
        hits = _id_literals(path)
        if hits:
            found[rel] = hits
    assert found == {}


def test_the_id_scanner_sees_a_literal(tmp_path: Path) -> None:
    p = tmp_path / "x.py"
    p.write_text('x = "MC201"\ny = f"MC201 is {x}"\nz = "RA101 fired"\nw = (\'R3\')\n',
                 encoding="utf-8")
    assert _id_literals(p) == [(1, "MC201"), (4, "R3")]


def test_each_declared_id_appears_once_in_the_declaring_modules() -> None:
    seen: dict[str, int] = {}
    for m in UNITS:
        for _, value in _id_literals(Path(str(m.__file__))):
            seen[value] = seen.get(value, 0) + 1
    assert seen == dict.fromkeys(all_checks(), 1)


# --------------------------------------------------------------------------- generated docs


def test_docs_tables_are_generated_from_the_registry() -> None:
    assert stale_pages(ROOT) == [], "run `python -m risutools.commands.docs`"


def test_drift_is_detected(tmp_path: Path) -> None:
    page = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    drifted = page.replace("| MC201 | error |", "| MC201 | warning |")
    assert drifted != page
    assert render_page(drifted, "MC") == page
    with pytest.raises(ValueError, match="markers"):
        render_page("no markers here", "MC")
    assert table("RA").count("\n| RA") == len([c for c in all_checks() if c.startswith("RA")])


# --------------------------------------------------------------------------- --select / --ignore


def test_select_takes_prefixes_and_comma_lists() -> None:
    flt = RuleFilter(["MC2,RA1", "mc305"], ["MC201"])
    assert flt.keep("MC200") and flt.keep("RA101") and flt.keep("MC305")
    assert not flt.keep("MC201") and not flt.keep("MC300") and not flt.keep("RA201")
    assert flt.keep("MC000") and flt.keep("MC001")  # unreadable input is never filtered


def test_a_prefix_stays_in_its_family() -> None:
    flt = RuleFilter(["R"])
    assert flt.keep("R3") and not flt.keep("RA101")
    assert RuleFilter(["R1"]).keep("R1") and not RuleFilter(["R1"]).keep("RA101")


@pytest.mark.parametrize("code", ["MC9", "XX", "Z", "RA1000", ","])
def test_unknown_codes_are_refused(code: str) -> None:
    if code == ",":  # nothing but separators: no code at all, nothing to refuse
        assert RuleFilter([code]).select == ()
        return
    with pytest.raises(ConfigError, match="no rule matches"):
        RuleFilter([code])


# --------------------------------------------------------------------------- risutools rule


def test_rule_explains_a_check() -> None:
    r = run("rule", "MC201")
    assert r.returncode == 0, r.stderr
    c = all_checks()["MC201"]
    flat = " ".join(r.stdout.split())
    assert r.stdout.startswith("MC201 prompt-digest (error, scope: document)")
    for part in (c.summary, f"Why: {c.why}", f"Fix: {c.fix}", "Example (fires):",
                 "/projection/prompt"):
        assert part in flat, part


def test_rule_lists_all_and_refuses_unknown_ids() -> None:
    r = run("rule")
    assert r.returncode == 0
    assert [ln.split()[0] for ln in r.stdout.splitlines()] == list(all_checks())
    r = run("rule", "MC999")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "MC999" in r.stderr
    r = run("rule", "R")
    assert [ln.split()[0] for ln in r.stdout.splitlines()] == [f"R{i}" for i in range(1, 10)]


def test_rule_explains_a_gate_by_id_or_name() -> None:
    by_id = run("rule", "G4")
    assert by_id.returncode == 0 and by_id.stdout.startswith("G4 digests (error, scope: promotion)")
    assert run("rule", "digests").stdout == by_id.stdout
    both = run("rule", "active-code")  # MC500's title and a gate's name
    assert [ln.split()[0] for ln in both.stdout.splitlines()] == ["G5", "MC500"]


# --------------------------------------------------------------------------- reporters


def test_the_reporter_table_supplies_the_format_choices() -> None:
    assert FORMATS == ("text", "concise", "json", "github", "sarif", "junit")
    assert all(REPORTER_BY_NAME[n].help for n in FORMATS)
    for cmd in ("validate", "verify", "analyze"):
        r = run(cmd, str(SEED), "-f", "yaml")
        assert r.returncode == 2 and "concise" in r.stderr and r.stderr.count("\n") == 1


def test_validate_select_concise(tmp_path: Path) -> None:
    doc = json.loads(SEED.read_text(encoding="utf-8"))
    doc["projection"]["prompt"] = "An edited prompt."  # MC201
    doc["provenance"]["runtime_status"] = "quarantined"  # MC301
    doc["provenance"]["source_kind"] = "risu_hub"  # MC105 (not selected)
    p = tmp_path / "a.json"
    p.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    r = run("validate", "--select", "MC2,MC3", "-f", "concise", "a.json", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    lines = r.stdout.splitlines()
    assert lines.pop() == "[*] 1 fixable with `risutools validate --fix`."  # MC201
    assert sorted(ln.split(": ", 1)[1].split()[0] for ln in lines[:-1]) == ["MC201", "MC301"]
    for ln in lines[:-1]:
        where, rest = ln.split(": ", 1)
        file, line, col = where.split(":")
        assert file == "a.json" and int(line) >= 1 and col == "1"
        assert rest.split()[0] in ("MC201", "MC301") and rest.endswith("]")
    assert lines[-1].startswith("2 errors, 0 warnings, 1 document, 1 file")


def _sarif_shape(s: dict[str, object]) -> list[dict[str, object]]:
    assert s["version"] == "2.1.0" and str(s["$schema"]).endswith("sarif-2.1.0.json")
    [run_] = s["runs"]  # type: ignore[misc]
    rules = run_["tool"]["driver"]["rules"]
    ids = [x["id"] for x in rules]
    assert ids == sorted(ids)
    for rule in rules:
        assert rule["shortDescription"]["text"] and rule["help"]["text"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
    for res in run_["results"]:
        assert ids[res["ruleIndex"]] == res["ruleId"]
        assert res["level"] in ("error", "warning", "note") and res["message"]["text"]
        uri = res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert not uri.startswith("/") and "://" not in uri
    results: list[dict[str, object]] = run_["results"]
    return results


def test_analyze_sarif(tmp_path: Path) -> None:
    src = tmp_path / "m.json"
    data = json.loads(MODULE.read_text(encoding="utf-8"))
    data["module"]["lowLevelAccess"] = True  # RA102: asks for power it does not use
    src.write_text(json.dumps(data), encoding="utf-8")
    r = run("analyze", "-f", "sarif", "m.json", cwd=tmp_path)
    assert r.returncode == 1, r.stderr  # a warning fails by default (--fail-on warning)
    again = run("analyze", "-f", "sarif", "--fail-on", "error", "m.json", cwd=tmp_path)
    assert again.returncode == 0 and again.stdout == r.stdout  # warnings only: error passes
    s = json.loads(r.stdout)
    results = _sarif_shape(s)
    assert "RA102" in {x["ruleId"] for x in results}
    ra102 = next(x for x in results if x["ruleId"] == "RA102")
    assert ra102["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "lowLevelAccess"
    assert {x["id"] for x in s["runs"][0]["tool"]["driver"]["rules"]} == {
        c for c in all_checks() if c.startswith("RA")}
    r = run("analyze", "-f", "sarif", "--ignore", "RA1", "m.json", cwd=tmp_path)
    assert "RA102" not in {x["ruleId"] for x in json.loads(r.stdout)["runs"][0]["results"]}


@pytest.mark.parametrize("fmt", FORMATS)
def test_analyze_every_format(fmt: str, tmp_path: Path) -> None:
    r = run("analyze", "-f", fmt, str(MODULE), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.endswith("\n") and r.stderr == ""
    again = run("analyze", "-f", fmt, str(MODULE), cwd=tmp_path)
    assert again.stdout == r.stdout  # deterministic
