"""How the command line writes its own help and usage errors: an argument by its metavar
(``FILE...`` when several are taken, ``[CATALOG]`` when it may be left out), and a usage
error as one line naming the command (``risutools: validate: usage: ... (see 'risutools
validate -h')``)."""

from __future__ import annotations

from typing import Any


def _argument_metavar(self: Any, ctx: Any = None, *, usage: bool = False) -> str:
    """An argument as usage lines write it: ``FILE...`` when several are taken, in brackets
    when it may be left out (``[CATALOG]``)."""
    var = (self.metavar or self.name or "").upper() + ("..." if self.nargs != 1 else "")
    return var if self.required or not usage else f"[{var}]"


def plain_argument_help() -> None:
    """Help shows an argument by its metavar alone (FILE, FILE... when several are taken),
    not with a type name (``<list[str]>``) or braces (``{FILE}``) around it; options already
    show their metavar instead of a type."""
    from typer import core

    arg = getattr(core, "TyperArgument", None)
    if arg is not None and hasattr(arg, "display_type_rich"):
        setattr(arg, "display_type_rich", lambda self, ctx: None)  # noqa: B010
    if arg is not None and hasattr(arg, "make_metavar"):
        setattr(arg, "make_metavar", _argument_metavar)  # noqa: B010


def usage_line(exc: BaseException) -> str:
    """A usage error (bad option value, missing argument, unknown option) on one line."""
    ctx = getattr(exc, "ctx", None)
    parts = list(getattr(ctx, "command_path", "").split()[1:]) if ctx is not None else []
    while parts and parts[0] in ("-m", "risutools"):  # "python -m risutools" as prog name
        parts.pop(0)
    cmd = " ".join(["risutools", *parts])
    message = " ".join(str(getattr(exc, "format_message", exc.__str__)()).split())
    where = f"{' '.join(parts)}: " if parts else ""
    return f"risutools: {where}usage: {message} (see '{cmd} -h')"
