"""Mermaid `flowchart LR` with nested subgraphs, as GitHub renders it in a PR comment.

Every piece of text goes through `label()`, which keeps letters, digits, spaces and a few
harmless punctuation marks and writes everything else as a Mermaid entity code (`#35;`), so
quotes, brackets, `#`, `;`, `|`, `<`, `%` and backticks in a user's string cannot end a
label, start a comment or inject markup. Newlines and tabs become spaces. Ids come from
`model.Ids` and are `[A-Za-z0-9_]` only.
"""

from __future__ import annotations

from archform.diagram.model import Diagram, Edge, Group, Node

_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:/+=-_'")
_BREAK = "<br/>"
_SHAPES = {"box": ('["', '"]'), "db": ('[("', '")]'), "round": ('("', '")')}
_ARROWS = {"solid": "-->", "dotted": "-.->", "thick": "==>"}


def label(text: str) -> str:
    """One line of user text made inert inside a quoted Mermaid label."""
    out = []
    for char in text:
        if char in "\n\r\t":
            out.append(" ")
        elif char in _SAFE:
            out.append(char)
        else:
            out.append(f"#{ord(char)};")
    return "".join(out)


def _lines(lines: tuple[str, ...]) -> str:
    return _BREAK.join(label(line) for line in lines)


def _node(node: Node, indent: str) -> str:
    left, right = _SHAPES[node.shape]
    return f"{indent}{node.id}{left}{_lines(node.lines)}{right}"


def _group(group: Group, depth: int, out: list[str]) -> None:
    indent = "    " * depth
    out.append(f'{indent}subgraph {group.id} ["{_lines(group.title)}"]')
    out.append(f"{indent}    direction TB")
    for node in group.nodes:
        out.append(_node(node, indent + "    "))
    for child in group.groups:
        _group(child, depth + 1, out)
    out.append(f"{indent}end")


def _edge(edge: Edge) -> str:
    arrow = _ARROWS[edge.style]
    if edge.label:
        return f'    {edge.src} {arrow}|"{label(edge.label)}"| {edge.dst}'
    return f"    {edge.src} {arrow} {edge.dst}"


def to_mermaid(diagram: Diagram) -> str:
    """The diagram as Mermaid flowchart source (no code fence)."""
    out = ["flowchart LR"]
    for group in diagram.groups:
        _group(group, 1, out)
    out += [_edge(e) for e in diagram.edges]
    return "\n".join(out) + "\n"
