"""A strict parser for the Mermaid flowchart subset archform emits; anything else is rejected.

Accepted, one statement per line: the header `flowchart LR`; `subgraph ID ["label"]` ...
`end` (balanced); `direction TB|LR|BT|RL` inside a subgraph; node declarations
`ID["label"]`, `ID[("label")]`, `ID("label")`; edges `ID --> ID`, `ID -.-> ID`, `ID ==> ID`,
each with an optional `|"label"|` after the arrow. Labels may hold `<br/>` and entity codes
(`#35;`, `#quot;`) but no raw quote, `#`, `;`, `|`, bracket, `<`, `>`, backtick or `%`.
Ids are unique, never a keyword, and every edge endpoint is a declared node.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_ID = r"[A-Za-z][A-Za-z0-9_]*"
_BODY = r'(?:[^"#;|\[\]{}()<>`%\n]|#[0-9]+;|#[a-z]+;|<br/>)*'
_LABEL = rf'"(?P<label>{_BODY})"'
_NODE = re.compile(
    rf"(?P<id>{_ID})(?:\[{_LABEL}\]|\[\({_LABEL.replace('label', 'db')}\)\]"
    rf"|\({_LABEL.replace('label', 'round')}\))"
)
_SUBGRAPH = re.compile(rf"subgraph (?P<id>{_ID}) \[{_LABEL}\]")
_EDGE = re.compile(rf"(?P<src>{_ID}) (?P<arrow>-->|-\.->|==>)(?:\|{_LABEL}\|)? (?P<dst>{_ID})")
_DIRECTION = re.compile(r"direction (TB|LR|BT|RL)")
_KEYWORDS = {
    "end",
    "subgraph",
    "graph",
    "flowchart",
    "style",
    "class",
    "classdef",
    "click",
    "linkstyle",
    "direction",
    "default",
}
_ENTITIES = {"quot": '"', "amp": "&", "lt": "<", "gt": ">"}


class MermaidError(ValueError):
    """The text is not in the accepted subset."""


@dataclass
class Flowchart:
    nodes: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (shape, label)
    # subgraph id -> (label, parent subgraph id)
    subgraphs: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    parent: dict[str, str | None] = field(default_factory=dict)  # node id -> subgraph id
    edges: list[tuple[str, str, str | None, str]] = field(default_factory=list)


def decode(label: str) -> str:
    """Label text as a reader sees it (`<br/>` -> newline, entities resolved)."""
    text = label.replace("<br/>", "\n")

    def entity(match: re.Match[str]) -> str:
        name = match.group(1)
        return chr(int(name)) if name.isdigit() else _ENTITIES[name]

    return re.sub(r"#([0-9]+|[a-z]+);", entity, text)


def _check_id(ident: str, line_no: int) -> None:
    if ident.lower() in _KEYWORDS or ident[0] in "ox":
        raise MermaidError(f"line {line_no}: unsafe id {ident!r}")


def parse(text: str) -> Flowchart:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines or lines[0] != "flowchart LR":
        raise MermaidError("first line must be 'flowchart LR'")
    chart = Flowchart()
    stack: list[str] = []
    ids: set[str] = set()

    def declare(ident: str, line_no: int) -> None:
        _check_id(ident, line_no)
        if ident in ids:
            raise MermaidError(f"line {line_no}: {ident!r} declared twice")
        ids.add(ident)

    for line_no, raw in enumerate(lines[1:], start=2):
        line = raw.strip()
        if not line:
            continue
        if line == "end":
            if not stack:
                raise MermaidError(f"line {line_no}: 'end' without subgraph")
            stack.pop()
        elif m := _SUBGRAPH.fullmatch(line):
            declare(m["id"], line_no)
            chart.subgraphs[m["id"]] = (m["label"], stack[-1] if stack else None)
            stack.append(m["id"])
        elif _DIRECTION.fullmatch(line):
            if not stack:
                raise MermaidError(f"line {line_no}: direction outside a subgraph")
        elif m := _EDGE.fullmatch(line):
            chart.edges.append((m["src"], m["arrow"], m["label"], m["dst"]))
        elif m := _NODE.fullmatch(line):
            declare(m["id"], line_no)
            shape = "box" if m["label"] is not None else "db" if m["db"] is not None else "round"
            chart.nodes[m["id"]] = (shape, m["label"] or m["db"] or m["round"] or "")
            chart.parent[m["id"]] = stack[-1] if stack else None
        else:
            raise MermaidError(f"line {line_no}: not in the accepted subset: {line!r}")
    if stack:
        raise MermaidError(f"unclosed subgraph(s): {', '.join(stack)}")
    for src, _, _, dst in chart.edges:
        for end in (src, dst):
            if end not in chart.nodes:
                raise MermaidError(f"edge endpoint {end!r} is not a declared node")
    return chart
