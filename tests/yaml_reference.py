"""The YAML loader as it was before the event composer (PyYAML's pure-Python composer and a
node-tree converter), kept as the reference the new one is tested against."""
from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from risutools.jsonplaces import escape_pointer_token

_STR = "tag:yaml.org,2002:str"
_SCALARS = {
    "tag:yaml.org,2002:null", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float", _STR,
}
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"
_MERGE = "tag:yaml.org,2002:merge"


class YamlRefused(Exception):
    def __init__(self, why: str, line: int | None, pointer: str = "") -> None:
        super().__init__(why)
        self.why = why
        self.line = line
        self.pointer = pointer


class _Loader(yaml.SafeLoader):
    """SafeLoader whose composer refuses aliases."""

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise YamlRefused(
                f"YAML alias *{event.anchor} is not allowed; write the value out "
                "instead",
                event.start_mark.line + 1,
            )
        node = super().compose_node(parent, index)
        assert node is not None
        return node


@dataclass
class YamlDocument:
    value: Any
    line: int  # 1-based line where the document starts
    lines: dict[str, int]


def load_yaml_documents(text: str, *, max_depth: int) -> Iterator[YamlDocument]:
    """Yield each document of a YAML stream (YamlRefused / yaml.YAMLError on bad input)."""
    loader = _Loader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            conv = _Converter(loader, max_depth)
            value = conv.convert(node, "", 0)
            yield YamlDocument(value, node.start_mark.line + 1, conv.lines)
    finally:
        loader.dispose()


class _Converter:
    def __init__(self, loader: _Loader, max_depth: int) -> None:
        self.loader = loader
        self.max_depth = max_depth
        self.lines: dict[str, int] = {}

    def convert(self, node: Node, pointer: str, depth: int) -> Any:
        line = node.start_mark.line + 1
        self.lines.setdefault(pointer, line)
        if depth > self.max_depth:
            raise YamlRefused(f"nested deeper than {self.max_depth} levels; flatten the document",
                              line, pointer)
        if isinstance(node, ScalarNode):
            return self.scalar(node, pointer, line)
        if isinstance(node, SequenceNode):
            if node.tag != _SEQ:
                raise YamlRefused(f"YAML tag {node.tag} builds a non-JSON value; remove the tag "
                             "(plain JSON values only)", line, pointer)
            return [self.convert(v, f"{pointer}/{i}", depth + 1) for i, v in enumerate(node.value)]
        if isinstance(node, MappingNode):
            if node.tag != _MAP:
                raise YamlRefused(f"YAML tag {node.tag} builds a non-JSON value; remove the tag "
                             "(plain JSON values only)", line, pointer)
            out: dict[str, Any] = {}
            key_lines: dict[str, int] = {}
            for knode, vnode in node.value:
                kline = knode.start_mark.line + 1
                if knode.tag == _MERGE:
                    raise YamlRefused(
                        "YAML merge key << is not allowed; write the keys out instead", kline,
                        pointer,
                    )
                if not isinstance(knode, ScalarNode) or knode.tag != _STR:
                    shown = knode.value if isinstance(knode, ScalarNode) else "(collection)"
                    raise YamlRefused(
                        f"mapping key {shown!r} is not a string; quote it", kline, pointer
                    )
                key = str(knode.value)
                child = f"{pointer}/{escape_pointer_token(key)}"
                if key in out:
                    raise YamlRefused(
                        f"duplicate key {key!r} (first at line {key_lines[key]}); remove or rename "
                        "one of them", kline, child
                    )
                key_lines[key] = kline
                out[key] = self.convert(vnode, child, depth + 1)
            return out
        raise YamlRefused("unsupported YAML node", line, pointer)  # pragma: no cover

    def scalar(self, node: ScalarNode, pointer: str, line: int) -> Any:
        if node.tag == _TIMESTAMP:
            return str(node.value)
        if node.tag not in _SCALARS:
            raise YamlRefused(f"YAML tag {node.tag} builds a non-JSON value; remove the tag "
                             "(plain JSON values only)", line, pointer)
        value = self.loader.construct_object(node, deep=True)
        if isinstance(value, float) and not math.isfinite(value):
            raise YamlRefused(f"{node.value} is not a JSON number (NaN/Infinity); write a number "
                              "or null", line, pointer)
        if isinstance(value, str):
            _check_surrogates(value, line, pointer)
        return value


def _check_surrogates(s: str, line: int, pointer: str) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise YamlRefused(
            f"string holds an unpaired surrogate U+{ord(s[exc.start]):04X} (not valid "
            "Unicode); fix the text",
            line, pointer,
        ) from None
