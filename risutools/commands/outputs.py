"""What a command's output may not name inside a folder it reads: a file its walk would read
(a component document, a Risu file by its content).  The command modules that read folders
give it to the command line as ``reads_file`` (:func:`risutools.report.output.
refuse_output_on_input`): ``review cat -o cat/doc.json`` had replaced a document with the
report."""

from __future__ import annotations

from risutools.contract.loaders import load_file, not_a_component
from risutools.errors import RisuError
from risutools.formats.reader import detect


def reads_file(path: str) -> bool:
    """Whether a folder walk reads the file at ``path``: a Risu file, or a component
    document (a report an earlier run left is neither); bounded as every read."""
    try:
        if detect(path) is not None:
            return True
    except RisuError:  # (not readable: not read by the command either)
        return False
    out = load_file(path, from_folder=True)
    return bool(out.documents) and not_a_component(out.documents[0].doc) is None
