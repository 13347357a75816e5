"""risutools.contract: the matrix-component-v1 contract.

The document loaders for JSON / YAML / NDJSON (``loaders``) and their checks MC000/MC001
(``checks_load``), the schema check MC100 (``schema``), the document rules MC101-MC600
(``rules``), the catalog checks MC104/MC305 (``checks_catalog``, with the transition log:
``transitions``), ``validate`` and ``verify`` (MC202/MC203) and the surgical fixes of
``validate --fix`` (``fix``).  Import what you use from its module
(``from risutools.contract.validate import validate_document``).
"""
