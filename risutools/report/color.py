"""When to colour: ``--color auto|always|never`` and the ``NO_COLOR`` / ``FORCE_COLOR``
conventions, decided in one place for every command that colours."""

from __future__ import annotations

import os
from collections.abc import Callable
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


#: ANSI styles of the text reports: a finding's severity, the verdict, emphasis
STYLES = {"error": "\x1b[31m", "warning": "\x1b[33m", "info": "\x1b[36m", "ok": "\x1b[32m",
          "bold": "\x1b[1m", "dim": "\x1b[2m"}
RESET = "\x1b[0m"


def painter(on: bool) -> Callable[[str, str], str]:
    """``paint(style, text)``: ``text`` in a style of :data:`STYLES` when ``on``, as is
    otherwise (an unknown style, a severity such as ``off``, leaves it as is too)."""

    def paint(style: str, text: str) -> str:
        code = STYLES.get(style)
        return f"{code}{text}{RESET}" if on and code and text else text

    return paint
