"""The YAML loader (events composed in one pass, libyaml's parser when present) against
the reference it replaced (PyYAML's composer + a node-tree converter, tests/yaml_reference):
the same values, the same line for every JSON pointer, the same refusals in the same order;
syntax errors at the same line (their wording is the parser's own)."""

from __future__ import annotations

import os
from typing import Any

import pytest
import yaml
import yaml_reference as ref
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from risutools import yamlsafe
from risutools.yamlsafe import HAVE_LIBYAML, YamlRefused, load_yaml_documents

DEPTH = 8
PARSERS = [False, *([True] if HAVE_LIBYAML else [])]
FUZZ = settings(
    max_examples=int(os.environ.get("RISU_FUZZ_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)


def line_of(lines: dict[str, int], pointer: str) -> int | None:
    """What loaders.LoadedDocument.line_of answers: the nearest recorded parent's line."""
    p = pointer
    while True:
        if p in lines:
            return lines[p]
        if not p:
            return None
        p = p.rsplit("/", 1)[0]


def outcome(docs: Any) -> list[Any]:
    """Each document as (value, line, lines) and then the refusal, if any, as a tuple."""
    out: list[Any] = []
    try:
        for d in docs:
            out.append(("doc", d.value, d.line, d.lines))
    except (YamlRefused, ref.YamlRefused) as exc:
        out.append(("refused", exc.why, exc.line, exc.pointer))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        out.append(("syntax", mark.line + 1 if mark else None,
                    " ".join(x for x in (exc.context, exc.problem) if x)))
    except yaml.YAMLError as exc:
        out.append(("yaml-error", type(exc).__name__))
    except ValueError as exc:
        out.append(("value", str(exc)))
    except RecursionError:
        out.append(("too-deep",))
    except (KeyError, TypeError) as exc:  # the reference crashed on e.g. `!!bool maybe`
        out.append(("crash", type(exc).__name__))
    return out


def same(text: str, c: bool) -> None:
    want = outcome(ref.load_yaml_documents(text, max_depth=DEPTH))
    got = outcome(load_yaml_documents(text, max_depth=DEPTH, use_libyaml=c))
    # without the line map (values alone, parse_value): the same values and refusals
    bare = outcome(load_yaml_documents(text, max_depth=DEPTH, use_libyaml=c, lines=False))
    assert [g[:3] if g[0] == "doc" else g for g in got] == \
        [b[:3] if b[0] == "doc" else b for b in bare], (got, bare)
    assert all(b[3] == {"": b[2]} for b in bare if b[0] == "doc"), bare
    assert len(got) == len(want), (got, want)
    for g, w in zip(got, want, strict=True):
        if w[0] == "doc":
            assert g[0] == "doc" and g[1:3] == w[1:3] and type(g[1]) is type(w[1])
            _, _, _, glines = g
            # every pointer the reference recorded gets the same line, and no more
            for ptr, ln in w[3].items():
                assert line_of(glines, ptr) == ln, (ptr, glines, w[3])
            assert set(glines) <= set(w[3])
        elif w[0] == "syntax" and c:
            assert g[:2] == w[:2], (g, w)  # same line; libyaml words it its own way
        elif w[0] == "refused" and "unpaired surrogate" in w[1] and c:
            # PyYAML reads a "\ud800" escape and the reference refused the string;
            # libyaml refuses the escape itself, on the same line
            assert g[:2] == ("syntax", w[2]) and "escape" in g[2], (g, w)
        elif w[0] == "crash" or (w[0] == "value" and "integer string" not in w[1]):
            # a crash, or Python's words without a place: now a refusal with its place
            assert g[0] == "refused" and "cannot be read as its tag says" in g[1], (g, w)
            assert g[2] is not None, g
        elif w[0] == "too-deep" or (c and w[0] == "refused" and "nested deeper" in w[1]):
            # the reference ran out of recursion; libyaml may meet its own 1,000-level
            # bound looking ahead: both refuse the nesting, on the same line
            assert g[0] == "refused" and "nested deeper" in g[1]
            assert w[0] == "too-deep" or g[2] == w[2]
        elif w[0] == "value" and "integer string conversion" in w[1]:
            # Python's own words, no line: now the reader's, with its line and pointer
            assert g[0] == "refused" and "out of a JSON number's range" in g[1], (g, w)
            assert g[2] is not None and g[3].startswith("/"), g
        else:
            assert g == w


CASES = [
    "a: 1\nb: [1, 2, {c: d}]\n",
    "- a\n- b: 1\n  c: [x, y]\n- - 1\n  - 2\n",
    "a: yes\nb: 'yes'\nc: 0x1F\nd: 1_000\ne: 1.5e3\nf: ~\ng: 2024-01-01\nh: 190:20:30\n",
    "a: .inf\n", "a: [1, .nan]\n", "a: -.Inf\n",
    "a: &x 1\nb: *x\n", "a: [&x 1, *x]\n", "a: &x 1\nb: &x 2\n", "a: *nope\n",
    "<<: {a: 1}\n", "a:\n  <<: [1]\n", "a: !!binary aGk=\n", "a: !!set {x}\n",
    "a: !custom 1\n", "a: !!python/name:os.system x\n", "!!omap [a: 1]\n",
    "a: !!str 1\nb: !!int '7'\nc: !!float '1'\nd: !!null ''\ne: !!bool 'true'\n",
    "a: !!int x\n", "a: !!bool maybe\n", "a: !!float x\n",
    "1: a\n", "yes: a\n", "[a]: 1\n", "? {a: 1}\n: 2\n", "null: 1\n", "'1': a\n",
    "a: 1\na: 2\n", "a: 1\nb:\n  c: 1\n  c: 2\n", "a: 1\n'a': 2\n",
    "a: 1\nb: *x\nc: 1\nc: 2\n",  # a value problem before an alias: the alias wins
    "a: 1\na: 2\nb: [\n",  # a value problem before a syntax error: the syntax error wins
    "a: !!binary x\nb: &y 1\nc: &y 2\n",  # ... and a repeated anchor wins too
    "a: 1\n---\nb: *x\n", "a: 1\n---\nb: [\n", "---\n...\n---\na: 1\n", "", "# only\n",
    "a: \"\\ud800\"\n", "a: \"\\ud83d\\ude00\"\n", "a: \"\\x41\\t\\u00e9\"\n",
    "a: |\n  line 1\n  line 2\nb: >\n  folded\n  text\n",
    "a: b: c\n", "a: [1, 2\nb: 3\n", "\tb: 1\n", "a: 'x\n", "a: 1\n\x00\n", "- a\nb: c\n",
    "a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 12)) + "  " * 12 + "v\n",
    "a: " + "[" * 12 + "]" * 12 + "\n", "a: " + "[" * 1500 + "]" * 1500 + "\n",
    "- - - - - - - - - - - x\n",
    "a: b\u2028c: d\n", "a: \x85b\n", "x/y: 1\n~z: [2]\n",
    "a: 1" + "1" * 5000 + "\n",
    "a: [-0, +5, 007, 0x1F, 0o17, 0b101, 1_000, 123456789012345678, 1234567890123456789,"
    " -9, 190:20:30, '12', !!str 12, ! 12, 1.0, 1e5, 12abc]\n",
    "a:\n  - x\n  -\n    - y\n  - {p: q,\n     r: s}\n",
    # the depth is a value problem: a syntax problem anywhere in the document wins over it,
    # before or after it, inside or outside the nesting (the fuzz found the first one)
    "top:\n  k:\n    -\n        k:\n          -\n              -\n                  k:\n"
    "                    k:\n                      - 1\n                    k: 1\n"
    "                    k: *a\n",
    "a: " + "[" * 10 + "1" + "]" * 10 + "\nb: *a\n",
    "a: [" + "[" * 10 + "1" + "]" * 10 + ", *a]\n",
    "a: " + "[" * 10 + "*a" + "]" * 10 + "\n",
    "a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 12)) + "  " * 12 + "*a\n",
    "b: *a\na: " + "[" * 10 + "1" + "]" * 10 + "\n",
    "a: " + "[" * 10 + "1" + "]" * 10 + "\nb: &x 1\nc: &x 2\n",
    "a: " + "[" * 10 + "1" + "]" * 10 + "\nb: [\n",
    # ... but not over a value problem before it, nor over the next document's alias
    "a: 1\na: 2\nb: " + "[" * 10 + "1" + "]" * 10 + "\n",
    "a: " + "[" * 10 + "1" + "]" * 10 + "\nb: !!binary x\n",
    "a: " + "[" * 10 + "1" + "]" * 10 + "\n---\nb: *x\n",
    # a value its tag's constructor refuses: at the root, in a list, in a map, as a key
    "!!int nope\n", "a: [1, !!float zz]\n", "a:\n  b: {c: !!bool maybe}\n",
    "a: 1\nb: !!int 0x\n", "? !!float q\n: 1\n",
]


@pytest.mark.parametrize(("text", "line", "pointer"), [
    ("component_id: x\na: !!int x\n", 2, "/a"),
    ("a:\n  - 1\n  - !!float zz\n", 3, "/a/1"),
    ("a:\n  b: {c: !!bool maybe}\n", 2, "/a/b/c"),
    ("!!int nope\n", 1, ""),
])
def test_a_value_its_tag_refuses_has_its_place(text: str, line: int, pointer: str) -> None:
    for c in PARSERS:
        with pytest.raises(YamlRefused) as info:
            list(load_yaml_documents(text, max_depth=DEPTH, use_libyaml=c))
        assert (info.value.line, info.value.pointer) == (line, pointer)
        assert "cannot be read as its tag says" in info.value.why
        assert "remove the tag" in info.value.why


@pytest.mark.parametrize("c", PARSERS, ids=lambda c: "libyaml" if c else "pure")
@pytest.mark.parametrize("text", CASES)
def test_same_as_the_reference(text: str, c: bool) -> None:
    same(text, c)


def test_both_parsers_are_tested() -> None:
    # the CI image has PyYAML with libyaml: the fast path must not go untested there
    assert HAVE_LIBYAML or os.environ.get("RISU_NO_LIBYAML")
    assert bool(yaml.__with_libyaml__) == yamlsafe.HAVE_LIBYAML


def test_without_libyaml_the_pure_parser_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    yamlsafe._load_yaml()  # (PyYAML is imported when YAML is first read)
    monkeypatch.setattr(yamlsafe, "_HAVE_LIBYAML", False)
    loader = yamlsafe._loader("a: 1\n", None)
    try:
        assert isinstance(loader, yaml.SafeLoader) and not isinstance(loader, yaml.CSafeLoader)
    finally:
        loader.dispose()
    (doc,) = load_yaml_documents("a: [1]\n", max_depth=4)
    assert doc.value == {"a": [1]}


def test_lines_are_kept_only_where_they_change() -> None:
    (doc,) = load_yaml_documents("a: [1, 2, 3]\nb:\n  - x\n  - y\n", max_depth=DEPTH)
    assert doc.lines == {"": 1, "/b": 3, "/b/1": 4}
    assert line_of(doc.lines, "/a/2") == 1 and line_of(doc.lines, "/b/0") == 3


def test_deep_refusal_has_its_line_however_deep() -> None:
    text = "a: " + "[" * 100_000 + "]" * 100_000 + "\n"  # both parsers stop early
    for c in PARSERS:
        with pytest.raises(YamlRefused) as ei:
            list(load_yaml_documents(text, max_depth=DEPTH, use_libyaml=c))
        assert ei.value.why == f"nested deeper than {DEPTH} levels; flatten the document"
        assert ei.value.line == 1
        # the scanners stop at 1,000 (libyaml) or DEPTH + 64 (PyYAML) levels while
        # looking ahead, before the first event of the nesting: the pointer is then
        # where the events had got to
        assert ei.value.pointer == "/a"


def test_past_the_parsers_bound_the_nesting_wins() -> None:
    # the one exception to "syntax first": a nesting so deep that the parser stops looking
    # ahead is refused there, at once (bounded time); what follows is not read
    text = "a: " + "[" * 200 + "]" * 200 + "\nb: *x\n"
    with pytest.raises(YamlRefused) as ei:
        list(load_yaml_documents(text, max_depth=DEPTH, use_libyaml=False))
    assert ei.value.why.startswith("nested deeper") and ei.value.line == 1
    if HAVE_LIBYAML:  # libyaml looks 1,000 levels ahead: it meets the alias
        with pytest.raises(YamlRefused) as ei:
            list(load_yaml_documents(text, max_depth=DEPTH, use_libyaml=True))
        assert ei.value.why.startswith("YAML alias *x") and ei.value.line == 2


scalars = st.sampled_from(["1", "x", "'q'", "yes", "~", ".nan", "0x1", "2024-01-01", "*a",
                           "&a 1", "!!str 2", "!!binary x", "\"\\ud800\"", "1.5", "<<"])
keys = st.sampled_from(["k", "k", "j", "1", "'1'", "<<", "[a]", "x/y", "a~b"])


@st.composite
def yaml_text(draw: st.DrawFn, depth: int = 0) -> str:
    def node(d: int, indent: int) -> str:
        kind = draw(st.sampled_from(["s", "s", "flow", "block-map", "block-seq"]
                                    if d < DEPTH + 2 else ["s"]))
        pad = " " * indent
        if kind == "s":
            return " " + draw(scalars) + "\n"
        if kind == "flow":
            items = draw(st.lists(scalars.filter(lambda s: not s.startswith("&")), max_size=3))
            return " [" + ", ".join(items) + "]\n"
        if kind == "block-seq":
            n = draw(st.integers(1, 3))
            return "\n" + "".join(f"{pad}  -{node(d + 1, indent + 4)}" for _ in range(n))
        n = draw(st.integers(1, 3))
        return "\n" + "".join(f"{pad}  {draw(keys)}:{node(d + 1, indent + 2)}" for _ in range(n))

    docs = [f"top:{node(0, 0)}" for _ in range(draw(st.integers(1, 2)))]
    return "---\n".join(docs)


@FUZZ
@given(yaml_text(), st.sampled_from(PARSERS))
def test_fuzz_same_as_the_reference(text: str, c: bool) -> None:
    # libyaml refuses a "\ud800" escape as syntax, wherever it is (CASES has that case)
    assume(not (c and "\\ud8" in text))
    same(text, c)


def test_memory_bound_on_values(monkeypatch: pytest.MonkeyPatch) -> None:
    # (a value on a line of its own costs its line and its pointer's characters: "/a")
    cost = (2 * yamlsafe.CONTAINER_COST + yamlsafe.LINE_COST + len("/a")
            + 3 * yamlsafe.SCALAR_COST)
    monkeypatch.setattr(yamlsafe, "MAX_YAML_COST", cost)
    for c in PARSERS:  # a mapping, a sequence on its own line, one key, two items: fits
        (doc,) = load_yaml_documents("a:\n  [1, 2]\n", max_depth=DEPTH, use_libyaml=c)
        assert doc.value == {"a": [1, 2]}
        with pytest.raises(YamlRefused) as ei:  # one item more does not
            list(load_yaml_documents("a:\n  [1, 2, 3]\n", max_depth=DEPTH, use_libyaml=c))
        assert ei.value.why.startswith("too many values: more than the memory bound allows")
        assert (ei.value.line, ei.value.pointer) == (2, "/a")
        # the bound is for the whole file: documents add up
        assert len(list(load_yaml_documents("b: [1]\n", max_depth=DEPTH, use_libyaml=c))) == 1
        with pytest.raises(YamlRefused):
            list(load_yaml_documents("a: 1\n---\nb: [1]\n", max_depth=DEPTH, use_libyaml=c))


def test_the_resolvers_facts_are_found_again_for_a_changed_table() -> None:
    """The composer asks the loader's resolver tables once per loader class and tables
    (``yamlsafe._resolving``); an application that adds a resolver to the class changes
    the tables, and the facts are found again from them."""
    import re

    from risutools import yamlsafe

    yamlsafe._load_yaml()
    for cls in {yamlsafe._PureLoader, *yamlsafe._C_LOADERS}:
        before = yamlsafe._resolving(cls(""))
        assert before == (True, before[1], True) and "7" in before[1]
        assert "x" not in before[1]
        assert yamlsafe._resolving(cls("")) is before  # (asked once)
        had = cls.__dict__.get("yaml_implicit_resolvers")
        try:
            cls.add_implicit_resolver("tag:example.org,2026:x", re.compile("^x$"), ["x"])
            after = yamlsafe._resolving(cls(""))
            assert "x" in after[1] and after is not before
            # (a plain x now resolves to a tag JSON has no value for: refused, with its line)
            with pytest.raises(yamlsafe.YamlRefused):
                list(yamlsafe.load_yaml_documents("a: 1\nb: x\n", max_depth=8,
                                                  use_libyaml=cls is not yamlsafe._PureLoader))
        finally:
            if had is None:
                del cls.yaml_implicit_resolvers
            else:
                cls.yaml_implicit_resolvers = had
        assert yamlsafe._resolving(cls("")) == before
