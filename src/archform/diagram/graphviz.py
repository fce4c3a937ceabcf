r"""Graphviz rendering: the architecture graph as DOT, laid out by `dot` into SVG or PNG.

`to_dot()` writes the graph as DOT text: every group is a `cluster` subgraph (tiers,
regions, clusters, fleets), nodes keep their shape (boxes, cylinders for storage, rounded
boxes for services), and edges keep their label and style. `render()` runs Graphviz's `dot`
(Debian package `graphviz`) on it. dot places edge labels as part of the layout (each
label takes room in its rank), so labels do not overlap each other or the nodes.

Why not the `diagrams` package: its SVG output references every icon by an absolute path
into the local site-packages (https://github.com/mingrammer/diagrams/issues/26), so a
file shared in a PR does not show them, and its node ids are random per run. Plain DOT
keeps the output deterministic (same blueprint, same bytes with the same Graphviz).

All text goes through `dot_text()`: backslashes and quotes escaped (a user string cannot
end the quoted label or inject a Graphviz escape such as `\N`), control characters
replaced. Labels are plain quoted strings, never HTML-like labels, so `<b>` stays text.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Literal

from archform.diagram.model import Diagram, Edge, Group, Node
from archform.spec import UsageError

Format = Literal["svg", "png"]
TIMEOUT_S = 60.0
INSTALL_HINT = "install Graphviz: apt-get install graphviz (Debian/Ubuntu), brew install graphviz"

_FONT = "Helvetica"
_NODE_STYLE = {
    "box": 'shape=box, style="filled", fillcolor="#ffffff"',
    "db": 'shape=cylinder, style="filled", fillcolor="#e8f0fe"',
    "round": 'shape=box, style="rounded,filled", fillcolor="#fff4e5"',
}
_EDGE_STYLE = {"solid": (), "dotted": ("style=dashed",), "thick": ("penwidth=2.5",)}
_CLUSTER_FILL = ("#f6f8fa", "#eef1f4", "#e4e8ec", "#dadfe4")


def dot_text(text: str) -> str:
    """One line of user text, safe inside a double-quoted DOT string."""
    out = []
    for char in text:
        code = ord(char)
        if char in "\n\r\t":
            out.append(" ")
        elif code < 0x20 or code == 0x7F or 0xD800 <= code <= 0xDFFF:
            out.append("\ufffd")
        elif char in '\\"':
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


def _label(lines: tuple[str, ...], *, left: bool = False) -> str:
    r"""Lines centred (`\n`) or, for cluster titles, left-justified (`\l`)."""
    if left:
        return '"' + "".join(dot_text(line) + "\\l" for line in lines) + '"'
    return '"' + "\\n".join(dot_text(line) for line in lines) + '"'


def _node(node: Node, indent: str) -> str:
    return f"{indent}{node.id} [label={_label(node.lines)}, {_NODE_STYLE[node.shape]}];"


def _group(group: Group, depth: int, out: list[str]) -> None:
    indent = "  " * (depth + 1)
    fill = _CLUSTER_FILL[min(depth, len(_CLUSTER_FILL) - 1)]
    out.append(f"{indent}subgraph cluster_{group.id} {{")
    out.append(
        f'{indent}  label={_label(group.title, left=True)}; labeljust=l; style="rounded,filled"; '
        f'fillcolor="{fill}"; color="#8c959f"; margin=12;'
    )
    out += [_node(node, indent + "  ") for node in group.nodes]
    for child in group.groups:
        _group(child, depth + 1, out)
    out.append(f"{indent}}}")


def _edge(edge: Edge) -> str:
    attrs = [f"label={_label((edge.label,))}"] if edge.label else []
    attrs += _EDGE_STYLE[edge.style]
    return (
        f"  {edge.src} -> {edge.dst} [{', '.join(attrs)}];"
        if attrs
        else f"  {edge.src} -> {edge.dst};"
    )


def to_dot(diagram: Diagram) -> str:
    """The diagram as DOT source: left to right, groups as clusters."""
    out = [
        "digraph architecture {",
        f"  graph [rankdir=LR, label={_label((diagram.title,))}, labelloc=t, fontname="
        f'"{_FONT}", fontsize=14, nodesep=0.35, ranksep=0.9, newrank=true, pad=0.3];',
        f'  node [fontname="{_FONT}", fontsize=11, color="#57606a", margin="0.15,0.08"];',
        f'  edge [fontname="{_FONT}", fontsize=10, color="#57606a", arrowsize=0.8];',
    ]
    for group in diagram.groups:
        _group(group, 0, out)
    out += [_edge(e) for e in diagram.edges]
    out.append("}")
    return "\n".join(out) + "\n"


def dot_path() -> str:
    """The `dot` executable, or a usage error naming the package to install."""
    found = shutil.which("dot")
    if found is None:
        raise UsageError(
            "Graphviz `dot` is not on PATH (needed for --format svg|png)", INSTALL_HINT
        )
    return found


def render(diagram: Diagram, fmt: Format) -> bytes:
    """Lay the diagram out with Graphviz and return the SVG or PNG bytes."""
    args = [dot_path(), f"-T{fmt}"]
    try:
        run = subprocess.run(
            args, input=to_dot(diagram).encode("utf-8"), capture_output=True, timeout=TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        raise UsageError(f"Graphviz took longer than {TIMEOUT_S:.0f} s", "report this") from None
    if run.returncode != 0 or not run.stdout:
        detail = run.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(
            f"Graphviz failed: {detail[-1] if detail else f'exit {run.returncode}'}",
            f"dot -T{fmt} on `archform diagram --format dot` output reproduces it",
        )
    return run.stdout
