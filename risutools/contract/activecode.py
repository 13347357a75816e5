"""MC500: a heuristic detector of active code (Lua, JS, CBS, HTML script, regex) in prose.

The projection describes a module; it must not preserve its code.  This
detector looks at one string and answers ``None`` (prose) or a short reason
("Lua `local x =`").  It only runs our own fixed patterns, each linear or
bounded (no nested quantifiers), over document text; nothing is executed.

Precision: a word like ``editRequest``, ``Lua/CJS``, ``function 역할``,
``a -> b`` or ``v1(module)`` is prose.  Code needs syntax: a call of a known API
or a camelCase identifier followed by ``(``, ``local x =``, ``function(...)``
with a body, ``if ... then ... end``, ``const x =``, ``) =>``, statement lines
ending in ``;``/``{``, CBS ``{{setvar::``, ``<script``, or regex syntax
(``(?:``, ``\\d+``, ``[^...]`` ...).  Strong signals decide alone; weak ones
need company (two or more).
"""

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
_LIBRARIES = ("string", "table", "math", "os", "io", "utf8", "coroutine", "json", "Object",
               "Array", "Math", "document", "window")
_LUA_METHODS = ("gsub", "gmatch", "match", "find", "sub", "format", "len", "upper", "lower")
_JS_METHODS = ("push", "forEach", "replace", "replaceAll", "match", "split", "join", "filter",
               "map", "reduce", "slice", "splice", "indexOf", "test", "exec")
# A leading ``\\bword`` is written ``word(?<!\\wword)`` (the same test: the character before
# the word is not a word character), so that ``re`` skips ahead to the word's letters
# instead of trying the pattern at every position.
# Each pattern comes with its needles: strings one of which every match contains, so a
# text holding none of them is not searched (``in`` is a C substring search; most prose
# holds no needle of most patterns).
_STRONG: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
    # A name, then a look back at the character before it (what ``(?<![\w.])`` checked
    # first): starting with the names lets ``re`` skip ahead to their first letters.
    ("a call of a Risu/Lua/JS API", ("(",), re.compile(
        "(?:" + "|".join(f"{re.escape(n)}(?<![\\w.]{re.escape(n)})" for n in _API_NAMES)
        + r")\s*\(")),
    ("a v2 API call", ("v2",), re.compile(r"v2(?<!\wv2)[A-Z]\w*\s*\(")),
    ("a camelCase function call", ("(",), re.compile(
        r"[a-z](?<!\w[a-z])[a-z0-9]*(?:[A-Z][a-z0-9]*)+\((?:\s*[A-Za-z0-9_\"'{\[-]|\))")),
    ("a library call (string./table./math.)", ("(",), re.compile(
        "(?:" + "|".join(f"{n}(?<!\\w{n})" for n in _LIBRARIES) + r")\.[a-zA-Z_]\w*\s*\(")),
    # `:` first (then a look back at the character before it), so `re` skips to the `:`s
    ("a method call (.gsub/.match/.replace ...)", ("(",), re.compile(
        r":(?<=[\w)\]]:)(?:" + "|".join(_LUA_METHODS) + r")\s*\(|"
        r"\.(?:" + "|".join(_JS_METHODS) + r")\s*\(")),
    ("Lua `local x =`", ("local",), re.compile(
        r"local(?<!\wlocal)\s+(?:function\b|[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*\s*=(?!=))")),
    ("a function definition", ("function",), re.compile(
        r"function(?<!\wfunction)\b\s*[A-Za-z_.:\w]*\s*\([^()\n]{0,200}\)\s*(?:\{|\n|[A-Za-z_]\w*\s*[=(]|"
        r"return\b|local\b|if\b|end\b)")),
    ("Lua `if ... then` block", ("then",), re.compile(
        r"if(?<!\wif)\b[^\n]{1,200}?\bthen[ \t]*\n|"
        r"if(?<!\wif)\b[^\n]{1,200}?(?:==|~=|[<>]=?)[^\n]{0,200}?\bthen\b")),
    ("Lua `for ... do`", ("do",), re.compile(
        r"for(?<!\wfor)\s+[A-Za-z_]\w*\s*(?:=|,\s*[A-Za-z_]\w*\s+in\b|\s+in\b)[^\n]{0,200}?\bdo\b"
        r"[ \t]*(?:\n|$|[^\n]{0,200}?\bend\b)")),
    ("Lua `while ... do`", ("while",), re.compile(
        r"while(?<!\wwhile)\b[^\n]{1,200}?\bdo[ \t]*(?:\n|$|[^\n]{0,200}?\bend\b)")),
    ("JS `const/let/var x =`", ("const", "let", "var"), re.compile(
        r"(?:const(?<!\wconst)|let(?<!\wlet)|var(?<!\wvar))\s+[A-Za-z_$][\w$]*\s*=(?![=>])")),
    ("a JS arrow function", ("=>",), re.compile(
        r"\)\s*=>|=>\s*\{|\b[A-Za-z_$][\w$]*\s*=>\s*[\w$]+\s*[.(]")),
    ("a `return ...;` statement", ("return",), re.compile(r"return(?<!\wreturn)\b[^\n;]{0,200};")),
    ("an `===`/`!==`/`~=` comparison", ("===", "!==", "~="), re.compile(
        r"[\w)\]]\s*(?:===|!==|~=)\s*[\w\"'(]")),
    ("CBS template syntax", ("{{",), re.compile(
        r"\{\{\s*(?:#if|#when|#each|/if|/when|/each|:else|"
        r"(?:set|get|add)(?:global)?var\s*::|button\s*::|[a-z_]+::)")),
    ("HTML script", ("<", ":"), re.compile(
        r"<\s*script\b|javascript(?<!\wjavascript):|<[a-zA-Z][^<>\n]{0,200}\son[a-z]+\s*=",
        re.IGNORECASE)),
    ("a regex group `(?:`/`(?=`/`(?<`", ("(?",), re.compile(
        r"\(\?(?:[:=!]|<[=!]|<[A-Za-z])")),
    ("a regex character class `[^...]`", ("[^",), re.compile(r"\[\^[^\]\n]{1,100}\]")),
)
_WEAK: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
    ("regex escapes (\\d, \\w, \\s ...)", ("\\",), re.compile(r"\\[dwsbDWSB]")),
    ("escaped regex metacharacters", ("\\",), re.compile(r"\\[.()\[\]*+?|/{}^$]")),
    ("regex quantifiers", ("*", "+", "?", "{"), re.compile(
        # every alternative starts with a literal, so `re` skips to those characters
        r"\][*+?]|\)[*+?]|\\[dws][*+?]|\.\*\??|\.\+\??|\{\d+,\d*\}")),
    ("a regex character range", ("[",), re.compile(
        r"\[(?:a-z|A-Z|0-9|가-힣|\w-\w)[^\]\n]{0,60}\]")),
    ("anchored pattern ^...$", ("^",), re.compile(r"^\^[^\n]{1,200}\$$", re.MULTILINE)),
    ("an assignment `x = y`", ("=",), re.compile(
        r"\b[a-z_][a-z0-9_]*(?:\.[a-z_]\w*|\[[^\]\n]{1,40}\])?\s=\s[\w\"'{\[(-]")),
    ("an `if ... then`", ("then",), re.compile(r"if(?<!\wif)\b[^\n]{1,200}?\bthen\b")),
    ("a `==` comparison", ("==",), re.compile(r"[\w)\]]\s*==\s*[\w\"'(]")),
    ("an arrow `=>`", ("=>",), re.compile(r"=>")),
    ("string concatenation `..`", ("..",), re.compile(r"[\w)\"']\s*\.\.\s*[\w(\"']")),
    ("a Lua comment `--`", ("--",), re.compile(r"(?:^|\n)\s*--\s*\S")),
    ("a `nil`/`null` literal", ("nil", "null", "undefined"), re.compile(
        r"(?:nil(?<!\wnil)|null(?<!\wnull)|undefined(?<!\wundefined))\b")),
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


# letters, digits and spaces: the bytes no punctuation needle holds
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_ ")
_WORDISH = "".join(sorted(_WORD_CHARS)).encode("ascii")

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

# Windows: the calls (an API, a camelCase name, a library function, a method) end at a
# "(", and each reaches back from it only over what its pattern allows: the whitespace
# before the "(" (``\\s*``: ``str.isspace``, the same characters), then a name of bounded
# length (an API, a method), a run of ASCII letters and digits (a camelCase name: its
# first letter is where the run starts, for a letter after a word character cannot
# start it), or a run of word characters after a library's "." (``\\w``: ``str.isalnum``
# or "_", the same characters).  So every match lies in the window of its "(" computed
# from the text around that "(" alone, and searching each window is the same as searching
# the whole text: ``re`` looks behind a window's start (look-behinds see the real text),
# and the one pattern that reads past its "(" (camelCase: ``\\s*`` and one character)
# gets the whitespace after it and one character more.  The runs of different "(" never
# overlap, so the windows cost one pass over the text whatever the number of "(".
# HTML script without a "<" can only be ``javascript:``, ending at a ":" (``_MAX_WINDOWS``
# of them at most, else the whole text).
_MAX_WINDOWS = 32
_API_REACH = max(map(len, _API_NAMES))
_METHOD_REACH = 1 + max(map(len, _LUA_METHODS + _JS_METHODS))  # ":" or "." and the name
_LIBRARY_REACH = 1 + max(map(len, _LIBRARIES))  # the name and its "."
_REACH = max(_API_REACH, _METHOD_REACH, _LIBRARY_REACH)  # (the tests' edge cases)
_KIND = {r: k for k, r in enumerate((
    "a call of a Risu/Lua/JS API", "a camelCase function call",
    "a library call (string./table./math.)", "a method call (.gsub/.match/.replace ...)"))}
_PAREN_KIND = {i: _KIND[r] for i, (r, _, _) in enumerate(_STRONG) if r in _KIND}
_API, _CAMEL, _LIBRARY, _METHOD = range(4)
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_HTML = next(i for i, (r, _, _) in enumerate(_STRONG) if r == "HTML script")
# its alternatives apart (one reason: a match of either is a match of the pattern): the
# tags, which start at a "<", and the ``javascript:`` scheme, which ends at a ":"
_HTML_TAG = re.compile(r"<\s*script\b|<[a-zA-Z][^<>\n]{0,200}\son[a-z]+\s*=", re.IGNORECASE)
_JS_URL = re.compile(r"javascript(?<!\wjavascript):", re.IGNORECASE)
# An API call is a name, whitespace, "(": looked up by the word before each "(" (a name
# without "."), or by the last part of a dotted name
_API_WORDS = frozenset(n for n in _API_NAMES if "." not in n)
_API_DOTTED: dict[str, tuple[str, ...]] = {}
for _name in _API_NAMES:
    if "." in _name:
        _last = _name.rsplit(".", 1)[1]
        _API_DOTTED[_last] = (*_API_DOTTED.get(_last, ()), _name)
_JS_SCHEME = len("javascript")  # each letter is one character, IGNORECASE or not

# Regex quantifiers: without a "{", a match is two or three characters ending at a "*", "+"
# or "?" (``]*``, ``)+``, ``\\d*``, ``.*``, ``.+?``: the optional "?" adds nothing to
# whether there is a match).
_QUANT = next(i for i, (r, _, _) in enumerate(_WEAK) if r == "regex quantifiers")

Windows = list[tuple[int, int]]


def _anchors(text: str, anchor: str) -> list[int] | None:
    if text.count(anchor) > _MAX_WINDOWS:
        return None
    return _all(text, anchor)


def _all(text: str, anchor: str) -> list[int]:
    out = []
    p = text.find(anchor)
    while p >= 0:
        out.append(p)
        p = text.find(anchor, p + 1)
    return out


#: each "(" of a text: (where it is, where the whitespace before it starts, where the run
#: of word characters before that whitespace starts)
Parens = list[tuple[int, int, int]]


def _parens(text: str) -> Parens:
    """Every "(" of ``text`` with the runs before it (:data:`Parens`), found once for the
    four call patterns.  The whitespace is ``\\s`` (``str.isspace``, the same
    characters) and a word character ``\\w`` (``str.isalnum`` or "_", the same)."""
    out: Parens = []
    p = text.find("(")
    while p >= 0:
        q = p
        while q and text[q - 1].isspace():
            q -= 1
        w = q
        while w and (text[w - 1].isalnum() or text[w - 1] == "_"):
            w -= 1
        out.append((p, q, w))
        p = text.find("(", p + 1)
    return out


def _api_call(text: str, parens: Parens) -> bool:
    """Whether the API pattern matches: at some "(", after the whitespace before it, one of
    the names ends, and the character before the name is not a word character or ".".
    A name without a "." is then the whole run of word characters before the whitespace,
    not after a "."; a dotted name (``console.log``) ends with that run, after its "."."""
    for _, q, w in parens:
        if w == q:
            continue  # every name ends in a letter
        word = text[w:q]
        if word in _API_WORDS and not (w and text[w - 1] == "."):
            return True
        for name in _API_DOTTED.get(word, ()):
            start = q - len(name)
            if start >= 0 and text.startswith(name, start) and not (
                    start and (text[start - 1].isalnum() or text[start - 1] in "_.")):
                return True
    return False


def _paren_windows(text: str, parens: Parens, kind: int) -> Windows:
    """The windows holding every match of the "(" pattern ``kind`` (see above)."""
    out: Windows = []
    n = len(text)
    for p, q, w in parens:
        if kind == _CAMEL:
            start = p
            while start and text[start - 1] in _ALNUM:
                start -= 1
            if start == p:
                continue  # no letter or digit right before the "(": no camelCase call
            end = p + 1
            while end < n and text[end].isspace():
                end += 1
            out.append((start, min(end + 1, n)))
            continue
        # a library function and a method are word characters right after a "." (a
        # method: or a ":"), up to the whitespace before the "(": the run of word
        # characters before that whitespace starts right after it, or neither matches
        if w == q or not w or text[w - 1] not in (".:" if kind == _METHOD else "."):
            continue
        start = w - 1 - _LIBRARY_REACH if kind == _LIBRARY else q - _METHOD_REACH
        out.append((max(0, start), p + 1))
    return out


def _quantifier_windows(text: str) -> Windows | None:
    out: Windows = []
    for q in "*+?":
        at = _anchors(text, q)
        if at is None:
            return None
        out += [(max(0, p - 2), p + 1) for p in at]
    return out if len(out) <= _MAX_WINDOWS else None


def _search(rx: re.Pattern[str], text: str, windows: Windows | None) -> bool:
    if windows is None:
        return rx.search(text) is not None
    return any(rx.search(text, a, b) is not None for a, b in windows)


def _present(text: str) -> list[str]:
    """The needles in ``text``, and maybe a word more (a gate may let a pattern through,
    never hold one back).  All needles are ASCII, so they are looked for in the text's
    ASCII characters alone, as bytes (one C pass drops the rest; a byte search is far
    quicker than one in a wide string), and the needles made of punctuation among the
    punctuation alone (a second pass drops letters, digits and spaces; the one-character
    ones are then a set lookup each).  Dropping characters never hides a needle, but it can
    join the halves of one (``.`` + Hangul + ``.`` gives ``..``): a punctuation needle of
    two characters or more found that way is looked for again in the text itself.  (The
    order of the list is not an answer: callers ask what is in it.)"""
    t = text.encode("ascii", "ignore")
    marks = t.translate(None, _WORDISH)
    have = set(marks)
    out = [n for n, c in _MARK_NEEDLES if c in have]
    out += [n for n, b in _MARKS_NEEDLES if b in marks and n in text]
    out += [n for n, b in _WORD_NEEDLES if b in t]
    return out


# the needles by kind: a word (ASCII letters, digits or a space in it); one punctuation
# character (as its byte value); several punctuation characters
_WORD_NEEDLES = tuple((n, n.encode("ascii")) for n in _NEEDLES
                      if not set(n).isdisjoint(_WORD_CHARS))
_MARK_NEEDLES = tuple((n, ord(n)) for n in _NEEDLES
                      if set(n).isdisjoint(_WORD_CHARS) and len(n) == 1)
_MARKS_NEEDLES = tuple((n, n.encode("ascii")) for n in _NEEDLES
                       if set(n).isdisjoint(_WORD_CHARS) and len(n) > 1)


def find_active_code(text: str) -> str | None:
    """Why ``text`` looks like code or a regex pattern, or ``None`` for prose."""
    if len(text) < 3:
        return None
    present = _present(text)
    if not present:
        return None
    strong: set[int] = set()
    weak: set[int] = set()
    for m in present:
        strong.update(_STRONG_BY.get(m, ()))
        weak.update(_WEAK_BY.get(m, ()))
    reason = _strong_reason(text, strong)
    if reason is not None:
        return reason
    # a statement line ends in ; { } or is a lone `end`: without those, no such line
    if ("\n" in present and (";" in present or "{" in text or "}" in text or "end" in text)
            and _code_lines(text) >= 2):
        return "several statement lines ending in ; { }"
    return _weak_reason(text, present, weak)


def _strong_reason(text: str, candidates: set[int]) -> str | None:
    """The reason of the first strong pattern (of ``candidates``) found in ``text``."""
    parens: Parens | None = None
    for i in sorted(candidates):
        reason, _, rx = _STRONG[i]
        kind = _PAREN_KIND.get(i)
        windows: Windows | None = None  # None: the whole text
        if kind is not None:
            if parens is None:
                parens = _parens(text)
            if kind == _API:
                if _api_call(text, parens):
                    return reason
                continue
            windows = _paren_windows(text, parens, kind)
        elif i == _HTML:
            if "<" in text and _HTML_TAG.search(text) is not None:
                return reason
            colons = _anchors(text, ":")
            js = None if colons is None else [(max(0, p - _JS_SCHEME), p + 1) for p in colons]
            if _search(_JS_URL, text, js):
                return reason
            continue
        if _search(rx, text, windows):
            return reason
    return None


def _weak_reason(text: str, present: list[str], candidates: set[int]) -> str | None:
    """Two weak signals (of ``candidates``) found in ``text``, named, or None."""
    weak: list[str] = []
    for i in sorted(candidates):
        if _search(_WEAK[i][2], text,
                   _quantifier_windows(text) if i == _QUANT and "{" not in text else None):
            weak.append(_WEAK[i][0])
            if len(weak) == 2:  # the first two name the finding
                return " and ".join(weak)
    if ";" in present and text.count(";") >= 3 and any(c in text for c in "=(){}"):
        weak.append("several `;` separated statements")
    if len(weak) >= 2:
        return " and ".join(weak[:2])
    return None
