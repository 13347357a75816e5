"""activecode.py as it was before the finer needles and prefix-friendly patterns: the
reference the detector is tested against."""
from __future__ import annotations

import re

# Names of RisuAI / Lua / JS APIs whose call is code, never prose.
_API_NAMES = (
    "listenEdit", "getChatVar", "setChatVar", "getGlobalVar", "getState", "setState",
    "getChat", "getFullChat", "setChat", "setFullChat", "getChatLength", "cutChat",
    "removeChat", "addChat", "insertChat", "setChatRole", "getLoreBooks", "loadLoreBooks",
    "upsertLocalLoreBook", "setDescription", "setName", "setCharacterFirstMessage",
    "simpleLLM", "axLLM", "runLLM", "runAxLLM", "LLM", "sendAIprompt", "generateImage",
    "runImgGen", "alertNormal", "alertError", "alertInput", "alertSelect", "alertConfirm",
    "showAlert", "loadstring", "dofile", "require", "pcall", "ipairs", "pairs", "tostring",
    "tonumber", "print", "async", "await", "console.log", "JSON.parse", "JSON.stringify",
    "onInput", "onOutput", "onStart", "onButtonClick",
)
_STRONG: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
    ("a call of a Risu/Lua/JS API", ("(",), re.compile(
        r"(?<![\w.])(?:" + "|".join(re.escape(n) for n in _API_NAMES) + r")\s*\(")),
    ("a v2 API call", ("(",), re.compile(r"\bv2[A-Z]\w*\s*\(")),
    ("a camelCase function call", ("(",), re.compile(
        r"\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+\((?:\s*[A-Za-z0-9_\"'{\[-]|\))")),
    ("a library call (string./table./math.)", ("(",), re.compile(
        r"\b(?:string|table|math|os|io|utf8|coroutine|json|Object|Array|Math|document|window)"
        r"\.[a-zA-Z_]\w*\s*\(")),
    ("a method call (.gsub/.match/.replace ...)", ("(",), re.compile(
        r"[\w)\]]:(?:gsub|gmatch|match|find|sub|format|len|upper|lower)\s*\(|"
        r"\.(?:push|forEach|replace|replaceAll|match|split|join|filter|map|reduce|slice|"
        r"splice|indexOf|test|exec)\s*\(")),
    ("Lua `local x =`", ("local",), re.compile(
        r"\blocal\s+(?:function\b|[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*\s*=(?!=))")),
    ("a function definition", ("function",), re.compile(
        r"\bfunction\b\s*[A-Za-z_.:\w]*\s*\([^()\n]{0,200}\)\s*(?:\{|\n|[A-Za-z_]\w*\s*[=(]|"
        r"return\b|local\b|if\b|end\b)")),
    ("Lua `if ... then` block", ("then",), re.compile(
        r"\bif\b[^\n]{1,200}?\bthen[ \t]*\n|\bif\b[^\n]{1,200}?(?:==|~=|[<>]=?)[^\n]{0,200}?"
        r"\bthen\b")),
    ("Lua `for ... do`", ("do",), re.compile(
        r"\bfor\s+[A-Za-z_]\w*\s*(?:=|,\s*[A-Za-z_]\w*\s+in\b|\s+in\b)[^\n]{0,200}?\bdo\b"
        r"[ \t]*(?:\n|$|[^\n]{0,200}?\bend\b)")),
    ("Lua `while ... do`", ("do",), re.compile(
        r"\bwhile\b[^\n]{1,200}?\bdo[ \t]*(?:\n|$|[^\n]{0,200}?\bend\b)")),
    ("JS `const/let/var x =`", ("=",), re.compile(
        r"\b(?:const|let|var)\s+[A-Za-z_$][\w$]*\s*=(?![=>])")),
    ("a JS arrow function", ("=>",), re.compile(
        r"\)\s*=>|=>\s*\{|\b[A-Za-z_$][\w$]*\s*=>\s*[\w$]+\s*[.(]")),
    ("a `return ...;` statement", ("return",), re.compile(r"\breturn\b[^\n;]{0,200};")),
    ("an `===`/`!==`/`~=` comparison", ("==", "~="), re.compile(
        r"[\w)\]]\s*(?:===|!==|~=)\s*[\w\"'(]")),
    ("CBS template syntax", ("{{",), re.compile(
        r"\{\{\s*(?:#if|#when|#each|/if|/when|/each|:else|"
        r"(?:set|get|add)(?:global)?var\s*::|button\s*::|[a-z_]+::)")),
    ("HTML script", ("<", ":"), re.compile(
        r"<\s*script\b|\bjavascript:|<[a-zA-Z][^<>]{0,200}[\s/\"']on[a-z]+\s*=", re.IGNORECASE)),
    ("a regex group `(?:`/`(?=`/`(?<`", ("(?",), re.compile(
        r"\(\?(?:[:=!]|<[=!]|<[A-Za-z])")),
    ("a regex character class `[^...]`", ("[^",), re.compile(r"\[\^[^\]\n]{1,100}\]")),
)
_WEAK: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
    ("regex escapes (\\d, \\w, \\s ...)", ("\\",), re.compile(r"\\[dwsbDWSB]")),
    ("escaped regex metacharacters", ("\\",), re.compile(r"\\[.()\[\]*+?|/{}^$]")),
    ("regex quantifiers", ("*", "+", "?", "{"), re.compile(
        r"(?:[\])]|\\[dws])[*+?]|\.\*\??|\.\+\??|\{\d+,\d*\}")),
    ("a regex character range", ("[",), re.compile(
        r"\[(?:a-z|A-Z|0-9|가-힣|\w-\w)[^\]\n]{0,60}\]")),
    ("anchored pattern ^...$", ("^",), re.compile(r"^\^[^\n]{1,200}\$$", re.MULTILINE)),
    # The needle was " = ", a gate narrower than its own pattern (``\s=\s`` also takes a
    # tab or a line break around the "="): the detector's "=" gate is the one the pattern
    # means, so the reference uses it too (found by the fuzz test: "]*a\t=\ta").
    ("an assignment `x = y`", ("=",), re.compile(
        r"\b[a-z_][a-z0-9_]*(?:\.[a-z_]\w*|\[[^\]\n]{1,40}\])?\s=\s[\w\"'{\[(-]")),
    ("an `if ... then`", ("then",), re.compile(r"\bif\b[^\n]{1,200}?\bthen\b")),
    ("a `==` comparison", ("==",), re.compile(r"[\w)\]]\s*==\s*[\w\"'(]")),
    ("an arrow `=>`", ("=>",), re.compile(r"=>")),
    ("string concatenation `..`", ("..",), re.compile(r"[\w)\"']\s*\.\.\s*[\w(\"']")),
    ("a Lua comment `--`", ("--",), re.compile(r"(?:^|\n)\s*--\s*\S")),
    ("a `nil`/`null` literal", ("nil", "null", "undefined"), re.compile(
        r"\b(?:nil|null|undefined)\b")),
    ("brackets `{`/`}`", ("{", "}"), re.compile(r"[{}]")),
)


def _code_lines(text: str) -> int:
    """Lines that end like statements (``;``, ``{``, ``}``) or are a lone ``end``."""
    n = 0
    for ln in text.splitlines():
        s = ln.strip()
        if s.endswith((";", "{", "}")) or s in ("end", "end)", "end,"):
            n += 1
    return n


# The gate: which needles occur (``in``, a C substring search each); only the patterns
# with a needle that occurs are searched.  Exact: a pattern is skipped only when none
# of the substrings it cannot match without is in the text.
_NEEDLES = tuple(sorted({n for _, needs, _ in _STRONG + _WEAK for n in needs} | {"\n", ";"}))


def _triggers(table: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...]
              ) -> dict[str, tuple[int, ...]]:
    return {m: tuple(i for i, (_, needs, _) in enumerate(table) if m in needs)
            for m in _NEEDLES}


_STRONG_BY = _triggers(_STRONG)
_WEAK_BY = _triggers(_WEAK)


def find_active_code(text: str) -> str | None:
    """Why ``text`` looks like code or a regex pattern, or ``None`` for prose."""
    if len(text) < 3:
        return None
    present = [n for n in _NEEDLES if n in text]
    if not present:
        return None
    strong: set[int] = set()
    weak_idx: set[int] = set()
    for m in present:
        strong.update(_STRONG_BY.get(m, ()))
        weak_idx.update(_WEAK_BY.get(m, ()))
    for i in sorted(strong):
        reason, _, rx = _STRONG[i]
        if rx.search(text):
            return reason
    if "\n" in present and _code_lines(text) >= 2:
        return "several statement lines ending in ; { }"
    weak = [_WEAK[i][0] for i in sorted(weak_idx) if _WEAK[i][2].search(text)]
    if ";" in present and text.count(";") >= 3 and any(c in text for c in "=(){}"):
        weak.append("several `;` separated statements")
    if len(weak) >= 2:
        return " and ".join(weak[:2])
    return None
