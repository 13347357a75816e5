"""What the catalog commands share: the catalog a command works on, and the settings it
reads there (defaults < the catalog's configuration file < the command line)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from risutools.catalog.catalog import Catalog, Entry, find_root
from risutools.errors import ConfigError
from risutools.safeio import file_problem
from risutools.settings.config import Settings, resolve_settings

#: how a command gets its settings once the catalog root is known
Configure = Callable[[Path], Settings]


def pinned_file(path: str | None, option: str) -> Path | None:
    """A file CI gives from outside the pull request (``--allowed-signers``,
    ``--base-log``): it must be a regular file now, else a usage error (exit 2, one line
    naming the option), never read as an empty one."""
    if path is None:
        return None
    if (bad := file_problem(path, option)) is not None:
        raise ConfigError(bad.code, bad.why, path=bad.path)
    return Path(path)


@dataclass(frozen=True)
class TrustRoot:
    """Who may approve, for a command CI runs on pull requests (``validate``, ``review``):
    ``--allowed-signers FILE`` pins the signers' file (signatures then required, whatever
    the configuration says); without it, a configuration's ``allowed_signers`` must lie
    inside its repository unless ``allow_outside`` (``--allow-config-signers-outside``).
    The one path both commands take (:meth:`pin`)."""

    allowed_signers: str | None = None
    allow_outside: bool = False

    def __post_init__(self) -> None:
        pinned_file(self.allowed_signers, "--allowed-signers")

    def pin(self, cfg: Settings) -> Settings:
        """``cfg`` with this trust root (``config-signers-outside``, exit 2, when the
        configuration names signers outside its repository and nothing pins them)."""
        cfg = cfg.with_signers(self.allowed_signers)
        cfg.trusted_signers(allow_outside=self.allow_outside)
        return cfg


def configure(config_file: str | None, *, select: Iterable[str] = (),
              ignore: Iterable[str] = (), sources: str | None = None,
              exclude: Iterable[str] = (), trust: TrustRoot | None = None) -> Configure:
    """The layered settings of a catalog command, once its root is known: ``--config FILE``
    (the file alone: the catalog's own configuration is then not read) or the configuration
    file above the root, under the command line's options; ``trust``: the trust root a
    command CI runs pins (:class:`TrustRoot`)."""

    def settings(root: Path) -> Settings:
        cfg = resolve_settings(config_file, root, select=select, ignore=ignore,
                               sources=sources, exclude=exclude)
        return trust.pin(cfg) if trust is not None else cfg

    return settings


def open_for(component: str, catalog: str | None, configure: Configure | None = None,
             also: tuple[str, ...] = (), *, whole: bool = False) -> tuple[Catalog, Entry]:
    """The catalog (``--catalog``, else the one above the document, else above the current
    folder) and the component in it (``also``: as :meth:`Catalog.by_id` takes it;
    ``whole``: a command that reads every document anyway has them read first, and a
    component named by id found among them)."""
    if catalog is None and Path(component).is_file():
        # the folder the path names (a link's target may be outside: it is then refused)
        named = Path(component).absolute().parent
        root = find_root(named)
        cat = Catalog.open(root if root is not None else named, configure=configure)
    else:
        cat = Catalog.open(catalog, configure=configure)
    if whole and not Path(component).is_file():
        cat.entries()
    return cat, cat.resolve(component, also)
