"""A tenth pass over the analyser's memory bounds (stop 64): a fuzzer's hostile modules,
each of which grew the analysing process per character; each test fails before its fix.

- CBS folding (``cbsfold.fold_cbs``) kept pieces for every tag, no cap: 1,000,000
  ``{{a}}`` took 589 MB (about 560 bytes a tag).  Now at most ``MAX_FOLD_TAGS`` (50,000)
  tags a text are read, the rest of it left as written.
- The CSS reader (``cssscan``): its token pattern repeated a group per character or escape
  (a name, a string, an unquoted ``url(``), and ``re`` keeps a backtracking mark per
  repetition: ``<style>`` + ``a\\`` * 1,000,000 took 319 MB.  Now possessive on 3.11+.
- Percent-decoding of an address's host (``urlleaks._percent_decoded``): a run of escapes
  was one match of a group repeated per escape: ``%41`` * 4,000,000 took 490 MB in ``re``
  alone.  Now matched ``PERCENT_RUN`` escapes at a time, decoded incrementally.
- The Lua lexer's pass over blanks and line comments (``lualex``): a group repeated per
  line: ``--c\\n`` * 4,000,000 took 1.4 GB.  Now possessive (3.11+) or cut (3.10).
- The Lua skip path's string bodies (``luaskip._string_body`` with a word a string must not
  hold: the HTML-in-Lua and button readers): a group repeated per character, 152 bytes a
  character of a string; and its line comments between tokens, a group per line.
"""

from __future__ import annotations

import sys
import urllib.parse
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import traced_peak

from risutools.analysis import analyze, cbsfold, cssscan, lualex, luaskip, urlleaks
from risutools.formats.model import Module

# a traced peak per character of hostile input well under what the defects cost (each over
# 100 bytes a character) and well over what a linear reader with a small constant needs
PER_CHAR = 24
N = 400_000
#: what folding the tags up to the cap may keep (about 560 bytes a tag)
CBS_CAP_BYTES = 40_000_000


def _module(**data: object) -> Module:
    return Module({"type": "risuModule", "name": "m", "id": "x", **data})


def _lua(code: str) -> Module:
    return _module(trigger=[{"comment": "t", "type": "start", "conditions": [],
                             "effect": [{"type": "triggerlua", "code": code}],
                             "lowLevelAccess": False}])


def _bounded(run: object, size: int) -> int:
    peak = traced_peak(run)  # type: ignore[arg-type]
    assert peak < PER_CHAR * size, f"{peak} bytes for {size} characters"
    return peak


def test_cbs_folding_reads_at_most_max_fold_tags() -> None:
    # 600,000 tags: about 560 bytes each before (336 MB); now the cap's worth (about 27 MB)
    text = "{{a}}" * (cbsfold.MAX_FOLD_TAGS * 12)
    peak = traced_peak(lambda: cbsfold.fold_cbs(text))
    assert peak < CBS_CAP_BYTES, peak
    folded = cbsfold.fold_cbs(text)
    assert folded.text == text
    assert len(folded.starts) <= 3 * cbsfold.MAX_FOLD_TAGS + 2


def test_cbs_folding_past_the_cap_keeps_the_rest_as_written() -> None:
    cap = cbsfold.MAX_FOLD_TAGS
    text = "{{br}}" * (cap - 1) + "{{x {{br}} y}}{{br}}"
    folded = cbsfold.fold_cbs(text)
    assert folded.text == "\n" * (cap - 1) + "{{x {{br}} y}}{{br}}"
    assert folded.origin(cap - 1) == 6 * (cap - 1)
    small = cbsfold.fold_cbs("a{{br}}b{{x {{br}}}}")
    assert small.text == "a\nb{{x \n}}"


def test_cbs_module_is_analysed_in_bounded_memory() -> None:
    module = _module(backgroundEmbedding="{{a}}" * (cbsfold.MAX_FOLD_TAGS * 12))
    peak = traced_peak(lambda: analyze(module))
    assert peak < CBS_CAP_BYTES + 12 * cbsfold.MAX_FOLD_TAGS * 5 * 8, peak


@pytest.mark.parametrize("css", [
    "<style>" + "a\\" * N + "</style>",
    '<div style="' + "a\\" * N + '">x</div>',
    "<style>a{b:url(" + "a\\" * N + ")}</style>",
    "<style>a{b:url('" + "a\\\\" * N + "')}</style>",
])
def test_css_escapes_are_read_in_bounded_memory(css: str) -> None:
    _bounded(lambda: analyze(_module(backgroundEmbedding=css)), len(css))


def test_css_reader_repetitions_keep_no_state() -> None:
    text = "a\\" * N
    _bounded(lambda: cssscan.css_urls(text), len(text))
    quoted = "a{b:url('" + "x\\'" * N + "https://h.example/')}"
    assert [u.url for u in cssscan.css_urls(quoted)] == ["x'" * N + "https://h.example/"]
    plain = "a{b:url(" + "\\41" * N + ")}"
    assert [u.url for u in cssscan.css_urls(plain)] == ["A" * N]


def test_percent_decoding_is_bounded_and_unchanged() -> None:
    text = "%41" * N
    _bounded(lambda: urlleaks._percent_decoded(text), len(text))
    assert urlleaks._percent_decoded(text) == "A" * N
    # a run cut between matches decodes as one (a character's bytes across a cut)
    for lead in range(3):
        mixed = "%41" * lead + "%E2%80%8B" * urlleaks.PERCENT_RUN + "x%C2" + "%AD" * 5
        assert urlleaks._percent_decoded(mixed) == urllib.parse.unquote(mixed)


def test_percent_escaped_mcp_address_is_bounded() -> None:
    url = "https://" + "%41" * N
    _bounded(lambda: analyze(_module(mcp={"url": url})), len(url))


def test_lua_comment_lines_are_passed_in_bounded_memory() -> None:
    code = "--c\n" * (N // 4) + "x = 1\n"
    _bounded(lambda: analyze(_lua(code)), len(code))
    assert lualex.pass_blanks(code, 0) == len(code) - 6
    assert lualex.pass_blanks_310(code, 0) == len(code) - 6
    assert lualex.pass_blanks(" --[[x]]", 0) == 1
    assert lualex.pass_blanks_310("--a\n  --b", 0) == 6


def test_lua_310_blank_pass_keeps_bounded_state() -> None:
    code = "--c\n" * (N // 4)
    _bounded(lambda: lualex.pass_blanks_310(code, 0), len(code))


@pytest.mark.parametrize("word", ["<", "risu", "ab"])
def test_lua_skip_string_bodies_keep_no_state(word: str) -> None:
    text = 'x = 1 + "' + "ar" * (N // 2) + '" + 2\n'
    for rx in (luaskip.skip_pattern(frozenset(), luaskip.POSSESSIVE, word),
               luaskip.block_pattern(frozenset({"format"}), luaskip.POSSESSIVE, word)):
        _bounded(lambda rx=rx: rx.match(text), len(text))  # type: ignore[misc]
        m = rx.match(text)
        assert m is not None and m.end() == len(text) - 1  # (the last line break: lexed)
    stop = 'x = "a' + word + 'b" + 1'
    m = luaskip.skip_pattern(frozenset(), luaskip.POSSESSIVE, word).match(stop)
    assert m is not None and m.end() < stop.index('"') + 1


def test_lua_string_in_html_reader_is_bounded() -> None:
    code = ('local s = "' + "a" * N + '"\nlocal h = "<img src=\'https://x.example/a\'>"\n'
            "print(h)\n")
    _bounded(lambda: analyze(_lua(code)), len(code))
