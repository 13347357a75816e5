"""The command layer: one module a command (its options object, what it builds and runs,
the result it returns); reporters (``risutools.report``) and the command line
(``risutools.cli``) sit above it."""
