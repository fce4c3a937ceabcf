"""SVG and PNG laid out by Graphviz `dot` for every bundled blueprint.

Graphviz's output depends on its version, so these tests check structure, not bytes: the
SVG holds every node, edge and group of the architecture graph (by the ids Graphviz writes
into each element's <title>), every edge label, and no two edge labels overlap. Label
boxes are measured from the SVG <text> elements: x/y and text-anchor give the position,
font-size times the character count times 0.6 (wider than Helvetica's average advance of
about 0.5 em) gives the width, so the check errs on the side of reporting an overlap.
"""

from __future__ import annotations

import re
import struct
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from archform.diagram import build, render
from archform.diagram.model import Diagram, Group
from archform.spec import load_paths, load_text
from support import BLUEPRINTS, bundled_blueprints, require_tool, run_cli

SVG = "{http://www.w3.org/2000/svg}"
BUNDLED = bundled_blueprints()
Box = tuple[float, float, float, float]  # x0, y0, x1, y1


@pytest.fixture(autouse=True)
def _dot() -> None:
    require_tool("dot")


def _graph(path: Path) -> Diagram:
    return build(load_paths([path]))


def _svg(graph: Diagram) -> ET.Element:
    return ET.fromstring(render(graph, "svg"))


def _groups(groups: list[Group]) -> list[Group]:
    out: list[Group] = []
    for group in groups:
        out += [group, *_groups(group.groups)]
    return out


def _by_class(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == cls]


def _title(elem: ET.Element) -> str:
    title = elem.find(f"{SVG}title")
    assert title is not None and title.text is not None
    return title.text


def _texts(elem: ET.Element) -> list[str]:
    return [t.text or "" for t in elem.iter(f"{SVG}text")]


def text_box(text: ET.Element) -> Box:
    """The box a <text> covers (baseline at y; 0.6 em per character)."""
    size = float(text.get("font-size", "14"))
    width = len(text.text or "") * size * 0.6
    x = float(text.get("x", "0"))
    anchor = text.get("text-anchor", "start")
    x0 = x - width / 2 if anchor == "middle" else x - width if anchor == "end" else x
    y = float(text.get("y", "0"))
    return (x0, y - size * 0.8, x0 + width, y + size * 0.25)


def shape_box(elem: ET.Element) -> Box:
    """The bounding box of a node's outline (polygon points or path data)."""
    coords: list[tuple[float, float]] = []
    for shape in elem:
        data = shape.get("points") or shape.get("d") or ""
        coords += [(float(a), float(b)) for a, b in re.findall(r"(-?[\d.]+),(-?[\d.]+)", data)]
    assert coords, f"no outline in {_title(elem)}"
    xs, ys = [c[0] for c in coords], [c[1] for c in coords]
    return (min(xs), min(ys), max(xs), max(ys))


def overlapping(boxes: list[tuple[str, Box]]) -> list[tuple[str, str]]:
    """Pairs of named boxes that intersect."""
    out = []
    for i, (name_a, a) in enumerate(boxes):
        for name_b, b in boxes[i + 1 :]:
            if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                out.append((name_a, name_b))
    return out


def edge_label_boxes(root: ET.Element) -> list[tuple[str, Box]]:
    return [
        (f"{_title(edge)}: {text.text}", text_box(text))
        for edge in _by_class(root, "edge")
        for text in edge.iter(f"{SVG}text")
    ]


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_renders_svg_and_png(path: Path) -> None:
    graph = _graph(path)
    root = _svg(graph)
    assert root.tag == f"{SVG}svg"
    png = render(graph, "png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    width, height = struct.unpack(">II", png[16:24])
    assert width > 200 and height > 100


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_every_node_edge_and_group_appears(path: Path) -> None:
    graph = _graph(path)
    root = _svg(graph)
    nodes = {node.id: node for g in _groups(graph.groups) for node in g.nodes}
    drawn = {_title(g): g for g in _by_class(root, "node")}
    assert drawn.keys() == nodes.keys()
    for ident, node in nodes.items():
        assert _texts(drawn[ident]) == list(node.lines), ident
    clusters = {_title(g): _texts(g) for g in _by_class(root, "cluster")}
    assert clusters.keys() == {f"cluster_{g.id}" for g in _groups(graph.groups)}
    for group in _groups(graph.groups):
        assert clusters[f"cluster_{group.id}"] == list(group.title)
    edges = Counter((_title(g), tuple(_texts(g))) for g in _by_class(root, "edge"))
    want = Counter((f"{e.src}->{e.dst}", (e.label,) if e.label else ()) for e in graph.edges)
    assert edges == want


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_edge_labels_do_not_overlap(path: Path) -> None:
    root = _svg(_graph(path))
    labels = edge_label_boxes(root)
    assert overlapping(labels) == []
    nodes = [(f"node {_title(g)}", shape_box(g)) for g in _by_class(root, "node")]
    covered = [
        (label, node)
        for label, node in overlapping(labels + nodes)
        if node.startswith("node ") and not label.startswith("node ")
    ]
    assert covered == [], "edge labels drawn over nodes"


def test_overlap_check_reports_overlapping_labels() -> None:
    """The check can fail: two labels written at the same place are reported."""
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg">'
        '<g class="edge"><title>a-&gt;b</title>'
        '<text text-anchor="middle" x="100" y="50" font-size="10.00">3200 Gbps</text></g>'
        '<g class="edge"><title>c-&gt;d</title>'
        '<text text-anchor="middle" x="110" y="53" font-size="10.00">promote (manual)</text></g>'
        '<g class="edge"><title>e-&gt;f</title>'
        '<text text-anchor="middle" x="400" y="50" font-size="10.00">runs on</text></g>'
        "</svg>"
    )
    boxes = edge_label_boxes(ET.fromstring(svg))
    assert overlapping(boxes) == [("a->b: 3200 Gbps", "c->d: promote (manual)")]


HOSTILE = 'x"]; end\\N \\l <b>bold</b> "quoted" {a} [b] %% `c`'


def test_hostile_description_stays_text() -> None:
    text = (BLUEPRINTS / "platform-two-tier.yaml").read_text("utf-8")
    quoted = HOSTILE.replace("\\", "\\\\").replace('"', '\\"')
    text = text.replace(
        "description: Tier 1 - 8 x p5.48xlarge on EFA with FSx for Lustre",
        f'description: "{quoted}"',
        1,
    )
    graph = build(load_text(text, "hostile.yaml"))
    benign = _svg(build(load_paths([BLUEPRINTS / "platform-two-tier.yaml"])))
    root = _svg(graph)
    assert [_title(g) for g in _by_class(root, "node")] == [
        _title(g) for g in _by_class(benign, "node")
    ]
    assert any(HOSTILE in _texts(g) for g in _by_class(root, "cluster"))
    assert not [e for e in root.iter() if e.tag in (f"{SVG}b", f"{SVG}script")]


def test_cli_svg_png_and_missing_dot(tmp_path: Path) -> None:
    blueprint = str(BLUEPRINTS / "aws-p5-efa-fsx.yaml")
    for fmt in ("svg", "png"):
        out = tmp_path / f"arch.{fmt}"
        run = run_cli(["diagram", blueprint, "--format", fmt, "-o", str(out)])
        assert run.returncode == 0, run.stderr
        assert out.stat().st_size > 1000
    stdout = run_cli(["diagram", blueprint, "--format", "svg"])
    assert ET.fromstring(stdout.stdout).tag == f"{SVG}svg"
    missing = run_cli(
        ["diagram", blueprint, "--format", "svg"], env={"PATH": str(tmp_path / "nothing")}
    )
    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1 and "Traceback" not in missing.stderr
    assert "Graphviz `dot` is not on PATH" in missing.stderr
    assert "apt-get install graphviz" in missing.stderr
