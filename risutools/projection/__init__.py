"""risutools.projection: analysis + provenance + curator notes -> matrix-component-v1.

``project(module, *, post_id=None, notes=None, lang="en", analysis=None) -> dict`` and
``load_notes(path) -> Notes``; see ``docs/analysis.md``.

Layout: ``project`` (the steps), ``identity`` (source facts, content identity, the
container's fields), ``sentences`` (one builder per generated field), ``merge`` (notes
over a document, the prompt), ``text`` (templates and tables, en and ko), ``naming``
(slugs, versions, Korean particles), ``guard`` (what module text may be copied),
``notes`` (notes-v1), ``run`` (files in, documents out).
"""

from risutools.projection.notes import Notes, load_notes, validate_notes
from risutools.projection.project import post_id_from_name, project, slugify

__all__ = ["Notes", "load_notes", "post_id_from_name", "project", "slugify", "validate_notes"]
