"""risutools.contract: the matrix-component-v1 contract.

The schema check (``schema``), the rules MC000-MC600 (``rules``), the document loaders for
JSON / YAML / NDJSON (``loaders``), ``validate`` and ``verify`` and the surgical fixes of
``validate --fix`` (``fix``).  Import what you use from its module
(``from risutools.contract.validate import validate_document``).
"""
