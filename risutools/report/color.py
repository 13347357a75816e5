"""When to colour: ``--color auto|always|never`` and the ``NO_COLOR`` / ``FORCE_COLOR``
conventions, decided in one place for every command that colours."""

from __future__ import annotations

import os
from typing import TextIO

COLOR_CHOICES = ("auto", "always", "never")
COLOR_HELP = ("auto (a terminal; NO_COLOR turns colours off, FORCE_COLOR on), always or never. "
              "A report written with -o is never coloured.")


def use_color(choice: str, stream: TextIO) -> bool:
    """``always`` / ``never`` win; ``auto``: off when ``NO_COLOR`` is set (non-empty), on
    when ``FORCE_COLOR`` is, else on only when ``stream`` is a terminal.  ValueError for
    another choice."""
    if choice not in COLOR_CHOICES:
        raise ValueError(f"{choice!r} is not one of {', '.join(COLOR_CHOICES)}")
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
