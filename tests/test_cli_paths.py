"""One code per situation, in every command (issue 24): a missing path is ``not-found``; a
path that exists but is not the folder expected is ``not-a-directory``; a folder where a
file is expected is ``not-a-file``; an output under a plain file is one line, exit 2,
``not-a-directory`` -- never an internal error, never a code of the command's own.

Every command is walked with each situation, for every path it takes (inputs, ``--config``,
``--notes``, ``--sources``, ``--catalog``, ``--sign``, outputs and ``--report``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from harness import FIXTURES, SEED, SOURCES, run_cli

MODULE = str(SOURCES / "174678332_context-cutter.risum")
MODULE_JSON = str(FIXTURES / "modules" / "174678332_context-cutter.json")
FIXTURE = str(FIXTURES / "replay" / "anchor-edit.yaml")
CUTTER = "module.risu.174678332.context-cutter"

#: every command, with ``{P}`` where a path goes; the kind of path it must be there
#: (file, folder, or file-or-folder) decides what each situation is
INPUTS: list[tuple[str, str]] = [
    ("inspect {P}", "file"),
    ("analyze {P}", "file"),
    ("project {P}", "file"),
    ("project " + MODULE + " --notes {P}", "file"),
    ("unpack {P} -o out", "file"),
    ("replay run {P} -x " + FIXTURE, "file"),
    ("replay run doc.json -x {P}", "file"),
    ("replay run doc.json -x " + FIXTURE + " -c {P}", "file"),
    ("replay monitor -x {P}", "file"),
    ("validate doc.json --config {P}", "file"),
    ("approve " + CUTTER + " --action request_review --reviewer kim --catalog cat --sign {P}",
     "file"),
    ("validate {P}", "any"),
    ("verify {P}", "any"),
    ("hash {P}", "any"),
    ("pack {P} -o out.risum", "any"),
    ("ingest {P} -o catalog", "folder"),
    ("ingest src -o catalog --notes {P}", "folder"),
    ("review {P}", "folder"),
    ("review cat --sources {P}", "folder"),
    ("verify doc.json --sources {P}", "folder"),
    ("promote " + CUTTER + " --to pending_human_review --catalog {P}", "folder"),
    ("approve " + CUTTER + " --action request_review --reviewer kim --catalog {P}", "folder"),
    ("packet " + CUTTER + " --lane light --catalog {P}", "folder"),
]

#: every output a command writes, with ``{O}`` where its path goes; file or folder
OUTPUTS: list[tuple[str, str]] = [
    ("unpack " + MODULE + " -o {O}", "folder"),
    ("pack " + MODULE_JSON + " -o {O}", "file"),
    ("analyze " + MODULE + " -o {O}", "file"),
    ("project " + MODULE + " -o {O}", "any"),
    ("ingest src -o {O}", "folder"),
    ("ingest src -o catalog -q --report {O}", "file"),
    ("validate doc.json -o {O}", "file"),
    ("verify doc.json -o {O}", "file"),
    ("review cat -q -o {O}", "file"),
    ("packet " + CUTTER + " --catalog cat --lane light -o {O}", "folder"),
    ("packet --catalog cat --lane light --status candidate --queue {O}", "folder"),
    ("replay run doc.json -x " + FIXTURE + " -o {O}", "file"),
    ("replay monitor -x " + FIXTURE + " -o {O}", "file"),
    ("replay synth --seed 1 --messages 5 -o {O}", "file"),
]


@pytest.fixture
def place(tmp_path: Path) -> Path:
    """A scratch folder: a document, a catalog, a source folder, a plain file, a folder."""
    shutil.copy(SEED, tmp_path / "doc.json")
    shutil.copytree(FIXTURES / "documents", tmp_path / "cat")
    (tmp_path / "cat" / "transitions.ndjson").touch()
    (tmp_path / "src").mkdir()
    shutil.copy(MODULE, tmp_path / "src")
    (tmp_path / "plain.txt").write_text("a plain file\n", encoding="utf-8")
    (tmp_path / "folder.json").mkdir()
    return tmp_path


def _refused(place: Path, cmd: str) -> str:
    p = run_cli(*cmd.split(), cwd=place)
    lines = p.stderr.splitlines()
    assert p.returncode == 2, (cmd, p.returncode, p.stdout[-300:], p.stderr)
    assert len(lines) == 1 and lines[0].startswith("risutools: "), (cmd, p.stderr)
    assert "internal error" not in p.stderr and "Traceback" not in p.stderr
    return lines[0]


@pytest.mark.parametrize(("cmd", "kind"), INPUTS, ids=[c for c, _ in INPUTS])
def test_a_missing_path_is_not_found(place: Path, cmd: str, kind: str) -> None:
    line = _refused(place, cmd.replace("{P}", "missing.json"))
    assert line.startswith("risutools: missing.json: not-found: "), line


@pytest.mark.parametrize(("cmd", "kind"), [x for x in INPUTS if x[1] == "folder"],
                         ids=[c for c, k in INPUTS if k == "folder"])
def test_a_file_where_a_folder_is_expected_is_not_a_directory(place: Path, cmd: str,
                                                              kind: str) -> None:
    line = _refused(place, cmd.replace("{P}", "plain.txt"))
    assert line == "risutools: plain.txt: not-a-directory: is a file, not a folder"


@pytest.mark.parametrize(("cmd", "kind"), [x for x in INPUTS if x[1] == "file"],
                         ids=[c for c, k in INPUTS if k == "file"])
def test_a_folder_where_a_file_is_expected_is_not_a_file(place: Path, cmd: str,
                                                         kind: str) -> None:
    line = _refused(place, cmd.replace("{P}", "folder.json"))
    assert line.startswith("risutools: folder.json: not-a-file: "), line
    assert "is a folder, not a file" in line


@pytest.mark.parametrize(("cmd", "kind"), OUTPUTS, ids=[c for c, _ in OUTPUTS])
def test_an_output_under_a_plain_file_is_one_line(place: Path, cmd: str, kind: str) -> None:
    line = _refused(place, cmd.replace("{O}", "plain.txt/out.json"))
    assert line == ("risutools: plain.txt/out.json: not-a-directory: plain.txt is a file, "
                    "not a folder")
    assert (place / "plain.txt").read_text(encoding="utf-8") == "a plain file\n"


@pytest.mark.parametrize(("cmd", "kind"), [x for x in OUTPUTS if x[1] != "any"],
                         ids=[c for c, k in OUTPUTS if k != "any"])
def test_an_output_of_the_wrong_kind_is_one_line(place: Path, cmd: str, kind: str) -> None:
    if kind == "folder":
        line = _refused(place, cmd.replace("{O}", "plain.txt"))
        assert line == "risutools: plain.txt: not-a-directory: is a file, not a folder"
    else:
        line = _refused(place, cmd.replace("{O}", "folder.json"))
        assert line.startswith("risutools: folder.json: not-a-file: is a folder")


@pytest.mark.parametrize("cmd", ["validate doc.json -o {F}", "verify doc.json -o {F}",
                                 "analyze " + MODULE + " -o {F}", "review cat -o {F}"])
@pytest.mark.parametrize("fmt", ["github", "sarif", "junit", "json"])
def test_an_output_named_like_a_format_asks_for_f(place: Path, cmd: str, fmt: str) -> None:
    line = _refused(place, cmd.replace("{F}", fmt))
    assert line.endswith(f"usage: Invalid value for --output: {fmt!r} is a format name and no "
                         f"such file exists: did you mean `-f {fmt}`? (see "
                         f"'risutools {cmd.split()[0]} -h')"), line
    assert not (place / fmt).exists()
    (place / fmt).write_text("", encoding="utf-8")  # a file of that name exists: written
    p = run_cli(*cmd.replace("{F}", fmt).split(), cwd=place)
    assert p.returncode in (0, 1) and (place / fmt).stat().st_size > 0


#: a folder a command makes itself (in the catalog, beside a document), made a plain file:
#: (the command, the folder); a fifth fuzzing pass found ``notes init`` saying ``unwritable:
#: cannot write: File exists`` of the notes file it meant to write
MADE: list[tuple[str, str]] = [
    ("notes init " + CUTTER + " --catalog cat", "cat/notes"),
    ("replay run doc.json -x " + FIXTURE, "replays"),
    ("approve " + CUTTER + " --action request_review --reviewer kim --catalog cat",
     "cat/approvals"),
    ("ingest src -o catalog", "catalog"),
    ("ingest src -o catalog/inner", "catalog"),
    ("project " + MODULE + " -o made/inner/", "made"),
    ("unpack " + MODULE + " -o made/inner", "made"),
]


@pytest.mark.parametrize(("cmd", "folder"), MADE, ids=[c for c, _ in MADE])
def test_a_folder_the_command_makes_that_is_a_file_is_not_a_directory(
        place: Path, cmd: str, folder: str) -> None:
    (place / folder).write_text("a plain file\n", encoding="utf-8")
    line = _refused(place, cmd)
    assert line.endswith(("not-a-directory: is a file, not a folder",
                          f"not-a-directory: {folder} is a file, not a folder")), line
    assert "File exists" not in line and "unwritable" not in line
    assert (place / folder).read_text(encoding="utf-8") == "a plain file\n"
