"""A small deterministic SVG renderer: groups as nested boxes, top-level groups as columns.

Layout: each top-level group is a column, left to right. Inside a group, nodes and then child
groups are stacked top to bottom and stretched to the group's width. Text is monospace, so
widths follow from character counts; coordinates are rounded to one decimal, so the same
diagram always gives the same bytes. Edges are cubic curves from the right side of the
source to the left side of a target further right, or around the right side when the target
is in the same column. All text goes through `xml_text` (XML escaping, invalid characters
replaced).
"""

from __future__ import annotations

from dataclasses import dataclass

from archform.diagram.model import Diagram, Group, Node

CHAR_W = 7.2  # 12px monospace advance
LINE_H = 16.0
PAD = 10.0
GAP = 12.0
COLUMN_GAP = 160.0  # room for edge labels between columns
MARGIN = 20.0
TITLE_H = 28.0

_FILL = {"box": "#ffffff", "db": "#e8f0fe", "round": "#fff4e5"}
_RADIUS = {"box": 3, "db": 12, "round": 18}
_GROUP_FILL = ("#f6f8fa", "#eef1f4", "#e4e8ec", "#dadfe4")
_STROKE = {"solid": "", "dotted": ' stroke-dasharray="5,4"', "thick": ' stroke-width="3"'}


def xml_text(text: str) -> str:
    """Text safe as XML character data and inside double-quoted attributes."""
    out = []
    for char in text:
        code = ord(char)
        if char in "\n\r\t":
            out.append(" ")
        elif code < 0x20 or 0xD800 <= code <= 0xDFFF or code in (0xFFFE, 0xFFFF):
            out.append("\ufffd")
        elif char == "&":
            out.append("&amp;")
        elif char == "<":
            out.append("&lt;")
        elif char == ">":
            out.append("&gt;")
        elif char == '"':
            out.append("&quot;")
        else:
            out.append(char)
    return "".join(out)


def _f(value: float) -> str:
    return f"{value:.1f}"


@dataclass(frozen=True, slots=True)
class Box:
    """A placed rectangle."""

    x: float
    y: float
    w: float
    h: float


def _text_w(lines: tuple[str, ...]) -> float:
    return max((len(line) for line in lines), default=0) * CHAR_W + 2 * PAD


def _node_size(node: Node) -> tuple[float, float]:
    return _text_w(node.lines), len(node.lines) * LINE_H + 2 * PAD - 4


def _group_size(group: Group) -> tuple[float, float]:
    width = _text_w(group.title)
    height = len(group.title) * LINE_H + PAD
    for w, h in [_node_size(n) for n in group.nodes] + [_group_size(g) for g in group.groups]:
        width = max(width, w + 2 * PAD)
        height += h + GAP
    return width, height + PAD


class _Canvas:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.boxes: dict[str, Box] = {}

    def text(self, x: float, y: float, lines: tuple[str, ...], weight: str = "normal") -> None:
        for i, line in enumerate(lines):
            attr = ' font-weight="bold"' if weight == "bold" and i == 0 else ""
            self.parts.append(
                f'<text x="{_f(x)}" y="{_f(y + i * LINE_H)}"{attr}>{xml_text(line)}</text>'
            )

    def node(self, node: Node, x: float, y: float, w: float) -> float:
        _, h = _node_size(node)
        self.boxes[node.id] = Box(x, y, w, h)
        self.parts.append(f'<g class="node" id="{node.id}">')
        self.parts.append(
            f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(w)}" height="{_f(h)}" '
            f'rx="{_RADIUS[node.shape]}" fill="{_FILL[node.shape]}" '
            'stroke="#57606a"/>'
        )
        self.text(x + PAD, y + PAD + 8, node.lines)
        self.parts.append("</g>")
        return h

    def group(self, group: Group, x: float, y: float, w: float, depth: int) -> float:
        _, h = _group_size(group)
        fill = _GROUP_FILL[min(depth, len(_GROUP_FILL) - 1)]
        self.parts.append(f'<g class="group" id="{group.id}">')
        self.parts.append(
            f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(w)}" height="{_f(h)}" '
            f'rx="6" fill="{fill}" stroke="#8c959f"/>'
        )
        self.text(x + PAD, y + PAD + 8, group.title, "bold")
        cy = y + len(group.title) * LINE_H + PAD
        for node in group.nodes:
            cy += self.node(node, x + PAD, cy, w - 2 * PAD) + GAP
        for child in group.groups:
            cy += self.group(child, x + PAD, cy, w - 2 * PAD, depth + 1) + GAP
        self.parts.append("</g>")
        return h


def to_svg(diagram: Diagram) -> str:
    """The diagram as a standalone SVG document."""
    canvas = _Canvas()
    x, bottom = MARGIN, MARGIN + TITLE_H
    for group in diagram.groups:
        w, h = _group_size(group)
        canvas.group(group, x, MARGIN + TITLE_H, w, 0)
        x += w + COLUMN_GAP
        bottom = max(bottom, MARGIN + TITLE_H + h)
    edges: list[str] = []
    right = x - COLUMN_GAP
    for edge in diagram.edges:
        a, b = canvas.boxes[edge.src], canvas.boxes[edge.dst]
        sx, sy = a.x + a.w, a.y + a.h / 2
        if b.x > a.x + a.w:
            tx, ty = b.x, b.y + b.h / 2
            bend = (tx - sx) / 2
            path = (
                f"M{_f(sx)},{_f(sy)} C{_f(sx + bend)},{_f(sy)} {_f(tx - bend)},{_f(ty)} "
                f"{_f(tx)},{_f(ty)}"
            )
            lx, ly, anchor = (sx + tx) / 2, (sy + ty) / 2 - 4, "middle"
        else:
            tx, ty = b.x + b.w, b.y + b.h / 2
            reach = max(sx, tx) + 16 + min(abs(ty - sy) / 12, 24)
            path = (
                f"M{_f(sx)},{_f(sy)} C{_f(reach)},{_f(sy)} {_f(reach)},{_f(ty)} {_f(tx)},{_f(ty)}"
            )
            lx, ly, anchor = reach + 3, (sy + ty) / 2 + 3, "start"
            right = max(right, reach)
        edges.append(
            f'<g class="edge" data-from="{edge.src}" data-to="{edge.dst}">'
            f'<path d="{path}" fill="none" stroke="#24292f"{_STROKE[edge.style]} '
            'marker-end="url(#arrow)"/>'
        )
        if edge.label:
            span = len(edge.label) * 6.0
            right = max(right, lx + (span if anchor == "start" else span / 2))
            edges.append(
                f'<text class="edge-label" x="{_f(lx)}" y="{_f(ly)}" '
                f'text-anchor="{anchor}" font-size="10" paint-order="stroke" '
                f'stroke="#ffffff" stroke-width="3">{xml_text(edge.label)}</text>'
            )
        edges.append("</g>")
    width = max(right + MARGIN, 200.0)
    height = bottom + MARGIN
    head = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_f(width)}" height="{_f(height)}" '
        f'viewBox="0 0 {_f(width)} {_f(height)}" font-family="monospace" font-size="12">',
        f"<title>{xml_text(diagram.title)}</title>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#24292f"/></marker></defs>',
        f'<rect width="{_f(width)}" height="{_f(height)}" fill="#ffffff"/>',
        f'<text x="{_f(MARGIN)}" y="{_f(MARGIN + 12)}" font-size="14" font-weight="bold">'
        f"{xml_text(diagram.title)}</text>",
    ]
    return "\n".join([*head, *canvas.parts, *edges, "</svg>"]) + "\n"
