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
import sys


class LazyPattern:
    """A regular expression compiled when it is first searched: the needles let few of the
    patterns below be searched in a run (none, over prose already seen), and compiling
    all of them at import was 5% of ``validate``'s start-up.  The first :meth:`search`
    compiles it and puts the compiled pattern's own ``search`` in its place on the
    instance, so every later call is that call itself."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize
               ) -> re.Match[str] | None:
        compiled = re.compile(self.pattern, self.flags)
        self.search = compiled.search  # type: ignore[method-assign]
        return compiled.search(string, pos, endpos)


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
_STRONG: tuple[tuple[str, tuple[str, ...], LazyPattern], ...] = (
    # A name, then a look back at the character before it (what ``(?<![\w.])`` checked
    # first): starting with the names lets ``re`` skip ahead to their first letters.
    ("a call of a Risu/Lua/JS API", ("(",), LazyPattern(
        "(?:" + "|".join(f"{re.escape(n)}(?<![\\w.]{re.escape(n)})" for n in _API_NAMES)
        + r")\s*\(")),
    ("a v2 API call", ("v2",), LazyPattern(r"v2(?<!\wv2)[A-Z]\w*\s*\(")),
    ("a camelCase function call", ("(",), LazyPattern(
        r"[a-z](?<!\w[a-z])[a-z0-9]*(?:[A-Z][a-z0-9]*)+\((?:\s*[A-Za-z0-9_\"'{\[-]|\))")),
    ("a library call (string./table./math.)", ("(",), LazyPattern(
        "(?:" + "|".join(f"{n}(?<!\\w{n})" for n in _LIBRARIES) + r")\.[a-zA-Z_]\w*\s*\(")),
    # `:` first (then a look back at the character before it), so `re` skips to the `:`s
    ("a method call (.gsub/.match/.replace ...)", ("(",), LazyPattern(
        r":(?<=[\w)\]]:)(?:" + "|".join(_LUA_METHODS) + r")\s*\(|"
        r"\.(?:" + "|".join(_JS_METHODS) + r")\s*\(")),
    ("Lua `local x =`", ("local",), LazyPattern(
        r"local(?<!\wlocal)\s+(?:function\b|[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*\s*=(?!=))")),
    ("a function definition", ("function",), LazyPattern(
        r"function(?<!\wfunction)\b\s*[A-Za-z_.:\w]*\s*\([^()\n]{0,200}\)\s*(?:\{|\n|[A-Za-z_]\w*\s*[=(]|"
        r"return\b|local\b|if\b|end\b)")),
    ("Lua `if ... then` block", ("then",), LazyPattern(
        r"if(?<!\wif)\b[^\n]{1,200}?\bthen[ \t]*\n|"
        r"if(?<!\wif)\b[^\n]{1,200}?(?:==|~=|[<>]=?)[^\n]{0,200}?\bthen\b")),
    ("Lua `for ... do`", ("do",), LazyPattern(
        r"for(?<!\wfor)\s+[A-Za-z_]\w*\s*(?:=|,\s*[A-Za-z_]\w*\s+in\b|\s+in\b)[^\n]{0,200}?\bdo\b"
        r"[ \t]*(?:\n|$|[^\n]{0,200}?\bend\b)")),
    ("Lua `while ... do`", ("while",), LazyPattern(
        r"while(?<!\wwhile)\b[^\n]{1,200}?\bdo[ \t]*(?:\n|$|[^\n]{0,200}?\bend\b)")),
    ("JS `const/let/var x =`", ("const", "let", "var"), LazyPattern(
        r"(?:const(?<!\wconst)|let(?<!\wlet)|var(?<!\wvar))\s+[A-Za-z_$][\w$]*\s*=(?![=>])")),
    ("a JS arrow function", ("=>",), LazyPattern(
        r"\)\s*=>|=>\s*\{|\b[A-Za-z_$][\w$]*\s*=>\s*[\w$]+\s*[.(]")),
    ("a `return ...;` statement", ("return",), LazyPattern(r"return(?<!\wreturn)\b[^\n;]{0,200};")),
    ("an `===`/`!==`/`~=` comparison", ("===", "!==", "~="), LazyPattern(
        r"[\w)\]]\s*(?:===|!==|~=)\s*[\w\"'(]")),
    ("CBS template syntax", ("{{",), LazyPattern(
        r"\{\{\s*(?:#if|#when|#each|/if|/when|/each|:else|"
        r"(?:set|get|add)(?:global)?var\s*::|button\s*::|[a-z_]+::)")),
    ("HTML script", ("<", ":"), LazyPattern(
        r"<\s*script\b|javascript(?<!\wjavascript):|<[a-zA-Z][^<>]{0,200}[\s/\"']on[a-z]+\s*=",
        re.IGNORECASE)),
    ("a regex group `(?:`/`(?=`/`(?<`", ("(?",), LazyPattern(
        r"\(\?(?:[:=!]|<[=!]|<[A-Za-z])")),
    ("a regex character class `[^...]`", ("[^",), LazyPattern(r"\[\^[^\]\n]{1,100}\]")),
)
_WEAK: tuple[tuple[str, tuple[str, ...], LazyPattern], ...] = (
    ("regex escapes (\\d, \\w, \\s ...)", ("\\",), LazyPattern(r"\\[dwsbDWSB]")),
    ("escaped regex metacharacters", ("\\",), LazyPattern(r"\\[.()\[\]*+?|/{}^$]")),
    ("regex quantifiers", ("*", "+", "?", "{"), LazyPattern(
        # every alternative starts with a literal, so `re` skips to those characters
        r"\][*+?]|\)[*+?]|\\[dws][*+?]|\.\*\??|\.\+\??|\{\d+,\d*\}")),
    ("a regex character range", ("[",), LazyPattern(
        r"\[(?:a-z|A-Z|0-9|가-힣|\w-\w)[^\]\n]{0,60}\]")),
    ("anchored pattern ^...$", ("^",), LazyPattern(r"^\^[^\n]{1,200}\$$", re.MULTILINE)),
    ("an assignment `x = y`", ("=",), LazyPattern(
        r"\b[a-z_][a-z0-9_]*(?:\.[a-z_]\w*|\[[^\]\n]{1,40}\])?\s=\s[\w\"'{\[(-]")),
    ("an `if ... then`", ("then",), LazyPattern(r"if(?<!\wif)\b[^\n]{1,200}?\bthen\b")),
    ("a `==` comparison", ("==",), LazyPattern(r"[\w)\]]\s*==\s*[\w\"'(]")),
    ("an arrow `=>`", ("=>",), LazyPattern(r"=>")),
    ("string concatenation `..`", ("..",), LazyPattern(r"[\w)\"']\s*\.\.\s*[\w(\"']")),
    ("a Lua comment `--`", ("--",), LazyPattern(r"(?:^|\n)\s*--\s*\S")),
    ("a `nil`/`null` literal", ("nil", "null", "undefined"), LazyPattern(
        r"(?:nil(?<!\wnil)|null(?<!\wnull)|undefined(?<!\wundefined))\b")),
    ("brackets `{`/`}`", ("{", "}"), LazyPattern(r"[{}]")),
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


def _triggers(table: tuple[tuple[str, tuple[str, ...], LazyPattern], ...]
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
# HTML script without a "<" can only be ``javascript:``, ending at a ":": read backwards
# from each ":" in the reversed text (:data:`_JS_URL_BACK`).
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
_HTML = next(i for i, (r, _, _) in enumerate(_STRONG) if r == "HTML script")
# its alternatives apart (one reason: a match of either is a match of the pattern): the
# tags, which start at a "<", and the ``javascript:`` scheme, which ends at a ":"
_HTML_TAG = re.compile(r"<\s*script\b|<[a-zA-Z][^<>]{0,200}[\s/\"']on[a-z]+\s*=", re.IGNORECASE)
_JS_URL = LazyPattern(r"javascript(?<!\wjavascript):", re.IGNORECASE)
# the scheme read backwards from its ":" in the reversed text (the same matches: each
# letter is matched alone, and the look back at the character before the scheme becomes
# a look ahead at it), so ``re`` skips from ":" to ":" in C
_JS_URL_BACK = re.compile(r":tpircsavaj(?!\w)", re.IGNORECASE)
# An API call is a name, whitespace, "(": looked up by the word before each "(" (a name
# without "."), or by the last part of a dotted name
_API_WORDS = frozenset(n for n in _API_NAMES if "." not in n)
_API_DOTTED: dict[str, tuple[str, ...]] = {}
for _name in _API_NAMES:
    if "." in _name:
        _last = _name.rsplit(".", 1)[1]
        _API_DOTTED[_last] = (*_API_DOTTED.get(_last, ()), _name)

# Regex quantifiers: without a "{", a match is two or three characters ending at a "*", "+"
# or "?" (``]*``, ``)+``, ``\\d*``, ``.*``, ``.+?``: the optional "?" adds nothing to
# whether there is a match).
_QUANT = next(i for i, (r, _, _) in enumerate(_WEAK) if r == "regex quantifiers")

# An assignment ``x = y``: every match holds a "=" with one whitespace character on each
# side (``\\s=\\s``), so it is looked for at each such "=" alone: the pattern read
# backwards from the character after the "=" (matched in the reversed text, the pattern
# reversed part by part: the same matches, read from their end; ``\\b`` is the same
# test read either way), one match a "=", each reaching back over its own name only
_ASSIGN = next(i for i, (r, _, _) in enumerate(_WEAK) if r == "an assignment `x = y`")
_ASSIGN_BACK = re.compile(
    r"[\w\"'{\[(-]\s=\s(?:\][^\]\n]{1,40}\[|\w*[a-z_]\.)?[a-z0-9_]*[a-z_]\b")

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
#: of word characters before that whitespace starts, where the run of ASCII letters and
#: digits right before the "(" starts: the "(" itself when whitespace or nothing is there)
Parens = list[tuple[int, int, int, int]]

# The runs before a "(", read backwards: from the "(" in the reversed text, its whitespace
# (``\s``), then the ASCII letters and digits and the other word characters (``\w``)
# before that (greedy runs, no backtracking: each character is read once for one "(")
_PAREN_BACK = re.compile(r"\((\s*)([A-Za-z0-9]*)(\w*)")
_SPACES = re.compile(r"\s*")


def _parens(text: str, rev: str) -> Parens:
    """Every "(" of ``text`` with the runs before it (:data:`Parens`), found once for the
    four call patterns: each read backwards from its "(" in ``rev`` (``text[::-1]``) by one
    match of :data:`_PAREN_BACK`, in C.  The whitespace is ``\\s`` (``str.isspace``, the
    same characters) and a word character ``\\w`` (``str.isalnum`` or "_", the same);
    the runs of different "(" never overlap (a "(" is neither), so this is one pass."""
    n = len(text)
    out: Parens = []
    for m in _PAREN_BACK.finditer(rev):
        p = n - 1 - m.start()
        q = n - m.end(1)
        out.append((p, q, n - m.end(3), n - m.end(2) if q == p else p))
    out.reverse()  # (in the text's order)
    return out


def _api_call(text: str, parens: Parens) -> bool:
    """Whether the API pattern matches: at some "(", after the whitespace before it, one of
    the names ends, and the character before the name is not a word character or ".".
    A name without a "." is then the whole run of word characters before the whitespace,
    not after a "."; a dotted name (``console.log``) ends with that run, after its "."."""
    for _, q, w, _ in parens:
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
    for p, q, w, start in parens:
        if kind == _CAMEL:
            if start == p:
                continue  # no letter or digit right before the "(": no camelCase call
            spaces = _SPACES.match(text, p + 1)  # (``\s*`` always matches)
            end = spaces.end() if spaces is not None else p + 1
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


def _assignment(text: str) -> bool:
    """Whether the assignment pattern matches ``text`` (see :data:`_ASSIGN_BACK`): at
    most :data:`_MAX_WINDOWS` "=" looked at, else the whole text searched."""
    at = _anchors(text, "=")
    if at is None:
        return _WEAK[_ASSIGN][2].search(text) is not None
    n = len(text)
    rev = ""
    for e in at:
        if 0 < e < n - 2 and text[e - 1].isspace() and text[e + 1].isspace():
            rev = rev or text[::-1]
            if _ASSIGN_BACK.match(rev, n - 3 - e) is not None:
                return True
    return False


def _search(rx: LazyPattern, text: str, windows: Windows | None) -> bool:
    if windows is None:
        return rx.search(text) is not None
    return any(rx.search(text, a, b) is not None for a, b in windows)


def _present(text: str) -> frozenset[str]:
    """The needles in ``text``, and maybe a word more (a gate may let a pattern through,
    never hold one back).  All needles are ASCII, so they are looked for in the text's
    UTF-8 bytes (a byte search is far quicker than one in a wide string; no ASCII byte is
    part of another character there): the punctuation needles among the ASCII
    punctuation alone (one C pass drops letters, digits, spaces and every byte of the
    other characters; a one-character needle is then a set member), the word needles as
    whole words.  A word needle's every pattern takes it as a whole word (``\\b`` or a
    look-back at a word character before it, and ``\\b`` or ``\\s`` after it: see
    :data:`_WORD_NEEDLES`), so it is one of the runs of ASCII letters, digits and "_"
    that the other bytes separate (a character of another script, even a letter, only
    separates: that may let a pattern through, never hold one back); ``v2`` starts a
    word and is looked for as it is.  (Callers ask what is in the set.)"""
    b = text.encode("utf-8", "surrogatepass")
    marks = b.translate(None, _NOT_MARKS)
    found = [_MARK_NAMES[c] for c in _MARK_BYTES.intersection(marks)]
    # (find, not "in": "bytes in bytes" raises and clears a TypeError within each time)
    found += [n for n, m in _MARKS_NEEDLES if marks.find(m) >= 0 and b.find(m) >= 0]
    found += [_WORD_NAMES[w] for w in _WORD_TOKENS.intersection(b.translate(_SPLIT).split())]
    if b.find(b"v2") >= 0:
        found.append("v2")
    return frozenset(found)


# letters, digits and spaces: the bytes no punctuation needle holds
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_ ")
# the bytes dropped to leave the ASCII punctuation: those, and every byte of a character
# that is not ASCII (its UTF-8 bytes are all 0x80 or above)
_NOT_MARKS = "".join(sorted(_WORD_CHARS)).encode("ascii") + bytes(range(0x80, 0x100))
# every byte that cannot be in an ASCII word (letters, digits, "_") made a space
_SPLIT = bytes(c if chr(c).isascii() and (chr(c).isalnum() or c == ord("_")) else 0x20
               for c in range(256))
# the needles by kind: a word (ASCII letters, digits or a space in it); one punctuation
# character (as its byte value); several punctuation characters
_WORD_NEEDLES = tuple(n for n in _NEEDLES if not set(n).isdisjoint(_WORD_CHARS))
_PREFIX_NEEDLES = ("v2",)  # starts a word: ``v2(?<!\\wv2)[A-Z]``
_WORD_NAMES = {n.encode("ascii"): n for n in _WORD_NEEDLES if n not in _PREFIX_NEEDLES}
_WORD_TOKENS = frozenset(_WORD_NAMES)
_MARK_NAMES = {ord(n): n for n in _NEEDLES if set(n).isdisjoint(_WORD_CHARS) and len(n) == 1}
_MARK_BYTES = frozenset(_MARK_NAMES)
_MARKS_NEEDLES = tuple((n, n.encode("ascii")) for n in _NEEDLES
                       if set(n).isdisjoint(_WORD_CHARS) and len(n) > 1)

#: the strong and the weak patterns (indexes, in order) a set of needles lets through,
#: remembered by set (a few dozen sets in practice; forgotten when full)
_GATES: dict[frozenset[str], tuple[tuple[int, ...], tuple[int, ...]]] = {}
_GATES_MAX = 1024


def _gates(present: frozenset[str]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    got = _GATES.get(present)
    if got is None:
        if len(_GATES) >= _GATES_MAX:
            _GATES.clear()
        strong = sorted({i for m in present for i in _STRONG_BY.get(m, ())})
        weak = sorted({i for m in present for i in _WEAK_BY.get(m, ())})
        got = _GATES[present] = (tuple(strong), tuple(weak))
    return got


# ASCII digits, each made "0" (in UTF-8 bytes, where no other character's bytes are ASCII)
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")


def digit_shape(text: str) -> bytes | None:
    """``text`` as :func:`find_active_code` tells it from any other text of its shape:
    its UTF-8 bytes with every ASCII digit made ``0``; None when no other text may share
    its answer (it holds ``v2``).

    Texts of one shape get one answer from :func:`find_active_code` (None or not), so a
    text whose shape is that of a text known to be prose is prose (a projection's
    sentences differ from one document to the next in their numbers: counts, sizes, ids).
    Exact: no pattern or gate tells one ASCII digit from another but for the ``v2`` of an
    API call (its needle and pattern), kept apart by the None: every other digit is in a
    pattern as one of a class (``\\d``, ``\\w``, ``[0-9]``, ``[a-z0-9]`` ...; the
    ``0-9`` of a character range is also a ``\\w-\\w``, which any digits match), and
    to the code around them (``str.isalnum``, ``str.isspace``, lengths, counts of other
    characters, the word needles: none holds a digit) every digit is alike.  Other
    scripts' digits are left as they are.  (tests/test_contract_activecode.py holds the
    two answers equal on generated texts.)"""
    if "v2" in text:
        return None
    return text.encode("utf-8", "surrogatepass").translate(_DIGITS_AS_ZERO)


def find_active_code(text: str) -> str | None:
    """Why ``text`` looks like code or a regex pattern, or ``None`` for prose."""
    if len(text) < 3:
        return None
    present = _present(text)
    if not present:
        return None
    strong, weak = _gates(present)
    reason = _strong_reason(text, strong)
    if reason is not None:
        return reason
    # a statement line ends in ; { } or is a lone `end`: without those, no such line
    if ("\n" in present and (";" in present or "{" in present or "}" in present
                              or "end" in text) and _code_lines(text) >= 2):
        return "several statement lines ending in ; { }"
    return _weak_reason(text, present, weak)


def _strong_reason(text: str, candidates: tuple[int, ...]) -> str | None:
    """The reason of the first strong pattern (of ``candidates``, in order) found in
    ``text``."""
    parens: Parens | None = None
    rev = ""  # the text reversed, made when a pattern reads backwards
    for i in candidates:
        reason, _, rx = _STRONG[i]
        kind = _PAREN_KIND.get(i)
        windows: Windows | None = None  # None: the whole text
        if kind is not None:
            if parens is None:
                rev = rev or text[::-1]
                parens = _parens(text, rev)
            if kind == _API:
                if _api_call(text, parens):
                    return reason
                continue
            windows = _paren_windows(text, parens, kind)
        elif i == _HTML:
            rev = rev or text[::-1]
            if ("<" in text and _HTML_TAG.search(text) is not None) or (
                    _JS_URL_BACK.search(rev) is not None):
                return reason
            continue
        if _search(rx, text, windows):
            return reason
    return None


def _weak_reason(text: str, present: frozenset[str], candidates: tuple[int, ...]
                 ) -> str | None:
    """Two weak signals (of ``candidates``, in order) found in ``text``, named, or None."""
    weak: list[str] = []
    for i in candidates:
        if _assignment(text) if i == _ASSIGN else _search(
                _WEAK[i][2], text,
                _quantifier_windows(text) if i == _QUANT and "{" not in text else None):
            weak.append(_WEAK[i][0])
            if len(weak) == 2:  # the first two name the finding
                return " and ".join(weak)
    if ";" in present and text.count(";") >= 3 and any(c in text for c in "=(){}"):
        weak.append("several `;` separated statements")
    if len(weak) >= 2:
        return " and ".join(weak[:2])
    return None
