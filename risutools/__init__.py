"""risutools: read RisuAI attachments without executing them.

The package is layered in the order data flows:
``formats`` (bytes -> module objects) -> ``analysis`` (facts, no I/O) ->
``projection`` (facts -> matrix-component-v1 document) -> ``contract``
(schema, rules, canonical hash) -> ``report`` (renderers).  ``replay`` and
``catalog`` orchestrate; ``cli`` is a thin layer over all of them.
"""

__version__ = "0.1.0"

from risutools.errors import RisuError

__all__ = ["RisuError", "__version__"]
