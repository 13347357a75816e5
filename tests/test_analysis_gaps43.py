"""Gaps closed in round 43 (each as a class: the same trick in other spellings):
lorebook decorators, every regex a trigger carries, CSS in HTML (escapes, comments,
``@import`` ...), a Lua effect that is not the first of its trigger, a preset's endpoint
for its ``aiModel``.  Every module here is our own, written for the idiom it tests."""

from __future__ import annotations

from typing import Any

import pytest

from risutools.analysis import analyze
from risutools.analysis.cssscan import MAX_CSS_URLS, css_urls
from risutools.analysis.htmlscan import scan_html
from risutools.analysis.lore_decorators import MAX_DECORATORS, read_head, refused
from risutools.analysis.model import Analysis
from risutools.formats.model import Module


def lore(*entries: dict[str, Any], **extra: Any) -> Analysis:
    data: dict[str, Any] = {"name": "L", "id": "l", "lorebook": list(entries), **extra}
    return analyze(Module(data))


def entry(content: str, **extra: Any) -> dict[str, Any]:
    return {"key": "k", "comment": "e", "content": content, "mode": "normal",
            "insertorder": 100, "alwaysActive": False, **extra}


def requires(a: Analysis) -> set[str]:
    return {c.name for c in a.requires}


def facts(table: list[Any]) -> dict[str, list[str]]:
    return {f.name: f.evidence for f in table}


def rules(a: Analysis) -> list[str]:
    return [f.rule for f in a.findings]


# -- 1. lorebook decorators -----------------------------------------------------------------

@pytest.mark.parametrize("content, injection", [
    ("@@inject_at main\nbody", "append prompt:main"),
    ("@@inject_at globalNote\n@@inject_replace [X]\nbody", "replace prompt:globalNote"),
    ("@@inject_replace [X]\n@@inject_at main\nbody", "replace prompt:main"),
    ("@@inject_prepend\n@@inject_at description\nbody", "prepend prompt:description"),
    ("\n  @@inject_at  persona \r\nbody", "append prompt:persona"),
    ("@@unknown_thing\n@@@inject_at authornote\nbody", "append prompt:authornote"),
    ("@@inject_at main, jailbreak\nbody", "append prompt:main jailbreak"),
])
def test_injection_into_a_prompt_part_is_request_write(content: str, injection: str) -> None:
    a = lore(entry(content))
    assert injection in facts(a.lore_injections)
    assert "request.write" in requires(a)
    assert "lorebook.write" not in requires(a)


@pytest.mark.parametrize("content", [
    "@@inject_lore Status Window\nbody",
    "@@inject_replace HP\n@@inject_lore Status Window\nbody",
    "@@inject_at main\n@@inject_lore Status Window\nbody",  # the last location wins
])
def test_injection_into_another_entry_is_lorebook_write(content: str) -> None:
    a = lore(entry(content))
    (name,) = facts(a.lore_injections)
    assert name.endswith("lorebook:Status Window")
    assert "lorebook.write" in requires(a) and "request.write" not in requires(a)


@pytest.mark.parametrize("content", [
    "body first\n@@inject_at main",  # decorators only at the head
    "@@@inject_at main\nbody",  # a fallback without a refused decorator before it
    "@@depth 4\n@@@inject_at main\nbody",  # depth 4 is accepted: no fallback
    "@@Inject_At main\nbody",  # names are matched as written
    "@@ inject_at main\nbody",  # no name
])
def test_no_injection(content: str) -> None:
    a = lore(entry(content))
    assert not a.lore_injections
    assert "request.write" not in requires(a)


def test_injection_without_a_location_goes_nowhere() -> None:
    a = lore(entry("@@inject_replace foo\nbody"))
    assert list(facts(a.lore_injections)) == ["replace prompt:(nowhere)"]
    assert "request.write" not in requires(a)


def test_decorators_listed_unknown_ones_do_not_crash() -> None:
    a = lore(entry("@@depth 4\n@@role assistant\n@@what\u202e\n@@@activate\n"
                   "@@probability 5\n@@position pt_x\n@@@dont_activate\nbody"),
             entry("@@\n@@@\n@@@end\n" + "@@x,,,\n" * 3))
    got = facts(a.lore_decorators)
    assert {"depth", "role", "activate", "probability", "position"} <= set(got)
    assert "dont_activate" not in got  # position pt_x is accepted: its fallback is not
    assert "(unreadable) (unknown)" in got and "x,,, (unknown)" not in got
    assert got["depth"] == ["lorebook[0].content line 1"]


def test_decorator_lines_are_not_cbs_but_the_body_is() -> None:
    a = lore(entry("@@inject_at {{getvar::hidden}}\n{{setvar::shown::1}}"))
    keys = {(s.key, bool(s.writes)) for s in a.state}
    assert ("shown", True) in keys
    assert all(k != "hidden" for k, _ in keys)
    shown = next(s for s in a.state if s.key == "shown")
    assert shown.writes == ["lorebook[0].content line 2"]


@pytest.mark.parametrize("decorator", ["additional_keys", "exclude_keys", "exclude_keys_all"])
def test_decorator_keys_are_patterns_with_use_regex(decorator: str) -> None:
    content = f"@@{decorator} /ok/g, /(a+)+$/i\nbody"
    a = lore(entry(content, useRegex=True))
    assert rules(a) == ["RA201"]
    assert f"@@{decorator}[1]" in a.findings[0].evidence
    assert "RA201" not in rules(lore(entry(content)))  # plain keys without useRegex


def test_refused_and_head_reading() -> None:
    assert refused("depth", ["x"]) and not refused("depth", ["-3"])
    assert refused("role", ["narrator"]) and not refused("role", ["user"])
    assert refused("keep_activate_after_match", []) and refused("nope", [])
    head, left = read_head("@@depth 1\n@@inject_at main\n\nbody", 10)
    assert [d.name for d in head.applied] == ["depth", "inject_at"]
    assert head.injection is not None and head.injection.location == "main"
    assert left == 8 and head.head_lines == 2


def test_decorators_bounded_per_module() -> None:
    many = "@@depth 1\n" * (MAX_DECORATORS + 10) + "@@inject_at main\nbody"
    a = lore(entry(many), entry("@@inject_at main\nbody"))
    assert facts(a.lore_decorators)["depth"]
    assert not a.lore_injections  # past the bound: the heads are not read
    assert a.counts.get("decorators_unread") == 1


# -- 2. every regex a trigger carries goes through the pattern check ----------------------------

def triggers(*items: dict[str, Any]) -> Analysis:
    return analyze(Module({"name": "T", "id": "t", "trigger": list(items)}))


def trig(*effects: dict[str, Any], conds: list[Any] | None = None) -> dict[str, Any]:
    return {"comment": "c", "type": "output", "conditions": conds or [],
            "effect": list(effects)}


RISKY = r"(\w+\s?)*$"


@pytest.mark.parametrize("effect, where", [
    ({"type": "v2SplitString", "source": "s", "sourceType": "value",
      "delimiter": f"/{RISKY}/g", "delimiterType": "regex", "outputVar": "o"}, "delimiter"),
    ({"type": "v2SplitString", "source": "s", "sourceType": "value",
      "delimiter": RISKY, "delimiterType": "regex", "outputVar": "o"}, "delimiter"),
    ({"type": "v2QuickSearchChat", "value": RISKY, "valueType": "value",
      "condition": "regex", "depth": "5", "depthType": "value", "outputVar": "o"}, "value"),
    ({"type": "v2GetLorebookByName", "name": "(x|x)*y", "nameType": "value",
      "outputVar": "o"}, "name"),
    ({"type": "v2RegexTest", "value": "v", "valueType": "value", "regex": RISKY,
      "regexType": "value", "flags": "g", "flagsType": "value", "outputVar": "o"}, "regex"),
    ({"type": "v2ExtractRegex", "value": "v", "valueType": "value", "regex": RISKY,
      "regexType": "value", "flags": "f", "flagsType": "var", "result": "$1",
      "resultType": "value", "outputVar": "o"}, "regex"),
    ({"type": "v2ReplaceString", "source": "s", "sourceType": "value", "regex": RISKY,
      "regexType": "value", "result": "x", "resultType": "value", "replacement": "y",
      "replacementType": "value", "flags": "g", "flagsType": "value",
      "outputVar": "o"}, "regex"),
    ({"type": "extractRegex", "value": "v", "regex": RISKY, "flags": "g",
      "result": "$1", "inputVar": "o"}, "regex"),
])
def test_trigger_effect_patterns_are_checked(effect: dict[str, Any], where: str) -> None:
    a = triggers(trig(effect))
    assert "RA201" in rules(a), effect["type"]
    assert any(f.evidence == f"trigger[0].effect[0].{where}" for f in a.findings)


@pytest.mark.parametrize("effect", [
    {"type": "v2SplitString", "source": "s", "sourceType": "value", "delimiter": RISKY,
     "delimiterType": "value", "outputVar": "o"},  # a plain delimiter
    {"type": "v2QuickSearchChat", "value": RISKY, "valueType": "value",
     "condition": "loose", "depth": "5", "depthType": "value", "outputVar": "o"},
    {"type": "v2QuickSearchChat", "value": "v", "valueType": "var",
     "condition": "regex", "depth": "5", "depthType": "value", "outputVar": "o"},
    {"type": "v2GetLorebookByName", "name": "n", "nameType": "var", "outputVar": "o"},
])
def test_texts_that_are_not_patterns_are_not_checked(effect: dict[str, Any]) -> None:
    assert "RA201" not in rules(triggers(trig(effect)))


def test_split_string_slashes_and_flags() -> None:
    # /pattern/flags: the pattern is between the slashes; with an unknown flag letter the
    # whole text is the pattern (RisuAI's own reading)
    ok = {"type": "v2SplitString", "source": "s", "sourceType": "value",
          "delimiter": "/a|b/gi", "delimiterType": "regex", "outputVar": "o"}
    assert not triggers(trig(ok)).findings
    bad = dict(ok, delimiter="/(a|A)*/i")  # risky only with i
    assert "RA201" in rules(triggers(trig(bad)))
    assert "RA201" not in rules(triggers(trig(dict(ok, delimiter="/(a|A)*/"))))


def test_flags_named_by_a_variable_are_not_read_as_letters() -> None:
    # "is" as a variable's name is not the flags i and s
    effect = {"type": "v2RegexTest", "value": "v", "valueType": "value",
              "regex": "(a|A)*", "regexType": "value", "flags": "is", "flagsType": "var",
              "outputVar": "o"}
    assert "RA201" not in rules(triggers(trig(effect)))
    assert "RA201" in rules(triggers(trig(dict(effect, flagsType="value"))))


@pytest.mark.parametrize("type2, risky", [("regex", True), ("loose", False),
                                          ("strict", False)])
def test_exists_condition_regex(type2: str, risky: bool) -> None:
    cond = {"type": "exists", "value": RISKY, "type2": type2, "depth": 3}
    a = triggers(trig({"type": "setvar", "var": "a", "value": "1", "operator": "="},
                      conds=[cond]))
    assert ("RA201" in rules(a)) is risky
    if risky:
        assert a.findings[0].evidence == "trigger[0].conditions[0].value"


def test_unparsable_condition_pattern_is_ra202() -> None:
    cond = {"type": "exists", "value": "(a", "type2": "regex", "depth": 3}
    a = triggers(trig({"type": "setvar", "var": "a", "value": "1", "operator": "="},
                      conds=[cond]))
    assert rules(a) == ["RA202"]


# -- 3. CSS: escapes, comments, case, image-set, @import --------------------------------------

CSS_HIDDEN = [
    r"<style>b{background:url(\68 ttps://a.example/x.png)}</style>",
    r"<style>b{background:URL( '\000068ttps://a.example/x' )}</style>",
    r"<style>b{background:\75 rl(https://a.example/x)}</style>",
    r"<style>b{background:u\72l(h\74tps://a.example/x)}</style>",
    r"<style>b{background:/* x */url(/\2f a.example/x)}</style>",
    r"<style>@import '\68ttps://a.example/s.css';</style>",
    r"<style>@IMPORT url(//a.ex\61mple/s.css) screen;</style>",
    r"<style>@\69mport '//a.example/s.css';</style>",
    r"<style>b{background:image-set('\2f/a.example/1.png' 1x)}</style>",
    r"<style>b{background:-webkit-image-set(url(\2f/a.example/1.png) 1x)}</style>",
    r"<STYLE type=text/css>b{background:src('https://user@a.example:8443/x')}</STYLE>",
    "<div style=\"background:url(&quot;\\68 ttps://a.example/x&quot;)\">x</div>",
    "<div style='background:url(\\68 ttps://%61.example/x)'>x</div>",
    "<style>b{background:url('https://a.exa\\\nmple/x')}</style>",
    "<iframe srcdoc=\"&lt;style&gt;b{background:url(\\68 ttps://a.example/x)}"
    "&lt;/style&gt;\"></iframe>",
]


@pytest.mark.parametrize("html", CSS_HIDDEN)
def test_css_addresses_are_decoded_before_their_host_is_read(html: str) -> None:
    a = analyze(Module({"name": "C", "backgroundEmbedding": html}))
    assert "a.example" in facts(a.url_hosts), html


@pytest.mark.parametrize("html", [
    r"<style>b{content:'\68 ttps://a.example/x'}</style>",  # a string, not an address
    r"<style>b{background:url(\68 ttps://a.example/x y)}</style>",  # a bad URL: dropped
    "<style>b{background:url('\\68 ttps://a.example/x\n')}</style>",  # a broken string
    r"<style>b{background:url(/\2a*/\2f a.example/x)}</style>",  # a relative path
    r"<style>b{background:x-url(\68 ttps://a.example/x)}</style>",  # another function
])
def test_css_that_loads_nothing_from_the_host(html: str) -> None:
    a = analyze(Module({"name": "C", "backgroundEmbedding": html}))
    assert "a.example" not in facts(a.url_hosts), html


@pytest.mark.parametrize("html", [
    r"<style>b{background:url('java\73 cript:alert(1)')}</style>",
    r"<style>b{background:url(\6a avascript:go)}</style>",
    r"<p style='background:URL(&quot;JaVa&#x53;cript:go&quot;)'>x</p>",
    "<style>b{background:url('java\\\nscript:go')}</style>",
])
def test_css_script_urls_are_ra303(html: str) -> None:
    a = analyze(Module({"name": "C", "backgroundEmbedding": html}))
    assert "RA303" in rules(a), html


def test_css_lines_and_bounds() -> None:
    scan = scan_html("<p>\n<style>\nb{}\nc{background:url(\\68 ttps://a.example/)}</style>")
    assert ("a.example", 4) in scan.url_hosts
    many = "".join(f"b{{background:url(https://h{i}.example/)}}" for i in range(3000))
    assert len(css_urls(many)) == MAX_CSS_URLS
    assert css_urls("b{color:red}") == []  # nothing that could load: not tokenized


# -- 4a. a Lua effect after the first: runs in its trigger's mode only -----------------------

LUA = ('function onStart(id) end\nfunction onOutput(id) end\n'
       'function onButtonClick(id, v) end\nlistenEdit("editDisplay", function(id, t) '
       'return t end)\nsetChatVar(id, "seen", "1")')


def later_lua(ttype: str, first: str = "setvar") -> Analysis:
    first_effect = ({"type": "setvar", "var": "a", "value": "1", "operator": "="}
                    if first == "setvar" else {"type": first, "code": "local x = 1"})
    return triggers({"comment": "c", "type": ttype, "conditions": [],
                     "effect": [first_effect, {"type": "triggerlua", "code": LUA}]})


@pytest.mark.parametrize("ttype, entries", [
    ("output", {"onOutput"}), ("start", {"onStart"}), ("input", set()), ("manual", set()),
])
def test_later_lua_reaches_only_its_modes_entry(ttype: str, entries: set[str]) -> None:
    a = later_lua(ttype)
    assert {f.name for f in a.entry_points} == entries
    assert "hook.edit_display" not in {h.name for h in a.hooks}  # its listener never runs
    assert any(s.key == "seen" for s in a.state)  # its top level runs in that mode


@pytest.mark.parametrize("ttype", ["display", "request", "nonsense"])
def test_later_lua_of_a_display_or_request_trigger_never_runs(ttype: str) -> None:
    a = later_lua(ttype)
    assert not a.entry_points and not any(s.key == "seen" for s in a.state)
    assert "RA803" in rules(a)


def test_later_lua_after_code_first_runs_in_every_mode_but_listeners() -> None:
    a = later_lua("display", first="triggerlua")
    assert {f.name for f in a.entry_points} == {"onStart", "onOutput"}
    assert "hook.edit_display" not in {h.name for h in a.hooks}


def test_first_lua_keeps_every_entry_and_listener() -> None:
    a = triggers({"comment": "c", "type": "output", "conditions": [],
                  "effect": [{"type": "triggerlua", "code": LUA}]})
    assert {f.name for f in a.entry_points} == {"onStart", "onOutput", "onButtonClick"}
    assert "hook.edit_display" in {h.name for h in a.hooks}
