"""An eleventh pass over the contract, its configuration and the command line as a newcomer
uses them (stop 65): each test reproduces a defect and fails before its fix.

- ``validate --skip-non-documents`` ("named non-documents skipped", for hooks and
  ``$(git diff --name-only)``) read every named file as a document: ``README.md`` or a
  ``Makefile`` was MC000 (not valid YAML), an image MC000 (not UTF-8), and the catalog's
  own records -- ``approvals/*.yaml``, ``facts/*.json``, ``transitions.ndjson`` -- hold a
  ``component_id``, so each was checked as a component document and failed MC100 (and
  MC104 against the real document).  The shipped pre-commit hooks excluded approvals but
  not ``facts/``, which ``ingest`` rewrites.  A named file a folder walk passes over (by
  its name, or by a hidden or catalog folder of its path) is now skipped unread, by
  ``validate`` and ``verify`` alike.
- ``rules:`` keys are read in capitals without their spaces, so ``MC401: error`` and
  ``mc401: "off"`` (or ``"MC401 "``) passed the parser's duplicate-key refusal and the
  later silently won; now ``config-bad-value`` naming both.
- ``make demo`` failed outside a git clone: its configuration's ``sources:`` led out of
  the catalog, which only a ``.git`` above it made part of the repository.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from harness import ROOT, SEED, run_cli
from test_action import _check as action_check
from test_action import _git, needs_git, repo, runner  # noqa: F401 (fixtures)
from test_action import _results as action_results

from risutools.checks.registry import known_ids
from risutools.contract.activecode import find_active_code
from risutools.contract.folders import named_passed_over
from risutools.settings.config import load_settings_file
from risutools.settings.tomlfile import _tomllib

# ---- --skip-non-documents skips what a folder walk passes over ---------------------------


def _catalog(root: Path) -> list[str]:
    """A catalog holding one document and, around it, files a folder walk never reads;
    returns those files' names, relative to ``root``."""
    doc = json.loads(SEED.read_text(encoding="utf-8"))
    (root / "doc.json").write_text(json.dumps(doc), encoding="utf-8")
    cid = doc["component_id"]
    others = {
        # the catalog's own records: each names the component
        f"approvals/{cid}--approve--0123456789ab.yaml":
            f"component_id: {cid}\naction: approve\nreviewer: kim\n",
        f"facts/{cid}.json": json.dumps({"component_id": cid, "facts": {"hooks": []}}),
        f"replays/{cid}--edit.json": json.dumps({"component_id": cid, "summary": {}}),
        "notes/extra.yaml": f"component_id: {cid}\nnote: read twice\n",
        # (a log of its own folder: the catalog's, at its root, is read as the log)
        "archive/transitions.ndjson":
            json.dumps({"component_id": cid, "to_status": "approved"}) + "\n",
        # files no folder walk reads by their name
        "README.md": "# Catalog\n\nkey: value: another\n",
        "Makefile": "all:\n\tcheck: x: y\n",
        "icon.png": "",
        "pyproject.toml": "[tool.risutools]\n",
        ".editorconfig": "root = true\n",
        # a hidden folder's file (a folder walk never enters it), not JSON as JSON is
        ".vscode/settings.json": '{\n  // a comment\n  "a": 1\n}\n',
    }
    for name, text in others.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    (root / "icon.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    return sorted(others)


@pytest.mark.parametrize("command", ["validate", "verify"])
def test_skip_non_documents_skips_what_a_folder_walk_passes_over(tmp_path: Path,
                                                                 command: str) -> None:
    others = _catalog(tmp_path)
    p = run_cli(command, "--skip-non-documents", *others, "doc.json", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "0 errors" in p.stdout and "1 document," in p.stdout
    assert f"({len(others)} non-document file(s) skipped)" in p.stdout
    # the same folder walked: the one document, the same verdict
    walked = run_cli(command, ".", cwd=tmp_path)
    assert walked.returncode == 0 and "1 document, 1 file" in walked.stdout


def test_each_passed_over_file_alone_is_a_clean_empty_run(tmp_path: Path) -> None:
    for name in _catalog(tmp_path):
        p = run_cli("validate", "--skip-non-documents", name, cwd=tmp_path)
        assert p.returncode == 0, (name, p.stdout, p.stderr)
        assert "0 documents, 1 file (1 non-document file(s) skipped)" in p.stdout, name


def test_absolute_paths_below_the_working_folder_are_read_alike(tmp_path: Path) -> None:
    others = _catalog(tmp_path)
    p = run_cli("validate", "--skip-non-documents", *(str(tmp_path / n) for n in others),
                str(tmp_path / "doc.json"), cwd=tmp_path)
    assert p.returncode == 0 and f"({len(others)} non-document" in p.stdout, p.stdout


def test_without_the_flag_named_files_are_still_read(tmp_path: Path) -> None:
    _catalog(tmp_path)
    for name in ("README.md", "archive/transitions.ndjson", "facts/" +
                 json.loads(SEED.read_text(encoding="utf-8"))["component_id"] + ".json"):
        p = run_cli("validate", name, cwd=tmp_path)
        assert p.returncode == 1, name


def test_a_document_a_walk_reads_is_still_checked_and_a_missing_file_refused(
        tmp_path: Path) -> None:
    _catalog(tmp_path)
    (tmp_path / "components").mkdir()
    (tmp_path / "components" / "bad.json").write_text('{"contract": "matrix-component-v1"}')
    p = run_cli("validate", "--skip-non-documents", "README.md", "components/bad.json",
                cwd=tmp_path)
    assert p.returncode == 1 and "MC100" in p.stdout
    p = run_cli("validate", "--skip-non-documents", "gone.md", cwd=tmp_path)
    assert p.returncode == 2 and "not-found" in p.stderr


@pytest.mark.parametrize(("name", "passed"), [
    ("README.md", True), ("a/b/Makefile", True), (".hidden.json", True),
    ("transitions.ndjson", True), ("sub/pyproject.toml", True),
    ("approvals/x.yaml", True), ("cat/facts/x.json", True), ("notes/x.yaml", True),
    ("replays/r.json", True), (".github/workflows/ci.yml", True),
    ("node_modules/p/package.json", True),
    ("doc.json", False), ("cat/sub/doc.yaml", False), ("components.ndjson", False),
    ("../cat/doc.json", False), ("DOC.JSON", False), ("factsheet/doc.json", False),
])
def test_named_passed_over(name: str, passed: bool) -> None:
    assert named_passed_over(name) is passed


# ---- rules: two keys that read as the same id ---------------------------------------------

def _capability_document(root: Path) -> Path:
    """A seed-like document with one capability name outside the vocabulary (MC401, a
    warning by default)."""
    doc = json.loads(SEED.read_text(encoding="utf-8"))
    doc["capabilities"]["requires"].append("made.up_name")
    path = root / "doc.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize(("first", "second"), [
    ("MC401", "mc401"), ("mc401", "MC401"), ("MC401", '" MC401"'), ("MC4", "mc4"),
    ("RA1", "ra1"),
])
@pytest.mark.parametrize(("one", "other"), [("error", '"off"'), ('"off"', "error"),
                                             ("warning", "warning")])
def test_rule_keys_that_read_alike_are_refused(tmp_path: Path, first: str, second: str,
                                               one: str, other: str) -> None:
    doc = _capability_document(tmp_path)
    (tmp_path / ".risutools.yaml").write_text(
        f"rules:\n  {first}: {one}\n  {second}: {other}\n", encoding="utf-8")
    p = run_cli("validate", doc, cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == "", p.stdout
    line = p.stderr.strip()
    assert "\n" not in line and "rules: config-bad-value:" in line
    assert "names the same checks as" in line


def test_rule_keys_that_read_alike_are_refused_in_pyproject(tmp_path: Path) -> None:
    doc = _capability_document(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.risutools.rules]\nMC401 = "error"\n"MC401 " = "off"\n', encoding="utf-8")
    p = run_cli("validate", doc, cwd=tmp_path)
    assert p.returncode == 2 and "names the same checks as 'MC401'" in p.stderr


def test_one_key_in_any_case_still_grades(tmp_path: Path) -> None:
    doc = _capability_document(tmp_path)
    assert "1 warning," in run_cli("validate", doc, cwd=tmp_path).stdout
    for key, level, want in (("mc401", "error", 1), (" MC401", '"off"', 0),
                             ("MC4", "error", 1), ("MC401", "error", 1)):
        (tmp_path / ".risutools.yaml").write_text(f'rules:\n  "{key}": {level}\n',
                                                  encoding="utf-8")
        p = run_cli("validate", doc, cwd=tmp_path)
        assert p.returncode == want, (key, p.stdout, p.stderr)


# ---- make demo outside a git clone --------------------------------------------------------

MAKE = shutil.which("make")


@pytest.mark.skipif(MAKE is None, reason="make is not installed")
def test_the_demo_configuration_loads_without_a_git_clone(tmp_path: Path) -> None:
    """``make demo`` wrote ``sources: ../../fixtures/sources`` into the demo catalog's
    configuration: inside the repository only where a ``.git`` marks it, so from a copy
    without one (a tarball, an sdist, "Download ZIP") the first ``review`` stopped the demo
    with ``config-sources-outside``.  The demo names the store on the command line instead
    (``--sources``, which a configuration cannot override), wherever it runs."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}
    lines = subprocess.run([str(MAKE), "--no-print-directory", "-n", "demo"], cwd=ROOT,
                           env=env, capture_output=True, text=True, timeout=60,
                           check=True).stdout.splitlines()
    written = [ln for ln in lines if "> build/demo-catalog/.risutools.yaml" in ln]
    assert len(written) == 1
    # the copy: the catalog where the demo makes it, the store beside it, no .git above
    assert not any((d / ".git").exists() for d in (tmp_path, *tmp_path.parents))
    (tmp_path / "fixtures" / "sources").mkdir(parents=True)
    (tmp_path / "build" / "demo-catalog").mkdir(parents=True)
    subprocess.run(["sh", "-c", written[0]], cwd=tmp_path, check=True)
    load_settings_file(tmp_path / "build" / "demo-catalog" / ".risutools.yaml")  # no refusal
    # and every command that reads the store after it is told where it is
    for ln in lines[lines.index(written[0]):]:
        if re.search(r"risutools (review|promote|verify) ", ln):
            assert "--sources fixtures/sources" in ln, ln


# ---- MC500: an event handler after any separator HTML takes ---------------------------------

#: tags whose handler the HTML tokenizer reads as an attribute, each after a separator other
#: than a space before it: "/", a quote closing the value before, a line break in the tag
HANDLERS = [
    "<svg/onload=fetch('//x')>",
    "<img/src=x/onerror=alert(1)>",
    '<img src="x"onerror=alert(1)>',
    "<img src='x'onerror='alert(1)'>",
    "<img\nsrc=x\nonerror=alert(1)>",
    "<body\n  class=a\n  ONLOAD = go()>",
    "<svg\tonload=go()>",
]


@pytest.mark.parametrize("tag", HANDLERS)
@pytest.mark.parametrize("where", ["value", "key"])
def test_an_event_handler_after_any_separator_is_mc500(tmp_path: Path, tag: str,
                                                       where: str) -> None:
    doc = json.loads(SEED.read_text(encoding="utf-8"))
    if where == "value":
        doc["payload"]["activation_rules"].append(f"shows the panel: {tag}")
    else:
        doc["payload"]["state_effects"][tag] = "shows the panel"
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    p = run_cli("validate", "-f", "concise", "--select", "MC500", path)
    assert p.returncode == 1 and "MC500" in p.stdout and "HTML script" in p.stdout, p.stdout


@pytest.mark.parametrize("prose", [
    "keeps the last five turns/one per speaker",
    "a <b>bold</b> note: once = twice",
    "<note> the online=offline switch </note>",  # (no handler: `online` is not `on`+"=")
])
def test_prose_with_slashes_and_quotes_stays_clean(prose: str) -> None:
    assert find_active_code(prose) is None


def test_a_handler_split_over_two_strings_is_neither_strings(tmp_path: Path) -> None:
    """The fast path joins a document's strings with line breaks, which a tag may now
    span: a match across two strings sends it to the strings one by one, never a finding
    of either."""
    doc = json.loads(SEED.read_text(encoding="utf-8"))
    doc["payload"]["activation_rules"] += ["a note about <panel", "onboarding= first"]
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    p = run_cli("validate", "--select", "MC500", path)
    assert p.returncode == 0, p.stdout


# ---- the docs' ranges of a whole family of checks match the registry ------------------------

#: a range of ids written out ("G1-G13", "RV101-RV305", "R1-R9")
RANGE = re.compile(r"\b([A-Z]{1,2})(\d+)-(?:\1)?(\d+)\b")


def test_a_range_from_a_familys_first_check_ends_at_its_last() -> None:
    """README and docs said "gates G1-G13" and "the review's findings RV101-RV305" where the
    registry holds G1-G15 (the switch approval, publishing) and RV101-RV601 (interactions,
    lineage, orphan notes): a range that starts at a family's first id says "all of them",
    so it must end at its last (a sub-range, G10-G14 or MC000-MC201, starts elsewhere or
    is one of these: each such one here says what it covers)."""
    families: dict[str, list[int]] = {}
    for cid in known_ids():
        m = re.fullmatch(r"([A-Z]+)(\d+)", cid)
        assert m is not None, cid
        families.setdefault(m.group(1), []).append(int(m.group(2)))
    width = {fam: len(next(c for c in known_ids() if c.startswith(fam) and
                           c[len(fam):].isdigit())) - len(fam) for fam in families}
    first = {fam: f"{min(n):0{width[fam]}d}" for fam, n in families.items()}
    last = {fam: f"{max(n):0{width[fam]}d}" for fam, n in families.items()}
    #: sub-ranges from a family's first id that say what they cover, where they stand
    partial = {"G1-G9": "guard `promote`", "MC000-MC201": "MC300-MC600",
               "MC000-MC100": "MC200-MC203", "R1-R7": "", "R1-R8": "", "R1-R4": ""}
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    wrong = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for m in RANGE.finditer(text):
            fam, start, end = m.groups()
            if fam not in families or start != first[fam] or end == last[fam]:
                continue
            said = m.group(0)
            if said in partial and partial[said] in text[m.start():m.end() + 120]:
                continue
            wrong.append(f"{page.name}:{text[:m.start()].count(chr(10)) + 1}: {said} "
                         f"(the registry: {fam}{first[fam]}-{fam}{last[fam]})")
    assert not wrong, "\n".join(wrong)


def test_readmes_rule_groups_cover_every_rule_validate_runs() -> None:
    """README's "The rules" listed MC300-MC305 as the lifecycle's rules; MC306 (the log
    extends the base branch's) and MC307 (a logged component with no document) were in no
    group."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    para = readme.split("## The rules", 1)[1].split("Each\nrule's id", 1)[0]
    named: set[int] = set()
    for m in re.finditer(r"\bMC(\d{3})(?:-MC(\d{3}))?\b", para):
        lo = int(m.group(1))
        named.update(range(lo, int(m.group(2) or lo) + 1))
    rules = sorted(int(c[2:]) for c in known_ids() if c.startswith("MC") and c >= "MC100")
    assert [r for r in rules if r not in named] == []


# ---- a file named twice is one document -------------------------------------------------------

@pytest.mark.parametrize("command", ["validate", "verify"])
@pytest.mark.parametrize("names", [
    ("doc.json", "doc.json"),
    ("cat", "cat/doc.json"),
    ("cat/doc.json", "cat"),
    ("cat", "./cat"),
    ("cat", "cat/sub/../doc.json", "{abs}/cat/doc.json"),
])
def test_a_file_named_twice_is_read_once(tmp_path: Path, command: str,
                                         names: tuple[str, ...]) -> None:
    """``validate cat cat/doc.json`` (a folder and a changed file in it) or the same file
    twice reported the document as an MC104 duplicate of itself ("already defined at
    cat/doc.json:1"), exit 1, and counted it twice."""
    (tmp_path / "cat" / "sub").mkdir(parents=True)
    seed = SEED.read_text(encoding="utf-8")
    (tmp_path / "doc.json").write_text(seed, encoding="utf-8")
    (tmp_path / "cat" / "doc.json").write_text(seed, encoding="utf-8")
    args = [n.format(abs=tmp_path) for n in names]
    p = run_cli(command, *args, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "MC104" not in p.stdout and "1 document, 1 file" in p.stdout


def test_standard_input_named_twice_is_read_once(tmp_path: Path) -> None:
    p = run_cli("validate", "-", "-", stdin=SEED.read_text(encoding="utf-8"), cwd=tmp_path)
    assert p.returncode == 0 and "1 document, 1 file" in p.stdout, p.stdout


def test_two_files_with_one_id_are_still_mc104(tmp_path: Path) -> None:
    (tmp_path / "cat").mkdir()
    (tmp_path / "doc.json").write_text(SEED.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "cat" / "doc.json").write_text(SEED.read_text(encoding="utf-8"),
                                               encoding="utf-8")
    p = run_cli("validate", "doc.json", "cat", "doc.json", cwd=tmp_path)
    assert p.returncode == 1 and p.stdout.count("MC104") == 1
    assert "2 documents, 2 files" in p.stdout


# ---- pyproject.toml: [tool.risutools] in every TOML spelling ---------------------------------

needs_toml = pytest.mark.skipif(_tomllib() is None, reason="no TOML reader (Python 3.10)")

#: the same table, as TOML lets it be written
SPELLINGS = [
    '[tool.risutools.rules]\nMC401 = "error"\n',
    'tool.risutools.rules = { MC401 = "error" }\n',
    '[tool]\nrisutools = { rules = { MC401 = "error" } }\n',
    '[tool]\nrisutools.rules.MC401 = "error"\n',
    '[ tool . "risutools" ]\nrules = { MC401 = "error" }\n',
    '[project]\nname = "catalog"\n\n[tool."risutools".rules]\nMC401 = "error"\n',
]


@needs_toml
@pytest.mark.parametrize("text", SPELLINGS)
def test_the_search_reads_every_spelling_of_the_table(tmp_path: Path, text: str) -> None:
    """The search took a pyproject.toml only when its text held ``[tool.risutools``: the
    same table written with dotted keys, an inline table or a quoted name was passed over
    in silence, its rules not applied (MC401 stayed a warning, exit 0)."""
    doc = _capability_document(tmp_path)
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    for extra in ([], ["--config", str(tmp_path / "pyproject.toml")]):
        p = run_cli("validate", *extra, doc, cwd=tmp_path)
        assert p.returncode == 1 and "1 error," in p.stdout, (extra, p.stdout, p.stderr)


@needs_toml
@pytest.mark.parametrize(("text", "said"), [
    ("tool = 5\n", "tool: config-not-mapping"),
    ('[tool]\nrisutools = "x"\n', "config-not-mapping"),
    ('rules = { MC401 = "error" }\n', "config-unknown-key: rules at the top of a TOML"),
    ('[rules]\nMC401 = "error"\n[capabilities]\n', "capabilities, rules at the top"),
])
def test_a_toml_file_that_misplaces_the_table_is_refused(tmp_path: Path, text: str,
                                                         said: str) -> None:
    """``--config`` of a TOML file whose ``tool`` is no table was an internal error
    (AttributeError); one holding the keys at its top (``risutools.toml`` with
    ``[rules]``) was read as no configuration at all, its rules silently dropped."""
    doc = _capability_document(tmp_path)
    for name in ("pyproject.toml", "risutools.toml"):
        (tmp_path / name).write_text(text, encoding="utf-8")
        p = run_cli("validate", "--config", str(tmp_path / name), doc, cwd=tmp_path)
        assert p.returncode == 2 and p.stdout == "", p.stdout
        line = p.stderr.strip()
        assert "\n" not in line and said in line and "internal error" not in line, line
        (tmp_path / name).unlink()


@needs_toml
@pytest.mark.parametrize("text", [
    '[project]\nname = "catalog"\ndependencies = ["risutools"]\n',
    '[project]\nname = "catalog"\n',
    '[tool.black]\nline-length = 100\n',
    '[project\nname = "risutools"\n',  # (no table named: passed over, as before)
])
def test_a_pyproject_without_the_table_is_still_passed_over(tmp_path: Path,
                                                            text: str) -> None:
    doc = _capability_document(tmp_path)
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    p = run_cli("validate", doc, cwd=tmp_path)
    assert p.returncode == 0 and "1 warning," in p.stdout, p.stdout + p.stderr


# ---- --ignore of a check every run reports ---------------------------------------------------

@pytest.mark.parametrize("command", ["validate", "verify"])
@pytest.mark.parametrize("args", [
    ("--ignore", "MC000"), ("--ignore", "MC001"), ("--ignore", "MC0"),
    ("--ignore", "MC0,MC4"), ("--select", "MC000"), ("--select", "MC0"),
])
def test_naming_only_unreadable_input_is_a_usage_error(tmp_path: Path, command: str,
                                                       args: tuple[str, str]) -> None:
    """``--ignore MC000`` was accepted and ignored nothing (the unreadable file still
    failed the run); ``--select MC000`` said "nothing is left of what validate reports:
    MC checks (MC000-...)"."""
    (tmp_path / "bad.json").write_text("{bad", encoding="utf-8")
    p = run_cli(command, *args, tmp_path / "bad.json")
    assert p.returncode == 2 and p.stdout == "", p.stdout
    line = p.stderr.strip()
    assert "\n" not in line and f"{command}: usage:" in line
    assert "reported by every run" in line and "nothing is left" not in line


def test_selecting_unreadable_input_with_other_checks_still_runs(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{bad", encoding="utf-8")
    p = run_cli("validate", "--select", "MC000,MC100", tmp_path / "bad.json", SEED)
    assert p.returncode == 1 and "MC000" in p.stdout
    p = run_cli("validate", "--ignore", "MC4", tmp_path / "bad.json")
    assert p.returncode == 1 and "MC000" in p.stdout


# ---- the action finds the base branch's pyproject.toml as risutools does ----------------------

@needs_git
def test_the_action_pins_a_pyproject_table_in_any_spelling(
        runner: Path, repo: Path) -> None:  # noqa: F811
    """The action found the base branch's configuration in a pyproject.toml with ``grep
    '^\\[tool\\.risutools'``: a table written ``tool.risutools.rules = {...}`` was passed
    over, the step ran with the defaults ("the base branch has no configuration") and the
    base branch's rules counted for nothing."""
    origin = runner / "origin"
    _git(origin, "rm", "-q", "cat/.risutools.yaml")
    (origin / "pyproject.toml").write_text(
        '[project]\nname = "catalog"\n\n[tool]\nrisutools.rules = { MC401 = "error" }\n',
        encoding="utf-8")
    _git(origin, "add", "pyproject.toml")
    _git(origin, "commit", "-q", "-m", "configuration in pyproject.toml")
    doc = json.loads(SEED.read_text(encoding="utf-8"))
    doc["component_id"] = "module.risu.174678332.other-cutter"
    doc["capabilities"]["requires"].append("made.up_name")  # (MC401: a warning by default)
    (repo / "cat" / "other.json").write_text(json.dumps(doc), encoding="utf-8")
    code, out, err = action_check(runner, repo, **{"base-ref": "main"})
    assert "has no configuration" not in err, err
    assert code == 0 and out["exit-code"] == "1", err
    assert [r for r in action_results(repo) if r["ruleId"] == "MC401"
            and r["level"] == "error"]
