"""Reading YAML with positions: composed nodes -> plain data + a SourceMap.

Safety limits live here (duplicate keys, tabs, alias bombs, depth) and in files.py (file
type, size, encoding).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.constructor import DuplicateKeyError, SafeConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from archform.spec import fastyaml
from archform.spec.errors import Pos, SpecError
from archform.spec.fastyaml import MAP, SCALAR, SEQ, YNode
from archform.spec.files import MAX_BYTES, decode, read_text
from archform.spec.paths import Loc

__all__ = ["MAX_BYTES", "RawDocument", "SourceMap", "decode", "parse_documents", "read_text"]

MAX_NODES = 250_000  # nodes reached through aliases (alias bombs), per file
MAX_DEPTH = 64
# The longest integer a blueprint can need is a 64-bit slurm.conf value (20 digits); anything
# much longer is refused before Python's int() parser (capped at 4,300 digits) sees it.
MAX_INT_CHARS = 64


@dataclass(slots=True)
class SourceMap:
    """Positions of keys and values of one YAML document, by location tuple."""

    file: str
    start: Pos
    keys: dict[Loc, Pos] = field(default_factory=dict)
    values: dict[Loc, Pos] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)

    def text_at(self, pos: Pos) -> str:
        """The source text from `pos` to the end of its line (for hints)."""
        if 0 < pos.line <= len(self.lines):
            return self.lines[pos.line - 1][pos.column - 1 :]
        return ""

    def locate(self, loc: Loc, *, prefer: str = "key") -> Pos:
        """Position of `loc` (its key, or its value), else of the nearest ancestor."""
        first, second = (self.keys, self.values) if prefer == "key" else (self.values, self.keys)
        probe = tuple(loc)
        while probe:
            pos = first.get(probe) or second.get(probe)
            if pos is not None:
                return pos
            probe = probe[:-1]
        return self.start


@dataclass(frozen=True, slots=True)
class RawDocument:
    """One YAML document as plain data, with its positions."""

    file: str
    index: int
    data: Any
    source: SourceMap


class _Budget:
    def __init__(self) -> None:
        self.nodes = 0


def _yaml_error(display: str, exc: YAMLError, text: str = "") -> SpecError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    context_mark = getattr(exc, "context_mark", None)
    if context and "flow" in str(context) and context_mark is not None:
        mark = context_mark  # point at the '{' or '[' that was never closed
    pos = Pos(mark.line + 1, mark.column + 1) if mark is not None else Pos(1, 1)
    if problem and "mapping values are not allowed" in str(problem) and text:
        line = text.splitlines()[pos.line - 1] if pos.line - 1 < len(text.splitlines()) else ""
        pos = Pos(pos.line, len(line) - len(line.lstrip()) + 1)
    hint = "check indentation, quoting and ':' spacing near here"
    if isinstance(exc, DuplicateKeyError):
        key = str(problem).split('"')[1] if '"' in str(problem) else ""
        message = f"duplicate key {key!r}" if key else "duplicate key"
        hint = "a key may appear once per mapping; delete or merge the repeated one"
    elif "'\\t'" in str(problem) or "\t" in str(problem):
        message = "tab character in indentation"
        hint = "YAML forbids tabs for indentation; indent with spaces"
    elif problem and "mapping values are not allowed" in str(problem):
        message = "invalid YAML: a key is indented deeper than its siblings"
        hint = "align this key with the other keys of its mapping"
    elif context and "flow" in str(context):
        message = f"invalid YAML: this flow collection is never closed ({problem})"
        hint = "close it with '}' or ']', or write it in block style"
    else:
        message = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
    return SpecError.at(display, pos, message, hint)


_CORE = "tag:yaml.org,2002:"
_ALLOWED_TAGS = {
    _CORE + t for t in ("str", "int", "float", "bool", "null", "timestamp", "map", "seq")
}


def parse_documents(text: str, display: str) -> list[RawDocument]:
    """Parse every YAML document of `text` into plain data with positions.

    Works on a composed node graph (libyaml's when it can, see fastyaml, else ruamel's):
    positions come from node marks, explicit tags other than YAML's core ones are refused,
    and aliases are counted as they expand. The cyclic garbage collector is paused while the
    graph is built: it holds no cycles, and repeated full collections over hundreds of
    thousands of fresh nodes made reading grow faster than linearly.
    """
    with _gc_paused():
        return _parse(text, display)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _parse(text: str, display: str) -> list[RawDocument]:
    try:
        fast = fastyaml.compose_all(text)
        roots = fast if fast is not None else _compose_with_ruamel(text)
    except (MarkedYAMLError, YAMLError) as exc:
        raise _yaml_error(display, exc, text) from None
    except RecursionError:
        raise SpecError.at(
            display,
            Pos(1, 1),
            f"YAML nested too deeply (more than {MAX_DEPTH} levels)",
            "blueprints are a few levels deep; check for runaway brackets",
        ) from None
    budget = _Budget()
    docs: list[RawDocument] = []
    constructor = YAML(typ="safe", pure=True).constructor
    lines = text.splitlines()
    for index, root in enumerate(roots):
        if root is None:
            continue
        smap = SourceMap(display, _mark(root), lines=lines)
        converter = _Converter(smap, budget, constructor)
        data = converter.convert(root, (), 0, set())
        if data is None:
            continue
        docs.append(RawDocument(display, index, data, smap))
    if not docs:
        raise SpecError.at(display, Pos(1, 1), "file holds no YAML document", "add a blueprint")
    return docs


def _compose_with_ruamel(text: str) -> list[YNode | None]:
    """The reference composer: slow (pure Python) but the source of every YAML error text."""
    yaml = YAML(typ="rt")
    with warnings.catch_warnings():
        # ruamel warns (not errors) on legal oddities such as a re-used anchor name.
        warnings.simplefilter("ignore")
        roots = list(yaml.compose_all(text))
    return [None if root is None else fastyaml.from_ruamel(root) for root in roots]


def _mark(node: YNode) -> Pos:
    return Pos(node.line + 1, node.column + 1)


def _tag(node: YNode) -> str:
    return node.tag


class _Converter:
    def __init__(self, smap: SourceMap, budget: _Budget, constructor: SafeConstructor) -> None:
        self.smap = smap
        self.budget = budget
        self.constructor = constructor
        self.seen: set[int] = set()
        self.scalars: dict[int, Any] = {}

    def fail(self, pos: Pos, message: str, hint: str = "") -> SpecError:
        return SpecError.at(self.smap.file, pos, message, hint)

    def convert(
        self, node: YNode, loc: Loc, depth: int, active: set[int], aliased: bool = False
    ) -> Any:
        aliased = aliased or id(node) in self.seen
        self.seen.add(id(node))
        if aliased:
            self.budget.nodes += 1
        if self.budget.nodes > MAX_NODES:
            raise self.fail(
                self.smap.locate(loc),
                f"aliases expand to more than {MAX_NODES:,} YAML nodes",
                "aliases that reference aliases multiply; write values out or use fewer aliases",
            )
        if depth > MAX_DEPTH:
            raise self.fail(
                _mark(node),
                f"YAML nested more than {MAX_DEPTH} levels deep",
                "blueprints are a few levels deep; check for runaway brackets",
            )
        if id(node) in active:
            raise self.fail(_mark(node), "recursive alias: a node contains itself")
        tag = _tag(node)
        if tag not in _ALLOWED_TAGS:
            shown = tag.replace(_CORE, "!!")
            raise self.fail(
                _mark(node),
                f"YAML tag {shown!r} is not allowed in a blueprint",
                "remove the tag; blueprints hold plain strings, numbers, lists and mappings",
            )
        if node.kind == MAP:
            return self._mapping(node, loc, depth, active | {id(node)}, aliased)
        if node.kind == SEQ:
            out: list[Any] = []
            for i, item in enumerate(node.value):
                child = (*loc, i)
                if not aliased and id(item) not in self.seen:
                    self._record(child, item, item)
                out.append(self.convert(item, child, depth + 1, active | {id(node)}, aliased))
            return out
        return self._scalar_node(node, tag)

    def _scalar_node(self, node: YNode, tag: str) -> Any:
        text = str(node.value)
        if tag == _CORE + "str":
            return text
        known = self.scalars.get(id(node), _UNSET)  # an alias of a scalar already read
        if known is _UNSET:
            known = self.scalars[id(node)] = self._construct(node, tag, text)
        return known

    def _construct(self, node: YNode, tag: str, text: str) -> Any:
        if tag == _CORE + "int" and len(text) > MAX_INT_CHARS:
            raise self.fail(
                _mark(node),
                f"integer with {len(text):,} characters is out of range for any blueprint field",
                "every number field has a documented range (`archform schema`); "
                "write a value inside it",
            )
        quick = _QUICK.get(tag)
        if quick is not None:
            value = quick(text)
            if value is not _UNSET:
                return value
        try:
            value = self.constructor.construct_object(fastyaml.to_ruamel_scalar(node), deep=True)
            return _scalar(value)
        except (ValueError, OverflowError) as exc:
            shown = text if len(text) <= 40 else text[:37] + "..."
            if tag == _CORE + "timestamp":
                raise self.fail(
                    _mark(node),
                    f"{shown!r} is not a real date ({exc})",
                    "write a date that exists as YYYY-MM-DD, or quote the value if it is text",
                ) from None
            raise self.fail(
                _mark(node),
                f"{shown!r} cannot be read as {tag.replace(_CORE, '')} ({exc})",
                "quote the value if it is text",
            ) from None

    def _record(self, loc: Loc, key: YNode, value: YNode) -> None:
        # An alias re-uses its anchor's node (and marks): keep the first, real position only.
        if loc not in self.smap.keys:
            self.smap.keys[loc] = _mark(key)
            self.smap.values[loc] = _mark(value)

    def _mapping(
        self, node: YNode, loc: Loc, depth: int, active: set[int], aliased: bool
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        merged: list[YNode] = []
        for key_node, value_node in node.value:
            if _tag(key_node) == _CORE + "merge":
                sources = value_node.value if value_node.kind == SEQ else [value_node]
                for source in sources:
                    if source.kind != MAP:
                        raise self.fail(_mark(source), "a merge key ('<<') needs a mapping")
                    merged.append(source)
                continue
            if key_node.kind != SCALAR or _tag(key_node) != _CORE + "str":
                raise self.fail(
                    _mark(key_node),
                    f"keys must be strings, got {_tag(key_node).replace(_CORE, '')}",
                    "quote the key",
                )
            key = str(key_node.value)
            if key in out:
                raise self.fail(
                    _mark(key_node),
                    f"duplicate key {key!r}",
                    "a key may appear once per mapping; delete or merge the repeated one",
                )
            child = (*loc, key)
            if not aliased:
                self._record(child, key_node, value_node)
            out[key] = self.convert(value_node, child, depth + 1, active, aliased)
        for source in merged:
            extra = self.convert(source, loc, depth + 1, active, aliased)
            for key, value in extra.items():
                out.setdefault(key, value)
        return out


_UNSET: Any = object()
_DECIMAL = re.compile(r"[-+]?(0|[1-9][0-9]*)")


def _quick_int(text: str) -> Any:
    return int(text) if _DECIMAL.fullmatch(text) else _UNSET


def _quick_bool(text: str) -> Any:
    return {"true": True, "false": False}.get(text.lower(), _UNSET)


# The common scalars, built without ruamel's constructor (same values as it gives); anything
# else (octal, hex, underscores, floats, dates) goes through ruamel's SafeConstructor.
def _quick_null(text: str) -> Any:
    return None


_QUICK: dict[str, Callable[[str], Any]] = {
    _CORE + "int": _quick_int,
    _CORE + "bool": _quick_bool,
    _CORE + "null": _quick_null,
}


def _scalar(node: Any) -> Any:
    if node is None or isinstance(node, bool):
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, dt.datetime):
        return node
    if isinstance(node, dt.date):
        return dt.date(node.year, node.month, node.day)
    return str(node)
