"""Compose YAML with libyaml's C parser into ruamel nodes that carry line:column marks.

ruamel's pure-Python scanner and parser cost about 5 s per MB of blueprint and grow faster
than linearly on long files. libyaml (shipped inside PyYAML's wheels as `yaml._yaml`) turns
the text into events at tens of MB/s; this module builds the same node graph ruamel's
composer would (same classes, YAML 1.2 tag resolution from ruamel's own resolver table,
anchors shared by aliases, start marks 0-based like ruamel's), so everything downstream of
`compose_all` is unchanged.

It is deliberately conservative: whenever libyaml reports a problem, a `%YAML` directive is
present, the text holds a YAML 1.1-only line break, or nesting runs deep, `compose_all`
returns None and the caller re-reads the text
with ruamel, whose messages and positions are the reference (tests/spec/broken/).
"""

from __future__ import annotations

import functools
import importlib
import re
from typing import Any

from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.resolver import VersionedResolver
from yaml import events as _ev
from yaml.error import YAMLError as _LibyamlError

_libyaml: Any
try:  # PyYAML built with libyaml; without it every read takes the ruamel path
    _libyaml = importlib.import_module("yaml._yaml")
except ImportError:  # pragma: no cover - PyYAML wheels always bundle libyaml
    _libyaml = None

_CORE = "tag:yaml.org,2002:"
_STR, _SEQ, _MAP = _CORE + "str", _CORE + "seq", _CORE + "map"
# Deeper than this, the ruamel path reports the depth problem exactly as before.
_DEPTH_LIMIT = 200
# libyaml follows YAML 1.1, where NEL, LS and PS are line breaks; in YAML 1.2 (ruamel) they
# are ordinary characters. Text holding them is read by ruamel so the values stay the same.
_YAML11_BREAKS = re.compile("[\x85\u2028\u2029]")


class YNode:
    """One composed YAML node: kind, resolved tag, value, and 0-based start line/column.

    `value` is the text of a scalar, a list of YNodes for a sequence, and a list of
    (key, value) YNode pairs for a mapping. An alias is the same YNode object as its anchor.
    """

    __slots__ = ("column", "kind", "line", "tag", "value")

    def __init__(self, kind: str, tag: str, value: Any, line: int, column: int) -> None:
        self.kind = kind
        self.tag = tag
        self.value = value
        self.line = line
        self.column = column


SCALAR, SEQ, MAP = "scalar", "seq", "map"


def from_ruamel(root: Node) -> YNode:
    """The same graph from ruamel's composer (aliases stay shared objects)."""
    memo: dict[int, YNode] = {}

    def walk(node: Node) -> YNode:
        done = memo.get(id(node))
        if done is not None:
            return done
        tag = node.tag
        text = str(getattr(tag, "value", tag))
        mark = node.start_mark
        if isinstance(node, MappingNode):
            out = YNode(MAP, text, [], mark.line, mark.column)
            memo[id(node)] = out
            out.value.extend((walk(k), walk(v)) for k, v in node.value)
        elif isinstance(node, SequenceNode):
            out = YNode(SEQ, text, [], mark.line, mark.column)
            memo[id(node)] = out
            out.value.extend(walk(item) for item in node.value)
        else:
            value = node.value
            if getattr(node, "style", None) == ">":
                # ruamel's round-trip scanner marks fold points with BEL for its own
                # emitter; the value itself has none (its safe constructor keeps them)
                value = value.replace("\a", "")
            out = YNode(SCALAR, text, value, mark.line, mark.column)
            memo[id(node)] = out
        return out

    return walk(root)


def to_ruamel_scalar(node: YNode) -> ScalarNode:
    """A ruamel ScalarNode for `node`, so ruamel's SafeConstructor builds its value."""
    mark = _Mark(node.line, node.column)
    return ScalarNode(node.tag, node.value, mark, mark)


class _Mark:
    """A mark for ruamel's constructor messages: 0-based line and column."""

    __slots__ = ("column", "line")

    def __init__(self, line: int, column: int) -> None:
        self.line = line
        self.column = column

    def __str__(self) -> str:
        return f"  line {self.line + 1}, column {self.column + 1}"


@functools.cache
def _resolvers() -> dict[str, list[tuple[str, re.Pattern[str]]]]:
    """The YAML 1.2 implicit resolvers ruamel uses, by first character, regexes compiled."""
    table = VersionedResolver(version=(1, 2)).versioned_resolver
    anywhere = [(str(tag), re.compile(rx.pattern, rx.flags)) for tag, rx in table.get(None, [])]
    out: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
    for first, entries in table.items():
        if first is not None:
            compiled = [(str(tag), re.compile(rx.pattern, rx.flags)) for tag, rx in entries]
            out[first] = compiled + anywhere
    out[_ANY] = anywhere
    return out


_ANY = "\x00any"


def _resolve(value: str) -> str:
    table = _resolvers()
    entries = table.get(value[0] if value else "")
    if entries is None:
        entries = table[_ANY]
    for tag, regexp in entries:
        if regexp.match(value):
            return tag
    return _STR


def available() -> bool:
    """True when libyaml can be used."""
    return _libyaml is not None


def compose_all(text: str) -> list[YNode | None] | None:
    """Root nodes of every document, or None when the ruamel path must decide."""
    if _libyaml is None or "%YAML" in text or _YAML11_BREAKS.search(text):
        return None
    parser = _libyaml.CParser(text)
    try:
        return _Composer(parser).documents()
    except (_LibyamlError, _Fallback):
        return None
    finally:
        parser.dispose()


class _Fallback(Exception):
    """Something this composer leaves to ruamel (unknown anchor, deep nesting)."""


class _Composer:
    def __init__(self, parser: Any) -> None:
        self.parser = parser

    def documents(self) -> list[YNode | None]:
        events = self.parser
        scalar_event, alias_event = _ev.ScalarEvent, _ev.AliasEvent
        seq_start, map_start = _ev.SequenceStartEvent, _ev.MappingStartEvent
        seq_end, map_end = _ev.SequenceEndEvent, _ev.MappingEndEvent
        doc_start, doc_end = _ev.DocumentStartEvent, _ev.DocumentEndEvent
        roots: list[YNode | None] = []
        anchors: dict[str, YNode] = {}
        # open collections: [node, pending mapping key or None, block-style mapping]
        stack: list[list[Any]] = []
        root: YNode | None = None
        # An empty plain value in a block mapping (`key:` with nothing after it) has no text
        # of its own. libyaml marks it where the ':' ends; ruamel where the next token
        # starts, so it takes the next event's mark. In a flow mapping ruamel marks the end
        # of the ':', which no event carries: such files are read by ruamel. (In sequences
        # both mark the end of the '-'.)
        empty: YNode | None = None
        while True:
            event = events.get_event()
            if event is None:
                break
            if empty is not None:
                empty.line, empty.column = event.start_mark.line, event.start_mark.column
                empty = None
            cls = type(event)
            node: YNode
            if cls is scalar_event:
                mark = event.start_mark
                tag = event.tag
                if tag is None or tag == "!":
                    tag = _resolve(event.value) if event.implicit[0] else _STR
                node = YNode(SCALAR, tag, event.value, mark.line, mark.column)
                if (
                    not event.value
                    and event.implicit[0]
                    and not event.style
                    and stack
                    and stack[-1][1] is not None  # a mapping value
                ):
                    if not stack[-1][2]:
                        raise _Fallback  # `{x: }`: ruamel marks the ':', unknown here
                    empty = node
                if event.anchor is not None:
                    anchors[event.anchor] = node
            elif cls is alias_event:
                found = anchors.get(event.anchor)
                if found is None:
                    raise _Fallback  # ruamel words the unknown-alias error
                node = found
            elif cls is seq_start or cls is map_start:
                if len(stack) >= _DEPTH_LIMIT:
                    raise _Fallback
                mark = event.start_mark
                is_seq = cls is seq_start
                tag = event.tag
                if tag is None or tag == "!":
                    tag = _SEQ if is_seq else _MAP
                coll = YNode(SEQ if is_seq else MAP, tag, [], mark.line, mark.column)
                if event.anchor is not None:
                    anchors[event.anchor] = coll
                stack.append([coll, None, not is_seq and not event.flow_style])
                continue
            elif cls is seq_end or cls is map_end:
                node = stack.pop()[0]
            elif cls is doc_start:
                anchors = {}
                root = None
                continue
            elif cls is doc_end:
                roots.append(root)
                continue
            else:  # stream start/end
                continue
            if not stack:
                root = node
                continue
            top = stack[-1]
            parent = top[0]
            if parent.kind == SEQ:
                parent.value.append(node)
            elif top[1] is None:
                top[1] = node
            else:
                parent.value.append((top[1], node))
                top[1] = None
        return roots
