"""Reading YAML with positions: ruamel round-trip nodes -> plain data + a SourceMap.

Safety limits live here: file size, encoding, duplicate keys, tabs, alias bombs, depth.
"""

from __future__ import annotations

import datetime as dt
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from archform.spec.errors import Pos, SpecError, SpecProblem
from archform.spec.paths import Loc

MAX_BYTES = 4 * 1024 * 1024
MAX_NODES = 250_000
MAX_DEPTH = 64


@dataclass(slots=True)
class SourceMap:
    """Positions of keys and values of one YAML document, by location tuple."""

    file: str
    start: Pos
    keys: dict[Loc, Pos] = field(default_factory=dict)
    values: dict[Loc, Pos] = field(default_factory=dict)

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


def read_text(path: Path, display: str) -> str:
    """Read a blueprint file: size limit, strict UTF-8, no NUL bytes, BOM stripped."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise SpecError.at(display, Pos(1, 1), "file not found", "check the path") from None
    except OSError as exc:
        raise SpecError.at(display, Pos(1, 1), f"cannot read file: {exc.strerror}") from None
    if path.is_dir():
        raise SpecError.at(display, Pos(1, 1), "is a directory, expected a YAML file")
    if size > MAX_BYTES:
        raise SpecError.at(
            display,
            Pos(1, 1),
            f"file is {size / 1e6:.1f} MB; blueprints are limited to "
            f"{MAX_BYTES // 1024 // 1024} MiB",
            "a blueprint describes nodes by count, not one by one; split very large host lists",
        )
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SpecError.at(display, Pos(1, 1), f"cannot read file: {exc.strerror}") from None
    return decode(raw, display)


def decode(raw: bytes, display: str) -> str:
    """Decode bytes as UTF-8, pointing at the first bad byte when that fails."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise SpecError.at(
            display,
            Pos(line, column),
            f"file is not valid UTF-8 (byte 0x{raw[exc.start]:02x})",
            "save the file as UTF-8",
        ) from None
    text = text.removeprefix("\ufeff")
    if "\x00" in text:
        head = text[: text.index("\x00")]
        raise SpecError.at(
            display,
            Pos(head.count("\n") + 1, len(head) - (head.rfind("\n") + 1) + 1),
            "file contains a NUL byte; it looks binary, not YAML",
        )
    if not text.strip() or all(
        not ln.strip() or ln.lstrip().startswith("#") for ln in text.splitlines()
    ):
        raise SpecError.at(
            display, Pos(1, 1), "file is empty", "start from `archform init --preset NAME`"
        )
    return text


def _yaml_error(display: str, exc: YAMLError) -> SpecError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    pos = Pos(mark.line + 1, mark.column + 1) if mark is not None else Pos(1, 1)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    hint = "check indentation, quoting and ':' spacing near here"
    if isinstance(exc, DuplicateKeyError):
        key = str(problem).split('"')[1] if '"' in str(problem) else ""
        message = f"duplicate key {key!r}" if key else "duplicate key"
        hint = "a key may appear once per mapping; delete or merge the repeated one"
    elif "'\\t'" in str(problem) or "\t" in str(problem):
        message = "tab character in indentation"
        hint = "YAML forbids tabs for indentation; indent with spaces"
    else:
        message = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
    return SpecError.at(display, pos, message, hint)


def parse_documents(text: str, display: str) -> list[RawDocument]:
    """Parse every YAML document of `text` into plain data with positions."""
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    try:
        with warnings.catch_warnings():
            # ruamel warns (not errors) on legal oddities such as a re-used anchor name.
            warnings.simplefilter("ignore")
            nodes = list(yaml.load_all(text))
    except (MarkedYAMLError, YAMLError) as exc:
        raise _yaml_error(display, exc) from None
    except RecursionError:
        raise SpecError.at(
            display, Pos(1, 1), f"YAML nested too deeply (more than {MAX_DEPTH} levels)"
        ) from None
    budget = _Budget()
    docs: list[RawDocument] = []
    starts = _document_starts(text)
    for index, node in enumerate(nodes):
        start = starts[index] if index < len(starts) else Pos(1, 1)
        smap = SourceMap(display, start)
        data = _plain(node, (), smap, budget, 0)
        if data is None:
            continue
        docs.append(RawDocument(display, index, data, smap))
    if not docs:
        raise SpecError.at(display, Pos(1, 1), "file holds no YAML document", "add a blueprint")
    return docs


def _document_starts(text: str) -> list[Pos]:
    starts = [Pos(1, 1)]
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("---") and number > 1:
            starts.append(Pos(number, 1))
        elif line.startswith("---") and number == 1:
            starts[0] = Pos(1, 1)
    return starts


def _plain(node: Any, loc: Loc, smap: SourceMap, budget: _Budget, depth: int) -> Any:
    budget.nodes += 1
    if budget.nodes > MAX_NODES:
        pos = smap.locate(loc)
        raise SpecError.at(
            smap.file,
            pos,
            f"document expands to more than {MAX_NODES:,} YAML nodes (alias expansion?)",
            "aliases that reference aliases multiply; write the values out or use fewer aliases",
        )
    if depth > MAX_DEPTH:
        raise SpecError.at(
            smap.file, smap.locate(loc), f"YAML nested more than {MAX_DEPTH} levels deep"
        )
    if isinstance(node, CommentedMap):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if not isinstance(key, str):
                raise SpecError(
                    [
                        SpecProblem(
                            smap.file,
                            *_pos_tuple(_key_pos(node, key, smap, loc)),
                            f"keys must be strings, got {type(key).__name__} {key!r}",
                            "quote the key",
                        )
                    ]
                )
            child = (*loc, key)
            smap.keys[child] = _key_pos(node, key, smap, loc)
            smap.values[child] = _value_pos(node, key, smap.keys[child])
            out[key] = _plain(value, child, smap, budget, depth + 1)
        return out
    if isinstance(node, CommentedSeq):
        items: list[Any] = []
        for index, value in enumerate(node):
            child = (*loc, index)
            try:
                line, col = node.lc.item(index)
                smap.keys[child] = smap.values[child] = Pos(line + 1, col + 1)
            except (KeyError, IndexError, TypeError):
                pass
            items.append(_plain(value, child, smap, budget, depth + 1))
        return items
    return _scalar(node)


def _pos_tuple(pos: Pos) -> tuple[int, int]:
    return pos.line, pos.column


def _key_pos(node: CommentedMap, key: str, smap: SourceMap, loc: Loc) -> Pos:
    try:
        line, col = node.lc.key(key)
        return Pos(line + 1, col + 1)
    except (KeyError, IndexError, TypeError):
        return smap.locate(loc)


def _value_pos(node: CommentedMap, key: str, fallback: Pos) -> Pos:
    try:
        line, col = node.lc.value(key)
        return Pos(line + 1, col + 1)
    except (KeyError, IndexError, TypeError):
        return fallback


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
    if isinstance(node, str):
        return str(node)
    tagged = getattr(node, "value", None)
    if isinstance(tagged, str):
        return str(tagged)
    return str(node)
