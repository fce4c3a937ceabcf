"""The Mermaid output of every bundled blueprint parses with Mermaid's own parser.

tests/diagram/mermaid/ pins the npm `mermaid` package (and jsdom, which gives its label
sanitiser a DOM) in package.json + package-lock.json; the fixture installs them with
`npm ci` on first use. parse.mjs runs `mermaid.parse` and reads back what Mermaid's
flowchart database holds (vertices, edges, subgraphs), so the tests compare Mermaid's own
reading of our text with the architecture graph. Without node/npm the tests skip locally
and fail under ARCHFORM_REQUIRE_TOOLS=1.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from archform.diagram import build, to_mermaid
from archform.diagram.model import Diagram, Group
from archform.spec import load_paths, load_text
from support import BLUEPRINTS, bundled_blueprints, require_tool

HERE = Path(__file__).parent / "mermaid"
BUNDLED = bundled_blueprints()
_STROKE = {"solid": "normal", "dotted": "dotted", "thick": "thick"}


@pytest.fixture(scope="module")
def mermaid_js() -> Path:
    """tests/diagram/mermaid with node_modules installed from the lock file."""
    require_tool("node", "npm")
    if not (HERE / "node_modules" / "mermaid" / "package.json").is_file():
        run = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert run.returncode == 0, f"npm ci failed in {HERE}:\n{run.stderr[-2000:]}"
    return HERE


def parse_all(mermaid_js: Path, texts: dict[str, str], tmp: Path) -> dict[str, dict[str, Any]]:
    """Run Mermaid's parser over every text (one node process); results by name."""
    files = []
    for name, text in texts.items():
        path = tmp / f"{name}.mmd"
        path.write_text(text, "utf-8")
        files.append(str(path))
    run = subprocess.run(
        ["node", str(mermaid_js / "parse.mjs"), *files],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    results = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    return {Path(r["file"]).stem: r for r in results}


def _groups(groups: list[Group]) -> list[Group]:
    out: list[Group] = []
    for group in groups:
        out += [group, *_groups(group.groups)]
    return out


def _lines(text: str) -> list[str]:
    return re.split(r"<br\s*/?>", text)


def _expect_same(graph: Diagram, parsed: dict[str, Any]) -> None:
    assert parsed["ok"], parsed.get("error")
    assert parsed["type"].startswith("flowchart")
    nodes = {n.id: n for g in _groups(graph.groups) for n in g.nodes}
    vertices = {v["id"]: v for v in parsed["vertices"]}
    assert vertices.keys() == nodes.keys()
    for ident, node in nodes.items():
        assert _lines(vertices[ident]["text"]) == list(node.lines), ident
    groups = {g.id: g for g in _groups(graph.groups)}
    subgraphs = {s["id"]: s for s in parsed["subgraphs"]}
    assert subgraphs.keys() == groups.keys()
    for ident, group in groups.items():
        assert _lines(subgraphs[ident]["title"]) == list(group.title), ident
        children = {n.id for n in group.nodes} | {g.id for g in group.groups}
        assert set(subgraphs[ident]["nodes"]) == children, ident
    edges = sorted((e["start"], e["end"], e["text"], e["stroke"]) for e in parsed["edges"])
    want = sorted((e.src, e.dst, e.label or "", _STROKE[e.style]) for e in graph.edges)
    assert edges == want


def test_every_bundled_blueprint_parses(mermaid_js: Path, tmp_path: Path) -> None:
    graphs = {p.stem: build(load_paths([p])) for p in BUNDLED}
    parsed = parse_all(mermaid_js, {k: to_mermaid(g) for k, g in graphs.items()}, tmp_path)
    assert parsed.keys() == graphs.keys()
    for name, graph in graphs.items():
        _expect_same(graph, parsed[name])


HOSTILE = 'x"]; end\nsubgraph z["%% <b>#quot;`|{}</b> click n call alert()'


def test_hostile_description_survives_mermaids_parser(mermaid_js: Path, tmp_path: Path) -> None:
    text = (BLUEPRINTS / "platform-two-tier.yaml").read_text("utf-8")
    quoted = HOSTILE.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    text = text.replace(
        "description: Tier 1 - 8 x p5.48xlarge on EFA with FSx for Lustre",
        f'description: "{quoted}"',
        1,
    )
    graph = build(load_text(text, "hostile.yaml"))
    parsed = parse_all(mermaid_js, {"hostile": to_mermaid(graph)}, tmp_path)["hostile"]
    _expect_same(graph, parsed)
    titles = [s["title"] for s in parsed["subgraphs"]]
    assert any('x"]; end subgraph z["%% <b>#quot;`|{}</b>' in t for t in titles)


@pytest.mark.parametrize(
    "bad",
    [
        'flowchart LR\n    n_a["a"b"]\n',
        'flowchart LR\n    n_a["x"]]\n',
        'flowchart LR\n    subgraph g ["t"]\n    n_a["x"]\n    end\n    end\n',
        'flowchart LR\n    n_a["x"] --> n_b("y"]\n',
    ],
)
def test_mermaids_parser_rejects_broken_text(mermaid_js: Path, tmp_path: Path, bad: str) -> None:
    """The check can fail: Mermaid's parser reports text our renderer must never produce."""
    parsed = parse_all(mermaid_js, {"bad": bad}, tmp_path)["bad"]
    assert parsed["ok"] is False and parsed["error"]


def test_escaping_is_what_keeps_mermaid_parsing(mermaid_js: Path, tmp_path: Path) -> None:
    """A quote in a label breaks Mermaid's parser; label() escaping keeps it text."""
    from archform.diagram.mermaid import label

    raw = 'flowchart LR\n    n_a["a"b"]\n'
    escaped = 'flowchart LR\n    n_a["' + label('a"b') + '"]\n'
    parsed = parse_all(mermaid_js, {"raw": raw, "escaped": escaped}, tmp_path)
    assert parsed["raw"]["ok"] is False
    assert parsed["escaped"]["ok"], parsed["escaped"].get("error")
    assert parsed["escaped"]["vertices"][0]["text"] == 'a"b'
