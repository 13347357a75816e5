"""risutools.projection: analysis + provenance + curator notes -> matrix-component-v1.

``project(module, *, post_id=None, notes=None, lang="en", analysis=None) -> dict`` and
``load_notes(path) -> Notes``; see ``docs/analysis.md``.
"""

from risutools.projection.notes import Notes, load_notes, validate_notes
from risutools.projection.project import post_id_from_name, project, slugify

__all__ = ["Notes", "load_notes", "post_id_from_name", "project", "slugify", "validate_notes"]
