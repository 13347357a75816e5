"""How the command line writes its own help and usage errors: an argument by its metavar
(``FILE...`` when several are taken, ``[CATALOG]`` when it may be left out), and a usage
error as one line naming the command (``risutools: validate: usage: ... (see 'risutools
validate -h')``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from risutools.errors import bounded


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
    message = bounded(" ".join(str(getattr(exc, "format_message", exc.__str__)()).split()))
    where = f"{' '.join(parts)}: " if parts else ""
    return f"risutools: {where}usage: {message} (see '{cmd} -h')"


def _command_name(info: Any) -> str:
    """A registered command's name as typer gives it: its own, else its function's name in
    lower case with ``-`` for ``_``."""
    if info.name:
        return str(info.name)
    callback = info.callback
    return callback.__name__.lower().replace("_", "-") if callback is not None else ""


@contextlib.contextmanager
def one_command(app: Any, argv: Sequence[str]) -> Iterator[None]:
    """While typer app ``app`` runs the command line ``argv``: when its first word names one
    command or group of ``app``, the app holds that one alone, so that only its options are
    made (typer makes every command's options, inspecting each function, at every run).
    Anything else (no word, an option first, a word no command has) leaves every command
    there: the root's help, its errors and their suggestions see them all.  What a command
    shows and does is its own either way: its usage line names the program and itself."""
    first = argv[0] if argv else ""
    commands = [c for c in app.registered_commands if _command_name(c) == first]
    groups = [g for g in app.registered_groups if g.name == first]
    if not first or len(commands) + len(groups) != 1:
        yield
        return
    saved = app.registered_commands, app.registered_groups
    app.registered_commands, app.registered_groups = commands, groups
    try:
        yield
    finally:
        app.registered_commands, app.registered_groups = saved
