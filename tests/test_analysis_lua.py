"""The Lua lexer/scanner: code vs comments vs strings, Lua 5.4 syntax, degraded input."""

from __future__ import annotations

import pytest

from risutools.analysis.lua import MAX_CALLS, scan_lua
from risutools.analysis.lualex import NAME, NUM, STR, decode_lua_string, tokenize


def call_names(code: str) -> list[str]:
    return [c.name for c in scan_lua(code).calls]


def test_names_in_comments_and_strings_are_not_calls() -> None:
    code = (
        '-- request("http://a")\n'
        '--[[ LLM("x") ]]\n'
        '--[==[ ]] still comment generateImage("y") ]==]\n'
        'local s = "load(x)" .. \'dofile(y)\' .. [[ require("z") ]] .. [=[ ]] hash(1) ]=]\n'
        'print(s)\n'
    )
    assert call_names(code) == ["print"]


def test_long_comment_level_must_match() -> None:
    # "]]" does not close a level-1 long comment; the call after "]=]" is real
    code = "--[=[ a ]] b ]=] request(u)"
    assert call_names(code) == ["request"]


def test_string_escapes_and_decoding() -> None:
    toks = tokenize(r'x = "a\"b\\" y = "\x41\65\u{AC00}\z   c"')
    strs = [t.value for t in toks if t.kind == STR]
    assert strs == ['a"b\\', "AA가c"]
    assert decode_lua_string(r"\n\t\q") == "\n\tq"


def test_lua54_syntax_does_not_derail() -> None:
    code = (
        "local x <const> = 0x1.8p3 // 2 ~ 3 << 1 >> 2 & 0xFF | 1\n"
        "local f <close> = nil\n"
        "::top:: if x ~= 1 then goto top end\n"
        "local y = 1e-3 + .5 + 3. + 0xA\n"
        "setChatVar(id, 'k', x)\n"
    )
    scan = scan_lua(code)
    assert scan.errors == []
    assert [c.name for c in scan.calls] == ["setChatVar"]
    assert scan.calls[0].line == 5
    assert scan.calls[0].args[1].literal == "k"


def test_call_forms_and_first_string_arguments() -> None:
    code = (
        'listenEdit("editRequest", function(id, d) return d end)\n'
        'getChatVar(id, "hp")\n'
        'f"str"\n'
        "g[[long]]\n"
        "h{1, 2}\n"
        'obj:method("m")\n'
        'a.b.c("n")\n'
        '_G.request("https://api.example.com/x")\n'
    )
    calls = scan_lua(code).calls
    by = {c.name: c for c in calls}
    assert by["listenEdit"].args[0].literal == "editRequest"
    assert by["getChatVar"].args[1].literal == "hp"
    assert by["getChatVar"].args[0].name == "id"
    assert by["f"].form == "string" and by["f"].args[0].literal == "str"
    assert by["g"].form == "string" and by["g"].args[0].literal == "long"
    assert by["h"].form == "table"
    assert (by["method"].qualifier, by["method"].base) == (":", "obj")
    assert (by["c"].qualifier, by["c"].base) == (".", "b")
    assert (by["request"].qualifier, by["request"].base) == (".", "_G")
    assert by["request"].args[0].literal == "https://api.example.com/x"


def test_nested_calls_keep_outer_arguments() -> None:
    scan = scan_lua('setChatVar(id, "outer", getChatVar(id, "inner"))')
    by = {c.name: c for c in scan.calls}
    assert by["setChatVar"].args[1].literal == "outer"
    assert by["getChatVar"].args[1].literal == "inner"


def test_keywords_are_not_calls_and_definitions_are_found() -> None:
    code = (
        "if (x) then return(y) end\n"
        "function onStart(id) end\n"
        "local function helper() end\n"
        "onOutput = function(id) end\n"
        "function M.sub:meth() end\n"
    )
    scan = scan_lua(code)
    assert call_names(code) == []
    defs = {(d.name, d.local) for d in scan.defs}
    assert ("onStart", False) in defs
    assert ("helper", True) in defs
    assert ("onOutput", False) in defs
    assert ("M", False) in defs


def test_dynamic_index_and_constants() -> None:
    code = 'local URL = "https://h.example.org/a"\n_ENV["x"](1)\n_G[k]()\nlocal J = "a" .. b\n'
    scan = scan_lua(code)
    assert [n for n, _ in scan.dynamic_index] == ["_ENV", "_G"]
    assert scan.constants == {"URL": "https://h.example.org/a"}
    assert ("h.example.org", 1) in scan.url_hosts


def test_unterminated_long_string_and_comment_degrade() -> None:
    scan = scan_lua('getChatVar(id, "a")\nx = [==[ never closed\nrequest("u")')
    assert [c.name for c in scan.calls] == ["getChatVar"]
    assert any("unterminated long string" in m and line == 2 for line, m in scan.errors)
    scan = scan_lua('setChatVar(id, "b", 1)\n--[[ open comment\nLLM(x)')
    assert [c.name for c in scan.calls] == ["setChatVar"]
    assert any("unterminated long comment" in m for _, m in scan.errors)


def test_unterminated_short_string_ends_at_line() -> None:
    scan = scan_lua('s = "oops\nrequest("https://x.example")\n')
    assert [c.name for c in scan.calls] == ["request"]
    assert scan.errors and scan.errors[0][0] == 1


def test_junk_characters_nul_and_surrogates() -> None:
    code = "a = 1 \x00 $ @ \ud800 ` 가\nload(x)"
    scan = scan_lua(code)
    assert [c.name for c in scan.calls] == ["load"]
    assert scan.errors  # reported, not fatal


def test_five_megabytes_on_one_line() -> None:
    unit = 'local a = getChatVar(id, "k") .. "s" -- c\n'.replace("\n", " ")
    code = unit * (5 * 1024 * 1024 // len(unit))
    scan = scan_lua(code)
    assert scan.lines == 1
    # a "--" comment runs to the end of the line: only the first unit is code
    assert len(scan.calls) == 1
    code2 = ('x = getChatVar(id, "k") ' * (5 * 1024 * 1024 // 25))
    scan2 = scan_lua(code2)
    # every call read; kept up to the bound (past it, the first of each name), said once
    assert len(scan2.calls) == min(5 * 1024 * 1024 // 25, MAX_CALLS)
    assert [why for _line, why in scan2.errors if "calls" in why]


def test_empty_and_non_text() -> None:
    assert scan_lua("").calls == []
    assert scan_lua(None).calls == []  # type: ignore[arg-type]


def test_token_kinds() -> None:
    toks = tokenize("foo 'x' 12 +")
    assert [t.kind for t in toks][:2] == [NAME, STR]


def _calls(code: str) -> list[tuple[str, str, str, list[str | None]]]:
    return [(c.name, c.qualifier, c.form, [a.literal for a in c.args])
            for c in scan_lua(code).calls]


def test_long_bracket_levels_do_not_cross() -> None:
    # a level-2 comment is not closed by "]]" or "]=]"; a level-0 one not by "]==]"
    assert call_names('--[==[ x ]] y ]=] request(1) ]==] LLM(2)') == ["LLM"]
    assert call_names("--[[ x ]==] ]] LLM(2)") == ["LLM"]
    assert call_names("s = [==[ a ]] ]=] load(x) ]==] hash(1)") == ["hash"]
    # "--[=" without a second "[" is a line comment
    assert call_names("--[= not long load(1)\nLLM(1)") == ["LLM"]


def test_quotes_and_dashes_cross_comment_and_string_lines() -> None:
    assert call_names('s = "a -- b" LLM(1)') == ["LLM"]
    assert call_names("s = 'x --[[ y' LLM(1)") == ["LLM"]
    assert call_names("-- it's a 'comment\nLLM(1)") == ["LLM"]
    assert call_names('--[[ "unclosed ]] LLM(1)') == ["LLM"]
    assert call_names("s = 'it\\'s' LLM(1)") == ["LLM"]
    assert call_names('s = "abc\\\\" LLM(1)') == ["LLM"]  # an escaped backslash ends it
    assert call_names('s = "a\\\nb" LLM(1)') == ["LLM"]  # backslash-newline continues


def test_escape_sequences_decode() -> None:
    toks = tokenize('s = "\\z\n   ab\\x41\\u{48}\\065\\u{1F600}" t = "\\u{110000}"')
    strs = [tk.value for tk in toks if tk.kind == STR]
    # \u{110000}: Lua 5.4 writes F4 90 80 80, which is not UTF-8: four U+FFFD as RisuAI's
    # decoder (WHATWG) reads it
    assert strs == ["abAHA\U0001F600", "\ufffd" * 4]


def test_call_shapes_and_qualifiers() -> None:
    assert _calls('a.b:c"str"') == [("c", ":", "string", ["str"])]
    assert _calls("f{LLM}") == [("f", "", "table", [])]  # a name inside a table is no call
    assert _calls("f[==[x]==]") == [("f", "", "string", ["x"])]
    assert _calls('getChatVar(id, ("k"))')[0][3] == [None, None]  # not a plain literal
    assert _calls('setState(id, "k" .. n, 1)')[0][3] == [None, None]
    assert _calls("setChatVar(id, [=[key]=], 1)")[0][3] == [None, "key"]


def test_numbers_and_operators() -> None:
    toks = tokenize("a..b...c 0x1p4 1e-3 0xA.8P-1 3.e2 a//b a~=b ::label:: goto label")
    got = [(tk.kind, tk.value) for tk in toks]
    assert (4, "..") in got and (4, "...") in got and (4, "//") in got and (4, "~=") in got
    assert [v for k, v in got if k == NUM] == ["0x1p4", "1e-3", "0xA.8P-1", "3.e2"]
    assert got[-5:] == [(4, "::"), (1, "label"), (4, "::"), (1, "goto"), (1, "label")]
    scan = scan_lua("::label:: goto label; x = a .. b ... // 2 ~= 3 LLM(1)")
    assert [c.name for c in scan.calls] == ["LLM"] and scan.errors == []


# --- a Lua string is bytes: escapes make bytes, RisuAI reads them as UTF-8 (wasmoon) ------

@pytest.mark.parametrize(("body", "text"), [
    (r"\226\128\174x", "\u202ex"),              # U+202E from its three decimal bytes
    (r"\xed\x95\x9c\xea\xb8\x80", "한글"),         # hex bytes
    (r"\237\149\156" + r"\u{AE00}", "한글"),      # decimal bytes beside a \u escape
    ("한" + r"\234\184\128", "한글"),              # source text beside escaped bytes
    (r"\255a", "\ufffda"),                        # a byte that is not UTF-8
    (r"\u{D800}", "\ufffd" * 3),                  # Lua writes ED A0 80: not UTF-8
    (r"\u{7FFFFFFF}", "\ufffd" * 6),              # Lua's six-byte form
    (r"\65\066\x43", "ABC"),
])
def test_escaped_bytes_are_read_as_utf8(body: str, text: str) -> None:
    assert decode_lua_string(body) == text
    toks = tokenize(f's = "{body}"')
    assert [tk.value for tk in toks if tk.kind == STR] == [text]


def test_escaped_bytes_across_a_decoding_piece_are_one_character() -> None:
    # the body is decoded in pieces of about 64 KiB: a character's bytes may straddle a cut
    for pad in range(65_530, 65_540):
        body = "a" * pad + r"\237\149\156" * 3
        assert decode_lua_string(body) == "a" * pad + "한한한", pad


def test_a_state_key_written_in_escaped_bytes_is_its_text() -> None:
    scan = scan_lua(r'setChatVar(id, "\237\149\156\234\184\128", 1)')
    assert [c.args[1].literal for c in scan.calls if c.name == "setChatVar"] == ["한글"]
