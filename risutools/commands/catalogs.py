"""What the catalog commands share: the catalog a command works on, and the settings it
reads there (defaults < the catalog's configuration file < the command line)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from risutools.catalog.catalog import Catalog, Entry, find_root
from risutools.settings.config import Settings, resolve_settings

#: how a command gets its settings once the catalog root is known
Configure = Callable[[Path], Settings]


def configure(config_file: str | None, *, select: Iterable[str] = (),
              ignore: Iterable[str] = (), sources: str | None = None,
              exclude: Iterable[str] = ()) -> Configure:
    """The layered settings of a catalog command, once its root is known: ``--config FILE``
    or the configuration file above the root, under the command line's options."""
    return lambda root: resolve_settings(config_file, root, select=select, ignore=ignore,
                                         sources=sources, exclude=exclude)


def open_for(component: str, catalog: str | None, configure: Configure | None = None
             ) -> tuple[Catalog, Entry]:
    """The catalog (``--catalog``, else the one above the document, else above the current
    folder) and the component in it."""
    if catalog is None and Path(component).is_file():
        # the folder the path names (a link's target may be outside: it is then refused)
        named = Path(component).absolute().parent
        root = find_root(named)
        cat = Catalog.open(root if root is not None else named, configure=configure)
    else:
        cat = Catalog.open(catalog, configure=configure)
    return cat, cat.resolve(component)
